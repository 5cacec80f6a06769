package cuda_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt/cuda"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/driver/drivertest"
	"github.com/dgen-go/dgen/rt/opencl"
)

// TestConformance runs rt/driver's conformance suite on every device of
// both backends: PoCL (and NVIDIA's OpenCL where its ICD is registered)
// through rt/opencl, and every CUDA device through rt/cuda where libcuda
// loads.
func TestConformance(t *testing.T) { drivertest.RunAll(t) }

// TestConformanceSeveralDevices runs the multi-device part of the suite:
// on PoCL with two devices (POCL_DEVICES="pthread pthread", in a child
// process, since PoCL reads it when it loads), and on CUDA over the first
// GPU listed twice, which takes every code path of a context over several
// devices (a module and events per device, managed memory) on one GPU.
func TestConformanceSeveralDevices(t *testing.T) {
	if os.Getenv("DGEN_TEST_POCL_TWO") == "" {
		testenv.RequireDevice(t)
		cmd := exec.Command(os.Args[0], "-test.run=^TestConformanceSeveralDevices$", "-test.v")
		cmd.Env = append(os.Environ(), "DGEN_TEST_POCL_TWO=1", "POCL_DEVICES=pthread pthread")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "PoCL: 2 devices") {
			t.Fatalf("child: %v\n%s", err, out)
		}
		t.Logf("child:\n%s", out)
		return
	}
	ps, err := opencl.Backend{}.Platforms()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if strings.Contains(p.Name, "Portable Computing Language") && len(p.Devices) >= 2 {
			t.Run("PoCL", func(t *testing.T) { drivertest.RunMulti(t, opencl.Backend{}, p.Devices) })
			t.Logf("PoCL: %d devices", len(p.Devices))
		}
	}
	cps, err := cuda.Backend{}.Platforms()
	if err != nil || len(cps[0].Devices) == 0 {
		t.Logf("CUDA: not run (%v)", err)
		return
	}
	d := cps[0].Devices[0]
	t.Run("CUDA", func(t *testing.T) { drivertest.RunMulti(t, cuda.Backend{}, []driver.DeviceInfo{d, d}) })
	if len(cps[0].Devices) >= 2 {
		t.Run("CUDA two GPUs", func(t *testing.T) { drivertest.RunMulti(t, cuda.Backend{}, cps[0].Devices) })
	}
}
