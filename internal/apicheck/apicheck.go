// Package apicheck holds the checks that dgen's API packages (rt, rt/raw
// and rt/codegen) run on their own source in their tests: that each shows
// its audience only what that audience calls, in its audience's types,
// and that go doc shows all of it. It is imported by tests only.
package apicheck

import (
	"errors"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"go/types"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// SourceFiles parses the non-test files of package name in dir with their
// comments. It skips t where the source is not beside the test binary (a
// gpu-bundle runs test binaries without their source).
func SourceFiles(t testing.TB, fset *token.FileSet, dir, name string) []*ast.File {
	t.Helper()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
	if errors.Is(err, fs.ErrNotExist) || err == nil && pkgs[name] == nil {
		t.Skipf("no source of package %s in %s beside the test binary (a gpu-bundle)", name, dir)
	}
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, f := range pkgs[name].Files {
		files = append(files, f)
	}
	slices.SortFunc(files, func(a, b *ast.File) int { return strings.Compare(fset.File(a.Pos()).Name(), fset.File(b.Pos()).Name()) })
	return files
}

// Load loads the types of the packages at paths, by import path.
func Load(t testing.TB, paths ...string) map[string]*types.Package {
	t.Helper()
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes}, paths...)
	if err != nil || len(pkgs) != len(paths) {
		t.Fatalf("load %v: %v", paths, err)
	}
	m := map[string]*types.Package{}
	for _, p := range pkgs {
		if len(p.Errors) > 0 || p.Types == nil {
			t.Fatalf("load %s: %v", p.PkgPath, p.Errors)
		}
		m[p.PkgPath] = p.Types
	}
	return m
}

// otherAudience matches documentation that addresses another audience
// than applications.
var otherAudience = regexp.MustCompile(`(?i)\b(for|by|from|of) (the )?(generated code|backends?|tests?|test code)\b|generated code (calls|names|uses|sets)|test[- ]only|internal use`)

// OtherAudience returns "Name: words" for every exported identifier of
// files, and exported method and field of its types, whose documentation
// addresses another audience than applications (generated code,
// backends, tests): those belong to rt/codegen, rt/driver and the
// core's test hooks.
func OtherAudience(t testing.TB, fset *token.FileSet, files []*ast.File, path string) []string {
	t.Helper()
	p, err := doc.NewFromFiles(fset, files, path, doc.PreserveAST)
	if err != nil {
		t.Fatal(err)
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
		for _, f := range slices.Concat(ty.Funcs, ty.Methods) {
			check(ty.Name+"."+f.Name, f.Doc)
		}
		for _, v := range slices.Concat(ty.Consts, ty.Vars) {
			check(strings.Join(v.Names, ","), v.Doc)
		}
		if st, ok := ty.Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType); ok {
			for _, fld := range st.Fields.List {
				for _, n := range fld.Names {
					if n.IsExported() {
						check(ty.Name+"."+n.Name, fld.Doc.Text()+fld.Comment.Text())
					}
				}
			}
		}
	}
	return bad
}

// Backstage is what an application must never need to import for
// anything that rt or rt/raw documents: the backends' interface, the disk
// cache's, and every internal package, whose types it cannot even name.
func Backstage(path string) bool {
	return path == "github.com/dgen-go/dgen/rt/driver" || path == "github.com/dgen-go/dgen/rt/diskcache" || strings.Contains(path, "/internal/")
}

// TypeViolations returns "Name: type" for every exported identifier of
// pkg whose signature, exported fields or exported methods mention a type
// of a package that backstage reports, directly or through the types of
// dgen's other packages that they mention. An alias that pkg declares is
// pkg's name for the type, which its audience uses without importing the
// type's package: only its members count, wherever the type is mentioned.
func TypeViolations(pkg *types.Package, backstage func(path string) bool) []string {
	w := &typeWalker{pkg: pkg, backstage: backstage, seen: map[types.Type]bool{}, aliased: map[*types.TypeName]bool{}}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		if tn, ok := scope.Lookup(name).(*types.TypeName); ok && tn.Exported() && tn.IsAlias() {
			if n, ok := types.Unalias(tn.Type()).(*types.Named); ok {
				w.aliased[n.Obj()] = true
			}
		}
	}
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		if tn, ok := obj.(*types.TypeName); ok && !tn.IsAlias() {
			w.members(name, tn.Type().(*types.Named))
			continue
		}
		w.walk(name, obj.Type())
	}
	return w.bad
}

// typeWalker walks the types of a package's API for TypeViolations.
type typeWalker struct {
	pkg       *types.Package
	backstage func(path string) bool
	seen      map[types.Type]bool
	aliased   map[*types.TypeName]bool // the types that pkg names by an exported alias
	bad       []string
}

