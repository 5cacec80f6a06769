package cuda_test

import (
	"testing"

	_ "github.com/dgen-go/dgen/rt/cuda"
	"github.com/dgen-go/dgen/rt/driver/drivertest"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

// TestConformance runs rt/driver's conformance suite on every device of
// both backends: PoCL (and NVIDIA's OpenCL where its ICD is registered)
// through rt/opencl, and every CUDA device through rt/cuda where libcuda
// loads.
func TestConformance(t *testing.T) { drivertest.RunAll(t) }
