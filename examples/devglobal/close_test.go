package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// closeRaceCalls are the kinds of call that race Context.Close in
// TestCloseRace, each run in a loop by its own goroutine until it fails.
// One call of each kind per iteration; q is the goroutine's queue.
var closeRaceCalls = []struct {
	name string
	call func(ctx *rt.Context, q *rt.Queue) error
}{
	{"global-write", func(_ *rt.Context, q *rt.Queue) error { return Counter.Write(q, 1) }},
	{"global-read", func(_ *rt.Context, q *rt.Queue) error { _, err := P.Read(q); return err }},
	{"enqueue", func(_ *rt.Context, q *rt.Queue) error {
		return (&Count{Per: 1}).Enqueue(q, rt.Range1(64))
	}},
	{"out-field", func(_ *rt.Context, q *rt.Queue) error {
		s := &Scale{K: 2}
		if err := s.AllocOut(q, 256); err != nil {
			return err
		}
		defer s.Out.Free()
		return released(s.EnqueueEvent(q, rt.Range1(256)))
	}},
	{"alloc-write-read", func(_ *rt.Context, q *rt.Queue) error {
		b, err := rt.Alloc[float32](q, 1024)
		if err != nil {
			return err
		}
		defer b.Free()
		v := make([]float32, 1024)
		return errors.Join(b.Write(q, v), b.Read(q, v))
	}},
	{"buffer-fill-copy", func(ctx *rt.Context, q *rt.Queue) error {
		a, err := rt.NewBuffer[int32](ctx, 512)
		if err != nil {
			return err
		}
		defer a.Free()
		b, err := rt.NewBuffer[int32](ctx, 512)
		if err != nil {
			return err
		}
		defer b.Free()
		if err := a.Fill(q, 7); err != nil {
			return err
		}
		return a.CopyTo(q, b)
	}},
	{"queue", func(ctx *rt.Context, q *rt.Queue) error {
		nq, err := ctx.NewQueue(ctx.Devices()[0])
		if err != nil {
			return err
		}
		if err := released(nq.Marker()); err != nil {
			return err
		}
		return errors.Join(nq.Flush(), q.Finish())
	}},
	{"build-launch", func(ctx *rt.Context, q *rt.Queue) error {
		p, err := raw.Build(ctx, "touch", "__kernel void touch(__global int* b) { b[get_global_id(0)] = 1; }", "")
		if err != nil {
			return err
		}
		k, err := p.Kernel("touch")
		if err != nil {
			return err
		}
		b, err := rt.Alloc[int32](q, 64)
		if err != nil {
			return err
		}
		defer b.Free()
		if err := raw.SetBuffer(k, 0, b); err != nil {
			return err
		}
		return raw.Submit(q, k, rt.Range1(64))
	}},
}

// released releases the event of a command that succeeded.
func released(ev *rt.Event, err error) error {
	if err != nil {
		return err
	}
	return ev.Release()
}

// TestCloseRace closes a context while goroutines use it, one per kind of
// call, on their own queues or the default one: every call must either
// complete or return an error wrapping rt.ErrClosed; nothing may panic or
// abort the process.
func TestCloseRace(t *testing.T) {
	rounds := 100
	if testing.Short() {
		rounds = 10
	}
	var calls, closedErrs int
	for round := range rounds {
		ctx, err := rt.OpenConfig(rt.Config{Backend: rt.Backend(testenv.Backend()), Device: testenv.Device()})
		if err != nil {
			testenv.SkipWithoutDevice(t, err)
			t.Fatal(err)
		}
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			errs   []error
			counts = make([]int, len(closeRaceCalls))
		)
		start := make(chan struct{})
		for i, c := range closeRaceCalls {
			q := ctx.Queue()
			if i%2 == 1 {
				if q, err = ctx.NewQueue(ctx.Devices()[0]); err != nil {
					t.Fatal(err)
				}
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() {
					if p := recover(); p != nil {
						mu.Lock()
						errs = append(errs, fmt.Errorf("%s panicked: %v", c.name, p))
						mu.Unlock()
					}
				}()
				<-start
				for {
					err := c.call(ctx, q)
					mu.Lock()
					counts[i]++
					if err != nil {
						closedErrs++
						if !errors.Is(err, rt.ErrClosed) {
							errs = append(errs, fmt.Errorf("%s: %w", c.name, err))
						}
					}
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
		close(start)
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		closeErr := ctx.Close()
		wg.Wait()
		if closeErr != nil {
			t.Errorf("round %d: Close: %v", round, closeErr)
		}
		for _, err := range errs {
			t.Errorf("round %d: %v", round, err)
		}
		for _, n := range counts {
			calls += n
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	t.Logf("%d rounds, %d calls, %d ended by ErrClosed", rounds, calls, closedErrs)
}
