package golden

import (
	"bufio"
	"encoding/json"
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
	"github.com/dgen-go/dgen/rt/opencl"
)

// corpusDir is the shared corpus of OpenCL C written by others: ../shared
// relative to the module root.
const corpusDir = "../../shared/cl-corpus"

type corpusParam struct {
	Name  string  `json:"name"`
	Go    *string `json:"go"`
	NoMap *string `json:"nomap"`
}

type corpusKernel struct {
	Name   string        `json:"name"`
	Params []corpusParam `json:"params"`
}

type corpusTruth struct {
	File    string                `json:"file"`
	Kernels []corpusKernel        `json:"kernels"`
	Structs map[string][][]string `json:"structs"`
}

// onPoCL reports whether a kernel of src exists on PoCL's CPU device:
// clang's truth defines every extension, PoCL has no half precision and no
// integer dot products.
func onPoCL(src string) bool {
	return !strings.Contains(src, "defined(cl_khr_fp16)") && !strings.Contains(src, "defined(cl_khr_integer_dot_product)")
}

// corpusPackage declares every kernel of the corpus whose parameters all
// have a Go mapping, as a user would, in one package: one program per
// file, the file's structs as Go types. It returns the package directory,
// the build options of each program, and the number of kernels declared
// and left out.
func corpusPackage(t *testing.T) (dir string, options map[string]string, kernels map[string][]string, skipped int) {
	truths, _ := filepath.Glob(filepath.Join(corpusDir, "truth", "*.json"))
	if len(truths) == 0 {
		t.Skipf("no corpus at %s: it lives in the shared folder beside the module", corpusDir)
	}
	opts := map[string]string{}
	if f, err := os.Open(filepath.Join(corpusDir, "OPTIONS.tsv")); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if path, o, ok := strings.Cut(sc.Text(), "\t"); ok {
				opts[path] = o
			}
		}
		f.Close()
	}
	dir, err := os.MkdirTemp("testdata", "corpus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	abs, _ := filepath.Abs(corpusDir)
	options, kernels = map[string]string{}, map[string][]string{}
	var g strings.Builder
	g.WriteString("package corpus\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n")
	for n, tp := range truths {
		b, err := os.ReadFile(tp)
		if err != nil {
			t.Fatal(err)
		}
		var truth corpusTruth
		if err := json.Unmarshal(b, &truth); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(abs, truth.File)
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		prefix := fmt.Sprintf("C%d_", n)
		o := strings.ReplaceAll(opts[truth.File], "@DIR@", filepath.Dir(path))
		options[fmt.Sprintf("P%d", n)] = o
		absDir, _ := filepath.Abs(dir)
		rel, _ := filepath.Rel(absDir, path)
		fmt.Fprintf(&g, "//dgen:program source=%s options=%s\nvar P%d rt.Program\n\n", strconv.Quote(filepath.ToSlash(rel)), strconv.Quote(o), n)
		for name, fields := range truth.Structs {
			fmt.Fprintf(&g, "type %s%s struct {\n", prefix, name)
			for _, f := range fields {
				fmt.Fprintf(&g, "\tF_%s %s\n", f[0], corpusGoType(f[1], prefix, truth.Structs))
			}
			g.WriteString("}\n\n")
		}
		for _, k := range truth.Kernels {
			if !onPoCL(string(src)) || !mappable(k) {
				skipped++
				continue
			}
			kernels[fmt.Sprintf("P%d", n)] = append(kernels[fmt.Sprintf("P%d", n)], k.Name)
			fmt.Fprintf(&g, "//dgen:kernel program=P%d name=%s\ntype %sK_%s struct {\n", n, k.Name, prefix, k.Name)
			for _, p := range k.Params {
				fmt.Fprintf(&g, "\tF_%s %s\n", p.Name, corpusGoType(*p.Go, prefix, truth.Structs))
			}
			g.WriteString("}\n\n")
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "corpus.go"), []byte(g.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, options, kernels, skipped
}

func mappable(k corpusKernel) bool {
	for _, p := range k.Params {
		if p.NoMap != nil || p.Go == nil {
			return false
		}
	}
	return true
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
	ps, err := opencl.Backend{}.Platforms()
	if err != nil || len(ps) == 0 || len(ps[0].Devices) == 0 {
		t.Skipf("no OpenCL device: %v", err)
	}
	ctx, err := opencl.Backend{}.NewContext(ps[0].Devices[:1])
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Release()
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
