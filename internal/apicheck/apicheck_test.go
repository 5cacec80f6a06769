package apicheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"testing"
)

// typeCheck parses and checks the one-file package src at path, whose
// imports are dep.
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

// TestOtherAudience checks OtherAudience on sources that break its rule:
// each case must be reported, and a clean one not.
func TestOtherAudience(t *testing.T) {
	tests := []struct {
		name, src string
		bad       bool
	}{
		{"clean", "package rt\n\n// Open opens a context.\nfunc Open() {}\n", false},
		{"generated", "package rt\n\n// Bytes is for generated code.\nfunc Bytes() {}\n", true},
		{"backend", "package rt\n\n// Hook lets backends report.\ntype Hook int\n\n// Set is used by backends.\nfunc (Hook) Set() {}\n", true},
		{"tests", "package rt\n\n// Reset exists for tests.\nvar Reset func()\n", true},
		{"field", "package rt\n\n// T is a thing.\ntype T struct {\n\t// X is set by generated code.\n\tX int\n}\n", true},
		{"method", "package rt\n\n// T is a thing.\ntype T struct{}\n\n// M is for tests.\nfunc (T) M() {}\n", true},
	}
	for _, tt := range tests {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", tt.src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if bad := OtherAudience(t, fset, []*ast.File{f}, "x/rt"); (len(bad) > 0) != tt.bad {
			t.Errorf("%s: violations %q, want some: %v", tt.name, bad, tt.bad)
		}
	}
}

// TestTypeViolations checks TypeViolations on packages whose API mentions
// driver.DeviceInfo in a field, a result and an alias, and on ones whose
// API does not, or names it by an alias of its own.
func TestTypeViolations(t *testing.T) {
	drv := types.NewPackage("github.com/dgen-go/dgen/rt/driver", "driver")
	info := types.NewNamed(types.NewTypeName(token.NoPos, drv, "DeviceInfo", nil), types.NewStruct(nil, nil), nil)
	core := types.NewPackage("github.com/dgen-go/dgen/rt/internal/core", "core")
	mem := types.NewNamed(types.NewTypeName(token.NoPos, core, "Mem", nil), types.NewStruct(nil, nil), nil)
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
		{"internal", func(p *types.Package) {
			sig := types.NewSignatureType(nil, nil, nil, nil, types.NewTuple(types.NewVar(token.NoPos, p, "", types.NewPointer(mem))), false)
			p.Scope().Insert(types.NewFunc(token.NoPos, p, "Mem", sig))
		}, true},
		{"unexported", func(p *types.Package) {
			st := types.NewStruct([]*types.Var{types.NewField(token.NoPos, p, "info", info, false)}, nil)
			declare(p, "Device", st)
		}, false},
		{"alias", func(p *types.Package) {
			st := types.NewStruct([]*types.Var{types.NewField(token.NoPos, core, "Info", info, false)}, nil)
			n := types.NewNamed(types.NewTypeName(token.NoPos, core, "Device", nil), st, nil)
			p.Scope().Insert(types.NewTypeName(token.NoPos, p, "Device", n))
		}, true},
		{"aliased too", func(p *types.Package) {
			// A field of a backstage type that p names by an alias of its
			// own: its audience names it without the backstage package.
			st := types.NewStruct([]*types.Var{types.NewField(token.NoPos, p, "Info", info, false)}, nil)
			declare(p, "Device", st)
			p.Scope().Insert(types.NewTypeName(token.NoPos, p, "DeviceInfo", info))
		}, false},
	} {
		p := types.NewPackage("github.com/dgen-go/dgen/rt", "rt")
		tt.decl(p)
		if bad := TypeViolations(p, Backstage); (len(bad) > 0) != tt.bad {
			t.Errorf("%s: violations %q, want some: %v", tt.name, bad, tt.bad)
		}
	}
}

// declare declares the named type name with underlying type u in p.
func declare(p *types.Package, name string, u types.Type) {
	tn := types.NewTypeName(token.NoPos, p, name, nil)
	types.NewNamed(tn, u, nil)
	p.Scope().Insert(tn)
}

// TestUndocumented checks Undocumented on sources that break its rule.
func TestUndocumented(t *testing.T) {
	tests := []struct {
		name, src string
		bad       []string
	}{
		{"clean", "package rt\n\n// T is a thing.\ntype T struct{ X int }\n\n// M does it.\nfunc (T) M() {}\n", nil},
		{"undocumented method", "package rt\n\n// T is a thing.\ntype T int\n\nfunc (T) M() {}\n", []string{"T.M"}},
		{"undocumented type", "package rt\n\ntype T int\n", []string{"T (no documentation)"}},
		{"defined over another struct", "package rt\n\nimport \"x/internal/core\"\n\n// T is a thing.\ntype T core.T\n", []string{"T.X"}},
		{"alias", "package rt\n\nimport \"x/internal/core\"\n\n// T is a thing.\ntype T = core.T\n", []string{"T (an alias of x/internal/core.T)"}},
	}
	for _, tt := range tests {
		fset := token.NewFileSet()
		core, _ := typeCheck(t, fset, "x/internal/core", "package core\n\ntype T struct{ X int }\n\nfunc (T) M() {}\n", nil)
		pkg, f := typeCheck(t, fset, "x/rt", tt.src, core)
		if bad := Undocumented(t, fset, []*ast.File{f}, pkg); !slices.Equal(bad, tt.bad) {
			t.Errorf("%s: %q, want %q", tt.name, bad, tt.bad)
		}
	}
}
