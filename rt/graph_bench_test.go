package rt_test

import (
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/opencl"
)

// graphKernels is the number of launches of the touch kernel in the graph
// of BenchmarkGraph.
const graphKernels = 100

// BenchmarkGraph measures what one kernel launch costs the host inside a
// replayed graph of 100 launches of the one-work-item touch kernel (as
// BenchmarkSubmit and rawcl's launch figure launch it), against the same
// launches submitted one by one: ns/op is per kernel. On a device with
// cl_khr_command_buffer (PoCL) "graph" replays a command buffer and
// "graph-loop" the prepared loop in C that NVIDIA's OpenCL gets; elsewhere
// both are the loop. The queue is drained every 1000 kernels.
func BenchmarkGraph(b *testing.B) {
	b.Run("submit", func(b *testing.B) {
		ctx := openDefault(b)
		q := ctx.Queue()
		k, _ := touchKernel(b, ctx)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := q.Submit(k, rt.Range1(1)); err != nil {
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
				b.Setenv(opencl.CommandBufferEnv, "0")
			}
			ctx := openDefault(b)
			q := ctx.Queue()
			k, _ := touchKernel(b, ctx)
			g, err := q.Record(mode)
			if err != nil {
				b.Fatal(err)
			}
			for range graphKernels {
				if err := q.Submit(k, rt.Range1(1)); err != nil {
					b.Fatal(err)
				}
			}
			if err := g.Finalize(); err != nil {
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
