package gen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"strconv"
	"strings"
)

// The checks of the declarations themselves that neither the Go type
// checker nor the OpenCL C front end makes: each mistake that would
// otherwise surface as a compile error inside the generated file, a run-time
// failure or a wrong result is reported here at the declaration at fault.

// checkShapes checks names and kernel spec types before the checks that
// rely on them, and returns the model less the declarations it rejects.
func (s *state) checkShapes(m model) model {
	m = s.checkTwice(m)
	m.kernels = keep(m.kernels, s.kernelShape)
	for _, g := range m.globals {
		s.clKeyword(g.pos, "device global", g.name)
	}
	for _, d := range m.specs {
		s.clKeyword(d.pos, "specialization constant", d.name)
	}
	return m
}

// keep returns, in a new slice, the elements of xs for which ok holds.
func keep[T any](xs []T, ok func(T) bool) []T {
	var out []T
	for _, x := range xs {
		if ok(x) {
			out = append(out, x)
		}
	}
	return out
}

// checkTwice reports a name marked twice in one build configuration
// (declarations in files for different systems may share a name) and
// drops the second.
func (s *state) checkTwice(m model) model {
	first := map[string]token.Pos{}
	twice := func(d decl) bool {
		key := d.name + "\x00" + d.file.build
		if p, ok := first[key]; ok {
			at := s.l.fset.Position(p)
			s.errorf(d.pos, "%s is declared twice in the package (first at %s:%d:%d)", d.name, s.rel(at.Filename), at.Line, at.Column)
			return false
		}
		first[key] = d.pos
		return true
	}
	return model{
		programs: keep(m.programs, func(p *program) bool { return twice(p.decl) }),
		kernels:  keep(m.kernels, func(k *kernel) bool { return twice(k.decl) }),
		globals:  keep(m.globals, func(g *global) bool { return twice(g.decl) }),
		allocs:   keep(m.allocs, twice),
		specs:    keep(m.specs, twice),
	}
}

// kernelShape checks that a kernel spec is a plain struct whose fields
// and tags dgen can bind, and that it declares nothing the generated
// methods would collide with.
func (s *state) kernelShape(k *kernel) bool {
	if k.ts.TypeParams != nil {
		s.errorf(k.ts.TypeParams.Pos(), "kernel spec %s must not be generic: its fields are bound to one kernel's parameters", k.name)
		return false
	}
	st, ok := k.ts.Type.(*ast.StructType)
	if !ok || k.ts.Assign.IsValid() {
		s.errorf(k.pos, "kernel spec %s must be declared as a struct type (type %s struct{…})", k.name, k.name)
		return false
	}
	ok = true
	names := map[string]bool{}
	var outs []*ast.Ident
	for _, af := range st.Fields.List {
		if len(af.Names) == 0 {
			s.errorf(af.Type.Pos(), "kernel spec %s: embedded field %s: each field of a kernel spec is a named kernel argument", k.name, types.ExprString(af.Type))
			ok = false
		}
		out := s.fieldTag(k, af)
		for _, n := range af.Names {
			names[n.Name] = true
			if n.Name == "_" {
				s.errorf(n.Pos(), "kernel spec %s: blank field: each field of a kernel spec is a kernel argument and needs a name", k.name)
				ok = false
			}
			if out {
				outs = append(outs, n)
			}
		}
	}
	for _, n := range outs {
		if names["Alloc"+n.Name] {
			s.errorf(n.Pos(), "kernel spec %s: field %s is tagged dgen:\"out\", so dgen generates method Alloc%s, but the spec has a field of that name", k.name, n.Name, n.Name)
			ok = false
		}
	}
	return s.userMethods(k, outs) && ok
}

// fieldTag checks the dgen key of a field's struct tag and reports whether
// it is "out". The others are "spec=Name" and "spec" (parseTag).
func (s *state) fieldTag(k *kernel, af *ast.Field) bool {
	if af.Tag == nil {
		return false
	}
	raw, err := strconv.Unquote(af.Tag.Value)
	if err != nil {
		return false
	}
	v, ok := reflect.StructTag(raw).Lookup("dgen")
	if !ok {
		return false
	}
	t, ok := parseTag(v)
	if !ok {
		s.errorf(af.Tag.Pos(), "kernel spec %s: unknown struct tag dgen:%q (the tags are dgen:\"out\" and dgen:\"spec=Name\")", k.name, v)
		return false
	}
	return t.out
}

// fieldTagValue is what the dgen key of a kernel spec field's struct tag
// says: out for "out"; spec for "spec=Name" (konst is Name) and for
// "spec", which names the constant after the field (konst empty).
type fieldTagValue struct {
	out, spec bool
	konst     string
}

// parseTag reads the value of a dgen struct tag key; ok is false for one
// that is none of "out", "spec" and "spec=Name" with Name a Go identifier.
func parseTag(v string) (fieldTagValue, bool) {
	switch {
	case v == "out":
		return fieldTagValue{out: true}, true
	case v == "spec":
		return fieldTagValue{spec: true}, true
	case strings.HasPrefix(v, "spec="):
		if name := strings.TrimPrefix(v, "spec="); token.IsIdentifier(name) {
			return fieldTagValue{spec: true, konst: name}, true
		}
	}
	return fieldTagValue{}, false
}

// userMethods reports methods of a kernel spec that the generated file
// also declares.
func (s *state) userMethods(k *kernel, outs []*ast.Ident) bool {
	gen := map[string]bool{"Enqueue": true, "EnqueueEvent": true, "EnqueueContext": true, "EnqueueEventContext": true}
	for _, n := range outs {
		gen["Alloc"+n.Name] = true
	}
	ok := true
	for _, f := range s.l.files {
		for _, d := range f.ast.Decls {
			fd, isFn := d.(*ast.FuncDecl)
			if !isFn || fd.Recv == nil || len(fd.Recv.List) != 1 || !gen[fd.Name.Name] || recvName(fd.Recv.List[0].Type) != k.name {
				continue
			}
			if f.build != "" && k.file.build != "" && f.build != k.file.build {
				continue
			}
			s.errorf(fd.Name.Pos(), "kernel spec %s: method %s is generated by dgen; rename this one", k.name, fd.Name.Name)
			ok = false
		}
	}
	return ok
}

// recvName returns the type name of a method receiver.
func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// clKeyword reports a Go name that dgen writes into OpenCL C source where
// it is a keyword or reserved word.
func (s *state) clKeyword(pos token.Pos, what, name string) bool {
	if !clReserved[name] {
		return true
	}
	s.errorf(pos, "%s %s: %s is a reserved word in OpenCL C, where dgen declares it; rename it", what, name, name)
	return false
}

// clReserved holds the keywords of OpenCL C and the identifiers it
// reserves: its address space, access and function qualifiers without
// underscores, and the built-in type names.
var clReserved = func() map[string]bool {
	m := map[string]bool{}
	words := `auto break case char const continue default do double else enum extern float for goto if
	inline int long register restrict return short signed sizeof static struct switch typedef union
	unsigned void volatile while bool half uchar ushort uint ulong size_t ptrdiff_t intptr_t uintptr_t
	global local constant private generic kernel read_only write_only read_write uniform pipe
	image1d_t image1d_array_t image1d_buffer_t image2d_t image2d_array_t image3d_t sampler_t event_t
	complex imaginary quad true false`
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	for _, base := range []string{"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "float", "double", "half", "bool"} {
		for _, n := range []int{2, 3, 4, 8, 16} {
			m[fmt.Sprint(base, n)] = true
		}
	}
	return m
}()
