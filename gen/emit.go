package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/dave/jennifer/jen"

	"github.com/dgen-go/dgen/annotations"
	"github.com/dgen-go/dgen/gen/internal/clsrc"
)

// out is one generated file under construction: vars are the
// registrations, initialized with the package's variables.
type out struct {
	name   string
	build  string
	pkg    string
	vars   []jen.Code
	decls  []jen.Code
	embeds []jen.Code // //go:embed variables, among decls
}

// outName returns the name of the generated file of the declarations in
// f: the main file, or the companion of a build-constrained or test file.
func (s *state) outName(f *srcFile) string {
	if f.build == "" && !f.test {
		return MainFile
	}
	stem := strings.TrimSuffix(filepath.Base(f.path), ".go")
	if f.test {
		return "zz_generated_" + strings.TrimSuffix(stem, "_test") + ".dgen_test.go"
	}
	return "zz_generated_" + stem + ".dgen.go"
}

func (s *state) fileFor(outs map[string]*out, f *srcFile) *out {
	name := s.outName(f)
	if o := outs[name]; o != nil {
		return o
	}
	o := &out{name: name, build: f.build, pkg: f.ast.Name.Name}
	outs[name] = o
	return o
}

func (s *state) id(name string) string { return s.l.path + "." + name }

// reg appends the registration "var name = codegen.Register[*codegen.kind](&codegen.kind{dict})" to o.
func (o *out) reg(name, kind string, dict jen.Dict) {
	o.vars = append(o.vars, jen.Id(name).Op("=").Qual(CodegenPath, "Register").Types(jen.Op("*").Qual(CodegenPath, kind)).
		Call(jen.Op("&").Qual(CodegenPath, kind).Values(dict)))
}

var accessName = map[string]string{
	annotations.HostAccessReadWrite: "HostReadWrite", annotations.HostAccessRead: "HostRead",
	annotations.HostAccessWrite: "HostWrite", annotations.HostAccessNone: "HostNone", "": "HostReadWrite",
}

// Names of the generated registration variables, which later
// registrations name so that Go initializes them first.
func globalVar(name string) string  { return "_dgenGlobal_" + name }
func specVar(name string) string    { return "_dgenSpecConst_" + name }
func programVar(name string) string { return "_dgenProgram_" + name }

// declList returns a []*codegen.kind literal of descriptor variables.
func declList(kind string, names []string) jen.Code {
	vals := make([]jen.Code, len(names))
	for i, n := range names {
		vals[i] = jen.Id(n)
	}
	return jen.Index().Op("*").Qual(CodegenPath, kind).Values(vals...)
}

