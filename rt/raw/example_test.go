package raw_test

import (
	"fmt"

	"github.com/dgen-go/dgen/rt"
	_ "github.com/dgen-go/dgen/rt/backends"
	"github.com/dgen-go/dgen/rt/raw"
)

// Build a program at run time, set a kernel's arguments and launch it: the
// phases 3 and 4 of a launch, which a generated Enqueue shares.
func ExampleSubmit() {
	ctx, err := rt.Open() // DGEN_DEVICE and DGEN_BACKEND select; a GPU if present, else PoCL
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ctx.Close()
	q := ctx.Queue()
	p, err := raw.Build(ctx, "scale", `__kernel void scale(__global float *x, float a) { x[get_global_id(0)] *= a; }`, "")
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
	raw.SetBuffer(k, 0, x)
	raw.SetArg(k, 1, float32(10))
	if err := raw.Submit(q, k, rt.Range1(3)); err != nil {
		fmt.Println(err)
		return
	}
	got := make([]float32, 3)
	x.Read(q, got) // a blocking read waits for the launch: the queue is in order
	fmt.Println(got)
	// Output: [10 20 30]
}
