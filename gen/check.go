package gen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"math"
	"slices"
	"strings"

	"github.com/dgen-go/dgen/annotations"
	"github.com/dgen-go/dgen/gen/internal/clsrc"
)

// The checks of the model against the Go types and the OpenCL C front
// end's reading of each program.

// checkDecls checks the declared types and returns what they say: the
// specialization constants' defaults and limits, the device globals'
// element types, and the OpenCL C structs declared for them.
func (s *state) checkDecls(m model) *declared {
	d := &declared{model: m, specDefaults: map[string]specDefault{}, specLims: map[string]specLimits{},
		globalTypes: map[*global]globalType{}, structs: &structTable{layouts: map[string]*clsrc.Layout{}, decls: map[string]string{}}}
	for _, g := range m.globals {
		if gt, ok := s.checkGlobal(g, d.structs); ok {
			d.globalTypes[g] = gt
		}
	}
	for _, d := range m.allocs {
		if t := s.varType(d); t != nil && !isRT(t, "ImageSite") {
			if e, ok := rtArg(t, "AllocSite"); !ok || e == nil {
				s.errorf(d.pos, "//dgen:alloc variable %s must have type rt.AllocSite[T] or rt.ImageSite, not %s", d.name, typeString(t, s.l.path))
			} else if isImageHandle(e) {
				s.errorf(d.pos, "allocation site %s: images are allocated from an rt.ImageSite, whose Alloc takes an rt.ImageDesc: declare var %s rt.ImageSite", d.name, d.name)
			} else if err := plain(e); err != nil {
				s.errorf(d.pos, "allocation site %s: element type %s is not plain data: %v", d.name, typeString(e, s.l.path), err)
			}
		}
	}
	for _, sc := range m.specs {
		s.checkSpecConst(d, sc)
	}
	for _, p := range m.programs {
		if t := s.varType(p.decl); t != nil && !isRT(t, "Program") {
			s.errorf(p.pos, "//dgen:program variable %s must have type rt.Program, not %s", p.name, typeString(t, s.l.path))
		}
	}
	return d
}

// checkSpecConst checks the type, default and limits of the
// specialization constant d, recording the default and limits in decls.
func (s *state) checkSpecConst(decls *declared, d decl) {
	t := s.varType(d)
	if t == nil {
		return
	}
	e, ok := rtArg(t, "SpecConst")
	if !ok || e == nil {
		s.errorf(d.pos, "//dgen:specconst variable %s must have type rt.SpecConst[T], not %s", d.name, typeString(t, s.l.path))
		return
	}
	b, ok := e.Underlying().(*types.Basic)
	if !ok || !hasCL(b) {
		s.errorf(d.pos, "specialization constant %s: %s is not a fixed-size number type", d.name, typeString(e, s.l.path))
		return
	}
	v, ok := s.specDefault(d, b)
	if !ok {
		return
	}
	if v.cl != "" {
		decls.specDefaults[d.name] = v
	}
	if lim, ok := s.specLimits(d, b, v.cl); ok { // speclimits.go
		decls.specLims[d.name] = lim
	}
}

// MaxGlobalSize is the largest device global, in bytes: every device
// holds one zero-initialised buffer per global (per image, for
// device_image_scope), and OpenCL guarantees no allocation larger than a
// quarter of a device's memory.
const MaxGlobalSize = 1 << 30

// sizeof returns the size of t under the target's sizes, or false when it
// does not fit an int64 (go/types' Sizes panics on none, but wraps).
func (s *state) sizeof(t types.Type) (int64, bool) {
	n := int64(1)
	for {
		a, ok := t.Underlying().(*types.Array)
		if !ok {
			break
		}
		if a.Len() < 0 || a.Len() > 0 && n > math.MaxInt64/a.Len() {
			return 0, false
		}
		n *= max(a.Len(), 1)
		t = a.Elem()
	}
	size := s.sizes.Sizeof(t)
	if size < 0 || size > 0 && n > math.MaxInt64/size {
		return 0, false
	}
	return n * size, true
}

// sizeText spells a size for a message.
func sizeText(size int64, ok bool) string {
	if !ok {
		return "larger than 2⁶³ bytes"
	}
	return fmt.Sprintf("%d bytes", size)
}