// emit writes the generated files of the checked declarations d.
func (s *state) emit(d *declared, fr fronts, bs bindings) ([]File, error) {
	outs := map[string]*out{}
	guarded := map[*types.TypeName]bool{}
	for _, g := range d.globals {
		elem := d.globalTypes[g].elem
		dict := jen.Dict{
			jen.Id("Var"): s.typeArgs(jen.Qual(CodegenPath, "GlobalVar"), elem).Call(jen.Op("&").Id(g.name)),
			jen.Id("ID"):  jen.Lit(s.id(g.name)),
		}
		if elem != nil {
			if shape := s.shapeOf(elem); shape != nil {
				dict[jen.Id("Shape")] = shape
			}
			s.guardStructs(outs, guarded, elem)
		}
		if g.imageScope {
			dict[jen.Id("ImageScope")] = jen.True()
		}
		if a := accessName[g.access]; a != "HostReadWrite" {
			dict[jen.Id("HostAccess")] = jen.Qual(CodegenPath, a)
		}
		s.fileFor(outs, g.file).reg(globalVar(g.name), "Global", dict)
	}
	for _, sc := range d.specs {
		dict := jen.Dict{
			jen.Id("Var"):     s.typeArgs(jen.Qual(CodegenPath, "SpecConstVar"), s.elemOf(sc, "SpecConst")).Call(jen.Op("&").Id(sc.name), jen.Op(d.specDefaultOr0(sc.name).goLit)),
			jen.Id("ID"):      jen.Lit(s.id(sc.name)),
			jen.Id("Name"):    jen.Lit(sc.name),
			jen.Id("Default"): jen.Lit(d.specDefaults[sc.name].cl),
		}
		d.addSpecLimits(dict, sc.name) // speclimits.go
		s.fileFor(outs, sc.file).reg(specVar(sc.name), "SpecConst", dict)
	}
	for _, p := range d.programs {
		if err := s.emitProgram(s.fileFor(outs, p.file), fr[p], imageText(fr[p], d, bs), d.specs); err != nil {
			return nil, err
		}
	}
	for _, k := range d.kernels {
		b := bs[k]
		if b == nil {
			continue
		}
		s.emitKernel(s.fileFor(outs, k.file), k, b)
		if k.file.info != nil {
			s.guardStructs(outs, guarded, k.file.info.Defs[k.ts.Name].Type())
		}
	}
	for _, a := range d.allocs {
		site := jen.Op("&").Id(a.name)
		if t := s.varType(a); t != nil && isRT(t, "ImageSite") {
			// An ImageSite registers as the AllocSite[Image] it converts to.
			site = jen.Parens(jen.Op("*").Qual(RuntimePath, "AllocSite").Types(jen.Qual(RuntimePath, "Image"))).Call(site)
		}
		s.fileFor(outs, a.file).reg("_", "AllocSite", jen.Dict{
			jen.Id("Var"):  s.typeArgs(jen.Qual(CodegenPath, "AllocSiteVar"), s.elemOf(a, "AllocSite")).Call(site),
			jen.Id("ID"):   jen.Lit(s.id(a.name)),
			jen.Id("Name"): jen.Lit(a.name),
		})
	}
	names := make([]string, 0, len(outs))
	for n := range outs {
		names = append(names, n)
	}
	sort.Strings(names)
	var files []File
	for _, n := range names {
		b, err := s.render(outs[n])
		if err != nil {
			return nil, err
		}
		files = append(files, File{Name: n, Content: b})
	}
	return files, nil
}

// programSource is a file that a program's image was made from: its name
// in the image (imageName) and its path.
type programSource struct{ name, path string }

// programSources returns the files that p's image was made from: its .cl
// file, then the headers the preprocessor read, sorted by name.
func (s *state) programSources(p *front) []programSource {
	var hdrs []programSource
	for path := range p.pp.Files {
		if path != p.clPath {
			hdrs = append(hdrs, programSource{s.imageName(p, path), path})
		}
	}
	sort.Slice(hdrs, func(i, j int) bool { return hdrs[i].name < hdrs[j].name })
	return append([]programSource{{p.source, p.clPath}}, hdrs...)
}

