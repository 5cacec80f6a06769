package rt_test

import (
	"context"
	"errors"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// countSpinSrc is a kernel that spins for iters iterations on one work-item
// and counts its executions in count[0].
const countSpinSrc = `
__kernel void spin(__global volatile int *count, int iters) {
	float x = (float)get_global_id(0);
	for (int i = 0; i < iters; i++)
		x = x * 0.999999f + 0.5f;
	if (x == -1.0f)
		count[1] = 1; /* keeps the loop */
	atomic_inc(count);
}
`

// spinner is a spin kernel calibrated to take about per on the device.
type spinner struct {
	k     *raw.Kernel
	count rt.Buffer[int32]
	per   time.Duration // measured
}

// newSpinner builds the spin kernel and calibrates it on q to take about
// target per launch.
func newSpinner(t *testing.T, ctx *rt.Context, q *rt.Queue, target time.Duration) *spinner {
	t.Helper()
	prog, err := raw.Build(ctx, "countspin", countSpinSrc, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("spin")
	if err != nil {
		t.Fatal(err)
	}
	count, err := rt.Alloc[int32](q, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { count.Free() })
	s := &spinner{k: k, count: count}
	if err := raw.SetBuffer(k, 0, count); err != nil {
		t.Fatal(err)
	}
	iters := int32(1 << 10)
	for {
		if err := raw.SetArg(k, 1, iters); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for range 3 {
			if err := raw.Submit(q, k, rt.Range1(1)); err != nil {
				t.Fatal(err)
			}
		}
		if err := q.Finish(); err != nil {
			t.Fatal(err)
		}
		s.per = time.Since(start) / 3
		if s.per >= target*3/4 || iters >= 1<<30 {
			return s
		}
		scale := min(float64(target)/float64(max(s.per, time.Microsecond)), 16)
		iters = int32(min(float64(iters)*scale, 1<<30))
	}
}

// executions returns the spin kernel's executions so far, read on q.
func (s *spinner) executions(t *testing.T, q *rt.Queue) int {
	t.Helper()
	c := make([]int32, 1)
	if err := s.count.Read(q, c); err != nil {
		t.Fatal(err)
	}
	return int(c[0])
}

// cancelTarget is the kernel time that TestCancelReachesQueue aims at:
// DGEN_CANCEL_KERNEL (a duration, such as 1ms on a GPU), else 5ms.
func cancelTarget(t *testing.T) time.Duration {
	if v := os.Getenv("DGEN_CANCEL_KERNEL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("DGEN_CANCEL_KERNEL=%q: %v", v, err)
		}
		return d
	}
	return 5 * time.Millisecond
}

// TestCancelReachesQueue: a request that enqueues 500 launches of a slow
// kernel (or 500 launches of a graph of one) on a queue that
// AcquireQueueContext bound to its context is paced to Config.MaxQueueAhead
// commands ahead of the host; cancelled, its enqueue returns promptly with
// an error wrapping context.Canceled, every later one fails at once, at
// most the depth of its work runs after the cancellation, and the next
// request gets another queue of the pool and starts at once.
//
// The numbers it logs are the goals on a GPU: run it there with
//
//	DGEN_CANCEL_KERNEL=1ms go test -v -count=1 -run TestCancelReachesQueue ./rt
func TestCancelReachesQueue(t *testing.T) {
	const depth = 4
	cfg := rt.Config{Device: testenv.Device(), MaxQueueAhead: depth, QueuePool: 4}
	if cfg.Device == "" {
		cfg.Device = "cpu"
	}
	rc := openCPUConfig(t, cfg)
	s := newSpinner(t, rc, rc.Queue(), cancelTarget(t))
	t.Logf("kernel: %v per launch", s.per)
	g, err := rc.Queue().Record("spin", func(q *rt.Queue) error { return raw.Submit(q, s.k, rt.Range1(1)) })
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	tests := []struct {
		name    string
		enqueue func(ctx context.Context, q *rt.Queue) error
	}{
		{"Submit", func(ctx context.Context, q *rt.Queue) error { return raw.Submit(q, s.k, rt.Range1(1)) }},
		{"Graph.LaunchContext", func(ctx context.Context, q *rt.Queue) error { return g.LaunchContext(ctx, q) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.executions(t, rc.Queue())
			req, cancel := context.WithCancel(context.Background())
			defer cancel()
			q, err := rc.AcquireQueueContext(req, nil)
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				n   int // enqueues that succeeded
				err error
				at  time.Time
			}
			done := make(chan result, 1)
			var enqueued atomic.Int32
			go func() {
				var r result
				for range 500 {
					if r.err = tt.enqueue(req, q); r.err != nil {
						break
					}
					r.n++
					enqueued.Add(1)
				}
				r.at = time.Now()
				done <- r
			}()
			for enqueued.Load() < 20 { // a request well under way
				time.Sleep(time.Millisecond)
			}
			cancel()
			canceled := time.Now()
			r := <-done
			ret := r.at.Sub(canceled)
			if !errors.Is(r.err, context.Canceled) {
				t.Fatalf("the request's enqueue, cancelled after 20 of its enqueues: %d of 500 succeeded, then %v; want an error wrapping context.Canceled", r.n, r.err)
			}
			if err := tt.enqueue(req, q); !errors.Is(err, context.Canceled) {
				t.Errorf("an enqueue after the cancellation: %v, want an error wrapping context.Canceled", err)
			}
			// The request's handler gives its queue back; the next request
			// gets another queue of the pool, free at once.
			if err := rc.ReleaseQueue(q); err != nil {
				t.Fatal(err)
			}
			next, err := rc.AcquireQueueContext(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			nextStart := time.Now()
			if err := raw.Submit(next, s.k, rt.Range1(1)); err != nil {
				t.Fatal(err)
			}
			if err := next.Finish(); err != nil {
				t.Fatal(err)
			}
			nextRun := time.Since(nextStart)
			if next == q {
				t.Errorf("the next request got the cancelled request's queue while the pool had another")
			}
			if err := rc.ReleaseQueue(next); err != nil {
				t.Fatal(err)
			}
			// The cancelled request's work has run once the device counts
			// its enqueues and the next request's launch.
			want := before + r.n + 1
			ran := s.executions(t, rc.Queue())
			for ran < want && time.Since(canceled) < 10*time.Second {
				time.Sleep(time.Millisecond / 2)
				ran = s.executions(t, rc.Queue())
			}
			tail := time.Since(canceled)
			if ran != want {
				t.Fatalf("the kernel ran %d times, want %d (the request's enqueues and the next request's)", ran-before, r.n+1)
			}
			t.Logf("cancel returned after %v; the request's work ran on for %v (%.1f launches of %v); the next request ran its launch in %v; %d of 500 enqueued",
				ret, tail, float64(tail)/float64(s.per), s.per, nextRun, r.n)
			// Loose bounds for a loaded 2-core machine, far below the
			// hundreds of launches that an unpaced request leaves behind.
			slack := 250 * time.Millisecond
			if ret > slack {
				t.Errorf("the cancelled enqueue returned after %v, want within %v", ret, slack)
			}
			if limit := time.Duration(depth+2)*s.per*3 + 100*time.Millisecond; tail > limit {
				t.Errorf("the request's work ran on for %v after its cancellation, want at most %v (%d commands of %v)", tail, limit, depth, s.per)
			}
			if limit := 3*s.per + slack; nextRun > limit {
				t.Errorf("the next request's launch took %v, want at most %v", nextRun, limit)
			}
		})
	}
}

// TestQueueContextErrors: AcquireQueueContext with a nil or done context,
// or a bad QueueConfig, fails; past the pool's size it waits for a
// release, for its context, or for Shutdown to begin.
func TestQueueContextErrors(t *testing.T) {
	rc := openPool(t, 1)
	if _, err := rc.AcquireQueueContext(nil, nil); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("AcquireQueueContext(nil): %v, want ErrInvalidArgument", err)
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := rc.AcquireQueueContext(done, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("AcquireQueueContext of a done context: %v, want context.Canceled", err)
	}
	if _, err := rc.AcquireQueueContext(context.Background(), &rt.QueueConfig{Priority: rt.Priority(9)}); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("AcquireQueueContext at Priority(9): %v, want ErrInvalidArgument", err)
	}
	a, err := rc.AcquireQueueContext(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := rc.AcquireQueueContext(short, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("AcquireQueueContext past the pool's size: %v, want DeadlineExceeded", err)
	}
	got := make(chan *rt.Queue, 1)
	go func() {
		b, err := rc.AcquireQueueContext(context.Background(), nil)
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	time.Sleep(10 * time.Millisecond)
	if err := rc.ReleaseQueue(a); err != nil {
		t.Fatal(err)
	}
	if b := <-got; b != a {
		t.Errorf("the waiting AcquireQueueContext got %p, want the released %p", b, a)
	}
	shared, err := rc.AcquireQueue() // every queue bound: one more
	if err != nil {
		t.Fatal(err)
	}
	if shared == a {
		t.Errorf("AcquireQueue shared a queue bound to a request")
	}
	waiting := make(chan error, 1)
	go func() {
		_, err := rc.AcquireQueueContext(context.Background(), nil)
		waiting <- err
	}()
	time.Sleep(10 * time.Millisecond)
	sctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	go rc.Shutdown(sctx) // a is still held: Shutdown waits for it
	select {
	case err := <-waiting:
		if !errors.Is(err, rt.ErrShuttingDown) {
			t.Errorf("AcquireQueueContext waiting when Shutdown began: %v, want ErrShuttingDown", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("AcquireQueueContext still waits after Shutdown began")
	}
}
