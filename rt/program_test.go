package rt_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// TestProgramWithoutKernels asks a program that defines no kernel for
// one: an error wrapping ErrNoKernel that says so. NVIDIA's OpenCL crashed
// the process when rt asked such a program for its kernel names to
// decorate the error.
func TestProgramWithoutKernels(t *testing.T) {
	ctx := openCPU(t)
	prog, err := raw.Build(ctx, "helpers", "int twice(int x) { return 2 * x; }\n", "")
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Release()
	for range 2 { // the second from the program cache
		_, err := prog.Kernel("twice")
		if !errors.Is(err, rt.ErrNoKernel) || !strings.Contains(err.Error(), "no kernel") {
			t.Errorf("kernel of a program without kernels: %v; want ErrNoKernel saying it defines none", err)
		}
	}
}