// emitProgram emits p's image, its embedded sources and its registration.
// The registration records the xxhash of every source as read now; the
// runtime compares it with the sources embedded at build time, and with
// a header outside the package, which the build cannot embed, as it is
// on the machine at first use.
func (s *state) emitProgram(o *out, p *front, image string, specConsts []decl) error {
	var srcs, embeds []jen.Code
	for i, src := range s.programSources(p) {
		b, err := os.ReadFile(src.path)
		if err != nil {
			return fmt.Errorf("hash program source: %w", err)
		}
		dict := jen.Dict{jen.Id("Name"): jen.Lit(src.name), jen.Id("Hash"): jen.Id(fmt.Sprintf("%#016x", xxhash.Sum64(b)))}
		if !fs.ValidPath(src.name) {
			dict[jen.Id("Outside")] = jen.True() // go:embed cannot hold it
			srcs = append(srcs, jen.Values(dict))
			continue
		}
		v := "_dgenSource_" + p.name
		if i > 0 {
			v += fmt.Sprint("_", i)
		}
		dict[jen.Id("Embedded")] = jen.Id(v)
		srcs = append(srcs, jen.Values(dict))
		embeds = append(embeds, jen.Comment(v+" is "+src.name+" as it is now, to compare with what dgen read.").Line().
			Comment("//go:embed "+src.name).Line().
			Var().Id(v).String())
	}
	dict := jen.Dict{
		jen.Id("Var"):   jen.Qual(CodegenPath, "ProgramVar").Call(jen.Op("&").Id(p.name)),
		jen.Id("ID"):    jen.Lit(s.id(p.name)),
		jen.Id("Name"):  jen.Lit(p.source),
		jen.Id("Image"): jen.Id("_dgenImage_" + p.name),
	}
	if p.options != "" {
		dict[jen.Id("Options")] = jen.Lit(p.options)
	}
	var specs, owns []string
	used := identifiers(image)
	for _, sc := range specConsts {
		if used[sc.name] {
			specs = append(specs, specVar(sc.name))
		}
	}
	for _, g := range p.table {
		if g.imageScope {
			owns = append(owns, globalVar(g.name))
		}
	}
	if len(specs) > 0 {
		dict[jen.Id("SpecConsts")] = declList("SpecConst", specs)
	}
	if len(owns) > 0 {
		dict[jen.Id("Owns")] = declList("Global", owns)
	}
	if len(srcs) > 0 {
		dict[jen.Id("Sources")] = jen.Index().Qual(CodegenPath, "Source").Values(srcs...)
	}
	o.reg(programVar(p.name), "Program", dict)
	o.decls = append(o.decls,
		jen.Comment(fmt.Sprintf("_dgenImage_%s is the device image of %s: %s after dgen's rewriting.", p.name, p.name, p.source)).Line().
			Const().Id("_dgenImage_"+p.name).Op("=").Lit(image))
	o.decls = append(o.decls, embeds...)
	o.embeds = append(o.embeds, embeds...)
	return nil
}

// identifiers returns the identifiers of an OpenCL C source, comments
// left out.
func identifiers(src string) map[string]bool {
	return clsrc.Identifiers([]byte(src))
}

// typeCode returns the spelling of t in the generated file.
func (s *state) typeCode(t types.Type) jen.Code {
	if c, ok := s.typeCodeOK(t); ok {
		return c
	}
	return jen.Id(t.String())
}

// elemOf returns the type argument T of the rt.kind[T] variable d, or nil
// where its type is unknown (a file outside the current build).
func (s *state) elemOf(d decl, kind string) types.Type {
	if t := s.varType(d); t != nil {
		if e, ok := rtArg(t, kind); ok {
			return e
		}
	}
	return nil
}

// imageText returns f's device image, with the guard of the first
// read_write image parameter of its kernels' specs, in the package's order
// (checkImageField), when there is one.
func imageText(f *front, d *declared, bs bindings) string {
	for _, k := range d.kernels {
		if b := bs[k]; b != nil && b.prog == f && b.rwGuard != "" {
			return f.image + b.rwGuard
		}
	}
	return f.image
}

