package gen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dgen-go/dgen/annotations"
	"github.com/dgen-go/dgen/gen/internal/clsrc"
)

type decl struct {
	name string
	file *srcFile
	pos  token.Pos
	dir  *annotations.Directive
	spec *ast.ValueSpec // for vars
	ts   *ast.TypeSpec  // for kernel specs
}

type program struct {
	decl
	source, options string
	clPath          string
	cl              *clsrc.File
	image           string
	table           []*global
	kernels         map[string]clsrc.KernelGlobals
}

type field struct {
	name  string
	class clsrc.ArgClass
	elem  types.Type // buffer or local element, or the value type
	out   bool
	cl    string
}

type kernel struct {
	decl
	prog    *program
	clName  string
	fields  []field
	globals []*global
}

type global struct {
	decl
	elem       types.Type
	size       int64
	imageScope bool
	access     string
	cl         string // OpenCL C type, "" when unknown (file outside the build)
}

type state struct {
	l            *loaded
	diags        Diagnostics
	programs     []*program
	kernels      []*kernel
	globals      []*global
	allocs       []decl
	specs        []decl
	structs      map[string]*clsrc.Layout
	prelude      map[string]string // struct name -> declaration
	preludeOrder []string
	sizes        types.Sizes
}

func (s *state) errorf(pos token.Pos, format string, args ...any) {
	p := s.l.fset.Position(pos)
	s.diag(p, fmt.Sprintf(format, args...))
}

func (s *state) diag(p token.Position, msg string) {
	if rel, err := filepath.Rel(s.l.dir, p.Filename); err == nil && !strings.HasPrefix(rel, "..") {
		p.Filename = rel
	}
	s.diags = append(s.diags, Diagnostic{Pos: p, Msg: msg})
}

// collect finds every directive, reporting those in the wrong place.
func (s *state) collect() {
	for _, f := range s.l.files {
		attached := map[*ast.CommentGroup]bool{}
		for _, d := range f.ast.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Doc != nil {
					attached[fd.Doc] = true
					s.misplaced(fd.Doc, "a function")
				}
				continue
			}
			groups := []*ast.CommentGroup{}
			for _, sp := range gd.Specs {
				cg := gd.Doc
				switch sp := sp.(type) {
				case *ast.ValueSpec:
					if sp.Doc != nil {
						cg = sp.Doc
					}
				case *ast.TypeSpec:
					if sp.Doc != nil {
						cg = sp.Doc
					}
				}
				if cg == nil {
					continue
				}
				if len(gd.Specs) > 1 && cg == gd.Doc {
					// A directive on a grouped declaration applies to each spec
					// only when written on the spec itself.
					if hasDirective(cg) {
						attached[cg] = true
						s.misplaced(cg, "a grouped declaration (put it on the spec)")
					}
					continue
				}
				groups = append(groups, cg)
				attached[cg] = true
				s.attach(f, gd, sp, cg)
			}
			if gd.Doc != nil && !attached[gd.Doc] {
				attached[gd.Doc] = true
			}
			_ = groups
		}
		for _, cg := range f.ast.Comments {
			if !attached[cg] {
				s.misplaced(cg, "a comment inside a function or detached from a declaration")
			}
		}
	}
}

func hasDirective(cg *ast.CommentGroup) bool {
	for _, c := range cg.List {
		if annotations.IsDirective(c.Text) {
			return true
		}
	}
	return false
}

func (s *state) misplaced(cg *ast.CommentGroup, what string) {
	for _, c := range cg.List {
		if annotations.IsDirective(c.Text) {
			verb, _, _ := strings.Cut(strings.TrimPrefix(c.Text, annotations.Prefix), " ")
			s.errorf(c.Pos(), "//dgen:%s must be attached to a package-level declaration, not %s", verb, what)
		}
	}
}

