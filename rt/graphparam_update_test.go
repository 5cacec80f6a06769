package rt_test

import (
	"errors"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// TestGraphParamAfterLaunch adds a parameter to a graph that launched
// with parameters already, on a queue it is prepared for: the next launch
// binds the new one too, and uses its value.
func TestGraphParamAfterLaunch(t *testing.T) {
	for _, mode := range []string{"command-buffer", "loop"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "loop" {
				loopGraphs(t)
			}
			ctx := openCPU(t)
			p, node, _ := recordParamGraph(t, ctx)
			f, g := p.graphFixture, p.g
			r := newRequest(t, ctx, f.q, f.n, 1)
			three := []rt.Binding{p.x.Bind(r.x), p.y.Bind(r.y), p.z.Bind(r.z)}
			if err := g.LaunchWith(f.q, three); err != nil {
				t.Fatal(err)
			}
			if err := r.check(f.q, 2); err != nil {
				t.Fatal(err)
			}
			var err error
			if p.a, err = rt.ValueParam[float32](node, 2); err != nil {
				t.Fatal(err)
			}
			if err := g.LaunchWith(f.q, three); !errors.Is(err, rt.ErrInvalidArgument) {
				t.Fatalf("LaunchWith without the new parameter: %v, want ErrInvalidArgument", err)
			}
			if err := g.LaunchWith(f.q, p.bind(r, 5)); err != nil {
				t.Fatal(err)
			}
			if err := r.check(f.q, 5); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestGraphParamUpdateMovesBuffer updates a launch so that the buffer a
// parameter was made from moves to an argument that the parameter does
// not stand for: the graph uses that buffer itself again, and a launch
// after its Free is an error wrapping ErrFreed, not a launch that reads
// freed memory.
func TestGraphParamUpdateMovesBuffer(t *testing.T) {
	for _, mode := range []string{"command-buffer", "loop"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "loop" {
				loopGraphs(t)
			}
			ctx := openCPU(t)
			f := newGraphFixture(t, ctx)
			var node *rt.GraphNode
			g, err := f.q.Record("moves", func(q *rt.Queue) error {
				var err error
				node, err = q.Node(func(q *rt.Queue) error { return f.step(q, f.x, f.y, 2, 1) })
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Release()
			y, err := rt.BufferParam(g, f.y) // argument 1
			if err != nil {
				t.Fatal(err)
			}
			// Swap the pair: f.y is argument 0 now, which no parameter
			// stands for.
			if err := g.Update(node, func(q *rt.Queue) error { return f.step(q, f.y, f.x, 2, 1) }); err != nil {
				t.Fatal(err)
			}
			out, err := rt.NewBuffer[float32](ctx, f.n)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.y.Free(); err != nil {
				t.Fatal(err)
			}
			if err := g.LaunchWith(f.q, []rt.Binding{y.Bind(out)}); !errors.Is(err, rt.ErrFreed) {
				t.Fatalf("LaunchWith of a graph whose launch reads a freed buffer: %v, want ErrFreed", err)
			}
			f.q.Finish()
		})
	}
}

const scaleSrc = `
__kernel void scale(__global float *y, float a, __global const float *x) {
	int i = get_global_id(0);
	y[i] = a * x[i];
}
`

// TestGraphParamFailedUpdate fails an Update of a launch whose buffer
// parameter's recorded buffer was freed, after the update set some of
// the launch's arguments: the graph is left as it was, and the next
// launches run with the recorded value, not the failed update's.
func TestGraphParamFailedUpdate(t *testing.T) {
	for _, mode := range []string{"command-buffer", "loop"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "loop" {
				loopGraphs(t)
			}
			ctx := openCPU(t)
			q := ctx.Queue()
			prog, err := raw.Build(ctx, "scale", scaleSrc, "")
			if err != nil {
				t.Fatal(err)
			}
			k, err := prog.Kernel("scale")
			if err != nil {
				t.Fatal(err)
			}
			const n = 64
			newBuf := func() rt.Buffer[float32] {
				b, err := rt.NewBuffer[float32](ctx, n)
				if err != nil {
					t.Fatal(err)
				}
				return b
			}
			scale := func(q *rt.Queue, y rt.Buffer[float32], a float32, x rt.Buffer[float32]) error {
				if err := errors.Join(raw.SetBuffer(k, 0, y), raw.SetArg(k, 1, a), raw.SetBuffer(k, 2, x)); err != nil {
					return err
				}
				return raw.Submit(q, k, rt.Range1(n))
			}
			y0, x := newBuf(), newBuf()
			in := make([]float32, n)
			for i := range in {
				in[i] = float32(i + 1)
			}
			if err := x.Write(q, in); err != nil {
				t.Fatal(err)
			}
			var node *rt.GraphNode
			g, err := q.Record("scale", func(q *rt.Queue) error {
				var err error
				node, err = q.Node(func(q *rt.Queue) error { return scale(q, y0, 2, x) })
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Release()
			y, err := rt.BufferParam(g, y0)
			if err != nil {
				t.Fatal(err)
			}
			if err := y0.Free(); err != nil { // BufferParam lets it go
				t.Fatal(err)
			}
			out1, out2 := newBuf(), newBuf()
			check := func(out rt.Buffer[float32], what string) {
				t.Helper()
				if err := g.LaunchWith(q, []rt.Binding{y.Bind(out)}); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				got := make([]float32, n)
				if err := out.Read(q, got); err != nil {
					t.Fatal(err)
				}
				for i, v := range got {
					if v != 2*in[i] {
						t.Fatalf("%s: y[%d] = %v, want %v", what, i, v, 2*in[i])
					}
				}
			}
			check(out1, "before the update")
			// The update sets a = 3, then fails on its freed x.
			gone := newBuf()
			err = g.Update(node, func(q *rt.Queue) error {
				err := scale(q, out1, 3, gone)
				gone.Free()
				return err
			})
			if !errors.Is(err, rt.ErrFreed) {
				t.Fatalf("Update with a buffer freed before it applies: %v, want ErrFreed", err)
			}
			check(out2, "after the failed update")
			check(out1, "after the failed update, again")
		})
	}
}
