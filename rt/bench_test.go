package rt_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// The micro-figures of the device layer, measured through rt on the device
// that DGEN_DEVICE selects: what a kernel launch, a small transfer and a
// buffer's life cost. The allocator has to beat the last.

// benchContext is one context for every benchmark of the process: a
// benchmark function runs several times, and drivers limit contexts.
var benchContext = sync.OnceValues(rt.Open)

func openDefault(b *testing.B) *rt.Context {
	b.Helper()
	ctx, err := benchContext()
	if err != nil {
		b.Fatal(err)
	}
	return ctx
}

const emptySrc = `__kernel void touch(__global int *p) { if (get_global_id(0) == 0) p[0] += 1; }`

// touchKernel builds the kernel touch of emptySrc with its argument set
// to a new 1-element buffer, released when b ends.
func touchKernel(b testing.TB, ctx *rt.Context) (*raw.Kernel, rt.Buffer[int32]) {
	prog, err := raw.Build(ctx, "touch", emptySrc, "")
	if err != nil {
		b.Fatal(err)
	}
	k, err := prog.Kernel("touch")
	if err != nil {
		b.Fatal(err)
	}
	buf, err := rt.NewBuffer[int32](ctx, 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := raw.SetBuffer(k, 0, buf); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		k.Release()
		prog.Release()
		buf.Free()
	})
	return k, buf
}

// BenchmarkLaunch measures the host cost of enqueueing a one-work-item
// kernel with an event, released at once as rawcl's launch_event does
// (an event left to the garbage collector is released by its cleanup,
// at the cost of whatever runs then); the queue is drained every 1024
// launches.
func BenchmarkLaunch(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	k, _ := touchKernel(b, ctx)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev, err := raw.Launch(q, k, rt.Range1(1))
		if err != nil {
			b.Fatal(err)
		}
		if err := ev.Release(); err != nil {
			b.Fatal(err)
		}
		if i%1024 == 1023 {
			q.Finish()
		}
	}
	q.Finish()
}

// BenchmarkSubmit measures the host cost of enqueueing the same kernel
// without an event.
func BenchmarkSubmit(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	k, _ := touchKernel(b, ctx)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := raw.Submit(q, k, rt.Range1(1)); err != nil {
			b.Fatal(err)
		}
		if i%1024 == 1023 {
			q.Finish()
		}
	}
	q.Finish()
}

// BenchmarkSubmitFinish measures an event-less launch and waiting for it.
func BenchmarkSubmitFinish(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	k, _ := touchKernel(b, ctx)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := raw.Submit(q, k, rt.Range1(1)); err != nil {
			b.Fatal(err)
		}
		if err := q.Finish(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLaunchFinish measures a launch and waiting for it.
func BenchmarkLaunchFinish(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	k, _ := touchKernel(b, ctx)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ev, err := raw.Launch(q, k, rt.Range1(1))
		if err != nil {
			b.Fatal(err)
		}
		if err := q.Finish(); err != nil {
			b.Fatal(err)
		}
		ev.Release()
	}
}

// BenchmarkRead4 and BenchmarkWrite4 measure blocking 4-byte transfers.
func BenchmarkRead4(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	_, buf := touchKernel(b, ctx)
	dst := make([]int32, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := buf.Read(q, dst); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWrite4(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	_, buf := touchKernel(b, ctx)
	src := []int32{1}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := buf.Write(q, src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBufferLifecycle measures creating a buffer, its first use (a
// 4-byte write, which makes a lazy driver commit the memory) and its
// release: what a loop that allocates its output each step pays.
func BenchmarkBufferLifecycle(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	max := ctx.Devices()[0].MaxAllocSize
	src := []byte{1, 2, 3, 4}
	for size := int64(1 << 10); size <= 1<<30; size <<= 4 {
		if size > max {
			break
		}
		b.Run(fmt.Sprintf("%s", sizeName(size)), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				buf, err := rt.NewBuffer[byte](ctx, int(size))
				if err != nil {
					b.Fatal(err)
				}
				if err := buf.Write(q, src); err != nil {
					b.Fatal(err)
				}
				if err := buf.Free(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func sizeName(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

// BenchmarkAllocHit measures an allocation served from the allocator's
// free list (a hit) and its Free, through rt: the cost a time loop pays per
// step instead of a driver round trip.
func BenchmarkAllocHit(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	for _, size := range []int{1 << 10, 1 << 20} {
		for _, tc := range []struct {
			name  string
			alloc func(*rt.Queue, int) (rt.Buffer[byte], error)
		}{{"tagged", siteBytes.Alloc}, {"untagged", rt.Alloc[byte]}} {
			b.Run(tc.name+"/"+sizeName(int64(size)), func(b *testing.B) {
				warm, err := tc.alloc(q, size)
				if err != nil {
					b.Fatal(err)
				}
				warm.Free()
				before := ctx.Stats().Alloc.DriverAllocs
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					buf, err := tc.alloc(q, size)
					if err != nil {
						b.Fatal(err)
					}
					if err := buf.Free(); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				if n := ctx.Stats().Alloc.DriverAllocs - before; n != 0 {
					b.Fatalf("%d driver allocations in the loop, want 0", n)
				}
			})
		}
	}
}

// BenchmarkNewBufferFree measures rt.NewBuffer and Free: a driver
// allocation and release with no use in between (on a lazy driver this
// does not even commit memory; BufferLifecycle includes a first use).
func BenchmarkNewBufferFree(b *testing.B) {
	ctx := openDefault(b)
	for _, size := range []int{1 << 10, 1 << 20} {
		b.Run(sizeName(int64(size)), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				buf, err := rt.NewBuffer[byte](ctx, size)
				if err != nil {
					b.Fatal(err)
				}
				if err := buf.Free(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSetBuffer measures setting a kernel's buffer argument to the
// buffer it holds already (same: no driver call) against alternating two
// buffers (changed: a clSetKernelArg each time), side by side.
func BenchmarkSetBuffer(b *testing.B) {
	ctx := openDefault(b)
	k, buf := touchKernel(b, ctx)
	other, err := rt.NewBuffer[int32](ctx, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { other.Free() })
	bufs := [2]rt.Buffer[int32]{buf, other}
	for _, bc := range []struct {
		name string
		pick func(i int) rt.Buffer[int32]
	}{
		{"same", func(int) rt.Buffer[int32] { return bufs[0] }},
		{"changed", func(i int) rt.Buffer[int32] { return bufs[i&1] }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := raw.SetBuffer(k, 0, bc.pick(i)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
