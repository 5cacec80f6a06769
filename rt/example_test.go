package rt_test

import (
	"fmt"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/opencl"
)

// Open a context on the CPU device (PoCL, where no GPU is present), and
// move data to the device and back.
func Example() {
	ctx, err := rt.OpenConfig(rt.Config{Device: "cpu"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	q := ctx.Queue()
	b, err := rt.NewBuffer[float32](ctx, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Free()
	if err := b.Write(q, []float32{1, 2, 3, 4}); err != nil {
		fmt.Println(err)
		return
	}
	got := make([]float32, 4)
	if err := b.Read(q, got); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got)
	// Output: [1 2 3 4]
}

// Build a program at run time, set a kernel's arguments and launch it: the
// phases 3 and 4 of a launch, which a generated Enqueue shares.
func ExampleQueue_Submit() {
	ctx, err := rt.OpenConfig(rt.Config{Device: "cpu"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	q := ctx.Queue()
	p, err := ctx.BuildProgram("scale", `__kernel void scale(__global float *x, float a) { x[get_global_id(0)] *= a; }`, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	k, err := p.Kernel("scale")
	if err != nil {
		fmt.Println(err)
		return
	}
	x, _ := rt.NewBuffer[float32](ctx, 3)
	defer x.Free()
	x.Write(q, []float32{1, 2, 3})
	k.SetBuffer(0, x.Mem())
	rt.SetArg(k, 1, float32(10))
	if err := q.Submit(k, rt.Range1(3)); err != nil {
		fmt.Println(err)
		return
	}
	got := make([]float32, 3)
	x.Read(q, got) // a blocking read waits for the launch: the queue is in order
	fmt.Println(got)
	// Output: [10 20 30]
}

// A work-group size is given per dimension; a zero or a missing size is an
// error at launch, not the device's choice.
func ExampleRange_WithLocal() {
	fmt.Println(rt.Range2(64, 32).WithLocal(16, 8))
	fmt.Println(rt.Range1(100))
	// Output:
	// [64 32]/[16 8]
	// [100]
}
