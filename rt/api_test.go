package rt_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/apicheck"
)

// rt's API has one audience: applications, which read it in go doc and on
// pkg.go.dev. The rules, which the tests below check on rt's source:
//
//   - no exported identifier of rt is documented as being for generated
//     code, backends or tests (rt/codegen, rt/driver and rt/internal/core/testhooks.go
//     serve those);
//   - an application needs no import of rt/driver or rt/diskcache, and no
//     type of an internal package, for anything rt documents: no exported
//     identifier's signature, field or method mentions one of their types,
//     directly or through the types of dgen's other packages that it
//     mentions;
//   - each doc comment is written once: rt's are the core's, which
//     mkfacade copies into zz_generated.facade.go with rt's types, their
//     fields and methods (so that go doc shows all of them, and rt forwards
//     every method of the core that it shows).

const rtPath = "github.com/dgen-go/dgen/rt"

// TestAudience checks rt's audience rules.
func TestAudience(t *testing.T) {
	fset := token.NewFileSet()
	files := apicheck.SourceFiles(t, fset, ".", "rt")
	if bad := apicheck.OtherAudience(t, fset, files, rtPath); len(bad) > 0 {
		t.Errorf("rt documents identifiers for another audience than applications (move them to rt/codegen, rt/driver or rt/internal/core/testhooks.go, or document them for applications):\n\t%s", strings.Join(bad, "\n\t"))
	}
	pkgs := apicheck.Load(t, rtPath)
	if bad := apicheck.TypeViolations(pkgs[rtPath], apicheck.Backstage); len(bad) > 0 {
		t.Errorf("rt's API needs a type of rt/driver, rt/diskcache or an internal package (give rt a type of its own):\n\t%s", strings.Join(bad, "\n\t"))
	}
}

// TestDocWrittenOnce checks that no doc comment of two lines or more is
// written twice in the hand-written source of rt, its implementation
// (rt/internal/core) and the other facades of it (rt/codegen, rt/raw):
// rt's documentation is the core's, which mkfacade copies into rt's
// generated file, and a facade written by hand documents what the core's
// doc comment points to.
func TestDocWrittenOnce(t *testing.T) {
	apicheck.SourceFiles(t, token.NewFileSet(), ".", "rt") // skips where there is no source
	seen := map[string]string{}
	var twice []string
	for _, dir := range []string{".", "internal/core", "codegen", "raw"} {
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkgs {
			for _, f := range p.Files {
				if ast.IsGenerated(f) {
					continue
				}
				for _, doc := range docComments(f) {
					if len(doc.List) < 2 {
						continue
					}
					text, at := strings.Join(strings.Fields(doc.Text()), " "), fset.Position(doc.Pos()).String()
					if first, ok := seen[text]; ok {
						twice = append(twice, first+" and "+at+": "+text)
						continue
					}
					seen[text] = at
				}
			}
		}
	}
	if len(twice) > 0 {
		t.Errorf("%d doc comments are written twice (document the core's declaration once: mkfacade copies it into rt; a hand-written facade's doc and the core's pointer to it):\n\t%s", len(twice), strings.Join(twice, "\n\t"))
	}
}

// docComments returns the doc comments of f's declarations, specs and
// fields.
func docComments(f *ast.File) []*ast.CommentGroup {
	var docs []*ast.CommentGroup
	ast.Inspect(f, func(n ast.Node) bool {
		var doc *ast.CommentGroup
		switch n := n.(type) {
		case *ast.FuncDecl:
			doc = n.Doc
		case *ast.GenDecl:
			doc = n.Doc
		case *ast.TypeSpec:
			doc = n.Doc
		case *ast.ValueSpec:
			doc = n.Doc
		case *ast.Field:
			doc = n.Doc
		}
		if doc != nil {
			docs = append(docs, doc)
		}
		return true
	})
	return docs
}
