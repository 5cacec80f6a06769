package rt_test

import (
	"errors"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// TestRawLaunchFreedArgument sets a raw kernel's argument to a buffer,
// frees the buffer and launches the kernel without setting the argument
// again: an error wrapping ErrFreed, and nothing runs. A buffer from the
// driver is released by Free (PoCL aborted the process on the launch); an
// allocator's block is handed to the next allocation through the same Mem
// (the launch overwrote the new holder's data).
func TestRawLaunchFreedArgument(t *testing.T) {
	const n = 64
	for _, c := range []struct {
		name  string
		alloc func(q *rt.Queue) (rt.Buffer[float32], error)
		view  bool
	}{
		{"driver", func(q *rt.Queue) (rt.Buffer[float32], error) { return rt.NewBuffer[float32](q.Context(), n) }, false},
		{"tagged", func(q *rt.Queue) (rt.Buffer[float32], error) { return siteA.Alloc(q, n) }, false},
		{"untagged", func(q *rt.Queue) (rt.Buffer[float32], error) { return rt.Alloc[float32](q, n) }, false},
		{"view-of-tagged", func(q *rt.Queue) (rt.Buffer[float32], error) { return siteA.Alloc(q, n) }, true},
	} {
		for _, launch := range []string{"Submit", "Launch"} {
			t.Run(c.name+"/"+launch, func(t *testing.T) {
				ctx := openCPU(t)
				q := ctx.Queue()
				set := kernelOf(t, ctx, crossSource, "set")
				x, err := c.alloc(q)
				if err != nil {
					t.Fatal(err)
				}
				arg := x
				if c.view {
					if arg, err = x.View(0, n/2); err != nil {
						t.Fatal(err)
					}
				}
				if err := errors.Join(raw.SetBuffer(set, 0, arg), raw.SetArg(set, 1, float32(7))); err != nil {
					t.Fatal(err)
				}
				if err := x.Free(); err != nil {
					t.Fatal(err)
				}
				// The next allocation of the same path takes the block back.
				y, err := c.alloc(q)
				if err != nil {
					t.Fatal(err)
				}
				defer y.Free()
				if err := y.Write(q, make([]float32, n)); err != nil {
					t.Fatal(err)
				}
				if launch == "Submit" {
					err = raw.Submit(q, set, rt.Range1(n/2))
				} else {
					var ev *rt.Event
					ev, err = raw.Launch(q, set, rt.Range1(n/2))
					ev.Release()
				}
				if !errors.Is(err, rt.ErrFreed) {
					t.Errorf("%s over an argument freed since it was set: %v, want ErrFreed", launch, err)
				}
				got := make([]float32, n)
				if err := y.Read(q, got); err != nil {
					t.Fatal(err)
				}
				if got[0] != 0 {
					t.Errorf("the launch over a freed argument wrote %v into the buffer allocated after it", got[0])
				}
				// Set again to live memory, the kernel launches.
				if err := errors.Join(raw.SetBuffer(set, 0, y), raw.Submit(q, set, rt.Range1(n)), y.Read(q, got)); err != nil {
					t.Fatal(err)
				}
				if got[n-1] != 7 {
					t.Errorf("after setting the argument again: %v, want 7", got[n-1])
				}
			})
		}
	}
}
