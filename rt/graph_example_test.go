package rt_test

import (
	"fmt"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// Record a write from pinned memory and two launches into a graph once,
// launch it for three frames, then update one launch's scalar through its
// node and launch it again. Each launch reads the pinned memory anew. A
// generated Enqueue records and updates the same way: pass it the q that
// Record and Update hand to their functions.
func ExampleQueue_Record() {
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
	frame, _ := rt.NewPinned[float32](q, 3)
	defer frame.Free()
	scale := func(q *rt.Queue, a float32) error {
		if err := raw.SetBuffer(k, 0, x); err != nil {
			return err
		}
		if err := raw.SetArg(k, 1, a); err != nil { // captured by value
			return err
		}
		return raw.Submit(q, k, rt.Range1(3))
	}
	var second *rt.GraphNode
	g, err := q.Record("scale twice", func(q *rt.Queue) error {
		if _, err := x.WriteAsync(q, 0, frame); err != nil { // read at each launch
			return err
		}
		if err := scale(q, 2); err != nil {
			return err
		}
		second, err = q.Node(func(q *rt.Queue) error { return scale(q, 10) })
		return err
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Release()
	got := make([]float32, 3)
	run := func(in ...float32) {
		copy(frame.Slice(), in)
		if err := g.Launch(q); err != nil {
			fmt.Println(err)
			return
		}
		if err := x.Read(q, got); err != nil { // after the launch, on its queue
			fmt.Println(err)
			return
		}
		fmt.Println(got)
	}
	run(1, 2, 3)
	run(4, 5, 6)
	if err := g.Update(second, func(q *rt.Queue) error { return scale(q, -1) }); err != nil {
		fmt.Println(err)
		return
	}
	run(1, 2, 3)
	// Output:
	// [20 40 60]
	// [80 100 120]
	// [-2 -4 -6]
}
