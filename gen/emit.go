package gen

import (
	"bytes"
	"errors"
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

// Generate loads, checks and generates the package in dir. It returns the
// generated files, or Diagnostics (or another error) and no files.
func Generate(dir string) ([]File, error) {
	l, err := load(dir)
	if err != nil {
		return nil, err
	}
	s := newState(l)
	s.collect()
	s.checkShapes()
	s.checkDecls()
	s.checkPrograms()
	s.checkKernels()
	s.checkHostWrites()
	if len(s.diags) > 0 {
		s.sortDiags()
		return nil, s.diags
	}
	return s.emit()
}

// Write writes files into dir, each through a temporary file and a rename,
// and removes generated files of earlier runs that files does not hold.
func Write(dir string, files []File) error {
	keep := map[string]bool{}
	for _, f := range files {
		keep[f.Name] = true
		tmp, err := createTemp(dir)
		if err != nil {
			return fmt.Errorf("write %s: %w", f.Name, err)
		}
		_, err = tmp.Write(f.Content)
		if cerr := tmp.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp.Name(), filepath.Join(dir, f.Name))
		}
		if err != nil {
			os.Remove(tmp.Name())
			return fmt.Errorf("write %s: %w", f.Name, err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("clean %s: %w", dir, err)
	}
	for _, e := range ents {
		if isGenerated(e.Name()) && !keep[e.Name()] {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("remove stale %s: %w", e.Name(), err)
			}
		}
	}
	return nil
}

// Diff compares files with the generated files in dir and returns what
// Write would change, one line a file ("zz_generated.dgen.go: out of
// date", "...: would be created", "...: would be removed"), sorted; none
// when dir is up to date.
func Diff(dir string, files []File) ([]string, error) {
	var changes []string
	keep := map[string]bool{}
	for _, f := range files {
		keep[f.Name] = true
		old, err := os.ReadFile(filepath.Join(dir, f.Name))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			changes = append(changes, f.Name+": would be created")
		case err != nil:
			return nil, fmt.Errorf("compare %s: %w", f.Name, err)
		case !bytes.Equal(old, f.Content):
			changes = append(changes, f.Name+": out of date")
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("compare %s: %w", dir, err)
	}
	for _, e := range ents {
		if isGenerated(e.Name()) && !keep[e.Name()] {
			changes = append(changes, e.Name()+": would be removed")
		}
	}
	sort.Strings(changes)
	return changes, nil
}

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

func (s *state) fileFor(outs map[string]*out, f *srcFile) *out {
	name := MainFile
	if f.build != "" || f.test {
		stem := strings.TrimSuffix(filepath.Base(f.path), ".go")
		if f.test {
			stem = strings.TrimSuffix(stem, "_test")
			name = "zz_generated_" + stem + ".dgen_test.go"
		} else {
			name = "zz_generated_" + stem + ".dgen.go"
		}
	}
	if o := outs[name]; o != nil {
		return o
	}
	o := &out{name: name, build: f.build, pkg: f.ast.Name.Name}
	outs[name] = o
	return o
}

func (s *state) id(name string) string { return s.l.path + "." + name }

