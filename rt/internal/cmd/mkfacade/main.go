// Command mkfacade writes package rt's API over its implementation,
// rt/internal/core, as go/types is generated from types2: the file
// rt/zz_generated.facade.go declares a type of rt's for each exported type
// of the core that applications use, a method forwarding to each of its
// exported methods and a function to each exported function, the
// constants and variables, and the conversions between rt's value types
// and the core's, each with the core's doc comment. The user's
// documentation is written once, on the core's exported declarations;
// what is for the core's maintainers sits on unexported code or in
// comments that are not doc comments (a struct's invariants open its body).
//
// go generate ./rt runs it (rt/doc.go). With -check it writes nothing
// and fails if the file is not what it would write, as dgen -check does:
// make test runs it.
//
// What rt shows is derived from the core's exported API: every exported
// name, less the names of hidden (what only rt/codegen and rt/raw call,
// and rt's tests' hooks) and whatever mentions them or a type of an
// internal package in its signature. A name that rt declares by hand, in a
// file of its own, is not generated.
//
// An interface of the core whose methods are unexported (SpecValue,
// Memory) is shown as a type over the core's, as a handle is. A type of rt
// defined over the core's (type Buffer[T any] core.Buffer[T]) keeps none
// of its methods but those of the fields it embeds, so the core declares
// such an interface's methods on the type of an embedded field, never on
// the shown type itself: mkfacade fails where it does (sealed).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

const (
	rtPath   = "github.com/dgen-go/dgen/rt"
	corePath = "github.com/dgen-go/dgen/rt/internal/core"
	output   = "zz_generated.facade.go"
)

// hidden are the core's exported names, and exported fields as Type.Field,
// that rt does not show, each with the reason. Whatever mentions one in
// its signature is not shown either (Acquire, Submit, BufferMem, ...).
var hidden = map[string]string{
	"Kernel":        "a spec's kernel instance: rt/codegen's Instance",
	"RawKernel":     "rt/raw's Kernel",
	"Mem":           "device memory, which rt/codegen and rt/raw pass to the setters",
	"BuiltProgram":  "rt/raw's Program",
	"SpecArgs":      "a launch's own specialization-constant values, for rt/codegen",
	"MaxSpecArgs":   "rt/codegen's",
	"WaitList":      "the facades' wait lists (rt's is in waits)",
	"Device.Facade": "rt's *Device for the core's (identities)",
}

// hiddenFiles are the core's files whose declarations rt does not show.
var hiddenFiles = map[string]string{
	"testhooks.go": "the hooks of rt's tests",
}

// identities are the value types of which rt makes one for each of the
// core's, kept in the core's field named here: rt hands out one *Device
// per device.
var identities = map[string]string{"Device": "Facade"}

func main() {
	check := flag.Bool("check", false, "write nothing; fail if "+output+" is stale")
	flag.Parse()
	dir, err := rtDir()
	if err != nil {
		fail(err)
	}
	src, err := generate(dir)
	if err != nil {
		fail(err)
	}
	name := filepath.Join(dir, output)
	if *check {
		old, err := os.ReadFile(name)
		if err != nil || !bytes.Equal(old, src) {
			fail(fmt.Errorf("%s is stale: run go generate ./rt", name))
		}
		return
	}
	if err := os.WriteFile(name, src, 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mkfacade:", err)
	os.Exit(1)
}

// rtDir returns the directory of package rt.
func rtDir() (string, error) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedFiles}, rtPath)
	if err != nil {
		return "", err
	}
	for _, p := range pkgs {
		for _, f := range slices.Concat(p.GoFiles, p.IgnoredFiles) {
			return filepath.Dir(f), nil
		}
	}
	return "", fmt.Errorf("no files of %s", rtPath)
}

// generate returns the facade file for package rt in dir.
func generate(dir string) ([]byte, error) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo}, corePath)
	if err != nil {
		return nil, err
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		return nil, fmt.Errorf("load %s: %v", corePath, pkgs[0].Errors)
	}
	hand, err := handWritten(dir)
	if err != nil {
		return nil, err
	}
	g := newGen(pkgs[0], hand)
	if err := g.run(); err != nil {
		return nil, err
	}
	src, err := prune(g.file())
	if err == nil {
		src, err = format.Source(src)
	}
	if err != nil {
		return g.file(), fmt.Errorf("format: %v", err)
	}
	return src, nil
}

// handWritten returns the names that rt's own files in dir declare
// ("Name", "Type.Method"), which mkfacade does not generate.
func handWritten(dir string) (map[string]bool, error) {
	names := map[string]bool{}
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || filepath.Base(name) == output {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				names[recvPrefix(d)+d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						names[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							names[n.Name] = true
						}
					}
				}
			}
		}
	}
	return names, nil
}

// recvPrefix returns "T." for a method of T, "" for a function.
func recvPrefix(d *ast.FuncDecl) string {
	if d.Recv == nil {
		return ""
	}
	t := d.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	switch x := t.(type) {
	case *ast.IndexExpr:
		t = x.X
	case *ast.IndexListExpr:
		t = x.X
	}
	return t.(*ast.Ident).Name + "."
}
