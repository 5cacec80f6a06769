package rt_test

import (
	"errors"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// rt's API has one audience: applications. The rule, which TestAudience
// checks on rt's source:
//
//   - no exported identifier of rt is documented as being for generated
//     code, backends or tests (rt/codegen, rt/driver and export_test.go
//     serve those);
//   - an application needs no import of rt/driver or rt/diskcache for
//     anything rt documents: no exported identifier's signature, field or
//     method mentions one of their types, directly or through the types of
//     dgen's other packages that it mentions.
//
// rt's types are aliases of the types of its internal core
// (rt/internal/core), where their methods and fields are documented: the
// rule applies to those too.

// backstage are the packages whose types an application must not need.
var backstage = []string{"github.com/dgen-go/dgen/rt/driver", "github.com/dgen-go/dgen/rt/diskcache"}

// otherAudience matches documentation that addresses another audience
// than applications.
var otherAudience = regexp.MustCompile(`(?i)\b(for|by|from|of) (the )?(generated code|backends?|tests?|test code)\b|generated code (calls|names|uses|sets)|test[- ]only|internal use`)

// sourceFiles parses the non-test files of package name in dir with their
// comments; it skips the test where the source is not beside the test
// binary.
func sourceFiles(t *testing.T, fset *token.FileSet, dir, name string) []*ast.File {
	t.Helper()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	p := pkgs[name]
	if p == nil {
		if _, err := os.Stat("api_test.go"); errors.Is(err, fs.ErrNotExist) {
			t.Skip("no source of package rt beside the test binary (a gpu-bundle)")
		}
		t.Fatalf("no package %s in %s", name, dir)
	}
	var files []*ast.File
	for _, f := range p.Files {
		files = append(files, f)
	}
	return files
}

// docViolations returns "Name: doc" for every exported identifier of
// files, and exported field of an exported struct, whose documentation
// matches otherAudience; and for the methods and fields of the types of
// coreFiles (rt/internal/core) that files alias.
func docViolations(t *testing.T, fset *token.FileSet, files, coreFiles []*ast.File) []string {
	t.Helper()
	p, err := doc.NewFromFiles(fset, files, "github.com/dgen-go/dgen/rt")
	if err != nil {
		t.Fatal(err)
	}
	core := map[string]*doc.Type{}
	if len(coreFiles) > 0 {
		cp, err := doc.NewFromFiles(fset, coreFiles, "github.com/dgen-go/dgen/rt/internal/core")
		if err != nil {
			t.Fatal(err)
		}
		for _, ty := range cp.Types {
			core[ty.Name] = ty
		}
	}
	var bad []string
	check := func(name, text string) {
		if otherAudience.MatchString(text) {
			bad = append(bad, name+": "+otherAudience.FindString(text))
		}
	}
	for _, v := range slices.Concat(p.Consts, p.Vars) {
		check(strings.Join(v.Names, ","), v.Doc)
	}
	for _, f := range p.Funcs {
		check(f.Name, f.Doc)
	}
	for _, ty := range p.Types {
		check(ty.Name, ty.Doc)
		if ts := ty.Decl.Specs[0].(*ast.TypeSpec); ts.Assign.IsValid() && core[ty.Name] != nil && isCore(ts.Type) {
			checkMembers(ty.Name, core[ty.Name], check)
			continue
		}
		checkMembers(ty.Name, ty, check)
	}
	return bad
}

// isCore reports whether the expression x names a type of package core.
func isCore(x ast.Expr) bool {
	if ix, ok := x.(*ast.IndexExpr); ok {
		x = ix.X
	}
	if ix, ok := x.(*ast.IndexListExpr); ok {
		x = ix.X
	}
	sel, ok := x.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "core"
}

// checkMembers checks the documentation of ty's functions, methods,
// constants, variables and exported fields, naming them after name.
func checkMembers(name string, ty *doc.Type, check func(name, text string)) {
	{
		for _, f := range slices.Concat(ty.Funcs, ty.Methods) {
			check(name+"."+f.Name, f.Doc)
		}
		for _, v := range slices.Concat(ty.Consts, ty.Vars) {
			check(strings.Join(v.Names, ","), v.Doc)
		}
		if st, ok := ty.Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType); ok {
			for _, fld := range st.Fields.List {
				for _, n := range fld.Names {
					if n.IsExported() {
						check(name+"."+n.Name, fld.Doc.Text()+fld.Comment.Text())
					}
				}
			}
		}
	}
}