// reg appends the registration "var name = value" to o.
func (o *out) reg(name string, value jen.Code) {
	o.vars = append(o.vars, jen.Id(name).Op("=").Add(value))
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

// decls returns a []codegen.Decl literal of the registration variables.
func declList(names []string) jen.Code {
	vals := make([]jen.Code, len(names))
	for i, n := range names {
		vals[i] = jen.Id(n)
	}
	return jen.Index().Qual(CodegenPath, "Decl").Values(vals...)
}

func (s *state) emit() ([]File, error) {
	outs := map[string]*out{}
	for _, g := range s.globals {
		dict := jen.Dict{jen.Id("ID"): jen.Lit(s.id(g.name))}
		if g.imageScope {
			dict[jen.Id("ImageScope")] = jen.True()
		}
		if a := accessName[g.access]; a != "HostReadWrite" {
			dict[jen.Id("HostAccess")] = jen.Qual(CodegenPath, a)
		}
		s.fileFor(outs, g.file).reg(globalVar(g.name), jen.Qual(CodegenPath, "RegisterGlobal").Call(jen.Op("&").Id(g.name), jen.Qual(CodegenPath, "Global").Values(dict)))
	}
	for _, sc := range s.specs {
		s.fileFor(outs, sc.file).reg(specVar(sc.name), jen.Qual(CodegenPath, "RegisterSpecConst").Call(jen.Op("&").Id(sc.name), jen.Lit(s.id(sc.name)), jen.Lit(sc.name), jen.Op(s.specDefaultOr0(sc.name).goLit), jen.Lit(s.specDefaults[sc.name].cl)))
	}
	for _, p := range s.programs {
		if err := s.emitProgram(s.fileFor(outs, p.file), p); err != nil {
			return nil, err
		}
	}
	for _, k := range s.kernels {
		if k.prog == nil {
			continue
		}
		s.emitKernel(s.fileFor(outs, k.file), k)
	}
	for _, a := range s.allocs {
		s.fileFor(outs, a.file).reg("_", jen.Qual(CodegenPath, "RegisterAllocSite").Call(jen.Op("&").Id(a.name), jen.Lit(s.id(a.name)), jen.Lit(a.name)))
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

// programSources returns the files, relative to the package directory in
// slash form, that p's image was made from: its .cl file, then the headers
// the preprocessor read, sorted.
func (s *state) programSources(p *program) []string {
	var hdrs []string
	for path := range p.pp.Files {
		if rel, err := filepath.Rel(s.l.dir, path); err == nil && path != p.clPath {
			hdrs = append(hdrs, filepath.ToSlash(rel))
		}
	}
	sort.Strings(hdrs)
	return append([]string{p.source}, hdrs...)
}

// emitProgram emits p's image, its embedded sources and its registration.
// The registration records the xxhash of every source as read now; the
// runtime compares it with the sources embedded at build time.
func (s *state) emitProgram(o *out, p *program) error {
	var srcs, embeds []jen.Code
	for i, name := range s.programSources(p) {
		b, err := os.ReadFile(filepath.Join(s.l.dir, filepath.FromSlash(name)))
		if err != nil {
			return fmt.Errorf("hash program source: %w", err)
		}
		if !fs.ValidPath(name) {
			continue // outside the package: go:embed cannot hold it
		}
		v := "_dgenSource_" + p.name
		if i > 0 {
			v += fmt.Sprint("_", i)
		}
		srcs = append(srcs, jen.Values(jen.Dict{jen.Id("Name"): jen.Lit(name), jen.Id("Hash"): jen.Id(fmt.Sprintf("%#016x", xxhash.Sum64(b))), jen.Id("Embedded"): jen.Id(v)}))
		embeds = append(embeds, jen.Comment(v+" is "+name+" as it is now, to compare with what dgen read.").Line().
			Comment("//go:embed "+name).Line().
			Var().Id(v).String())
	}
	dict := jen.Dict{
		jen.Id("ID"):    jen.Lit(s.id(p.name)),
		jen.Id("Name"):  jen.Lit(p.source),
		jen.Id("Image"): jen.Id("_dgenImage_" + p.name),
	}
	if p.options != "" {
		dict[jen.Id("Options")] = jen.Lit(p.options)
	}
	var specs, owns []string
	used := identifiers(p.image)
	for _, sc := range s.specs {
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
		dict[jen.Id("SpecConsts")] = declList(specs)
	}
	if len(owns) > 0 {
		dict[jen.Id("Owns")] = declList(owns)
	}
	if len(srcs) > 0 {
		dict[jen.Id("Sources")] = jen.Index().Qual(CodegenPath, "Source").Values(srcs...)
	}
	o.reg(programVar(p.name), jen.Qual(CodegenPath, "RegisterProgram").Call(jen.Op("&").Id(p.name), jen.Qual(CodegenPath, "Program").Values(dict)))
	o.decls = append(o.decls,
		jen.Comment(fmt.Sprintf("_dgenImage_%s is the device image of %s: %s after dgen's rewriting.", p.name, p.name, p.source)).Line().
			Const().Id("_dgenImage_"+p.name).Op("=").Lit(p.image))
	o.decls = append(o.decls, embeds...)
	o.embeds = append(o.embeds, embeds...)
	return nil
}

// identifiers returns the identifiers of an OpenCL C source, comments
// left out.
func identifiers(src string) map[string]bool {
	return clsrc.Identifiers([]byte(src))
}

func (s *state) typeCode(t types.Type) jen.Code {
	switch u := types.Unalias(t).(type) {
	case *types.Basic:
		return jen.Id(u.Name())
	case *types.Array:
		return jen.Index(jen.Lit(int(u.Len()))).Add(s.typeCode(u.Elem()))
	case *types.Named:
		if u.Obj().Pkg() == nil || u.Obj().Pkg().Path() == s.l.path {
			return jen.Id(u.Obj().Name())
		}
		return jen.Qual(u.Obj().Pkg().Path(), u.Obj().Name())
	}
	return jen.Id(t.String())
}

func (s *state) emitKernel(o *out, k *kernel) {
	hidden := "_dgenKernel_" + k.name
	dict := jen.Dict{
		jen.Id("ID"):   jen.Lit(s.id(k.name)),
		jen.Id("Name"): jen.Lit(k.clName),
	}
	if len(k.fields) > 0 {
		dict[jen.Id("Params")] = jen.Lit(len(k.fields))
	}
	if len(k.globals) > 0 {
		names := make([]string, len(k.globals))
		for i, g := range k.globals {
			names[i] = globalVar(g.name)
		}
		dict[jen.Id("Globals")] = declList(names)
	}
	o.reg(hidden, jen.Qual(CodegenPath, "RegisterKernel").Call(jen.Id(programVar(k.prog.name)), jen.Qual(CodegenPath, "Kernel").Values(dict)))

	// The arguments are set by a function of their own, which Enqueue and
	// EnqueueEvent share; a spec with no fields has none.
	setErr := jen.Code(jen.Nil())
	if len(k.fields) > 0 {
		args := "_dgenArgs_" + k.name
		setErr = jen.Id(args).Call(jen.Id("s"), jen.Id("k"))
		sets := make([]jen.Code, len(k.fields))
		for i, f := range k.fields {
			if set := imageArg(i, f); set != nil {
				sets[i] = set
				continue
			}
			switch f.class {
			case clsrc.ArgBuffer:
				sets[i] = jen.Id("k").Dot("SetBuffer").Call(jen.Lit(i), jen.Id("s").Dot(f.name).Dot("Mem").Call())
			case clsrc.ArgLocal:
				sets[i] = jen.Id("k").Dot("SetLocal").Call(jen.Lit(i), jen.Id("s").Dot(f.name).Dot("Bytes").Call())
			default:
				sets[i] = jen.Qual(RuntimePath, "SetArg").Call(jen.Id("k"), jen.Lit(i), jen.Id("s").Dot(f.name))
			}
		}
		body := []jen.Code{jen.Return(sets[0])}
		if len(sets) > 1 {
			body = []jen.Code{jen.Err().Op(":=").Add(sets[0])}
			for _, set := range sets[1:] {
				body = append(body, jen.If(jen.Err().Op("==").Nil()).Block(jen.Err().Op("=").Add(set)))
			}
			body = append(body, jen.Return(jen.Err()))
		}
		o.decls = append(o.decls, jen.Comment(fmt.Sprintf("%s sets the arguments of kernel %s from s and returns the first error.", args, k.clName)).Line().
			Func().Id(args).Params(jen.Id("s").Op("*").Id(k.name), jen.Id("k").Op("*").Qual(RuntimePath, "Kernel")).Error().Block(body...))
	}
	params := []jen.Code{jen.Id("q").Op("*").Qual(RuntimePath, "Queue"), jen.Id("r").Qual(RuntimePath, "Range"), jen.Id("wait").Op("...").Op("*").Qual(RuntimePath, "Event")}
	acquire := jen.List(jen.Id("k"), jen.Err()).Op(":=").Id(hidden).Dot("Acquire").Call(jen.Id("q"))
	o.decls = append(o.decls, jen.Comment(fmt.Sprintf("Enqueue sets the arguments of kernel %s from s and launches it over r after wait, creating no event; EnqueueEvent returns one.", k.clName)).Line().
		Func().Params(jen.Id("s").Op("*").Id(k.name)).Id("Enqueue").Params(params...).Error().Block(
		acquire,
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Err())),
		jen.Return(jen.Id(hidden).Dot("Submit").Call(jen.Id("q"), jen.Id("k"), jen.Id("r"), setErr, jen.Id("wait"))),
	))
	o.decls = append(o.decls, jen.Comment("EnqueueEvent is Enqueue with an event, to wait for or to pass in a wait list; on some drivers an event costs as much as the launch.").Line().
		Func().Params(jen.Id("s").Op("*").Id(k.name)).Id("EnqueueEvent").Params(params...).
		Params(jen.Op("*").Qual(RuntimePath, "Event"), jen.Error()).Block(
		acquire,
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
		jen.Return(jen.Id(hidden).Dot("Launch").Call(jen.Id("q"), jen.Id("k"), jen.Id("r"), setErr, jen.Id("wait"))),
	))
	for _, f := range k.fields {
		if !f.out {
			continue
		}
		site := "_dgenSite_" + k.name + "_" + f.name
		sid := s.id(k.name + "." + f.name)
		o.decls = append(o.decls, jen.Comment(site+" is the allocation site of "+k.name+"."+f.name+".").Line().
			Var().Id(site).Qual(RuntimePath, "AllocSite").Types(s.typeCode(f.elem)))
		o.reg("_", jen.Qual(CodegenPath, "RegisterAllocSite").Call(jen.Op("&").Id(site), jen.Lit(sid), jen.Lit(k.name+"."+f.name)))
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
	if len(o.embeds) > 0 {
		f.Anon("embed")
	}
	f.Comment("The generated code needs a runtime that implements the contract it was generated for.")
	f.Var().Id("_").Qual(CodegenPath, "LatestVersion").Op("=").Qual(CodegenPath, "Version").Types(jen.Index(jen.Lit(0)).Index(jen.Lit(ContractMinor)).Struct()).
		Call(jen.Lit(versionMessage))
	for _, d := range o.decls {
		f.Add(d)
	}
	if len(o.vars) > 0 {
		f.Comment("Registration, while the package's variables are initialized: before any init function of the package runs.")
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

// ContractMinor is the minor version of the rt/codegen contract that
// generated files are written for (codegen.LatestVersion); its major
// version is 0. The golden packages compile only when the two agree.
const ContractMinor = 1

// versionMessage is what the compiler shows when rt/codegen implements
// another contract than the generated file's.
var versionMessage = fmt.Sprintf("ERROR: this file was generated by a dgen that targets rt/codegen contract v0.%d, which the rt in this build does not implement. "+
	"Run go generate with the dgen of the module's dgen version (go run github.com/dgen-go/dgen/cmd/dgen).", ContractMinor)
