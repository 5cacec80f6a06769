package rt_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/stats"
)

// openPool opens a context on the fake backend whose queue pool holds at
// most max queues.
func openPool(t *testing.T, max int) *rt.Context {
	t.Helper()
	cc := defaultCacheConfig()
	cc.Disk.Persistent = false
	ctx, err := rt.OpenConfig(withEnv(t, rt.Config{Backend: "fake", Device: "cpu", Cache: &cc, QueuePool: max}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctx.Close() })
	return ctx
}

// TestQueuePool: AcquireQueue hands out queues that no goroutine holds, of
// its own, while the pool has fewer than its bound, then shares the one
// that the fewest hold; a released queue serves the next acquisition; a
// queue that is not the pool's, or released twice, is an error; after
// Close, AcquireQueue fails with ErrClosed.
func TestQueuePool(t *testing.T) {
	ctx := openPool(t, 2)
	a, err := ctx.AcquireQueue()
	if err != nil {
		t.Fatal(err)
	}
	b, err := ctx.AcquireQueue()
	if err != nil {
		t.Fatal(err)
	}
	if a == b || a == ctx.Queue() || b == ctx.Queue() {
		t.Fatalf("AcquireQueue gave %p and %p (the default queue is %p): want two queues of the pool's own", a, b, ctx.Queue())
	}
	c, err := ctx.AcquireQueue() // past the bound: a held queue, shared
	if err != nil {
		t.Fatal(err)
	}
	if c != a && c != b {
		t.Errorf("a third AcquireQueue past the bound made a queue")
	}
	if err := ctx.ReleaseQueue(b); err != nil {
		t.Fatal(err)
	}
	d, err := ctx.AcquireQueue()
	if err != nil {
		t.Fatal(err)
	}
	if c == a && d != b {
		t.Errorf("AcquireQueue did not give the queue that no goroutine holds")
	}
	for _, q := range []*rt.Queue{a, c, d} {
		if err := ctx.ReleaseQueue(q); err != nil {
			t.Errorf("release: %v", err)
		}
	}
	if err := ctx.ReleaseQueue(a); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("a second release: %v, want ErrInvalidArgument", err)
	}
	if err := ctx.ReleaseQueue(ctx.Queue()); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("release of the default queue: %v, want ErrInvalidArgument", err)
	}
	other := openPool(t, 2)
	oq, err := other.AcquireQueue()
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.ReleaseQueue(oq); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("release of another context's queue: %v, want ErrInvalidArgument", err)
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ctx.AcquireQueue(); !errors.Is(err, rt.ErrClosed) {
		t.Errorf("AcquireQueue after Close: %v, want ErrClosed", err)
	}
}

// TestQueuePoolConcurrent: goroutines that each acquire a queue, use it
// and release it never hold one queue two at a time while the pool has
// room, and the pool makes no more queues than its bound.
func TestQueuePoolConcurrent(t *testing.T) {
	const bound, workers, rounds = 4, 4, 200
	ctx := openPool(t, bound)
	var mu sync.Mutex
	holders := map[*rt.Queue]int{}
	seen := map[*rt.Queue]bool{}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf, err := rt.NewBuffer[int32](ctx, 1)
			if err != nil {
				t.Error(err)
				return
			}
			defer buf.Free()
			for range rounds {
				q, err := ctx.AcquireQueue()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				holders[q]++
				seen[q] = true
				if holders[q] > 1 {
					t.Errorf("a queue held by %d goroutines with %d workers and a bound of %d", holders[q], workers, bound)
				}
				mu.Unlock()
				if err := buf.Write(q, []int32{1}); err != nil {
					t.Error(err)
				}
				mu.Lock()
				holders[q]--
				mu.Unlock()
				if err := ctx.ReleaseQueue(q); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) > bound {
		t.Errorf("the pool made %d queues, more than its bound %d", len(seen), bound)
	}
}

// TestQueueStats: Stats reports the context's queues, its pool's, the
// acquisitions not yet released, the pool queues held by more than one
// goroutine, and the events not yet released, after each step.
func TestQueueStats(t *testing.T) {
	ctx := openPool(t, 2)
	var held []*rt.Queue
	var ev *rt.Event
	acquire := func() error {
		q, err := ctx.AcquireQueue()
		held = append(held, q)
		return err
	}
	release := func() error {
		q := held[0]
		held = held[1:]
		return ctx.ReleaseQueue(q)
	}
	for _, tt := range []struct {
		step   string
		do     func() error
		want   stats.Queues
		events int
	}{
		{"open", func() error { return nil }, stats.Queues{Queues: 1, PoolMax: 2}, 0},
		{"acquire", acquire, stats.Queues{Queues: 2, PoolQueues: 1, PoolMax: 2, Acquired: 1}, 0},
		{"acquire", acquire, stats.Queues{Queues: 3, PoolQueues: 2, PoolMax: 2, Acquired: 2}, 0},
		{"acquire past the bound", acquire, stats.Queues{Queues: 3, PoolQueues: 2, PoolMax: 2, Acquired: 3, Shared: 1}, 0},
		{"release", release, stats.Queues{Queues: 3, PoolQueues: 2, PoolMax: 2, Acquired: 2}, 0},
		{"marker", func() (err error) { ev, err = ctx.Queue().Marker(); return err }, stats.Queues{Queues: 3, PoolQueues: 2, PoolMax: 2, Acquired: 2}, 1},
		{"release the event", func() error { return ev.Release() }, stats.Queues{Queues: 3, PoolQueues: 2, PoolMax: 2, Acquired: 2}, 0},
		{"release all", func() error { return errors.Join(release(), release()) }, stats.Queues{Queues: 3, PoolQueues: 2, PoolMax: 2}, 0},
	} {
		if err := tt.do(); err != nil {
			t.Fatalf("%s: %v", tt.step, err)
		}
		st := ctx.Stats()
		if st.Queues != tt.want || st.Events != tt.events {
			t.Errorf("after %s: Stats().Queues = %+v, Events = %d; want %+v, %d", tt.step, st.Queues, st.Events, tt.want, tt.events)
		}
	}
}
