// Command quickstart is the smallest complete program on dgen: a kernel in
// an OpenCL C file, two declarations that go generate turns into typed
// launch code, and a run on the device that DGEN_DEVICE selects (a GPU if
// there is one, else the CPU through PoCL), checked against Go.
//
// The kernel's parameters are checked against the Saxpy struct's fields
// when go generate runs (zz_generated.dgen.go is its output, committed); a
// saxpy.cl edited without running it again makes the launch fail with an
// error wrapping rt.ErrStale.
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
)

//go:generate go run github.com/dgen-go/dgen/cmd/dgen

// Kernels is the device image: saxpy.cl, read by dgen at generate time and
// embedded in the generated file.
//
//dgen:program source=saxpy.cl
var Kernels rt.Program

// Saxpy launches saxpy: its fields are, in order, the kernel's parameters.
//
//dgen:kernel program=Kernels name=saxpy
type Saxpy struct {
	A float32            // float a
	X rt.Buffer[float32] // __global const float *x
	Y rt.Buffer[float32] // __global float *y
	N int32              // int n
}

func main() {
	n := flag.Int("n", 1<<20, "number of elements")
	flag.Parse()
	if err := run(*n); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
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
	fmt.Printf("device: %s, %s, %d compute units\n", dev.String(), dev.Version, dev.ComputeUnits)

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

	// The first launch builds the program (or loads it from dgen's cache).
	start := time.Now()
	if err := (&Saxpy{A: a, X: bx, Y: by, N: int32(n)}).Enqueue(q, rt.Range1(n)); err != nil {
		return err
	}
	got := make([]float32, n)
	if err := by.Read(q, got); err != nil { // the queue is in order: after the kernel
		return err
	}
	elapsed := time.Since(start)
	for i := range got {
		if want := a*x[i] + y[i]; math.Abs(float64(got[i]-want)) > 1e-5 {
			return fmt.Errorf("y[%d] = %v, want %v", i, got[i], want)
		}
	}
	fmt.Printf("saxpy over %d elements: first launch (with the build) and read back in %v, verified against Go\n", n, elapsed.Round(time.Microsecond))
	return nil
}
