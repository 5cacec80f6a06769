// Command rawquickstart is examples/quickstart without go generate: it
// opens the device that DGEN_DEVICE selects, builds a saxpy kernel from
// source at run time through rt/raw, sets its arguments by hand, runs it and
// checks the result against Go. It is the shape of host code ported from
// OpenCL; code written for dgen declares the kernel instead (see
// examples/quickstart).
package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"time"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/backends" // every backend of dgen: rt/cuda for NVIDIA GPUs, rt/opencl for the rest
	"github.com/dgen-go/dgen/rt/raw"
)

const source = `
__kernel void saxpy(float a, __global const float *x, __global float *y, int n) {
	int i = get_global_id(0);
	if (i < n) y[i] = a * x[i] + y[i];
}
`

func main() {
	n := flag.Int("n", 1<<20, "number of elements")
	flag.Parse()
	if err := run(*n); err != nil {
		fmt.Fprintln(os.Stderr, "rawquickstart:", err)
		os.Exit(1)
	}
}

func run(n int) (err error) {
	ctx, err := rt.Open()
	if err != nil {
		return err
	}
	// Close reports what went wrong at the end, a trace's write errors too.
	defer func() { err = errors.Join(err, ctx.Close()) }()
	dev := ctx.Devices()[0]
	fmt.Printf("device: %s, %s, %d compute units\n", dev, dev.Version, dev.ComputeUnits)

	start := time.Now()
	prog, err := raw.Build(ctx, "saxpy", source, "")
	if err != nil {
		return err
	}
	k, err := prog.Kernel("saxpy")
	if err != nil {
		return err
	}
	fmt.Printf("built program in %v\n", time.Since(start).Round(time.Microsecond))

	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	a := r.Float32()*4 - 2
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = r.Float32(), r.Float32()
	}
	q := ctx.Queue()
	bx, err := rt.NewBuffer[float32](ctx, n)
	if err != nil {
		return err
	}
	defer bx.Free()
	by, err := rt.NewBuffer[float32](ctx, n)
	if err != nil {
		return err
	}
	defer by.Free()
	if err := errors.Join(bx.Write(q, x), by.Write(q, y)); err != nil {
		return err
	}
	if err := errors.Join(raw.SetArg(k, 0, a), raw.SetBuffer(k, 1, bx), raw.SetBuffer(k, 2, by), raw.SetArg(k, 3, int32(n))); err != nil {
		return err
	}
	start = time.Now()
	ev, err := raw.Launch(q, k, rt.Range1(n))
	if err != nil {
		return err
	}
	got := make([]float32, n)
	if err := by.Read(q, got, ev); err != nil {
		return err
	}
	elapsed := time.Since(start)
	for i := range got {
		if want := a*x[i] + y[i]; math.Abs(float64(got[i]-want)) > 1e-5 {
			return fmt.Errorf("y[%d] = %v, want %v", i, got[i], want)
		}
	}
	fmt.Printf("saxpy over %d elements: launch and read back in %v, verified against Go\n", n, elapsed.Round(time.Microsecond))
	return nil
}