// typeViolations returns "Name: type" for every exported identifier of
// pkg whose signature, fields or methods mention a type of a backstage
// package.
func typeViolations(pkg *types.Package) []string {
	var bad []string
	seen := map[types.Type]bool{}
	var walk func(where string, t types.Type)
	walk = func(where string, t types.Type) {
		if t == nil || seen[t] {
			return
		}
		seen[t] = true
		switch t := t.(type) {
		case *types.Alias:
			// An alias that rt declares is rt's name for the type, which
			// an application uses without importing its package: only
			// its members count.
			if n, ok := types.Unalias(t).(*types.Named); ok && t.Obj().Pkg() == pkg {
				walkMembers(where, n, walk)
				return
			}
			walk(where, t.Rhs())
		case *types.Named:
			obj := t.Obj()
			if obj.Pkg() != nil && slices.Contains(backstage, obj.Pkg().Path()) {
				bad = append(bad, where+": "+types.TypeString(t, nil))
				return
			}
			for i := range t.TypeArgs().Len() {
				walk(where, t.TypeArgs().At(i))
			}
			// dgen's own packages are walked into; rt's exported types are
			// walked as identifiers of their own.
			if obj.Pkg() == nil || !strings.HasPrefix(obj.Pkg().Path(), "github.com/dgen-go/dgen/") || obj.Pkg() == pkg {
				return
			}
			walkMembers(obj.Pkg().Name()+"."+obj.Name(), t, walk)
		case *types.Pointer:
			walk(where, t.Elem())
		case *types.Slice:
			walk(where, t.Elem())
		case *types.Array:
			walk(where, t.Elem())
		case *types.Map:
			walk(where, t.Key())
			walk(where, t.Elem())
		case *types.Chan:
			walk(where, t.Elem())
		case *types.Signature:
			for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
				for i := range tup.Len() {
					walk(where, tup.At(i).Type())
				}
			}
		case *types.Struct:
			for i := range t.NumFields() {
				if f := t.Field(i); f.Exported() || f.Embedded() {
					walk(where+"."+f.Name(), f.Type())
				}
			}
		case *types.Interface:
			for i := range t.NumMethods() {
				if m := t.Method(i); m.Exported() {
					walk(where+"."+m.Name(), m.Type())
				}
			}
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		if tn, ok := obj.(*types.TypeName); ok && !tn.IsAlias() {
			walkMembers(name, tn.Type().(*types.Named), walk)
			continue
		}
		walk(name, obj.Type())
	}
	return bad
}

// walkMembers walks the exported fields and methods of the named type t.
func walkMembers(name string, t *types.Named, walk func(string, types.Type)) {
	walk(name, t.Underlying())
	for i := range t.NumMethods() {
		if m := t.Method(i); m.Exported() {
			walk(name+"."+m.Name(), m.Type())
		}
	}
}

// TestAudience checks rt's audience rule.
func TestAudience(t *testing.T) {
	fset := token.NewFileSet()
	files := sourceFiles(t, fset, ".", "rt")
	coreFiles := sourceFiles(t, fset, "internal/core", "core")
	if bad := docViolations(t, fset, files, coreFiles); len(bad) > 0 {
		t.Errorf("rt documents identifiers for another audience than applications (move them to rt/codegen, rt/driver or export_test.go, or document them for applications):\n\t%s", strings.Join(bad, "\n\t"))
	}
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, "github.com/dgen-go/dgen/rt")
	if err != nil || len(pkgs) != 1 || pkgs[0].Types == nil || len(pkgs[0].Errors) > 0 {
		t.Fatalf("load rt's types: %v %v", err, pkgs)
	}
	if bad := typeViolations(pkgs[0].Types); len(bad) > 0 {
		t.Errorf("rt's API needs an import of rt/driver or rt/diskcache (give rt a type of its own):\n\t%s", strings.Join(bad, "\n\t"))
	}
}