func (s *state) emitKernel(o *out, k *kernel, b *binding) {
	hidden := "_dgenKernel_" + k.name
	dict := jen.Dict{
		jen.Id("ID"):      jen.Lit(s.id(k.name)),
		jen.Id("Name"):    jen.Lit(k.clName),
		jen.Id("Program"): jen.Id(programVar(b.prog.name)),
	}
	if len(b.fields) > 0 {
		dict[jen.Id("Params")] = jen.Lit(len(b.fields))
	}
	if len(b.globals) > 0 {
		names := make([]string, len(b.globals))
		for i, g := range b.globals {
			names[i] = globalVar(g.name)
		}
		dict[jen.Id("Globals")] = declList("Global", names)
	}
	if k.file.info != nil {
		if shape := s.shapeOf(k.file.info.Defs[k.ts.Name].Type()); shape != nil {
			dict[jen.Id("Shape")] = shape
		}
	}
	if len(b.exts) > 0 {
		dict[jen.Id("Extensions")] = jen.Index().String().ValuesFunc(func(g *jen.Group) {
			for _, e := range b.exts {
				g.Lit(e)
			}
		})
	}
	if len(b.specs) > 0 {
		names := make([]string, len(b.specs))
		for i, sf := range b.specs {
			names[i] = specVar(sf.konst.name)
		}
		dict[jen.Id("Specs")] = declList("SpecConst", names)
	}
	o.reg(hidden, "Kernel", dict)

	// The arguments are set by a function of their own, which Enqueue and
	// EnqueueEvent share; a spec with no fields has none. Each setter
	// writes the kernel object's launch record; an error is kept for
	// Submit or Launch to return.
	var setArgs jen.Code = jen.Null()
	if len(b.fields) > 0 {
		args := "_dgenArgs_" + k.name
		setArgs = jen.Id(args).Call(jen.Id("s"), jen.Id("k"))
		sets := make([]jen.Code, len(b.fields))
		for i, f := range b.fields {
			if set := imageArg(i, f); set != nil {
				sets[i] = set
				continue
			}
			switch f.class {
			case clsrc.ArgBuffer:
				sets[i] = s.typeArgs(jen.Qual(CodegenPath, "SetBuffer"), f.elem).Call(jen.Id("k"), jen.Lit(i), jen.Id("s").Dot(f.name))
			case clsrc.ArgLocal:
				sets[i] = jen.Qual(CodegenPath, "SetLocal").Call(jen.Id("k"), jen.Lit(i), jen.Id("s").Dot(f.name).Dot("Bytes").Call())
			default:
				sets[i] = s.typeArgs(jen.Qual(CodegenPath, "SetScalar"), f.elem).Call(jen.Id("k"), jen.Lit(i), jen.Id("s").Dot(f.name))
			}
		}
		o.decls = append(o.decls, jen.Comment(fmt.Sprintf("%s sets the arguments of kernel %s from s.", args, k.clName)).Line().
			Func().Id(args).Params(jen.Id("s").Op("*").Id(k.name), jen.Id("k").Op("*").Qual(CodegenPath, "Instance")).Block(sets...))
	}
	params := []jen.Code{jen.Id("q").Op("*").Qual(RuntimePath, "Queue"), jen.Id("r").Qual(RuntimePath, "Range"), jen.Id("wait").Op("...").Op("*").Qual(RuntimePath, "Event")}
	var acquire jen.Code = jen.List(jen.Id("k"), jen.Err()).Op(":=").Qual(CodegenPath, "Acquire").Call(jen.Id("q"), jen.Id(hidden))
	var acquireCtx jen.Code = jen.List(jen.Id("k"), jen.Err()).Op(":=").Qual(CodegenPath, "AcquireContext").Call(jen.Id("ctx"), jen.Id("q"), jen.Id(hidden))
	if len(b.specs) > 0 {
		// The launch's own specialization-constant values, collected into
		// fixed-size SpecArgs by a function of their own, whose names
		// (reserved _dgen ones) shadow no constant: the instance parked
		// for the same values serves the launch.
		spec := "_dgenSpec_" + k.name
		sets := make([]jen.Code, 0, len(b.specs)+1)
		for i, sf := range b.specs {
			sets = append(sets, s.typeArgs(jen.Qual(CodegenPath, "SetSpec"), sf.elem).
				Call(jen.Op("&").Id("_dgenA"), jen.Lit(i), jen.Op("&").Id(sf.konst.name), jen.Id("_dgenS").Dot(sf.name)))
		}
		sets = append(sets, jen.Return())
		o.decls = append(o.decls, jen.Comment(fmt.Sprintf("%s returns the specialization-constant values that the fields of s give its launch.", spec)).Line().
			Func().Id(spec).Params(jen.Id("_dgenS").Op("*").Id(k.name)).Params(jen.Id("_dgenA").Qual(CodegenPath, "SpecArgs")).Block(sets...))
		acquire = jen.Id("a").Op(":=").Id(spec).Call(jen.Id("s")).Line().
			List(jen.Id("k"), jen.Err()).Op(":=").Qual(CodegenPath, "AcquireSpec").Call(jen.Id("q"), jen.Id(hidden), jen.Op("&").Id("a"))
		acquireCtx = jen.Id("a").Op(":=").Id(spec).Call(jen.Id("s")).Line().
			List(jen.Id("k"), jen.Err()).Op(":=").Qual(CodegenPath, "AcquireSpecContext").Call(jen.Id("ctx"), jen.Id("q"), jen.Id(hidden), jen.Op("&").Id("a"))
	}
	o.decls = append(o.decls, jen.Comment(fmt.Sprintf("Enqueue sets the arguments of kernel %s from s and launches it over r after wait, creating no event; EnqueueEvent returns one.", k.clName)).Line().
		Func().Params(jen.Id("s").Op("*").Id(k.name)).Id("Enqueue").Params(params...).Error().Block(
		acquire,
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		setArgs,
		jen.Return(jen.Qual(CodegenPath, "Submit").Call(jen.Id("q"), jen.Id("k"), jen.Id("r"), jen.Id("wait"))),
	))
	o.decls = append(o.decls, jen.Comment("EnqueueEvent is Enqueue with an event, to wait for or to pass in a wait list; on some drivers an event costs as much as the launch.").Line().
		Func().Params(jen.Id("s").Op("*").Id(k.name)).Id("EnqueueEvent").Params(params...).
		Params(jen.Op("*").Qual(RuntimePath, "Event"), jen.Error()).Block(
		acquire,
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		setArgs,
		jen.Return(jen.Qual(CodegenPath, "Launch").Call(jen.Id("q"), jen.Id("k"), jen.Id("r"), jen.Id("wait"))),
	))
	// The Context forms bound the build of the kernel's program at its
	// first launch, or the wait for another goroutine's or process's.
	ctxParams := append([]jen.Code{jen.Id("ctx").Qual("context", "Context")}, params...)
	o.decls = append(o.decls, jen.Comment("EnqueueContext is Enqueue with ctx bounding the build of the kernel's program at its first launch, or the wait for another goroutine's or process's build: when ctx is done first, it returns an error wrapping ctx.Err() and launches nothing.").Line().
		Func().Params(jen.Id("s").Op("*").Id(k.name)).Id("EnqueueContext").Params(ctxParams...).Error().Block(
		acquireCtx,
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		setArgs,
		jen.Return(jen.Qual(CodegenPath, "Submit").Call(jen.Id("q"), jen.Id("k"), jen.Id("r"), jen.Id("wait"))),
	))
	o.decls = append(o.decls, jen.Comment("EnqueueEventContext is EnqueueEvent bounded by ctx, as EnqueueContext is Enqueue.").Line().
		Func().Params(jen.Id("s").Op("*").Id(k.name)).Id("EnqueueEventContext").Params(ctxParams...).
		Params(jen.Op("*").Qual(RuntimePath, "Event"), jen.Error()).Block(
		acquireCtx,
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		setArgs,
		jen.Return(jen.Qual(CodegenPath, "Launch").Call(jen.Id("q"), jen.Id("k"), jen.Id("r"), jen.Id("wait"))),
	))
	for _, f := range b.fields {
		if !f.out {
			continue
		}
		site := "_dgenSite_" + k.name + "_" + f.name
		sid := s.id(k.name + "." + f.name)
		o.decls = append(o.decls, jen.Comment(site+" is the allocation site of "+k.name+"."+f.name+".").Line().
			Var().Id(site).Qual(RuntimePath, "AllocSite").Types(s.typeCode(f.elem)))
		o.reg("_", "AllocSite", jen.Dict{
			jen.Id("Var"):  s.typeArgs(jen.Qual(CodegenPath, "AllocSiteVar"), f.elem).Call(jen.Op("&").Id(site)),
			jen.Id("ID"):   jen.Lit(sid),
			jen.Id("Name"): jen.Lit(k.name + "." + f.name),
		})
		o.decls = append(o.decls, jen.Comment(fmt.Sprintf("Alloc%s allocates n elements for s.%s under the field's own allocation tag.", f.name, f.name)).Line().
			Func().Params(jen.Id("s").Op("*").Id(k.name)).Id("Alloc"+f.name).
			Params(jen.Id("q").Op("*").Qual(RuntimePath, "Queue"), jen.Id("n").Int()).Error().Block(
			jen.List(jen.Id("b"), jen.Err()).Op(":=").Id(site).Dot("Alloc").Call(jen.Id("q"), jen.Id("n")),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
			jen.Id("s").Dot(f.name).Op("=").Id("b"),
			jen.Return(jen.Nil()),
		))
	}
}