func (s *state) attach(f *srcFile, gd *ast.GenDecl, sp ast.Spec, cg *ast.CommentGroup) {
	ds, err := annotations.ParseCommentGroup(cg)
	var el annotations.ErrorList
	if errors.As(err, &el) {
		for _, e := range el {
			s.errorf(e.Pos, "%s", e.Msg)
		}
	} else if err != nil {
		s.errorf(cg.Pos(), "%v", err)
	}
	kind := annotations.DeclKindOf(gd, sp)
	for _, d := range ds {
		if err := annotations.CheckDecl(d, kind); err != nil {
			var ae *annotations.Error
			if errors.As(err, &ae) {
				s.errorf(ae.Pos, "%s", ae.Msg)
			} else {
				s.errorf(d.Pos, "%v", err)
			}
			continue
		}
		dc := decl{file: f, dir: d}
		switch sp := sp.(type) {
		case *ast.ValueSpec:
			if len(sp.Names) != 1 {
				s.errorf(d.Pos, "//dgen:%s must be attached to a declaration of one variable", d.Verb)
				continue
			}
			dc.name, dc.pos, dc.spec = sp.Names[0].Name, sp.Names[0].Pos(), sp
		case *ast.TypeSpec:
			dc.name, dc.pos, dc.ts = sp.Name.Name, sp.Name.Pos(), sp
		}
		if dc.name == "_" {
			s.errorf(dc.pos, "//dgen:%s on the blank identifier: nothing can refer to it, give it a name", d.Verb)
			continue
		}
		if strings.HasPrefix(dc.name, "_dgen") {
			s.errorf(dc.pos, "//dgen:%s on %s: names starting with _dgen are reserved for generated code", d.Verb, dc.name)
			continue
		}
		switch d.Verb {
		case annotations.VerbProgram:
			p, _ := d.Program()
			s.programs = append(s.programs, &program{decl: dc, source: p.Source.Value, options: p.Options.Value})
		case annotations.VerbKernel:
			k, _ := d.Kernel()
			name := k.Name.Value
			if k.Name.Pos == token.NoPos {
				name = dc.name
			}
			s.kernels = append(s.kernels, &kernel{decl: dc, clName: name})
		case annotations.VerbGlobal:
			g, _ := d.Global()
			s.globals = append(s.globals, &global{decl: dc, imageScope: g.DeviceImageScope, access: g.HostAccess})
		case annotations.VerbAlloc:
			s.allocs = append(s.allocs, dc)
		case annotations.VerbSpecConst:
			s.specs = append(s.specs, dc)
		}
	}
}

// rtArg returns the type argument of the rt generic type named name that
// the variable or field has, or reports why not.
func rtArg(t types.Type, name string) (types.Type, bool) {
	n, ok := types.Unalias(t).(*types.Named)
	if !ok || n.Obj().Pkg() == nil || n.Obj().Pkg().Path() != RuntimePath || n.Obj().Name() != name {
		return nil, false
	}
	if n.TypeArgs().Len() != 1 {
		return nil, true
	}
	return n.TypeArgs().At(0), true
}

func isRT(t types.Type, name string) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == RuntimePath && n.Obj().Name() == name
}

func (s *state) varType(d decl) types.Type {
	if d.file.info == nil {
		return nil
	}
	obj := d.file.info.Defs[d.spec.Names[0]]
	if obj == nil {
		return nil
	}
	return obj.Type()
}

var basicCL = map[types.BasicKind]string{
	types.Int8: "char", types.Uint8: "uchar", types.Int16: "short", types.Uint16: "ushort",
	types.Int32: "int", types.Uint32: "uint", types.Int64: "long", types.Uint64: "ulong",
	types.Float32: "float", types.Float64: "double",
}

