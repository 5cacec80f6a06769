package codegen_test

import (
	"go/token"
	"go/types"
	"regexp"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/apicheck"
)

const codegenPath = "github.com/dgen-go/dgen/rt/codegen"

// notGenerated are the exported identifiers of rt/codegen that no
// generated file names, each with the reason it is exported.
var notGenerated = map[string]string{
	"GenVersion":  "the version that this module's dgen writes (gen.ContractVersion), which tools and tests compare",
	"MaxSpecArgs": "the most specialization-constant fields of a spec, which gen.MaxSpecFields must equal (TestMaxSpecArgs)",
}

// TestAudience checks rt/codegen's audience rule: it offers generated code
// only what generated code calls. Every exported identifier is named by a
// generated file of the module (the examples', the golden tests') or by
// the signature of one that is (the types of what Register and the Var
// functions take and return), or is in notGenerated; Instance, the kernel
// instance, has no methods; and nothing mentions a type of rt/driver,
// rt/diskcache or rt/internal/core.
func TestAudience(t *testing.T) {
	named := apicheck.NamedIn(t, "../..", regexp.MustCompile(`^zz_generated.*\.go$`), codegenPath)
	pkg := apicheck.Load(t, codegenPath)[codegenPath]
	used := reachable(pkg, named)
	var extra []string
	for _, name := range pkg.Scope().Names() {
		if token.IsExported(name) && !used[name] && notGenerated[name] == "" {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		t.Errorf("rt/codegen exports identifiers that no generated file calls (unexport them, or list them in notGenerated with the reason):\n\t%s", strings.Join(extra, "\n\t"))
	}
	ms := types.NewMethodSet(types.NewPointer(pkg.Scope().Lookup("Instance").Type()))
	for m := range ms.Methods() {
		if m.Obj().Exported() {
			t.Errorf("codegen.Instance has the method %s; generated code sets arguments and launches through rt/codegen's functions only", m.Obj().Name())
		}
	}
	backstage := func(path string) bool {
		return path == "github.com/dgen-go/dgen/rt/driver" || path == "github.com/dgen-go/dgen/rt/diskcache" || path == "github.com/dgen-go/dgen/rt/internal/core"
	}
	if bad := apicheck.TypeViolations(pkg, backstage); len(bad) > 0 {
		t.Errorf("rt/codegen's API mentions a type of rt/driver, rt/diskcache or rt/internal/core:\n\t%s", strings.Join(bad, "\n\t"))
	}
}

// reachable returns named and the exported identifiers of pkg that the
// signatures, fields and type arguments of those mention, through pkg's
// aliases, to any depth, with the constants of every type among them (a
// closed set is used whole).
func reachable(pkg *types.Package, named map[string]bool) map[string]bool {
	r := &reach{pkg: pkg, aliasOf: map[types.Type]string{}, used: map[string]bool{}, seen: map[types.Type]bool{}}
	for _, name := range pkg.Scope().Names() {
		if tn, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok && tn.IsAlias() {
			r.aliasOf[types.Unalias(tn.Type())] = name
		}
	}
	for name := range named {
		r.add(name)
	}
	for len(r.todo) > 0 {
		name := r.todo[len(r.todo)-1]
		r.todo = r.todo[:len(r.todo)-1]
		obj := pkg.Scope().Lookup(name)
		r.walk(obj.Type())
		if _, ok := obj.(*types.TypeName); ok {
			for _, c := range pkg.Scope().Names() {
				if k, ok := pkg.Scope().Lookup(c).(*types.Const); ok && types.Identical(k.Type(), obj.Type()) {
					r.add(c)
				}
			}
		}
	}
	return r.used
}

// reach is reachable's walk.
type reach struct {
	pkg     *types.Package
	aliasOf map[types.Type]string // the type that each alias of pkg stands for
	used    map[string]bool
	todo    []string
	seen    map[types.Type]bool
}

// add marks the identifier name of pkg used, to be walked.
func (r *reach) add(name string) {
	if !r.used[name] && r.pkg.Scope().Lookup(name) != nil {
		r.used[name] = true
		r.todo = append(r.todo, name)
	}
}

// walk marks what t mentions.
func (r *reach) walk(t types.Type) {
	if t == nil || r.seen[t] {
		return
	}
	r.seen[t] = true
	if name, ok := r.aliasOf[types.Unalias(t)]; ok {
		r.add(name)
	}
	switch t := types.Unalias(t).(type) {
	case *types.Named:
		r.named(t)
	case *types.Pointer:
		r.walk(t.Elem())
	case *types.Slice:
		r.walk(t.Elem())
	case *types.Array:
		r.walk(t.Elem())
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tup.Len() {
				r.walk(tup.At(i).Type())
			}
		}
		if tps := t.TypeParams(); tps != nil {
			for i := range tps.Len() {
				r.walk(tps.At(i).Constraint())
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			r.walk(t.Field(i).Type())
		}
	case *types.Interface:
		for i := range t.NumEmbeddeds() {
			r.walk(t.EmbeddedType(i))
		}
	case *types.Union:
		for i := range t.Len() {
			r.walk(t.Term(i).Type())
		}
	}
}

// named marks the named type t of pkg, its type arguments, and what its
// underlying type mentions where it is pkg's or an alias of pkg's stands
// for it.
func (r *reach) named(t *types.Named) {
	if t.Obj().Pkg() == r.pkg {
		r.add(t.Obj().Name())
	}
	for i := range t.TypeArgs().Len() {
		r.walk(t.TypeArgs().At(i))
	}
	if _, aliased := r.aliasOf[t]; t.Obj().Pkg() == r.pkg || aliased {
		r.walk(t.Underlying())
	}
}
