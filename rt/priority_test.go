package rt_test

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/opencl"
	"github.com/dgen-go/dgen/rt/raw"
)

var priorities = []rt.Priority{rt.PriorityNormal, rt.PriorityHigh, rt.PriorityLow}

// saxpyOn launches saxpy (rt_test.go) on q over buffers of its own and
// checks the result.
func saxpyOn(t *testing.T, q *rt.Queue) {
	t.Helper()
	ctx := q.Context()
	prog, err := raw.Build(ctx, "saxpy", saxpySrc, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("saxpy")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	const n = 1000
	x, y := make([]float32, n), make([]float32, n)
	for i := range x {
		x[i], y[i] = float32(i), 1
	}
	bx, err := rt.Alloc[float32](q, n)
	if err != nil {
		t.Fatal(err)
	}
	defer bx.Free()
	by, err := rt.Alloc[float32](q, n)
	if err != nil {
		t.Fatal(err)
	}
	defer by.Free()
	if err := errors.Join(bx.Write(q, x), by.Write(q, y)); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(raw.SetArg(k, 0, float32(2)), raw.SetBuffer(k, 1, bx), raw.SetBuffer(k, 2, by), raw.SetArg(k, 3, int32(n))); err != nil {
		t.Fatal(err)
	}
	if err := raw.Submit(q, k, rt.Range1(n)); err != nil {
		t.Fatal(err)
	}
	got := make([]float32, n)
	if err := by.Read(q, got); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if want := 2*x[i] + 1; v != want {
			t.Fatalf("queue at %v: y[%d] = %v, want %v", q.Priority(), i, v, want)
		}
	}
}

// TestQueuePriorities: on PoCL, which lacks cl_khr_priority_hints, a
// queue made at each priority, and one acquired at each, launches
// correctly and runs at PriorityNormal, which Queue.Priority reports and
// one warning per priority says; a priority that is not one of rt's is an
// error wrapping ErrInvalidArgument, and makes no queue.
func TestQueuePriorities(t *testing.T) {
	var log lockedBuffer
	ctx := openCPUConfig(t, rt.Config{Logger: slog.New(slog.NewTextHandler(&log, nil))})
	dev := ctx.Devices()[0]
	if slices.Contains(dev.Extensions, "cl_khr_priority_hints") {
		t.Skipf("%s reports cl_khr_priority_hints: this test is of a device without", dev.Name)
	}
	for _, p := range priorities {
		t.Run(p.String(), func(t *testing.T) {
			for range 2 {
				q, err := ctx.NewQueueConfig(dev, rt.QueueConfig{Priority: p})
				if err != nil {
					t.Fatal(err)
				}
				if got := q.Priority(); got != rt.PriorityNormal {
					t.Errorf("a queue made at %v runs at %v, want normal", p, got)
				}
				saxpyOn(t, q)
			}
			q, err := ctx.AcquireQueueConfig(rt.QueueConfig{Priority: p})
			if err != nil {
				t.Fatal(err)
			}
			if got := q.Priority(); got != rt.PriorityNormal {
				t.Errorf("a queue acquired at %v runs at %v, want normal", p, got)
			}
			saxpyOn(t, q)
			if err := ctx.ReleaseQueue(q); err != nil {
				t.Fatal(err)
			}
			warning := "no queue priority " + p.String()
			want := 1
			if p == rt.PriorityNormal {
				want = 0
			}
			if n := strings.Count(log.String(), warning); n != want {
				t.Errorf("%d warnings %q after three queues at %v, want %d; log:\n%s", n, warning, p, want, log.String())
			}
		})
	}
	before := ctx.Stats().Queues
	bad := rt.QueueConfig{Priority: rt.Priority(9)}
	if _, err := ctx.NewQueueConfig(dev, bad); !errors.Is(err, rt.ErrInvalidArgument) || !strings.Contains(err.Error(), "Priority(9)") {
		t.Errorf("NewQueueConfig at Priority(9): %v, want an error wrapping ErrInvalidArgument that names it", err)
	}
	if _, err := ctx.AcquireQueueConfig(bad); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("AcquireQueueConfig at Priority(9): %v, want ErrInvalidArgument", err)
	}
	if after := ctx.Stats().Queues; after != before {
		t.Errorf("an invalid priority made a queue: %+v, then %+v", before, after)
	}
}