// walk walks t, which where (an identifier, a field or a method) mentions.
func (w *typeWalker) walk(where string, t types.Type) {
	if t == nil || w.seen[t] {
		return
	}
	w.seen[t] = true
	switch t := t.(type) {
	case *types.Alias:
		if n, ok := types.Unalias(t).(*types.Named); ok && t.Obj().Pkg() == w.pkg {
			w.members(where, n)
			return
		}
		w.walk(where, t.Rhs())
	case *types.Named:
		w.named(where, t)
	case *types.Pointer:
		w.walk(where, t.Elem())
	case *types.Slice:
		w.walk(where, t.Elem())
	case *types.Array:
		w.walk(where, t.Elem())
	case *types.Map:
		w.walk(where, t.Key())
		w.walk(where, t.Elem())
	case *types.Chan:
		w.walk(where, t.Elem())
	case *types.Signature:
		for _, tup := range []*types.Tuple{t.Params(), t.Results()} {
			for i := range tup.Len() {
				w.walk(where, tup.At(i).Type())
			}
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() {
				w.walk(where+"."+f.Name(), f.Type())
			}
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			if m := t.Method(i); m.Exported() {
				w.walk(where+"."+m.Name(), m.Type())
			}
		}
	}
}

// named walks the named type t: a violation where its package is
// backstage; its members where it is of another of dgen's packages (the
// package's own exported types are walked as identifiers of their own).
func (w *typeWalker) named(where string, t *types.Named) {
	obj := t.Obj()
	if w.aliased[obj] {
		w.members(w.pkg.Name()+"."+obj.Name(), t)
		return
	}
	if obj.Pkg() != nil && w.backstage(obj.Pkg().Path()) {
		w.bad = append(w.bad, where+": "+types.TypeString(t, nil))
		return
	}
	for i := range t.TypeArgs().Len() {
		w.walk(where, t.TypeArgs().At(i))
	}
	if obj.Pkg() == nil || !strings.HasPrefix(obj.Pkg().Path(), "github.com/dgen-go/dgen/") || obj.Pkg() == w.pkg {
		return
	}
	w.members(obj.Pkg().Name()+"."+obj.Name(), t)
}

// members walks the exported fields and methods of the named type t.
func (w *typeWalker) members(name string, t *types.Named) {
	w.walk(name, t.Underlying())
	for i := range t.NumMethods() {
		if m := t.Method(i); m.Exported() {
			w.walk(name+"."+m.Name(), m.Type())
		}
	}
}

// Undocumented returns what go doc would not show of the exported types
// of pkg, whose source is files: "T.M" for each exported method of a type
// that has no documented method M in go/doc's view of the source (which
// is go doc's), "T.F" for each exported field that T's declaration does
// not list (a type defined over another package's struct lists none), "T
// (no documentation)" for an undocumented type, and "T (an alias of P.U)"
// for an alias of a type of an internal package, which go doc cannot
// show.
func Undocumented(t testing.TB, fset *token.FileSet, files []*ast.File, pkg *types.Package) []string {
	t.Helper()
	dp, err := doc.NewFromFiles(fset, files, pkg.Path(), doc.PreserveAST)
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
		if dt == nil || strings.TrimSpace(dt.Doc) == "" {
			bad = append(bad, name+" (no documentation)")
			continue
		}
		if a, ok := tn.Type().(*types.Alias); ok {
			if rhs := typeName(a.Rhs()); rhs != nil && rhs.Pkg() != nil && strings.Contains(rhs.Pkg().Path(), "/internal/") {
				bad = append(bad, name+" (an alias of "+rhs.Pkg().Path()+"."+rhs.Name()+")")
			}
			continue
		}
		bad = append(bad, undocumentedMembers(name, tn.Type().(*types.Named), dt)...)
	}
	return bad
}

// undocumentedMembers is Undocumented for the methods and fields of the
// type name, t, whose documentation is dt.
func undocumentedMembers(name string, t *types.Named, dt *doc.Type) []string {
	var bad []string
	methods := map[string]string{}
	for _, f := range dt.Methods {
		methods[f.Name] = f.Doc
	}
	for i := range t.NumMethods() {
		if m := t.Method(i); m.Exported() && strings.TrimSpace(methods[m.Name()]) == "" {
			bad = append(bad, name+"."+m.Name())
		}
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return bad
	}
	declared := map[string]bool{}
	if s, ok := dt.Decl.Specs[0].(*ast.TypeSpec).Type.(*ast.StructType); ok {
		for _, f := range s.Fields.List {
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

// NamedIn returns the identifiers of the package at importPath that the Go
// files under root whose names match file name, under whatever name they
// import it: what generated code (zz_generated*.go) calls of rt/codegen.
// It skips t where root holds no such file.
func NamedIn(t testing.TB, root string, file *regexp.Regexp, importPath string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !file.MatchString(d.Name()) {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
		if err != nil {
			return nil // golden tests keep broken inputs
		}
		files++
		local := ""
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == importPath {
				local = filepath.Base(importPath)
				if imp.Name != nil {
					local = imp.Name.Name
				}
			}
		}
		if local == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == local {
					names[sel.Sel.Name] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Skipf("no file matching %v under %s (a gpu-bundle)", file, root)
	}
	return names
}
