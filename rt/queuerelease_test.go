package rt_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/internal/core"
)

// TestQueueRelease: Release waits for the queue's commands, whose results
// land and whose events stay valid; the queue leaves the context, with the
// kernel instances parked on it; every later use is an error wrapping
// ErrClosed, and a second Release does nothing; pinned memory mapped
// through the queue stays usable until freed; the default queue, a
// queue of the pool and nil are refused with ErrInvalidArgument; after
// the context's Close, Release returns nil.
func TestQueueRelease(t *testing.T) {
	ctx := openCPUConfig(t, rt.Config{})
	const n = 1 << 16
	shared, err := rt.Alloc[float32](ctx.Queue(), n)
	if err != nil {
		t.Fatal(err)
	}
	live := core.LiveQueues(cx(ctx))
	q, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := (&mdSet{B: shared, V: 7}).Enqueue(q, rt.Range1(n)); err != nil {
		t.Fatal(err)
	}
	ev, err := q.Marker()
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := rt.NewPinned[float32](q, n)
	if err != nil {
		t.Fatal(err)
	}
	instances := core.Instances(cx(ctx))
	if err := q.Release(); err != nil {
		t.Fatal(err)
	}
	if got := core.LiveQueues(cx(ctx)); got != live {
		t.Errorf("%d live queues after Release, want %d", got, live)
	}
	if err := ev.Wait(); err != nil {
		t.Errorf("the event of a command of the released queue: %v", err)
	}
	got := make([]float32, n)
	if err := shared.Read(ctx.Queue(), got); err != nil {
		t.Fatal(err)
	}
	if got[0] != 7 || got[n-1] != 7 {
		t.Errorf("the launch before Release wrote %v … %v, want 7", got[0], got[n-1])
	}
	// The instance parked on q went to its prototype's pool: a launch on
	// another queue takes it, and makes none.
	if err := (&mdSet{B: shared, V: 8}).Enqueue(ctx.Queue(), rt.Range1(n)); err != nil {
		t.Fatal(err)
	}
	if got := core.Instances(cx(ctx)); got != instances {
		t.Errorf("%d kernel instances after a launch on another queue, want %d (the released queue's, reused)", got, instances)
	}
	if _, err := shared.ReadAsync(ctx.Queue(), 0, pinned); err != nil {
		t.Errorf("pinned memory made through the released queue: %v", err)
	}
	if err := ctx.Queue().Finish(); err != nil {
		t.Fatal(err)
	}
	if s := pinned.Slice(); s[0] != 8 {
		t.Errorf("pinned memory read %v, want 8", s[0])
	}
	if err := pinned.Free(); err != nil {
		t.Errorf("free pinned memory made through the released queue: %v", err)
	}

	uses := []struct {
		name string
		do   func() error
	}{
		{"Finish", q.Finish},
		{"Flush", q.Flush},
		{"Marker", func() error { _, err := q.Marker(); return err }},
		{"Enqueue", func() error { return (&mdSet{B: shared, V: 1}).Enqueue(q, rt.Range1(n)) }},
		{"Alloc", func() error { _, err := rt.Alloc[float32](q, 4); return err }},
		{"Write", func() error { return shared.Write(q, make([]float32, n)) }},
		{"NewPinned", func() error { _, err := rt.NewPinned[float32](q, 4); return err }},
	}
	for _, u := range uses {
		if err := u.do(); !errors.Is(err, rt.ErrClosed) {
			t.Errorf("%s on a released queue: %v, want ErrClosed", u.name, err)
		}
	}
	// The failed Enqueue made an instance, which went to the pool rather
	// than to a slot of the released queue: a launch on a new queue takes
	// it.
	made := core.Instances(cx(ctx))
	q2, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := (&mdSet{B: shared, V: 1}).Enqueue(q2, rt.Range1(n)); err != nil {
		t.Fatal(err)
	}
	if got := core.Instances(cx(ctx)); got != made {
		t.Errorf("%d kernel instances after a launch on a new queue, want %d (the one the released queue's failed launch made)", got, made)
	}
	if err := q2.Release(); err != nil {
		t.Fatal(err)
	}
	if err := q.Release(); err != nil {
		t.Errorf("a second Release: %v, want nil", err)
	}

	pooled, err := ctx.AcquireQueue()
	if err != nil {
		t.Fatal(err)
	}
	refused := []struct {
		name string
		q    *rt.Queue
	}{
		{"the default queue", ctx.Queue()},
		{"a queue of the pool", pooled},
		{"nil", nil},
	}
	for _, r := range refused {
		if err := r.q.Release(); !errors.Is(err, rt.ErrInvalidArgument) {
			t.Errorf("Release of %s: %v, want ErrInvalidArgument", r.name, err)
		}
	}
	if err := pooled.Finish(); err != nil {
		t.Errorf("the pool's queue after a refused Release: %v", err)
	}
	if err := ctx.ReleaseQueue(pooled); err != nil {
		t.Fatal(err)
	}

	open, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := open.Release(); err != nil {
		t.Errorf("Release after Close: %v, want nil", err)
	}
}

// TestQueueReleaseConcurrent: goroutines that each make a queue, launch
// on it, read back on it and release it, many times, while others launch
// on the default queue and the shared buffer moves between them, give
// every result right and leave the context with the queues it had.
func TestQueueReleaseConcurrent(t *testing.T) {
	ctx := openCPUConfig(t, rt.Config{})
	const n, workers, rounds = 4096, 4, 50
	live := core.LiveQueues(cx(ctx))
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				if err := releaseWorker(ctx, n, float32(w*rounds+i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := core.LiveQueues(cx(ctx)); got != live {
		t.Errorf("%d live queues after the workers, want %d", got, live)
	}
}

// releaseWorker is one short-lived worker: a queue of its own, on which
// releaseWorkerOn works, and Release.
func releaseWorker(ctx *rt.Context, n int, v float32) error {
	q, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		return err
	}
	return errors.Join(releaseWorkerOn(q, n, v), q.Release())
}

// releaseWorkerOn is the worker's own part on q: a buffer from the
// allocator, set to v, read back and checked, and freed.
func releaseWorkerOn(q *rt.Queue, n int, v float32) error {
	b, err := rt.Alloc[float32](q, n)
	if err != nil {
		return err
	}
	defer b.Free()
	if err := (&mdSet{B: b, V: v}).Enqueue(q, rt.Range1(n)); err != nil {
		return err
	}
	got := make([]float32, n)
	if err := b.Read(q, got); err != nil {
		return err
	}
	if got[0] != v || got[n-1] != v {
		return fmt.Errorf("a worker read %v … %v, want %v", got[0], got[n-1], v)
	}
	return nil
}
