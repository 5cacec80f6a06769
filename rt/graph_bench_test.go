package rt_test

import (
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// graphKernels is the number of launches of the touch kernel in the graph
// of BenchmarkGraph.
const graphKernels = 100

// BenchmarkGraph measures what one kernel launch costs the host inside a
// replayed graph of 100 launches of the one-work-item touch kernel (as
// BenchmarkSubmit and rawcl's launch figure launch it), against the same
// launches submitted one by one: ns/op is per kernel. On a device with
// cl_khr_command_buffer (PoCL) "graph" replays a command buffer, on CUDA
// a CUDA graph, and "graph-loop" the prepared loop in C that NVIDIA's
// OpenCL gets; elsewhere both are the loop. The queue is drained every 1000 kernels.
func BenchmarkGraph(b *testing.B) {
	b.Run("submit", func(b *testing.B) {
		ctx := openDefault(b)
		q := ctx.Queue()
		k, _ := touchKernel(b, ctx)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := raw.Submit(q, k, rt.Range1(1)); err != nil {
				b.Fatal(err)
			}
			if i%1000 == 999 {
				q.Finish()
			}
		}
		q.Finish()
	})
	for _, mode := range []string{"graph", "graph-loop"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "graph-loop" {
				loopGraphs(b)
			}
			ctx := openDefault(b)
			q := ctx.Queue()
			k, _ := touchKernel(b, ctx)
			g, err := q.Record(mode, func(q *rt.Queue) error {
				for range graphKernels {
					if err := raw.Submit(q, k, rt.Range1(1)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Release()
			b.ResetTimer()
			for i := 0; i < b.N; i += graphKernels {
				if err := g.Launch(q); err != nil {
					b.Fatal(err)
				}
				if i%1000 == 1000-graphKernels {
					q.Finish()
				}
			}
			q.Finish()
		})
	}
}

// BenchmarkGraphUpdate measures Graph.Update of one launch's buffer
// argument in a graph of 100 launches followed by a launch of the graph
// (ns/op is per update and launch). Without mutable dispatch (PoCL 3.1 has
// none) a command buffer is recorded anew before the first launch after
// an update: "graph" pays that, "graph-loop" only sets the argument. The
// queue is drained every 10 launches.
func BenchmarkGraphUpdate(b *testing.B) {
	for _, mode := range []string{"graph", "graph-loop"} {
		b.Run(mode, func(b *testing.B) {
			if mode == "graph-loop" {
				loopGraphs(b)
			}
			ctx := openDefault(b)
			q := ctx.Queue()
			k, buf := touchKernel(b, ctx)
			other, err := rt.NewBuffer[int32](ctx, 1)
			if err != nil {
				b.Fatal(err)
			}
			defer other.Free()
			var first *rt.GraphNode
			g, err := q.Record(mode, func(q *rt.Queue) error {
				var err error
				if first, err = q.Node(func(q *rt.Queue) error { return raw.Submit(q, k, rt.Range1(1)) }); err != nil {
					return err
				}
				for range graphKernels - 1 {
					if err := raw.Submit(q, k, rt.Range1(1)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
			defer g.Release()
			bufs := [2]rt.Buffer[int32]{buf, other}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				err := g.Update(first, func(q *rt.Queue) error {
					if err := raw.SetBuffer(k, 0, bufs[i%2]); err != nil {
						return err
					}
					return raw.Submit(q, k, rt.Range1(1))
				})
				if err != nil {
					b.Fatal(err)
				}
				if err := g.Launch(q); err != nil {
					b.Fatal(err)
				}
				if i%10 == 9 {
					q.Finish()
				}
			}
			q.Finish()
		})
	}
}
