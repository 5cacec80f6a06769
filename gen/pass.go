package gen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
)

// Package is a parsed and type-checked package as an analysis pass (go
// vet, gopls) holds it: the files as the editor shows them, overlays
// included. GeneratePackage checks it without loading anything again.
type Package struct {
	// Dir is the package directory, where the OpenCL C sources are.
	Dir string
	// Fset, Files, Types and Info are the pass's.
	Fset  *token.FileSet
	Files []*ast.File
	Types *types.Package
	Info  *types.Info
	// Sizes are the target's sizes; nil means amd64's.
	Sizes types.Sizes
	// IgnoredFiles are the package's files that build constraints
	// exclude; they are parsed from disk.
	IgnoredFiles []string
	// TypeErrors are the type errors of the package (the pass's, with
	// RunDespiteErrors).
	TypeErrors []types.Error
}

// GeneratePackage checks the package variant pkg and generates the files
// for its declarations, as Generate does for a directory: the files of a
// package without its tests, of its internal tests, or of its external
// test package, as the pass holds them. It returns Diagnostics (or
// another error) and no files, or the files and the names among them, and
// among the generated files of the directory, that belong to this variant
// (for Diff).
func GeneratePackage(pkg *Package) (files []File, owned func(name string) bool, err error) {
	l, err := loadPackage(pkg)
	if err != nil {
		return nil, nil, err
	}
	files, err = generate(l)
	if err != nil {
		return nil, nil, err
	}
	return files, ownedBy(pkg), nil
}

// DiffPackage is Diff over the generated files that belong to a package
// variant (GeneratePackage's owned).
func DiffPackage(dir string, files []File, owned func(name string) bool) ([]string, error) {
	return diff(dir, files, owned)
}

// loadPackage makes the loaded package of an analysis pass.
func loadPackage(pkg *Package) (*loaded, error) {
	abs, err := filepath.Abs(pkg.Dir)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", pkg.Dir, err)
	}
	name := strings.TrimSuffix(pkg.Types.Name(), "_test")
	l := &loaded{dir: abs, path: strings.TrimSuffix(pkg.Types.Path(), "_test"), name: name, fset: pkg.Fset,
		scope: pkg.Types.Scope(), sizes: pkg.Sizes}
	seen := map[string]bool{}
	for _, f := range pkg.Files {
		path := pkg.Fset.File(f.Pos()).Name()
		if seen[path] || isGenerated(filepath.Base(path)) {
			continue
		}
		seen[path] = true
		l.files = append(l.files, &srcFile{path: path, ast: f, info: pkg.Info, pkg: pkg.Types,
			test: strings.HasSuffix(path, "_test.go"), build: constraint(path, f)})
	}
	for _, path := range pkg.IgnoredFiles {
		if seen[path] || isGenerated(filepath.Base(path)) || !strings.HasSuffix(path, ".go") {
			continue
		}
		f, err := parser.ParseFile(l.fset, path, nil, parser.ParseComments)
		if err != nil || f.Name.Name != pkg.Types.Name() {
			continue // another package's, or reported by the build that has it
		}
		l.files = append(l.files, &srcFile{path: path, ast: f, test: strings.HasSuffix(path, "_test.go"), build: constraint(path, f)})
	}
	sort.Slice(l.files, func(i, j int) bool { return l.files[i].path < l.files[j].path })
	var errs []typeError
	for _, e := range pkg.TypeErrors {
		pos := e.Fset.Position(e.Pos)
		if isGenerated(filepath.Base(pos.Filename)) {
			continue // a stale generated file's guards: dgen reports what changed, and the diff
		}
		errs = append(errs, typeError{pos: pos, msg: e.Msg})
	}
	l.typeErrs = unexplained(errs)
	return l, nil
}

// ownedBy returns which generated files belong to a package variant: the
// package's own for the package without tests, and for a variant with test
// files the companions of those files.
func ownedBy(pkg *Package) func(name string) bool {
	// The companions of files of other builds are left out: without
	// their types (a pass has none) their kernels' methods cannot be
	// generated as go generate, which loads them for their system, does.
	other := map[string]bool{}
	for _, path := range pkg.IgnoredFiles {
		stem := strings.TrimSuffix(filepath.Base(path), ".go")
		other["zz_generated_"+stem+".dgen.go"] = true
		other["zz_generated_"+strings.TrimSuffix(stem, "_test")+".dgen_test.go"] = true
	}
	owned := ownedVariant(pkg)
	return func(name string) bool { return !other[name] && owned(name) }
}

// ownedVariant returns which generated files the variant pkg writes.
func ownedVariant(pkg *Package) func(name string) bool {
	tests := map[string]bool{}
	for _, f := range pkg.Files {
		base := filepath.Base(pkg.Fset.File(f.Pos()).Name())
		if stem, ok := strings.CutSuffix(base, "_test.go"); ok {
			tests["zz_generated_"+stem+".dgen_test.go"] = true
		}
	}
	if len(tests) == 0 {
		return func(name string) bool { return !strings.HasSuffix(name, ".dgen_test.go") }
	}
	return func(name string) bool { return tests[name] }
}
