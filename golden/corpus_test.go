package golden

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/gen"
	"github.com/dgen-go/dgen/internal/clcorpus"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/opencl"
)

// corpusPackage declares every kernel of the corpus whose parameters all
// have a Go mapping, as a user would, in one package: one program per
// file, the file's structs as Go types. It returns the package directory,
// the build options and declared kernels of each program, and the number
// of kernels left out.
func corpusPackage(t *testing.T) (dir string, options map[string]string, kernels map[string][]string, skipped int) {
	files, err := clcorpus.Load()
	if err != nil {
		t.Skip(err)
	}
	dir, err = os.MkdirTemp("testdata", "corpus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	absDir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	options, kernels = map[string]string{}, map[string][]string{}
	var g strings.Builder
	g.WriteString("package corpus\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n")
	for n, f := range files {
		prefix, prog := fmt.Sprintf("C%d_", n), fmt.Sprintf("P%d", n)
		options[prog] = f.Options
		rel, _ := filepath.Rel(absDir, f.Abs)
		fmt.Fprintf(&g, "//dgen:program source=%s options=%s\nvar %s rt.Program\n\n", strconv.Quote(filepath.ToSlash(rel)), strconv.Quote(f.Options), prog)
		for name, fields := range f.Structs {
			fmt.Fprintf(&g, "type %s%s struct {\n", prefix, name)
			for _, fd := range fields {
				fmt.Fprintf(&g, "\tF_%s %s\n", fd[0], corpusGoType(fd[1], prefix, f.Structs))
			}
			g.WriteString("}\n\n")
		}
		for _, k := range f.Kernels {
			if !f.OnPoCL() || !k.Mappable() {
				skipped++
				continue
			}
			kernels[prog] = append(kernels[prog], k.Name)
			fmt.Fprintf(&g, "//dgen:kernel program=%s name=%s\ntype %sK_%s struct {\n", prog, k.Name, prefix, k.Name)
			for _, p := range k.Params {
				fmt.Fprintf(&g, "\tF_%s %s\n", p.Name, corpusGoType(*p.Go, prefix, f.Structs))
			}
			g.WriteString("}\n\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "corpus.go"), []byte(g.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, options, kernels, skipped
}

// corpusGoType prefixes the struct names in a Go type of the truth files.
func corpusGoType(goType, prefix string, structs map[string][][]string) string {
	for name := range structs {
		goType = regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).ReplaceAllString(goType, prefix+name)
	}
	return goType
}

// TestCorpus declares every kernel of the cl-corpus with mappable
// parameters, requires dgen to generate them all without a diagnostic, and
// builds every device image on the OpenCL device (PoCL in CI), checking
// that each declared kernel is in it with its parameters.
func TestCorpus(t *testing.T) {
	dir, options, kernels, skipped := corpusPackage(t)
	declared := 0
	for _, ks := range kernels {
		declared += len(ks)
	}
	files, err := gen.Generate(dir)
	if err != nil {
		t.Fatalf("dgen over the corpus:\n%v", err)
	}
	t.Logf("generated %d of %d kernels with mappable parameters (%d left out: no mapping, or an extension PoCL lacks)", declared, declared, skipped)
	images := imagesOf(t, files)
	ctx := openDevice(t)
	for name, image := range images {
		prog, err := ctx.BuildProgram(image, options[name])
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		names, err := prog.KernelNames()
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, k := range kernels[name] {
			if !slices.Contains(names, k) {
				t.Errorf("%s: kernel %s is not in the built image (it has %v)", name, k, names)
			}
		}
		prog.Release()
	}
}

// openDevice opens a driver context on the first OpenCL device, released
// when the test ends; without a device the test is skipped.
func openDevice(t *testing.T) driver.Context {
	ps, err := opencl.Backend{}.Platforms()
	if err != nil || len(ps) == 0 || len(ps[0].Devices) == 0 {
		t.Skipf("no OpenCL device: %v", err)
	}
	ctx, err := opencl.Backend{}.NewContext(ps[0].Devices[:1])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Release() })
	return ctx
}

// imagesOf returns the device images of generated files by program name.
func imagesOf(t *testing.T, files []gen.File) map[string]string {
	images := map[string]string{}
	for _, f := range files {
		af, err := parser.ParseFile(token.NewFileSet(), f.Name, f.Content, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(af, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok || len(vs.Names) != 1 || !strings.HasPrefix(vs.Names[0].Name, "_dgenImage_") || len(vs.Values) != 1 {
				return true
			}
			if lit, ok := vs.Values[0].(*ast.BasicLit); ok {
				s, err := strconv.Unquote(lit.Value)
				if err == nil {
					images[strings.TrimPrefix(vs.Names[0].Name, "_dgenImage_")] = s
				}
			}
			return true
		})
	}
	return images
}