// clType returns the OpenCL C spelling of a plain Go type, declaring the
// structs it needs, or an error saying why it has none.
func (s *state) clType(t types.Type) (string, error) {
	switch u := types.Unalias(t).(type) {
	case *types.Basic:
		if c, ok := basicCL[u.Kind()]; ok {
			return c, nil
		}
		if u.Kind() == types.Int || u.Kind() == types.Uint || u.Kind() == types.Uintptr {
			return "", fmt.Errorf("%s has no fixed size on the device; use int32 or int64", u)
		}
		return "", fmt.Errorf("%s has no OpenCL C counterpart", u)
	case *types.Array:
		c, err := s.clType(u.Elem())
		if err != nil {
			return "", err
		}
		if i := strings.Index(c, "["); i >= 0 {
			return fmt.Sprintf("%s[%d]%s", c[:i], u.Len(), c[i:]), nil
		}
		return fmt.Sprintf("%s[%d]", c, u.Len()), nil
	case *types.Named:
		st, ok := u.Underlying().(*types.Struct)
		if !ok {
			return s.clType(u.Underlying())
		}
		name := u.Obj().Name()
		key := "struct " + name
		if _, ok := s.structs[key]; ok {
			return key, nil
		}
		var fields []clsrc.Field
		for i := range st.NumFields() {
			f := st.Field(i)
			c, err := s.clType(f.Type())
			if err != nil {
				return "", fmt.Errorf("field %s of %s: %w", f.Name(), name, err)
			}
			fields = append(fields, clsrc.Field{Name: f.Name(), Type: c})
		}
		declText, layout, err := clsrc.StructDecl(name, fields, s.structs)
		if err != nil {
			return "", fmt.Errorf("struct %s: %w", name, err)
		}
		vars := make([]*types.Var, st.NumFields())
		for i := range vars {
			vars[i] = st.Field(i)
		}
		offs := s.sizes.Offsetsof(vars)
		if int64(layout.Size) != s.sizes.Sizeof(u) {
			return "", fmt.Errorf("struct %s is %d bytes in Go but %d in OpenCL C", name, s.sizes.Sizeof(u), layout.Size)
		}
		for i, fl := range layout.Fields {
			if int64(fl.Offset) != offs[i] {
				return "", fmt.Errorf("field %s of %s is at byte %d in Go but %d in OpenCL C", fl.Name, name, offs[i], fl.Offset)
			}
		}
		s.structs[key] = layout
		s.prelude[key] = declText
		s.preludeOrder = append(s.preludeOrder, key)
		return key, nil
	case *types.Struct:
		return "", fmt.Errorf("an unnamed struct type has no OpenCL C name; declare a named type")
	}
	return "", fmt.Errorf("%s is not plain data", t)
}

// checkDecls checks the declared types.
func (s *state) checkDecls() {
	for _, g := range s.globals {
		t := s.varType(g.decl)
		if t == nil {
			continue // outside the current build: registered as written
		}
		elem, ok := rtArg(t, "DeviceGlobal")
		if !ok || elem == nil {
			s.errorf(g.pos, "//dgen:global variable %s must have type rt.DeviceGlobal[T], not %s", g.name, typeString(t, s.l.path))
			continue
		}
		g.elem = elem
		if err := plain(elem); err != nil {
			s.errorf(g.pos, "device global %s: element type %s is not plain data: %v", g.name, typeString(elem, s.l.path), err)
			continue
		}
		c, err := s.clType(elem)
		if err != nil {
			s.errorf(g.pos, "device global %s: %v", g.name, err)
			continue
		}
		g.cl, g.size = c, s.sizes.Sizeof(elem)
	}
	for _, d := range s.allocs {
		if t := s.varType(d); t != nil {
			if e, ok := rtArg(t, "AllocSite"); !ok || e == nil {
				s.errorf(d.pos, "//dgen:alloc variable %s must have type rt.AllocSite[T], not %s", d.name, typeString(t, s.l.path))
			}
		}
	}
	for _, d := range s.specs {
		if t := s.varType(d); t != nil {
			e, ok := rtArg(t, "SpecConst")
			if !ok || e == nil {
				s.errorf(d.pos, "//dgen:specconst variable %s must have type rt.SpecConst[T], not %s", d.name, typeString(t, s.l.path))
			} else if b, ok := e.Underlying().(*types.Basic); !ok || basicCL[b.Kind()] == "" {
				s.errorf(d.pos, "specialization constant %s: %s is not a fixed-size number type", d.name, typeString(e, s.l.path))
			}
		}
	}
	for _, p := range s.programs {
		if t := s.varType(p.decl); t != nil && !isRT(t, "Program") {
			s.errorf(p.pos, "//dgen:program variable %s must have type rt.Program, not %s", p.name, typeString(t, s.l.path))
		}
	}
}

// plain reports why t is not plain data.
func plain(t types.Type) error {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		if u.Info()&(types.IsBoolean|types.IsNumeric) != 0 {
			return nil
		}
		return fmt.Errorf("%s", u)
	case *types.Array:
		return plain(u.Elem())
	case *types.Struct:
		for i := range u.NumFields() {
			if err := plain(u.Field(i).Type()); err != nil {
				return fmt.Errorf("field %s: %w", u.Field(i).Name(), err)
			}
		}
		return nil
	case *types.Pointer:
		return errors.New("a pointer")
	case *types.Slice:
		return errors.New("a slice")
	case *types.Map:
		return errors.New("a map")
	case *types.Interface:
		return errors.New("an interface")
	case *types.Chan:
		return errors.New("a channel")
	case *types.Signature:
		return errors.New("a func")
	}
	return fmt.Errorf("%s", t)
}

func typeString(t types.Type, pkg string) string {
	return types.TypeString(t, func(p *types.Package) string {
		if p.Path() == pkg {
			return ""
		}
		return p.Name()
	})
}