// TestQueuePoolPriorities: on PoCL, the pool hands out a queue made at
// the priority asked for, and shares past its bound only queues of that
// priority: an idle queue of one priority is never handed out for
// another, even where the device runs them all at PriorityNormal.
func TestQueuePoolPriorities(t *testing.T) {
	ctx := openCPUConfig(t, rt.Config{QueuePool: 1, Logger: slog.New(slog.DiscardHandler)})
	acquire := func(p rt.Priority) *rt.Queue {
		t.Helper()
		q, err := ctx.AcquireQueueConfig(rt.QueueConfig{Priority: p})
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	release := func(qs ...*rt.Queue) {
		t.Helper()
		for _, q := range qs {
			if err := ctx.ReleaseQueue(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	normal := acquire(rt.PriorityNormal)
	high := acquire(rt.PriorityHigh)
	if high == normal {
		t.Fatal("AcquireQueueConfig at high gave the queue held at normal")
	}
	if again := acquire(rt.PriorityHigh); again != high { // past the bound of 1: shared
		t.Errorf("a second acquisition at high past the bound gave %p, want the high queue %p (normal's is %p)", again, high, normal)
	} else {
		release(again)
	}
	low := acquire(rt.PriorityLow)
	if low == normal || low == high {
		t.Errorf("AcquireQueueConfig at low gave a queue of another priority")
	}
	release(high, low) // idle now, at high and low
	if q := acquire(rt.PriorityNormal); q != normal {
		t.Errorf("an acquisition at normal past the bound gave %p, want the normal queue %p, shared, and never an idle queue of another priority (high %p, low %p)", q, normal, high, low)
	} else {
		release(q)
	}
	if q := acquire(rt.PriorityHigh); q != high {
		t.Errorf("an acquisition at high gave %p, want the idle high queue %p", q, high)
	} else {
		saxpyOn(t, q)
		release(q)
	}
	release(normal)
	if s := ctx.Stats().Queues; s.PoolQueues != 3 || s.PoolMax != 1 || s.Acquired != 0 {
		t.Errorf("Stats().Queues = %+v, want 3 pool queues, a bound of 1 and none acquired", s)
	}
}

// prioritized is a backend over OpenCL whose contexts have priorities as
// CUDA's do on NVIDIA's GPUs: PriorityHigh apart, PriorityLow at
// PriorityNormal. It records the options rt makes queues with: PoCL has
// no priorities to show that rt asks for them.
type prioritized struct {
	mu   sync.Mutex
	made []driver.QueueOptions
}

func (b *prioritized) Platforms() ([]driver.PlatformInfo, error) { return opencl.Backend{}.Platforms() }

func (b *prioritized) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	d, err := opencl.Backend{}.NewContext(devs)
	if err != nil {
		return nil, err
	}
	return prioritizedCtx{d, b}, nil
}

type prioritizedCtx struct {
	driver.Context
	b *prioritized
}

func (c prioritizedCtx) QueuePriority(dev int, p driver.Priority) driver.Priority {
	if p == driver.PriorityHigh {
		return p
	}
	return driver.PriorityNormal
}

func (c prioritizedCtx) NewQueueOptions(dev int, o driver.QueueOptions) (driver.Queue, error) {
	c.b.mu.Lock()
	c.b.made = append(c.b.made, o)
	c.b.mu.Unlock()
	return c.Context.NewQueue(dev, o.Profiling)
}

// TestQueuePriorityBackend: on a backend with priorities, rt makes a
// queue at a priority the device has with it (and the context's
// profiling), reports it, and warns of none; a priority the device runs
// at PriorityNormal makes a queue as NewQueue does, which reports
// PriorityNormal, and one warning.
func TestQueuePriorityBackend(t *testing.T) {
	b := &prioritized{}
	name := fmt.Sprintf("prioritized%d", faultyN.Add(1))
	driver.Register(name, b)
	var log lockedBuffer
	ctx := openCPUConfig(t, rt.Config{Backend: rt.Backend(name), Profiling: true, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	dev := ctx.Devices()[0]
	tests := []struct {
		p      rt.Priority
		runsAt rt.Priority
		made   []driver.QueueOptions // what the backend was asked for
		warned bool
	}{
		{rt.PriorityNormal, rt.PriorityNormal, nil, false},
		{rt.PriorityHigh, rt.PriorityHigh, []driver.QueueOptions{{Profiling: true, Priority: driver.PriorityHigh}}, false},
		{rt.PriorityLow, rt.PriorityNormal, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.p.String(), func(t *testing.T) {
			b.mu.Lock()
			b.made = nil
			b.mu.Unlock()
			q, err := ctx.NewQueueConfig(dev, rt.QueueConfig{Priority: tt.p})
			if err != nil {
				t.Fatal(err)
			}
			if got := q.Priority(); got != tt.runsAt {
				t.Errorf("a queue made at %v runs at %v, want %v", tt.p, got, tt.runsAt)
			}
			saxpyOn(t, q)
			b.mu.Lock()
			made := b.made
			b.mu.Unlock()
			if !slices.Equal(made, tt.made) {
				t.Errorf("the backend made queues with %+v, want %+v", made, tt.made)
			}
			if warned := strings.Contains(log.String(), "no queue priority "+tt.p.String()); warned != tt.warned {
				t.Errorf("warned of %v: %v, want %v; log:\n%s", tt.p, warned, tt.warned, log.String())
			}
		})
	}
}