// render writes one file. The runtime is imported under the name "rt",
// or under an alias when the package declares "rt" itself.
func (s *state) render(o *out) ([]byte, error) {
	alias := s.importName("rt")
	f := jen.NewFilePathName(s.l.path, o.pkg)
	if strings.HasSuffix(o.pkg, "_test") {
		f = jen.NewFilePathName(s.l.path+"_test", o.pkg)
	}
	f.HeaderComment("Code generated by dgen. DO NOT EDIT.")
	if o.build != "" {
		f.HeaderComment("//go:build " + o.build)
	}
	f.ImportAlias(RuntimePath, alias)
	f.ImportAlias(CodegenPath, s.importName("codegen"))
	for _, std := range []string{"context", "unsafe"} {
		if name := s.importName(std); name != std {
			f.ImportAlias(std, name)
		}
	}
	if len(o.embeds) > 0 {
		f.Anon("embed")
	}
	f.Comment(fmt.Sprintf("This file was generated for version %d of the rt/codegen contract: the next line compiles only where the rt in the build implements it.", ContractVersion))
	v := jen.Lit(ContractVersion)
	inWindow := jen.Min(jen.Lit(1), jen.Max(jen.Lit(0), v.Clone().Op("-").Qual(CodegenPath, "MinVersion").Op("+").Lit(1)),
		jen.Max(jen.Lit(0), jen.Qual(CodegenPath, "MaxVersion").Op("-").Add(v).Op("+").Lit(1)))
	f.Var().Id("_").Qual(CodegenPath, "InWindow").Op("=").Qual(CodegenPath, "Version").Types(jen.Index(inWindow).Struct()).
		Call(jen.Lit(versionMessage))
	for _, d := range o.decls {
		f.Add(d)
	}
	if len(o.vars) > 0 {
		f.Comment("The descriptors, registered while the package's variables are initialized: before any init function of the package runs.")
		f.Var().Defs(o.vars...)
	}
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("render %s: %w", o.name, err)
	}
	src := buf.Bytes()
	out, err := format.Source(src)
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", o.name, err)
	}
	return out, nil
}

// importName returns name, or "dgen"+name when the package declares name
// itself, as the name under which generated files import a package.
func (s *state) importName(name string) string {
	if s.l.scope.Lookup(name) != nil {
		return "dgen" + name
	}
	return name
}

// ContractVersion is the version of the rt/codegen contract that generated
// files are written for (codegen.GenVersion); the runtime accepts files of
// versions codegen.MinVersion to codegen.MaxVersion. The golden packages
// compile only when it lies in that window.
const ContractVersion = 5

// versionMessage is what the compiler shows when rt/codegen does not
// implement the generated file's version.
var versionMessage = fmt.Sprintf("ERROR: this file was generated by a dgen that targets version %d of the rt/codegen contract, which the rt in this build does not implement. "+
	"Run go generate with the dgen of the module's dgen version (go run github.com/dgen-go/dgen/cmd/dgen).", ContractVersion)
