package main

import (
	"math"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/cuda"
)

// TestBackendsBitIdentical runs Hotspot on an NVIDIA GPU through NVIDIA's
// OpenCL and through CUDA (the same PTX, rewritten) and requires
// bit-identical temperatures. It runs where both backends reach the GPU.
func TestBackendsBitIdentical(t *testing.T) {
	if !(cuda.Backend{}).Auto() {
		t.Skip("no CUDA device with NVIDIA's OpenCL here")
	}
	const size, iters = 512, 600
	temp, power := Inputs(size, 42)
	var results [2][]float32
	for i, backend := range []string{"opencl", "cuda"} {
		ctx, err := rt.OpenConfig(rt.Config{Backend: rt.Backend(backend), Device: "gpu"})
		if err != nil {
			t.Fatalf("%s: %v", backend, err)
		}
		if d := ctx.Devices()[0]; d.Type != rt.DeviceGPU {
			t.Fatalf("%s: device %s", backend, d)
		}
		sim, err := NewSim(ctx, power, size, size)
		if err != nil {
			t.Fatal(err)
		}
		for _, pyramid := range []int{1, 3} {
			r, err := sim.Run("tagged", temp, iters, pyramid)
			if err != nil {
				t.Fatalf("%s: %v", backend, err)
			}
			if pyramid == 3 {
				results[i] = r.Temp
			}
		}
		sim.Close()
		ctx.Close()
	}
	diff := 0
	for j := range results[0] {
		if math.Float32bits(results[0][j]) != math.Float32bits(results[1][j]) {
			diff++
		}
	}
	if diff != 0 {
		t.Errorf("%d of %d temperatures differ between NVIDIA OpenCL and CUDA", diff, len(results[0]))
	}
	t.Logf("%d temperatures after %d steps bit-identical on NVIDIA OpenCL and CUDA", len(results[0]), iters)
}