// checkGlobal checks a device global's type: plain data OpenCL C can
// declare (in structs), of a size a device can hold. It returns the type,
// and false for a global outside the current build or one it reports.
func (s *state) checkGlobal(g *global, structs *structTable) (globalType, bool) {
	t := s.varType(g.decl)
	if t == nil {
		return globalType{}, false // outside the current build: registered as written
	}
	elem, ok := rtArg(t, "DeviceGlobal")
	if !ok || elem == nil {
		s.errorf(g.pos, "//dgen:global variable %s must have type rt.DeviceGlobal[T], not %s", g.name, typeString(t, s.l.path))
		return globalType{}, false
	}
	if err := plain(elem); err != nil {
		s.errorf(g.pos, "device global %s: element type %s is not plain data: %v", g.name, typeString(elem, s.l.path), err)
		return globalType{}, false
	}
	if z := zeroLength(elem); z != nil {
		s.errorf(g.pos, "device global %s: %s has length 0, which OpenCL C has no type for", g.name, typeString(z, s.l.path))
		return globalType{}, false
	}
	if size, ok := s.sizeof(elem); !ok || size > MaxGlobalSize {
		s.errorf(g.pos, "device global %s: %s is %s; a device global holds at most %d bytes (1 GiB), one buffer per device: allocate large data with rt.AllocSite or a buffer", g.name, typeString(elem, s.l.path), sizeText(size, ok), int64(MaxGlobalSize))
		return globalType{}, false
	}
	c, err := s.clType(elem, structs)
	if err != nil {
		s.errorf(g.pos, "device global %s: %v", g.name, err)
		return globalType{}, false
	}
	return globalType{elem: elem, cl: c}, true
}

func hasCL(b *types.Basic) bool {
	_, ok := clsrc.ForGo(b.Kind())
	return ok
}

// checkKernels matches kernel specs with the kernels' parameters, in the
// programs' front ends fr, and returns what it bound each spec to.
func (s *state) checkKernels(d *declared, fr fronts) bindings {
	bs := bindings{}
	progs := map[string]*program{}
	for _, p := range d.programs {
		progs[p.name] = p
	}
	gByName := map[string]*global{}
	for _, g := range d.globals {
		gByName[g.name] = g
	}
	for _, k := range d.kernels {
		kd, _ := k.dir.Kernel()
		p := progs[kd.Program.Value]
		if p == nil {
			s.errorf(kd.Program.ValuePos, "kernel spec %s: no //dgen:program variable %s in this package", k.name, kd.Program.Value)
			continue
		}
		b := &binding{prog: fr[p]}
		bs[k] = b
		if kp, pp := k.file.ast.Name.Name, p.file.ast.Name.Name; kp != pp {
			s.errorf(kd.Program.ValuePos, "kernel spec %s is in package %s but program %s in package %s, whose registration the generated code of %s cannot reach; declare the spec and its program in one package", k.name, kp, p.name, pp, kp)
			continue
		}
		if !implies(k.file.build, p.file.build) {
			s.errorf(kd.Program.ValuePos, "kernel spec %s is declared %s but program %s %s: a build with the spec but not the program would not compile; declare them under compatible constraints", k.name, constraintOf(k.file.build), p.name, constraintOf(p.file.build))
			continue
		}
		if p.file.test && !k.file.test {
			s.errorf(kd.Program.ValuePos, "kernel spec %s: program %s is declared in test file %s, which the package's own build does not see; declare it in a non-test file", k.name, p.name, s.rel(p.file.path))
			continue
		}
		f := b.prog
		if f.unit == nil {
			continue // already reported
		}
		fn := f.unit.Kernel(k.clName)
		if fn == nil {
			s.noKernel(k, f)
			continue
		}
		b.exts = f.pp.NeedsAt(fn.Pos)
		for _, name := range f.kernels[k.clName].Globals {
			b.globals = append(b.globals, gByName[name])
		}
		if k.file.info != nil {
			s.checkFields(d, k, b, fn)
		}
	}
	return bs
}

func (s *state) noKernel(k *kernel, p *front) {
	kd, _ := k.dir.Kernel()
	pos := k.pos
	if kd.Name.Pos != token.NoPos {
		pos = kd.Name.ValuePos
	}
	var names []string
	for _, f := range p.unit.Kernels {
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		s.errorf(pos, "kernel spec %s: %s defines no kernel %s, nor any other kernel (__kernel void %s(…) { … })", k.name, p.source, k.clName, k.clName)
		return
	}
	s.errorf(pos, "kernel spec %s: %s defines no kernel %s (it defines %s)", k.name, p.source, k.clName, strings.Join(names, ", "))
}

