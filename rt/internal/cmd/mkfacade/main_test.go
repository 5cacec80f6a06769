package main

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestFresh checks that rt's facade is what mkfacade writes from the
// core as it is: a declaration of the core changed without go generate
// ./rt fails here (and in make test's check-generated).
func TestFresh(t *testing.T) {
	dir, err := rtDir()
	if err != nil {
		t.Skipf("no source of rt (a gpu-bundle): %v", err)
	}
	want, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, output))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go generate ./rt", filepath.Join(dir, output))
	}
}

// TestSealed checks that mkfacade refuses a core whose type implements an
// interface with unexported methods in a way that rt's type defined over
// it would not: by a method declared on the type itself, or as a value
// struct, which rt copies field by field.
func TestSealed(t *testing.T) {
	const iface = "type Value interface{ value() int }\n"
	tests := []struct {
		name, src string
		wantErr   string // "" for none
	}{
		{"Embedded", iface + "type impl struct{ n int }\nfunc (i impl) value() int { return i.n }\ntype Spec struct{ impl }\n", ""},
		{"EmbeddedGeneric", iface + "type impl[T any] struct{ v T }\nfunc (impl[T]) value() int { return 0 }\ntype Spec[T any] struct{ impl[T] }\n", ""},
		{"EmbeddedPointer", iface + "type impl struct{ n int }\nfunc (i *impl) value() int { return i.n }\ntype Spec struct{ *impl }\n", ""},
		{"ExportedMethod", "type Stringer interface{ String() string }\ntype Spec struct{ n int }\nfunc (Spec) String() string { return \"\" }\n", ""},
		{"OnTheType", iface + "type Spec struct{ n int }\nfunc (s Spec) value() int { return s.n }\n", "rt's Spec would not implement Value"},
		{"OnThePointer", iface + "type Spec struct{ n int }\nfunc (s *Spec) value() int { return s.n }\n", "rt's Spec would not implement Value"},
		{"OnTheGenericType", iface + "type Spec[T any] struct{ v T }\nfunc (Spec[T]) value() int { return 0 }\n", "rt's Spec would not implement Value"},
		{"ValueStruct", iface + "type impl struct{ n int }\nfunc (i impl) value() int { return i.n }\ntype Desc struct {\n\tX int\n\timpl\n}\n", "rt's Desc would not implement Value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGen(checked(t, "package core\n\n"+tt.src), nil)
			g.classify()
			g.sealed()
			err := errors.Join(g.errs...)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("sealed: %v, want no error", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("sealed: %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

// checked returns src, the source of one file, parsed and type-checked as
// packages.Load returns it.
func checked(t *testing.T, src string) *packages.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "core.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Types: map[ast.Expr]types.TypeAndValue{}}
	pkg, err := (&types.Config{}).Check(corePath, fset, []*ast.File{f}, info)
	if err != nil {
		t.Fatal(err)
	}
	return &packages.Package{Fset: fset, Types: pkg, Syntax: []*ast.File{f}, TypesInfo: info}
}

// TestPrune checks that prune removes the converters nothing calls, and
// those that only removed ones call, and keeps the rest.
func TestPrune(t *testing.T) {
	src := `package rt

// Use calls toCoreA.
func Use() { _ = toCoreA(0) }

// toCoreA is called by Use.
func toCoreA(x int) int { return x }

// fromCoreB is called by nothing.
func fromCoreB(x int) int { return fromCoreC(x) }

// fromCoreC is called by fromCoreB alone.
func fromCoreC(x int) int { return x }

// helper is not a converter, and stays though unused.
func helper() {}
`
	out, err := prune([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		kept bool
	}{{"Use", true}, {"toCoreA", true}, {"fromCoreB", false}, {"fromCoreC", false}, {"helper", true}} {
		if got := strings.Contains(string(out), "func "+tc.name+"("); got != tc.kept {
			t.Errorf("func %s kept %v, want %v:\n%s", tc.name, got, tc.kept, out)
		}
		if !tc.kept && strings.Contains(string(out), "// "+tc.name+" ") {
			t.Errorf("the doc of %s stays:\n%s", tc.name, out)
		}
	}
}
