package rt_test

import (
	"fmt"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// transferSizes are the sizes of the staging benchmarks: a device global's
// flag, a row, a frame.
var transferSizes = []int{4, 64 << 10, 16 << 20}

// BenchmarkStaging compares, side by side, blocking transfers from and to
// pageable Go memory with the same transfers from and to pinned memory
// (NewPinned), and a non-blocking transfer (ReadAsync, WriteAsync) waited
// at once.
func BenchmarkStaging(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	for _, size := range transferSizes {
		n := size / 4
		buf, err := rt.NewBuffer[int32](ctx, n)
		if err != nil {
			b.Fatal(err)
		}
		pinned, err := rt.NewPinned[int32](q, n)
		if err != nil {
			b.Fatal(err)
		}
		pageable := make([]int32, n)
		b.Cleanup(func() { buf.Free(); pinned.Free() })
		for _, c := range []struct {
			name string
			do   func() error
		}{
			{"read/pageable", func() error { return buf.Read(q, pageable) }},
			{"read/pinned", func() error { return buf.Read(q, pinned.Slice()) }},
			{"read/async", func() error { return waited(buf.ReadAsync(q, 0, pinned)) }},
			{"write/pageable", func() error { return buf.Write(q, pageable) }},
			{"write/pinned", func() error { return buf.Write(q, pinned.Slice()) }},
			{"write/async", func() error { return waited(buf.WriteAsync(q, 0, pinned)) }},
		} {
			b.Run(fmt.Sprintf("%s/%dB", c.name, size), func(b *testing.B) {
				b.SetBytes(int64(size))
				for i := 0; i < b.N; i++ {
					if err := c.do(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// waited waits for ev.
func waited(ev *rt.Event, err error) error {
	if err != nil {
		return err
	}
	return ev.Wait()
}

// BenchmarkView measures making a view of a buffer (a sub-buffer) and
// freeing it, and a launch on a fresh view each time beside a launch on
// the whole buffer.
func BenchmarkView(b *testing.B) {
	ctx := openDefault(b)
	q := ctx.Queue()
	k, _ := touchKernel(b, ctx)
	buf, err := rt.NewBuffer[int32](ctx, 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { buf.Free() })
	step := max(int(ctx.Devices()[0].MemBaseAddrAlign/4), 32) // CUDA has no alignment rule (1)
	b.Run("view+free", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			v, err := buf.View(step*(i%64), 1024)
			if err != nil {
				b.Fatal(err)
			}
			if err := v.Free(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("view+submit+free", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			v, err := buf.View(step*(i%64), 1024)
			if err != nil {
				b.Fatal(err)
			}
			if err := raw.SetBuffer(k, 0, v); err != nil {
				b.Fatal(err)
			}
			if err := raw.Submit(q, k, rt.Range1(1)); err != nil {
				b.Fatal(err)
			}
			if err := v.Free(); err != nil {
				b.Fatal(err)
			}
			if i%1024 == 1023 {
				q.Finish()
			}
		}
		q.Finish()
	})
	b.Run("setbuffer+submit", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if err := raw.SetBuffer(k, 0, buf); err != nil {
				b.Fatal(err)
			}
			if err := raw.Submit(q, k, rt.Range1(1)); err != nil {
				b.Fatal(err)
			}
			if i%1024 == 1023 {
				q.Finish()
			}
		}
		q.Finish()
	})
}
