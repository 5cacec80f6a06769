package golden

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dgen-go/dgen/gen"
)

// TestAcceptedBuilds builds the image of the golden package accepted (Go
// names that are not ASCII, blank padding fields, kernels behind
// extension guards) on the OpenCL device, and runs kernel move, which
// reads the padded device global through its hidden argument.
func TestAcceptedBuilds(t *testing.T) {
	dir := filepath.Join("testdata", "src", "accepted")
	b, err := os.ReadFile(filepath.Join(dir, gen.MainFile))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("no testdata/src beside the test binary (a gpu-bundle): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	image := imagesOf(t, []gen.File{{Name: gen.MainFile, Content: b}})["P"]
	ctx := openDevice(t)
	p, err := ctx.BuildProgram(image, "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	names, err := p.KernelNames()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"move", "double_k"} {
		if !slices.Contains(names, k) {
			t.Errorf("kernel %s is not in the image (it has %v)", k, names)
		}
	}
	// ps[0].m += Höhe + Teilchen.M + Teilchen.V[0], with Höhe = 1 and
	// Teilchen = {M: 2, V: {4, …}}: padding between M and V as C has it.
	ps := make([]float32, 8)
	teilchen := []float32{2, 0, 0, 0, 4, 0, 0, 0}
	runKernel(t, ctx, p, "move", 1, ps, bytesOf(ps...), bytesOf[int32](0), bytesOf[float32](1), bytesOf(teilchen...))
	if ps[0] != 7 {
		t.Errorf("move: ps[0].m = %v, want 7", ps[0])
	}
}
