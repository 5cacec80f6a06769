package gen

import (
	"bytes"
	"fmt"
	"go/format"
	"go/types"
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
		tmp, err := os.CreateTemp(dir, ".dgen-*.tmp")
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

// out is one generated file under construction.
type out struct {
	name  string
	build string
	pkg   string
	init  []jen.Code
	decls []jen.Code
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

func hashLit(id string) jen.Code {
	return jen.Id(fmt.Sprintf("%#016x", xxhash.Sum64String(id)))
}

var accessName = map[string]string{
	annotations.HostAccessReadWrite: "HostReadWrite", annotations.HostAccessRead: "HostRead",
	annotations.HostAccessWrite: "HostWrite", annotations.HostAccessNone: "HostNone", "": "HostReadWrite",
}

func (s *state) emit() ([]File, error) {
	outs := map[string]*out{}
	for _, g := range s.globals {
		o := s.fileFor(outs, g.file)
		id := s.id(g.name)
		o.init = append(o.init, jen.Qual(RuntimePath, "RegisterDeviceGlobal").Call(jen.Op("&").Id(g.name), jen.Op("&").Qual(RuntimePath, "GlobalInfo").Values(jen.Dict{
			jen.Id("ID"):         jen.Lit(id),
			jen.Id("Hash"):       hashLit(id),
			jen.Id("ImageScope"): jen.Lit(g.imageScope),
			jen.Id("HostAccess"): jen.Qual(RuntimePath, accessName[g.access]),
		})))
	}
	for _, p := range s.programs {
		o := s.fileFor(outs, p.file)
		id := s.id(p.name)
		var table []jen.Code
		for _, g := range p.table {
			table = append(table, jen.Values(jen.Dict{
				jen.Id("ID"):         jen.Lit(s.id(g.name)),
				jen.Id("Size"):       jen.Lit(g.size),
				jen.Id("ImageScope"): jen.Lit(g.imageScope),
			}))
		}
		dict := jen.Dict{
			jen.Id("ID"):     jen.Lit(id),
			jen.Id("Hash"):   hashLit(id),
			jen.Id("Name"):   jen.Lit(p.source),
			jen.Id("Source"): jen.Id("_dgenImage_" + p.name),
		}
		if p.options != "" {
			dict[jen.Id("Options")] = jen.Lit(p.options)
		}
		if len(table) > 0 {
			dict[jen.Id("Globals")] = jen.Index().Qual(RuntimePath, "ProgramGlobal").Values(table...)
		}
		o.init = append(o.init, jen.Qual(RuntimePath, "RegisterProgram").Call(jen.Op("&").Id(p.name), jen.Op("&").Qual(RuntimePath, "ProgramInfo").Values(dict)))
		o.decls = append(o.decls,
			jen.Comment(fmt.Sprintf("_dgenImage_%s is the device image of %s: %s after dgen's rewriting.", p.name, p.name, p.source)).Line().
				Const().Id("_dgenImage_"+p.name).Op("=").Lit(p.image))
	}
	for _, k := range s.kernels {
		if k.prog == nil {
			continue
		}
		s.emitKernel(s.fileFor(outs, k.file), k)
	}
	for _, a := range s.allocs {
		o := s.fileFor(outs, a.file)
		id := s.id(a.name)
		o.init = append(o.init, jen.Qual(RuntimePath, "RegisterAllocSite").Call(jen.Op("&").Id(a.name), jen.Lit(id), hashLit(id), jen.Lit(a.name)))
	}
	for _, sc := range s.specs {
		o := s.fileFor(outs, sc.file)
		id := s.id(sc.name)
		o.init = append(o.init, jen.Qual(RuntimePath, "RegisterSpecConst").Call(jen.Op("&").Id(sc.name), jen.Op("&").Qual(RuntimePath, "SpecConstInfo").Values(jen.Dict{
			jen.Id("ID"): jen.Lit(id), jen.Id("Hash"): hashLit(id), jen.Id("Name"): jen.Lit(sc.name), jen.Id("Default"): jen.Lit("0"),
		}), jen.Lit(0)))
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
	id := s.id(k.name)
	hidden := "_dgenKernel_" + k.name
	var params, globals []jen.Code
	for _, f := range k.fields {
		class := map[clsrc.ArgClass]string{clsrc.ArgValue: "ParamValue", clsrc.ArgBuffer: "ParamBuffer", clsrc.ArgLocal: "ParamLocal"}[f.class]
		params = append(params, jen.Values(jen.Dict{
			jen.Id("Field"): jen.Lit(f.name), jen.Id("Class"): jen.Qual(RuntimePath, class), jen.Id("CLType"): jen.Lit(f.cl),
		}))
	}
	for _, g := range k.globals {
		globals = append(globals, jen.Lit(s.id(g.name)))
	}
	dict := jen.Dict{
		jen.Id("ID"):      jen.Lit(id),
		jen.Id("Hash"):    hashLit(id),
		jen.Id("Program"): jen.Op("&").Id(k.prog.name),
		jen.Id("Name"):    jen.Lit(k.clName),
	}
	if len(params) > 0 {
		dict[jen.Id("Params")] = jen.Index().Qual(RuntimePath, "ParamInfo").Values(params...)
	}
	if len(globals) > 0 {
		dict[jen.Id("Globals")] = jen.Index().String().Values(globals...)
	}
	o.init = append(o.init, jen.Qual(RuntimePath, "RegisterKernel").Call(jen.Op("&").Id(hidden), jen.Op("&").Qual(RuntimePath, "KernelInfo").Values(dict)))
	o.decls = append(o.decls, jen.Comment(hidden+" is the registration of kernel spec "+k.name+".").Line().Var().Id(hidden).Qual(RuntimePath, "KernelDecl"))

	body := []jen.Code{
		jen.List(jen.Id("k"), jen.Err()).Op(":=").Id(hidden).Dot("Acquire").Call(jen.Id("q")),
		jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
	}
	for i, f := range k.fields {
		var set jen.Code
		switch f.class {
		case clsrc.ArgBuffer:
			set = jen.Id("k").Dot("SetBuffer").Call(jen.Lit(i), jen.Id("s").Dot(f.name).Dot("Mem").Call())
		case clsrc.ArgLocal:
			set = jen.Id("k").Dot("SetLocal").Call(jen.Lit(i), jen.Id("s").Dot(f.name).Dot("Bytes").Call())
		default:
			set = jen.Qual(RuntimePath, "SetArg").Call(jen.Id("k"), jen.Lit(i), jen.Id("s").Dot(f.name))
		}
		if i == 0 {
			body = append(body, jen.Err().Op("=").Add(set))
		} else {
			body = append(body, jen.If(jen.Err().Op("==").Nil()).Block(jen.Err().Op("=").Add(set)))
		}
	}
	body = append(body, jen.Return(jen.Id(hidden).Dot("Launch").Call(jen.Id("q"), jen.Id("k"), jen.Id("r"), jen.Err(), jen.Id("wait").Op("..."))))
	if len(k.fields) == 0 {
		body[len(body)-1] = jen.Return(jen.Id(hidden).Dot("Launch").Call(jen.Id("q"), jen.Id("k"), jen.Id("r"), jen.Nil(), jen.Id("wait").Op("...")))
	}
	o.decls = append(o.decls, jen.Comment(fmt.Sprintf("Enqueue sets the arguments of kernel %s from s and launches it over r after wait.", k.clName)).Line().
		Func().Params(jen.Id("s").Op("*").Id(k.name)).Id("Enqueue").
		Params(jen.Id("q").Op("*").Qual(RuntimePath, "Queue"), jen.Id("r").Qual(RuntimePath, "Range"), jen.Id("wait").Op("...").Op("*").Qual(RuntimePath, "Event")).
		Params(jen.Op("*").Qual(RuntimePath, "Event"), jen.Error()).Block(body...))
	for _, f := range k.fields {
		if !f.out {
			continue
		}
		site := "_dgenSite_" + k.name + "_" + f.name
		sid := s.id(k.name + "." + f.name)
		o.decls = append(o.decls, jen.Comment(site+" is the allocation site of "+k.name+"."+f.name+".").Line().
			Var().Id(site).Qual(RuntimePath, "AllocSite").Types(s.typeCode(f.elem)))
		o.init = append(o.init, jen.Qual(RuntimePath, "RegisterAllocSite").Call(jen.Op("&").Id(site), jen.Lit(sid), hashLit(sid), jen.Lit(k.name+"."+f.name)))
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
	alias := "rt"
	if s.l.scope.Lookup("rt") != nil {
		alias = "dgenrt"
	}
	f := jen.NewFilePathName(s.l.path, o.pkg)
	if strings.HasSuffix(o.pkg, "_test") {
		f = jen.NewFilePathName(s.l.path+"_test", o.pkg)
	}
	f.HeaderComment("Code generated by dgen. DO NOT EDIT.")
	if o.build != "" {
		f.HeaderComment("//go:build " + o.build)
	}
	f.ImportAlias(RuntimePath, alias)
	f.Comment("The generated code needs a runtime of the same version.")
	f.Const().Id("_").Op("=").Qual(RuntimePath, "GeneratedCodeV1")
	for _, d := range o.decls {
		f.Add(d)
	}
	f.Func().Id("init").Params().Block(o.init...)
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
