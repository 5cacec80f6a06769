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
	"GenVersion": "the version that this module's dgen writes (gen.ContractVersion), which tools and tests compare",
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
// aliases, to any depth.
func reachable(pkg *types.Package, named map[string]bool) map[string]bool {
	aliasOf := map[types.Type]string{} // the type that each alias of pkg stands for
	for _, name := range pkg.Scope().Names() {
		if tn, ok := pkg.Scope().Lookup(name).(*types.TypeName); ok && tn.IsAlias() {
			aliasOf[types.Unalias(tn.Type())] = name
		}
	}
	used := map[string]bool{}
	var todo []string
	add := func(name string) {
		if !used[name] && pkg.Scope().Lookup(name) != nil {
			used[name] = true
			todo = append(todo, name)
		}
	}
	for name := range named {
		add(name)
	}
	seen := map[types.Type]bool{}
	var walk func(t types.Type)
	walk = func(t types.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		if name, ok := aliasOf[types.Unalias(t)]; ok {
			add(name)
		}
		switch t := types.Unalias(t).(type) {
		case *types.Named:
			if t.Obj().Pkg() == pkg {
				add(t.Obj().Name())
			}
			for i := range t.TypeArgs().Len() {
				walk(t.TypeArgs().At(i))
			}
			if _, aliased := aliasOf[t]; t.Obj().Pkg() == pkg || aliased {
				walk(t.Underlying())
			}
		case *types.Pointer:
			walk(t.Elem())
		case *types.Slice:
			walk(t.Elem())
		case *types.Array:
			walk(t.Elem())
		case *types.Signature:
			for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
				for i := range tup.Len() {
					walk(tup.At(i).Type())
				}
			}
			if tps := t.TypeParams(); tps != nil {
				for i := range tps.Len() {
					walk(tps.At(i).Constraint())
				}
			}
		case *types.Struct:
			for i := range t.NumFields() {
				walk(t.Field(i).Type())
			}
		case *types.Interface:
			for i := range t.NumEmbeddeds() {
				walk(t.EmbeddedType(i))
			}
		case *types.Union:
			for i := range t.Len() {
				walk(t.Term(i).Type())
			}
		}
	}
	for len(todo) > 0 {
		name := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		obj := pkg.Scope().Lookup(name)
		walk(obj.Type())
		if _, ok := obj.(*types.TypeName); ok {
			// The constants of a type used are its closed set.
			for _, c := range pkg.Scope().Names() {
				if k, ok := pkg.Scope().Lookup(c).(*types.Const); ok && types.Identical(k.Type(), obj.Type()) {
					add(c)
				}
			}
		}
	}
	return used
}
