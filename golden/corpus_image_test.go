package golden

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/gen"
	"github.com/dgen-go/dgen/internal/clcorpus"
)

// corpusImageTypes are the Go types of the OpenCL C image and sampler
// types, which the corpus's truth files leave unmapped.
var corpusImageTypes = map[string]string{
	"image1d_t": "rt.Image", "image1d_buffer_t": "rt.Image", "image1d_array_t": "rt.Image",
	"image2d_t": "rt.Image", "image2d_array_t": "rt.Image", "image3d_t": "rt.Image", "sampler_t": "rt.Sampler",
}

// TestCorpusImages declares every kernel of the corpus whose parameters
// are mappable or images and samplers (the image filters of PyOpenCL's
// examples, clpeak's image bandwidth test), as a user would with rt's image
// types, requires dgen to generate them without a diagnostic, and builds
// each device image on the OpenCL device, checking its kernels.
func TestCorpusImages(t *testing.T) {
	files, err := clcorpus.Load()
	if errors.Is(err, clcorpus.ErrNoSourceTree) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("testdata", "corpusimages-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	var g strings.Builder
	g.WriteString("package corpusimages\n\nimport \"github.com/dgen-go/dgen/rt\"\n\n")
	kernels, options, params := map[string][]string{}, map[string]string{}, 0
	wrappers := map[string]string{}
	for n, f := range files {
		prefix, prog := fmt.Sprintf("C%d_", n), fmt.Sprintf("P%d", n)
		var decls strings.Builder
		for _, k := range f.Kernels {
			types, images := imageKernel(k, prefix, f.Structs)
			if images == 0 || !f.OnPoCL() {
				continue
			}
			params += images
			kernels[prog] = append(kernels[prog], k.Name)
			fmt.Fprintf(&decls, "//dgen:kernel program=%s name=%s\ntype %sK_%s struct {\n%s}\n\n", prog, k.Name, prefix, k.Name, types)
		}
		if decls.Len() == 0 {
			continue
		}
		for name, fields := range f.Structs {
			fmt.Fprintf(&g, "type %s%s struct {\n", prefix, name)
			for _, fd := range fields {
				fmt.Fprintf(&g, "\tF_%s %s\n", fd[0], corpusGoType(fd[1], prefix, f.Structs))
			}
			g.WriteString("}\n\n")
		}
		// A source outside the package is included by one inside it.
		source := fmt.Sprintf("w%d.cl", n)
		wrappers[source] = fmt.Sprintf("#include %s\n", strconv.Quote(f.Abs))
		options[prog] = f.Options
		fmt.Fprintf(&g, "//dgen:program source=%s options=%s\nvar %s rt.Program\n\n%s", source, strconv.Quote(f.Options), prog, decls.String())
	}
	if params == 0 {
		t.Skip("no kernel of the corpus takes images")
	}
	wrappers["corpus.go"] = g.String()
	writeFiles(t, dir, wrappers)
	out, err := gen.Generate(dir)
	if err != nil {
		t.Fatalf("dgen over the corpus's image kernels:\n%v", err)
	}
	t.Logf("generated %d kernels of %d programs with %d image and sampler parameters", len(slices.Concat(mapValues(kernels)...)), len(kernels), params)
	ctx := openDevice(t)
	for name, image := range imagesOf(t, out) {
		prog, err := ctx.BuildProgram(image, options[name])
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		names, err := prog.KernelNames()
		if err != nil {
			t.Error(err)
		}
		for _, k := range kernels[name] {
			if !slices.Contains(names, k) {
				t.Errorf("%s: kernel %s is not in the built image (it has %v)", name, k, names)
			}
		}
		prog.Release()
	}
}

// imageKernel returns the fields of a kernel spec for k and the number of
// its image and sampler parameters; 0 when another parameter has no Go
// mapping.
func imageKernel(k clcorpus.Kernel, prefix string, structs map[string][][]string) (string, int) {
	var b strings.Builder
	images := 0
	for _, p := range k.Params {
		switch {
		case p.Go != nil:
			fmt.Fprintf(&b, "\tF_%s %s\n", p.Name, corpusGoType(*p.Go, prefix, structs))
		case p.NoMap != nil && corpusImageTypes[*p.NoMap] != "":
			fmt.Fprintf(&b, "\tF_%s %s\n", p.Name, corpusImageTypes[*p.NoMap])
			images++
		default:
			return "", 0
		}
	}
	return b.String(), images
}

func mapValues[K comparable, V any](m map[K]V) []V {
	var vs []V
	for _, v := range m {
		vs = append(vs, v)
	}
	return vs
}