// checkFields matches the fields of a kernel spec with the parameters,
// into b: every field but those that give specialization-constant values
// (checkSpecField), in order, is a parameter.
func (s *state) checkFields(d *declared, k *kernel, b *binding, fn *clsrc.Kernel) {
	st, ok := k.file.info.Defs[k.ts.Name].Type().Underlying().(*types.Struct)
	if !ok {
		return
	}
	var fpos []token.Pos
	for _, af := range k.ts.Type.(*ast.StructType).Fields.List {
		if len(af.Names) == 0 {
			fpos = append(fpos, af.Type.Pos())
		}
		for _, n := range af.Names {
			fpos = append(fpos, n.Pos())
		}
	}
	var args []int // the fields that are parameters
	for i := range st.NumFields() {
		f := st.Field(i)
		t, tagOK := parseTag(reflectTag(st.Tag(i)))
		switch {
		case t.spec:
			s.checkSpecField(d, k, b, f, fpos[i], t.konst)
		case !tagOK && isRT(f.Type(), "Spec"):
			// A spec field whose tag kernelShape reported.
		case isRT(f.Type(), "Spec"):
			s.errorf(fpos[i], "kernel spec %s: field %s has type %s but no tag: tag it dgen:\"spec=Name\" to give a launch its own value of the specialization constant Name (it is no kernel argument)", k.name, f.Name(), typeString(f.Type(), s.l.path))
		default:
			args = append(args, i)
		}
	}
	if len(b.specs) > MaxSpecFields {
		s.errorf(k.pos, "kernel spec %s has %d fields of specialization-constant values; a spec has at most %d", k.name, len(b.specs), MaxSpecFields)
	}
	if len(args) != len(fn.Params) {
		if n := st.NumFields() - len(args); n > 0 {
			s.errorf(k.pos, "kernel spec %s has %d fields of kernel arguments (and %d of specialization-constant values) but kernel %s has %d parameters", k.name, len(args), n, k.clName, len(fn.Params))
		} else {
			s.errorf(k.pos, "kernel spec %s has %d fields but kernel %s has %d parameters", k.name, st.NumFields(), k.clName, len(fn.Params))
		}
		return
	}
	for j, i := range args {
		fd, ok := s.checkField(k, b, st.Field(i), fpos[i], j, fn.Params[j])
		if !ok {
			continue
		}
		fd.out = reflectTag(st.Tag(i)) == "out"
		switch {
		case fd.out && fd.class != clsrc.ArgBuffer:
			s.errorf(fpos[i], "kernel spec %s: field %s is tagged dgen:\"out\" but is not a buffer", k.name, fd.name)
		case fd.out && fn.Params[j].Type.Const:
			s.errorf(fpos[i], "kernel spec %s: field %s is tagged dgen:\"out\" but parameter %d (%s) of %s is const: the kernel cannot write it", k.name, fd.name, j, fn.Params[j].Text, k.clName)
		}
		b.fields = append(b.fields, fd)
	}
}

// MaxSpecFields is the most fields of one kernel spec that give
// specialization-constant values (rt/codegen's MaxSpecArgs).
const MaxSpecFields = 8

// checkSpecField checks a kernel spec's field tagged dgen:"spec=konst"
// (konst empty: the field's name) and records it in b: konst must be a
// //dgen:specconst variable of the package, under the spec's build
// constraints, that the program's source uses, given by one field only,
// and the field's type rt.Spec[T] with T the constant's.
func (s *state) checkSpecField(d *declared, k *kernel, b *binding, f *types.Var, pos token.Pos, konst string) {
	if konst == "" {
		konst = f.Name()
	}
	fail := func(format string, args ...any) {
		s.errorf(pos, "kernel spec %s: field %s: "+format, append([]any{k.name, f.Name()}, args...)...)
	}
	i := slices.IndexFunc(d.specs, func(sc decl) bool { return sc.name == konst })
	if i < 0 {
		fail("no //dgen:specconst variable %s in this package (the field's tag names the constant whose value it gives)", konst)
		return
	}
	sc := d.specs[i]
	elem, ok := rtArg(f.Type(), "Spec")
	want, wantName := s.elemOf(sc, "SpecConst"), "T"
	if want != nil {
		wantName = typeString(want, s.l.path)
	}
	switch {
	case !ok || elem == nil:
		fail("it gives specialization constant %s, so its type is rt.Spec[%s], not %s", konst, wantName, typeString(f.Type(), s.l.path))
		return
	case want != nil && !types.Identical(elem, want):
		fail("it has type %s but specialization constant %s is rt.SpecConst[%s]: declare it rt.Spec[%s]", typeString(f.Type(), s.l.path), konst, wantName, wantName)
		return
	case !implies(k.file.build, sc.file.build) || sc.file.test && !k.file.test:
		fail("specialization constant %s is declared %s%s but the spec %s%s: a build with the spec but not the constant would not compile; declare them under compatible constraints", konst, constraintOf(sc.file.build), testFile(sc.file.test), constraintOf(k.file.build), testFile(k.file.test))
		return
	case b.prog != nil && b.prog.image != "" && !identifiers(b.prog.image)[konst]:
		fail("program %s's source does not use specialization constant %s, so its value would change nothing", b.prog.name, konst)
		return
	}
	for _, o := range b.specs {
		if o.konst.name == konst {
			fail("field %s gives specialization constant %s already", o.name, konst)
			return
		}
	}
	b.specs = append(b.specs, specField{name: f.Name(), konst: sc, elem: elem})
}

// testFile says " in a _test.go file" for a test file.
func testFile(test bool) string {
	if test {
		return " in a _test.go file"
	}
	return ""
}

