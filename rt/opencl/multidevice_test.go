package opencl_test

import (
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/driver/drivertest"
	"github.com/dgen-go/dgen/rt/opencl"
)

// TestConformanceSeveralGPUs runs the multi-device part of rt/driver's
// conformance suite on a context over every GPU of each OpenCL platform
// that lists two or more: NVIDIA's OpenCL on a machine with two GPUs
// (scripts/gpu-multi.sh). It skips where no platform does; PoCL's two
// devices run the same part in rt/cuda's TestConformanceSeveralDevices.
func TestConformanceSeveralGPUs(t *testing.T) {
	ps, err := opencl.Backend{}.Platforms()
	if err != nil {
		t.Skipf("no OpenCL platform: %v", err)
	}
	ran := 0
	for _, p := range ps {
		var gpus []driver.DeviceInfo
		for _, d := range p.Devices {
			if d.Type == driver.DeviceGPU {
				gpus = append(gpus, d)
			}
		}
		if len(gpus) < 2 {
			continue
		}
		ran++
		t.Run(p.Name, func(t *testing.T) {
			drivertest.RunMulti(t, opencl.Backend{}, gpus)
			t.Logf("%s: %d GPUs", p.Name, len(gpus))
		})
	}
	if ran == 0 {
		t.Skip("no OpenCL platform lists two GPUs")
	}
}