// checkPrograms reads, scans and rewrites every program's source.
func (s *state) checkPrograms() {
	uses := map[*global][]*program{}
	for _, p := range s.programs {
		p.clPath = filepath.Join(s.l.dir, filepath.FromSlash(p.source))
		arg, _ := p.dir.Arg("source")
		src, err := os.ReadFile(p.clPath)
		if err != nil {
			s.errorf(arg.ValuePos, "program %s: cannot read source %s: %v", p.name, p.source, unwrapPath(err))
			continue
		}
		f, err := clsrc.Parse(src)
		if err != nil {
			s.clErrors(p, err)
			continue
		}
		p.cl = f
		idents := map[string]bool{}
		for _, t := range f.Tokens {
			if t.Kind == clsrc.Ident {
				idents[t.Text] = true
			}
		}
		var gs []clsrc.Global
		byName := map[string]*global{}
		for _, g := range s.globals {
			if g.cl == "" || !idents[g.name] || (g.file.test && !p.file.test) || g.file.build != "" && g.file.build != p.file.build {
				continue
			}
			gs = append(gs, clsrc.Global{Name: g.name, Type: g.cl})
			byName[g.name] = g
		}
		rw, err := f.Rewrite(gs)
		if err != nil {
			s.clErrors(p, err)
			continue
		}
		p.kernels = map[string]clsrc.KernelGlobals{}
		for _, k := range rw.Kernels {
			p.kernels[k.Kernel] = k
		}
		var prelude strings.Builder
		need := map[string]bool{}
		for _, name := range rw.Globals {
			g := byName[name]
			p.table = append(p.table, g)
			uses[g] = append(uses[g], p)
			s.structDeps(g.cl, need)
		}
		for _, key := range s.preludeOrder {
			if need[key] {
				prelude.WriteString(s.prelude[key])
				prelude.WriteString("\n")
			}
		}
		p.image = string(clsrc.Image(prelude.String(), filepath.Base(p.source), rw.Source))
	}
	for _, g := range s.globals {
		if ps := uses[g]; g.imageScope && len(ps) > 1 {
			var names []string
			for _, p := range ps {
				names = append(names, p.name)
			}
			s.errorf(g.pos, "device global %s with device_image_scope is used in more than one device image (%s)", g.name, strings.Join(names, ", "))
		}
	}
}

