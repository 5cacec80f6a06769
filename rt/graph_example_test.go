package rt_test

import (
	"fmt"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// Record two launches into a graph once, launch it three times, then
// update one launch's scalar and launch it again. A generated Enqueue
// records and updates the same way: pass it the q that Record and Update
// hand to their functions.
func ExampleQueue_Record() {
	ctx, err := rt.OpenConfig(rt.Config{Device: "cpu"})
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
	scale := func(q *rt.Queue, a float32) error {
		if err := k.SetBuffer(0, x.Mem()); err != nil {
			return err
		}
		if err := raw.SetArg(k, 1, a); err != nil {
			return err
		}
		return raw.Submit(q, k, rt.Range1(3))
	}
	g, err := q.Record("scale twice", func(q *rt.Queue) error {
		if err := x.Write(q, []float32{1, 2, 3}); err != nil { // the values as they are now
			return err
		}
		if err := scale(q, 2); err != nil {
			return err
		}
		return scale(q, 10)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Release()
	got := make([]float32, 3)
	for range 3 {
		if err := g.Launch(q); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := x.Read(q, got); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got)
	// Command 2 is the second launch (command 0 is the write).
	if err := g.Update(2, func(q *rt.Queue) error { return scale(q, -1) }); err != nil {
		fmt.Println(err)
		return
	}
	if err := g.Launch(q); err != nil {
		fmt.Println(err)
		return
	}
	if err := x.Read(q, got); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got)
	// Output:
	// [20 40 60]
	// [-2 -4 -6]
}