// TestAudienceRule checks the rule's checks on sources that break it: each
// case must be reported, and a clean one not.
func TestAudienceRule(t *testing.T) {
	tests := []struct {
		name, src string
		bad       bool
	}{
		{"clean", "package rt\n\n// Open opens a context.\nfunc Open() {}\n", false},
		{"generated", "package rt\n\n// Bytes is for generated code.\nfunc Bytes() {}\n", true},
		{"backend", "package rt\n\n// Hook lets backends report.\ntype Hook int\n\n// Set is used by backends.\nfunc (Hook) Set() {}\n", true},
		{"tests", "package rt\n\n// Reset exists for tests.\nvar Reset func()\n", true},
		{"field", "package rt\n\n// T is a thing.\ntype T struct {\n\t// X is set by generated code.\n\tX int\n}\n", true},
		{"core method", "package core\n\n// T is a thing.\ntype T struct{}\n\n// M is for tests.\nfunc (T) M() {}\n", true},
		{"core field", "package core\n\n// T is a thing.\ntype T struct {\n\t// X is set by backends.\n\tX int\n}\n", true},
		{"core unaliased", "package core\n\n// U is a thing.\ntype U struct{}\n\n// M is for tests.\nfunc (U) M() {}\n", false},
	}
	for _, tt := range tests {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", tt.src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files, coreFiles := []*ast.File{f}, []*ast.File(nil)
		if f.Name.Name == "core" {
			// rt aliases core's T, not U.
			alias, err := parser.ParseFile(fset, "alias.go", "package rt\n\nimport \"x/core\"\n\n// T is a thing.\ntype T = core.T\n", parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files, coreFiles = []*ast.File{alias}, files
		}
		if bad := docViolations(t, fset, files, coreFiles); (len(bad) > 0) != tt.bad {
			t.Errorf("%s: violations %q, want some: %v", tt.name, bad, tt.bad)
		}
	}
	// Types: a package whose API mentions driver.DeviceInfo in a field, a
	// result and an alias, and one whose API does not.
	drv := types.NewPackage("github.com/dgen-go/dgen/rt/driver", "driver")
	info := types.NewNamed(types.NewTypeName(token.NoPos, drv, "DeviceInfo", nil), types.NewStruct(nil, nil), nil)
	for _, tt := range []struct {
		name string
		decl func(p *types.Package)
		bad  bool
	}{
		{"field", func(p *types.Package) {
			st := types.NewStruct([]*types.Var{types.NewField(token.NoPos, p, "Info", info, false)}, nil)
			declare(p, "Device", st)
		}, true},
		{"embedded", func(p *types.Package) {
			st := types.NewStruct([]*types.Var{types.NewField(token.NoPos, p, "DeviceInfo", info, true)}, nil)
			declare(p, "Device", st)
		}, true},
		{"result", func(p *types.Package) {
			sig := types.NewSignatureType(nil, nil, nil, nil, types.NewTuple(types.NewVar(token.NoPos, p, "", types.NewPointer(info))), false)
			p.Scope().Insert(types.NewFunc(token.NoPos, p, "Devices", sig))
		}, true},
		{"unexported", func(p *types.Package) {
			st := types.NewStruct([]*types.Var{types.NewField(token.NoPos, p, "info", info, false)}, nil)
			declare(p, "Device", st)
		}, false},
		{"alias", func(p *types.Package) {
			core := types.NewPackage("github.com/dgen-go/dgen/rt/internal/core", "core")
			st := types.NewStruct([]*types.Var{types.NewField(token.NoPos, core, "Info", info, false)}, nil)
			n := types.NewNamed(types.NewTypeName(token.NoPos, core, "Device", nil), st, nil)
			p.Scope().Insert(types.NewTypeName(token.NoPos, p, "Device", n))
		}, true},
	} {
		p := types.NewPackage("github.com/dgen-go/dgen/rt", "rt")
		tt.decl(p)
		if bad := typeViolations(p); (len(bad) > 0) != tt.bad {
			t.Errorf("types %s: violations %q, want some: %v", tt.name, bad, tt.bad)
		}
	}
}

// declare declares the named type name with underlying type u in p.
func declare(p *types.Package, name string, u types.Type) {
	tn := types.NewTypeName(token.NoPos, p, name, nil)
	types.NewNamed(tn, u, nil)
	p.Scope().Insert(tn)
}