// wrappers are the rt types of the fields of each argument class.
var wrappers = map[clsrc.ArgClass]string{clsrc.ArgBuffer: "Buffer", clsrc.ArgLocal: "Local"}

// checkField matches field i of a kernel spec with its parameter.
func (s *state) checkField(k *kernel, b *binding, f *types.Var, pos token.Pos, i int, param clsrc.KernelParam) (field, bool) {
	if fd, handled, ok := s.checkImageField(k, b, f, pos, i, param); handled {
		return fd, ok
	}
	class, elem, err := clsrc.Classify(param.Type)
	if err != nil {
		s.diag(param.Pos, fmt.Sprintf("kernel %s parameter %s (%s): %v", k.clName, param.Name, param.Text, err))
		return field{}, false
	}
	fd := field{name: f.Name(), class: class, cl: elem.String(), elem: f.Type()}
	want := goName(elem)
	if w := wrappers[class]; w != "" {
		want = "rt." + w + "[" + want + "]"
		e, ok := rtArg(f.Type(), w)
		if !ok || e == nil {
			s.errorf(pos, "kernel spec %s: field %s has type %s but parameter %d (%s) of %s needs %s", k.name, f.Name(), typeString(f.Type(), s.l.path), i, param.Text, k.clName, want)
			return field{}, false
		}
		fd.elem = e
		if err := plain(e); err != nil {
			s.errorf(pos, "kernel spec %s: field %s: element type %s is not plain data: %v", k.name, f.Name(), typeString(e, s.l.path), err)
			return field{}, false
		}
	}
	switch elem.Kind {
	case clsrc.Void:
		return fd, true
	case clsrc.Scalar, clsrc.Vector:
		if typeString(fd.elem.Underlying(), "") != elem.Info.Go {
			s.errorf(pos, "kernel spec %s: field %s has type %s but parameter %d (%s) of %s needs %s", k.name, f.Name(), typeString(f.Type(), s.l.path), i, param.Text, k.clName, want)
			return field{}, false
		}
		return fd, true
	}
	m := &matcher{s: s, ok: true}
	m.match(fd.elem, elem, pos, fmt.Sprintf("kernel spec %s: field %s (parameter %d, %s, of %s)", k.name, f.Name(), i, param.Text, k.clName))
	return fd, m.ok
}

// goName is the Go type that a kernel spec's field has for an OpenCL C
// value or element type, for messages.
func goName(t *clsrc.Type) string {
	switch t.Kind {
	case clsrc.Scalar, clsrc.Vector:
		return t.Info.Go
	case clsrc.Void:
		return "T"
	}
	return "a Go struct laid out as " + t.String()
}

// reflectTag returns the value of a struct tag's dgen key, "" where it has
// none.
func reflectTag(tag string) string {
	i := strings.Index(tag, `dgen:"`)
	if i < 0 {
		return ""
	}
	rest := tag[i+6:]
	j := strings.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return rest[:j]
}

// checkHostWrites reports writes from Go code to globals the host may not
// write.
func (s *state) checkHostWrites(d *declared) {
	ro := map[types.Object]*global{}
	for _, g := range d.globals {
		if g.access == annotations.HostAccessRead || g.access == annotations.HostAccessNone {
			if g.file.info != nil {
				if obj := g.file.info.Defs[g.spec.Names[0]]; obj != nil {
					ro[obj] = g
				}
			}
		}
	}
	if len(ro) == 0 {
		return
	}
	for _, f := range s.l.files {
		if f.info == nil {
			continue
		}
		ast.Inspect(f.ast, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || (sel.Sel.Name != "Write" && sel.Sel.Name != "WriteBytes") {
				return true
			}
			id := receiverIdent(sel)
			if id == nil {
				return true
			}
			if g := ro[f.info.Uses[id]]; g != nil {
				s.errorf(sel.Sel.Pos(), "host write to device global %s, declared host_access=%s", g.name, g.access)
			}
			return true
		})
	}
}

// receiverIdent returns the identifier that names the receiver of the
// method selector sel (v.M or pkg.v.M), or nil.
func receiverIdent(sel *ast.SelectorExpr) *ast.Ident {
	switch x := ast.Unparen(sel.X).(type) {
	case *ast.Ident:
		return x
	case *ast.SelectorExpr:
		return x.Sel
	}
	return nil
}

// zeroLength returns an array type of length 0 in t, or nil.
func zeroLength(t types.Type) types.Type {
	switch u := t.Underlying().(type) {
	case *types.Array:
		if u.Len() == 0 {
			return t
		}
		return zeroLength(u.Elem())
	case *types.Struct:
		for i := range u.NumFields() {
			if z := zeroLength(u.Field(i).Type()); z != nil {
				return z
			}
		}
	}
	return nil
}
