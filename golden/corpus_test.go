package golden

import (
	"errors"
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

// corpusPkg is a package that declares every kernel of the corpus whose
// parameters all have a Go mapping, as a user would: one program per file,
// the file's structs as Go types. A probed program's source is a wrapper
// that includes a header using two device globals in a macro body and a
// helper function, then the corpus file, and adds a kernel dgen_probe that
// reads both: out[0] = DGEN_SCALED(1) + dgen_bias().
type corpusPkg struct {
	dir     string
	files   []*clcorpus.File
	options map[string]string   // build options by program
	kernels map[string][]string // declared kernels by program
	probed  map[string]bool     // programs with the probe
	skipped int                 // kernels left out
	guarded int                 // kernels declared behind an extension PoCL lacks
}

const corpusProbeHeader = `// The probe's header: a device global in a macro body, one in a helper.
#define DGEN_SCALED(x) ((x) * DgenScale)
float dgen_bias(void) { return DgenBias; }
`

func newCorpusPkg(t *testing.T) *corpusPkg {
	files, err := clcorpus.Load()
	if errors.Is(err, clcorpus.ErrNoSourceTree) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "corpus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return &corpusPkg{dir: dir, files: files}
}

// write writes the package; the files in plain get no probe.
func (c *corpusPkg) write(t *testing.T, plain map[int]bool) {
	absDir, err := filepath.Abs(c.dir)
	if err != nil {
		t.Fatal(err)
	}
	c.options, c.kernels, c.probed, c.skipped, c.guarded = map[string]string{}, map[string][]string{}, map[string]bool{}, 0, 0
	var g strings.Builder
	g.WriteString("package corpus\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n")
	g.WriteString("//dgen:global\nvar DgenScale rt.DeviceGlobal[float32]\n\n//dgen:global\nvar DgenBias rt.DeviceGlobal[float32]\n\n")
	for n, f := range c.files {
		prefix, prog := fmt.Sprintf("C%d_", n), fmt.Sprintf("P%d", n)
		c.options[prog] = f.Options
		rel, _ := filepath.Rel(absDir, f.Abs)
		source := filepath.ToSlash(rel)
		if !plain[n] {
			source = fmt.Sprintf("w%d.cl", n)
			wrapper := fmt.Sprintf("#include \"probe.h\"\n#include %s\n__kernel void dgen_probe(__global float* out) { out[0] = DGEN_SCALED(1.0f) + dgen_bias(); }\n", strconv.Quote(f.Abs))
			if err := os.WriteFile(filepath.Join(c.dir, source), []byte(wrapper), 0o644); err != nil {
				t.Fatal(err)
			}
			c.probed[prog] = true
			fmt.Fprintf(&g, "//dgen:kernel program=%s name=dgen_probe\ntype %sProbe struct{ Out rt.Buffer[float32] }\n\n", prog, prefix)
		}
		fmt.Fprintf(&g, "//dgen:program source=%s options=%s\nvar %s rt.Program\n\n", strconv.Quote(source), strconv.Quote(f.Options), prog)
		c.declare(&g, n, f, prefix, prog)
	}
	writeFiles(t, c.dir, map[string]string{"corpus.go": g.String(), "probe.h": corpusProbeHeader})
}

// declare declares the structs and mappable kernels of file n.
func (c *corpusPkg) declare(g *strings.Builder, n int, f *clcorpus.File, prefix, prog string) {
	for name, fields := range f.Structs {
		fmt.Fprintf(g, "type %s%s struct {\n", prefix, name)
		for _, fd := range fields {
			fmt.Fprintf(g, "\tF_%s %s\n", fd[0], corpusGoType(fd[1], prefix, f.Structs))
		}
		g.WriteString("}\n\n")
	}
	for _, k := range f.Kernels {
		if !k.Mappable() {
			c.skipped++
			continue
		}
		if f.OnPoCL() {
			c.kernels[prog] = append(c.kernels[prog], k.Name)
		} else {
			c.guarded++ // generated, but behind an extension PoCL lacks
		}
		fmt.Fprintf(g, "//dgen:kernel program=%s name=%s\ntype %sK_%s struct {\n", prog, k.Name, prefix, k.Name)
		for _, p := range k.Params {
			fmt.Fprintf(g, "\tF_%s %s\n", p.Name, corpusGoType(*p.Go, prefix, f.Structs))
		}
		g.WriteString("}\n\n")
	}
}

// fileOf returns the index of the corpus file that a diagnostic's file
// name is, or its probe wrapper, or -1.
func (c *corpusPkg) fileOf(name string) int {
	for n, f := range c.files {
		if name == fmt.Sprintf("w%d.cl", n) || strings.HasSuffix(filepath.ToSlash(name), "/"+f.Path) {
			return n
		}
	}
	return -1
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
// that each declared kernel is in it. Where a file allows it, its program
// also threads two device globals through a macro body and a helper of an
// included header, and the probe kernel is launched to read them; a file
// that the rewriting cannot read is retried without the probe, and must
// then generate cleanly.
func TestCorpus(t *testing.T) {
	needSource(t)
	c := newCorpusPkg(t)
	plain := map[int]bool{}
	c.write(t, plain)
	files, err := gen.Generate(c.dir)
	var ds gen.Diagnostics
	if errors.As(err, &ds) {
		for _, d := range ds {
			if n := c.fileOf(d.Pos.Filename); n >= 0 && strings.Contains(d.Msg, "cannot thread device globals") {
				plain[n] = true
			}
		}
		for n := range plain {
			t.Logf("without the probe (the rewriting cannot read it): %s", c.files[n].Path)
		}
		c.write(t, plain)
		files, err = gen.Generate(c.dir)
	}
	if err != nil {
		t.Fatalf("dgen over the corpus:\n%v", err)
	}
	declared := 0
	for _, ks := range c.kernels {
		declared += len(ks)
	}
	declared += c.guarded
	t.Logf("generated %d of %d kernels with mappable parameters, %d of them behind extensions PoCL lacks (not looked for in its images); %d left out (no mapping); %d programs probed", declared, declared, c.guarded, c.skipped, len(c.probed))
	ctx := openDevice(t)
	for name, image := range imagesOf(t, files) {
		c.build(t, ctx, name, image)
	}
}

// build builds one program's image, checks its kernels and runs its probe.
func (c *corpusPkg) build(t *testing.T, ctx driver.Context, name, image string) {
	prog, err := ctx.BuildProgram(image, c.options[name])
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	defer prog.Release()
	names, err := prog.KernelNames()
	if err != nil {
		t.Errorf("%s: %v", name, err)
	}
	for _, k := range c.kernels[name] {
		if !slices.Contains(names, k) {
			t.Errorf("%s: kernel %s is not in the built image (it has %v)", name, k, names)
		}
	}
	if c.probed[name] {
		out := make([]float32, 1)
		runKernel(t, ctx, prog, "dgen_probe", 1, out, bytesOf[float32](0), bytesOf[float32](3), bytesOf[float32](0.5))
		if out[0] != 3.5 {
			t.Errorf("%s: the probe read %v, want 3.5", name, out[0])
		}
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