// structDeps marks the struct declarations that the OpenCL C type c needs.
func (s *state) structDeps(c string, need map[string]bool) {
	if i := strings.Index(c, "["); i >= 0 {
		c = c[:i]
	}
	if !strings.HasPrefix(c, "struct ") || need[c] {
		return
	}
	need[c] = true
	if l := s.structs[c]; l != nil {
		for _, f := range l.Fields {
			s.structDeps(f.Type, need)
		}
	}
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (s *state) clErrors(p *program, err error) {
	var el clsrc.ErrorList
	if errors.As(err, &el) {
		for _, e := range el {
			s.diag(token.Position{Filename: p.clPath, Line: e.Pos.Line, Column: e.Pos.Col}, e.Msg)
		}
		return
	}
	var ce *clsrc.Error
	if errors.As(err, &ce) {
		s.diag(token.Position{Filename: p.clPath, Line: ce.Pos.Line, Column: ce.Pos.Col}, ce.Msg)
		return
	}
	s.errorf(p.pos, "program %s: %v", p.name, err)
}

// checkKernels matches kernel specs with the kernels' parameters.
func (s *state) checkKernels() {
	progs := map[string]*program{}
	for _, p := range s.programs {
		progs[p.name] = p
	}
	gByName := map[string]*global{}
	for _, g := range s.globals {
		gByName[g.name] = g
	}
	for _, k := range s.kernels {
		kd, _ := k.dir.Kernel()
		p := progs[kd.Program.Value]
		if p == nil {
			s.errorf(kd.Program.ValuePos, "kernel spec %s: no //dgen:program variable %s in this package", k.name, kd.Program.Value)
			continue
		}
		k.prog = p
		if p.cl == nil {
			continue // already reported
		}
		fn := p.cl.Function(k.clName)
		if fn == nil || !fn.Kernel || !fn.HasBody {
			pos := k.pos
			if kd.Name.Pos != token.NoPos {
				pos = kd.Name.ValuePos
			}
			var names []string
			for _, f := range p.cl.Kernels() {
				names = append(names, f.Name)
			}
			s.errorf(pos, "kernel spec %s: %s defines no kernel %s (it defines %s)", k.name, p.source, k.clName, strings.Join(names, ", "))
			continue
		}
		for _, name := range p.kernels[k.clName].Globals {
			k.globals = append(k.globals, gByName[name])
		}
		if k.file.info == nil {
			continue
		}
		st, ok := k.file.info.Defs[k.ts.Name].Type().Underlying().(*types.Struct)
		if !ok {
			continue
		}
		astFields := k.ts.Type.(*ast.StructType).Fields.List
		var fpos []token.Pos
		for _, af := range astFields {
			if len(af.Names) == 0 {
				fpos = append(fpos, af.Type.Pos())
			}
			for _, n := range af.Names {
				fpos = append(fpos, n.Pos())
			}
		}
		if st.NumFields() != len(fn.Params) {
			s.errorf(k.pos, "kernel spec %s has %d fields but kernel %s has %d parameters", k.name, st.NumFields(), k.clName, len(fn.Params))
			continue
		}
		for i := range st.NumFields() {
			f := st.Field(i)
			param := fn.Params[i]
			ga, err := param.GoArg()
			if err != nil {
				s.diag(token.Position{Filename: p.clPath, Line: param.Pos.Line, Column: param.Pos.Col}, err.Error())
				continue
			}
			fd := field{name: f.Name(), class: ga.Class, cl: ga.CLType}
			tag := reflectTag(st.Tag(i))
			fd.out = tag == "out"
			ft := f.Type()
			mismatch := func(want string) {
				s.errorf(fpos[i], "kernel spec %s: field %s has type %s but parameter %d (%s) of %s needs %s", k.name, f.Name(), typeString(ft, s.l.path), i, param.Text, k.clName, want)
			}
			switch ga.Class {
			case clsrc.ArgBuffer:
				e, ok := rtArg(ft, "Buffer")
				if !ok || e == nil {
					mismatch(bufWant(ga))
					continue
				}
				if ga.Go != "" && typeString(e.Underlying(), "") != ga.Go {
					mismatch(bufWant(ga))
					continue
				}
				if ga.Go == "" && ga.CLType != "void" {
					c, err := s.clType(e)
					if err != nil || strings.TrimPrefix(c, "struct ") != strings.TrimPrefix(ga.CLType, "struct ") {
						mismatch(bufWant(ga))
						continue
					}
				}
				fd.elem = e
			case clsrc.ArgLocal:
				e, ok := rtArg(ft, "Local")
				if !ok || e == nil || (ga.Go != "" && typeString(e.Underlying(), "") != ga.Go) {
					mismatch("rt.Local[" + orAny(ga.Go) + "]")
					continue
				}
				fd.elem = e
			default:
				if ga.Go != "" && typeString(ft.Underlying(), "") != ga.Go {
					mismatch(ga.Go)
					continue
				}
				if ga.Go == "" {
					c, err := s.clType(ft)
					if err != nil || strings.TrimPrefix(c, "struct ") != strings.TrimPrefix(ga.CLType, "struct ") {
						mismatch("a Go struct laid out as " + ga.CLType)
						continue
					}
				}
				fd.elem = ft
			}
			if fd.out && ga.Class != clsrc.ArgBuffer {
				s.errorf(fpos[i], "kernel spec %s: field %s is tagged dgen:\"out\" but is not a buffer", k.name, f.Name())
			}
			k.fields = append(k.fields, fd)
		}
	}
}

func orAny(s string) string {
	if s == "" {
		return "T"
	}
	return s
}

func bufWant(ga clsrc.GoArg) string { return "rt.Buffer[" + orAny(ga.Go) + "]" }

func reflectTag(tag string) string {
	for tag != "" {
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
	return ""
}

// checkHostWrites reports writes from Go code to globals the host may not
// write.
func (s *state) checkHostWrites() {
	ro := map[types.Object]*global{}
	for _, g := range s.globals {
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
			if !ok || (sel.Sel.Name != "Write" && sel.Sel.Name != "WriteAt") {
				return true
			}
			var id *ast.Ident
			switch x := ast.Unparen(sel.X).(type) {
			case *ast.Ident:
				id = x
			case *ast.SelectorExpr:
				id = x.Sel
			}
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

func (s *state) sortDiags() {
	sort.SliceStable(s.diags, func(i, j int) bool {
		a, b := s.diags[i].Pos, s.diags[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}
