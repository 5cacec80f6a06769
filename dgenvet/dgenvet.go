// Package dgenvet is dgen's checks as a golang.org/x/tools/go/analysis
// Analyzer, for go vet, editors (gopls) and linters: it reports each
// diagnostic of the generator at its place, in the package's Go files and
// in its OpenCL C sources, and reports generated code that is stale.
//
// The command cmd/dgen-vet runs it under go vet:
//
//	go build -o dgen-vet github.com/dgen-go/dgen/cmd/dgen-vet
//	go vet -vettool=$PWD/dgen-vet ./...
package dgenvet

import (
	"errors"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/dgen-go/dgen/gen"
)

// Analyzer reports what dgen would report for a package, and generated
// files that running dgen would change.
var Analyzer = &analysis.Analyzer{
	Name: "dgen",
	Doc: "check //dgen: declarations against their Go types and OpenCL C sources\n\n" +
		"dgen reports a diagnostic at every declaration it cannot generate code for, " +
		"at near-miss directives (// dgen:x), and at the package clause when the " +
		"generated zz_generated*.dgen.go files are stale: run go generate.",
	URL: "https://pkg.go.dev/github.com/dgen-go/dgen/dgenvet",
	Run: run,
	// A package whose generated methods are missing does not type-check
	// until go generate has run; dgen reports the other type errors.
	RunDespiteErrors: true,
}

func run(pass *analysis.Pass) (any, error) {
	if len(pass.Files) == 0 || !mentionsDgen(pass) {
		return nil, nil
	}
	first := pass.Fset.File(pass.Files[0].Pos())
	dir := filepath.Dir(first.Name())
	// The pass's own files and types: what the editor shows, unsaved
	// buffers included, not the package as saved on disk.
	pkg := &gen.Package{Dir: dir, Fset: pass.Fset, Files: pass.Files, Types: pass.Pkg, Info: pass.TypesInfo,
		Sizes: pass.TypesSizes, IgnoredFiles: pass.IgnoredFiles, TypeErrors: pass.TypeErrors}
	files, owned, err := gen.GeneratePackage(pkg)
	var ds gen.Diagnostics
	switch {
	case errors.As(err, &ds):
		reporter{pass: pass, dir: dir}.report(ds)
		return nil, nil
	case err != nil:
		pass.Reportf(pass.Files[0].Package, "dgen: %v", err)
		return nil, nil
	}
	changes, err := gen.DiffPackage(dir, files, owned)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		pass.Reportf(pass.Files[0].Package, "generated code is stale (%s): run go generate", c)
	}
	return nil, nil
}

// mentionsDgen reports whether a comment of the package mentions dgen (a
// directive or a near miss) or a generated file is among its files: other
// packages are not loaded again.
func mentionsDgen(pass *analysis.Pass) bool {
	for _, f := range pass.Files {
		if strings.HasPrefix(filepath.Base(pass.Fset.File(f.Pos()).Name()), "zz_generated") {
			return true
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.Contains(strings.ToLower(c.Text), "dgen") {
					return true
				}
			}
		}
	}
	return false
}

// reporter maps the generator's diagnostics, whose file names are
// relative to the package directory, to positions of the pass.
type reporter struct {
	pass *analysis.Pass
	dir  string
}

func (r reporter) report(ds gen.Diagnostics) {
	byName := map[string]*token.File{}
	for _, f := range r.pass.Files {
		tf := r.pass.Fset.File(f.Pos())
		byName[tf.Name()] = tf
	}
	for _, d := range ds {
		name := d.Pos.Filename
		if !filepath.IsAbs(name) {
			name = filepath.Join(r.dir, filepath.FromSlash(name))
		}
		tf, ok := byName[name]
		if !ok {
			if strings.HasSuffix(name, ".go") || strings.HasSuffix(r.pass.Pkg.Path(), "_test") {
				continue // a Go file of another variant of the package reports it
			}
			tf = r.addFile(name)
			byName[name] = tf
		}
		r.pass.Report(analysis.Diagnostic{Pos: position(tf, d.Pos), Message: d.Msg})
	}
}

// addFile adds a non-Go file (an OpenCL C source) to the file set, as the
// asmdecl analyzer does for assembly, so that its positions can be
// reported. A file that cannot be read gets an empty one.
func (r reporter) addFile(name string) *token.File {
	content, err := os.ReadFile(name)
	if err != nil {
		content = nil
	}
	tf := r.pass.Fset.AddFile(name, -1, len(content))
	tf.SetLinesForContent(content)
	return tf
}

// position returns the token.Pos of a line and column of tf, clamped to
// the file.
func position(tf *token.File, p token.Position) token.Pos {
	if p.Line < 1 || tf.LineCount() == 0 {
		return tf.Pos(0)
	}
	line := min(p.Line, tf.LineCount())
	pos := tf.LineStart(line)
	off := tf.Offset(pos) + max(p.Column-1, 0)
	return tf.Pos(min(off, tf.Size()))
}
