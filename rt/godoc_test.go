package rt_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// rt is what applications read in go doc and on pkg.go.dev, so every
// exported method and field of its types must show there with its
// documentation: rt defines its types (an alias of another package's type
// shows none of its methods, and a type defined over another package's
// struct none of its fields), and forwards each method of rt/internal/core,
// its implementation, with a method of its own.

const (
	rtPath   = "github.com/dgen-go/dgen/rt"
	corePath = "github.com/dgen-go/dgen/rt/internal/core"
)

// loadTypes loads the types of packages paths, with their syntax.
func loadTypes(t *testing.T, paths ...string) map[string]*packages.Package {
	t.Helper()
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedFiles}, paths...)
	if err != nil || len(pkgs) != len(paths) {
		t.Fatalf("load %v: %v", paths, err)
	}
	m := map[string]*packages.Package{}
	for _, p := range pkgs {
		if len(p.Errors) > 0 || p.Types == nil {
			t.Fatalf("load %s: %v", p.PkgPath, p.Errors)
		}
		m[p.PkgPath] = p
	}
	return m
}

// undocumented returns what go doc would not show of the exported types
// of the package in files: "T.M" for each exported method of a type that
// has no documented method M in go/doc's view of the source, "T.F" for
// each exported field that is not in T's declaration, and "T" for an
// alias of a type of an internal package, whose documentation go doc
// cannot reach.
func undocumented(t *testing.T, fset *token.FileSet, files []*ast.File, pkg *types.Package) []string {
	t.Helper()
	dp, err := doc.NewFromFiles(fset, files, pkg.Path())
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]*doc.Type{}
	for _, ty := range dp.Types {
		docs[ty.Name] = ty
	}
	var bad []string
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || !tn.Exported() {
			continue
		}
		dt := docs[name]
		if dt == nil {
			bad = append(bad, name+" (no documentation)")
			continue
		}
		if a, ok := tn.Type().(*types.Alias); ok {
			// go doc shows the alias's right-hand side, which must be a
			// type that go doc can show.
			if rhs := typeName(a.Rhs()); rhs != nil && strings.Contains(rhs.Pkg().Path(), "/internal/") {
				bad = append(bad, name+" (an alias of "+rhs.Pkg().Path()+"."+rhs.Name()+")")
			}
			continue
		}
		named := tn.Type().(*types.Named)
		methods := map[string]string{}
		for _, f := range dt.Methods {
			methods[f.Name] = f.Doc
		}
		for i := range named.NumMethods() {
			m := named.Method(i)
			if m.Exported() && strings.TrimSpace(methods[m.Name()]) == "" {
				bad = append(bad, name+"."+m.Name())
			}
		}
		st, ok := named.Underlying().(*types.Struct)
		if !ok {
			continue
		}
		declared := map[string]bool{}
		if ast, ok := dt.Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType); ok {
			for _, f := range ast.Fields.List {
				for _, n := range f.Names {
					declared[n.Name] = true
				}
			}
		}
		for i := range st.NumFields() {
			if f := st.Field(i); f.Exported() && !declared[f.Name()] {
				bad = append(bad, name+"."+f.Name())
			}
		}
	}
	return bad
}

// typeName returns the name of t, a named type or an alias; nil for
// another type.
func typeName(t types.Type) *types.TypeName {
	switch t := t.(type) {
	case *types.Named:
		return t.Obj()
	case *types.Alias:
		return t.Obj()
	}
	return nil
}

// TestGoDoc checks that go doc shows every exported method and field of
// rt's types, each method with its documentation.
func TestGoDoc(t *testing.T) {
	fset := token.NewFileSet()
	files := sourceFiles(t, fset, ".", "rt")
	pkgs := loadTypes(t, rtPath)
	if bad := undocumented(t, fset, files, pkgs[rtPath].Types); len(bad) > 0 {
		t.Errorf("go doc does not show these of rt (define the type in rt, declare its fields there, and document each method):\n\t%s", strings.Join(bad, "\n\t"))
	}
}

// TestGoDocRule checks TestGoDoc's check on sources that break it.
func TestGoDocRule(t *testing.T) {
	tests := []struct {
		name, src string
		bad       []string
	}{
		{"clean", "package rt\n\n// T is a thing.\ntype T struct{ X int }\n\n// M does it.\nfunc (T) M() {}\n", nil},
		{"undocumented method", "package rt\n\n// T is a thing.\ntype T int\n\nfunc (T) M() {}\n", []string{"T.M"}},
		{"defined over another struct", "package rt\n\nimport \"x/internal/core\"\n\n// T is a thing.\ntype T core.T\n", []string{"T.X"}},
		{"alias", "package rt\n\nimport \"x/internal/core\"\n\n// T is a thing.\ntype T = core.T\n", []string{"T (an alias of x/internal/core.T)"}},
	}
	for _, tt := range tests {
		fset := token.NewFileSet()
		core, _ := typeCheck(t, fset, "x/internal/core", "package core\n\ntype T struct{ X int }\n\nfunc (T) M() {}\n", nil)
		pkg, f := typeCheck(t, fset, "x/rt", tt.src, core)
		if bad := undocumented(t, fset, []*ast.File{f}, pkg); !slices.Equal(bad, tt.bad) {
			t.Errorf("%s: %q, want %q", tt.name, bad, tt.bad)
		}
	}
}

// typeCheck parses and checks the one-file package src at path, which may
// import dep.
func typeCheck(t *testing.T, fset *token.FileSet, path, src string, dep *types.Package) (*types.Package, *ast.File) {
	t.Helper()
	f, err := parser.ParseFile(fset, path+".go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importerFunc(func(string) (*types.Package, error) { return dep, nil })}
	pkg, err := conf.Check(path, fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pkg, f
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// TestForwarders checks that rt forwards every exported method of the
// core's types that rt defines its own over (type T core.T), so that a
// method added to the core reaches applications: it lists the missing
// ones. A method of the core that rt must not show goes in notForwarded,
// with the reason.
func TestForwarders(t *testing.T) {
	pkgs := loadTypes(t, rtPath, corePath)
	var missing []string
	for _, pair := range forwarded(pkgs[rtPath].Types, pkgs[corePath].Types) {
		rtT, coreT := pair[0], pair[1]
		have := map[string]bool{}
		for i := range rtT.NumMethods() {
			have[rtT.Method(i).Name()] = true
		}
		for i := range coreT.NumMethods() {
			m := coreT.Method(i)
			name := rtT.Obj().Name() + "." + m.Name()
			if m.Exported() && !have[m.Name()] && notForwarded[name] == "" {
				missing = append(missing, name)
			}
		}
	}
	if len(missing) > 0 {
		t.Errorf("rt does not forward these methods of rt/internal/core (add a documented method to rt's type, or list it in notForwarded):\n\t%s", strings.Join(missing, "\n\t"))
	}
}

// notForwarded are the exported methods of the core's types that rt does
// not forward, with the reason.
var notForwarded = map[string]string{}

// forwarded returns the pairs (rt's type, the core's type of the same
// name) of rt's exported types.
func forwarded(rtPkg, corePkg *types.Package) [][2]*types.Named {
	var pairs [][2]*types.Named
	for _, name := range rtPkg.Scope().Names() {
		tn, ok := rtPkg.Scope().Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() || !tn.Exported() {
			continue
		}
		if ct, ok := corePkg.Scope().Lookup(name).(*types.TypeName); ok {
			if coreT, ok := types.Unalias(ct.Type()).(*types.Named); ok {
				pairs = append(pairs, [2]*types.Named{tn.Type().(*types.Named), coreT})
			}
		}
	}
	return pairs
}
