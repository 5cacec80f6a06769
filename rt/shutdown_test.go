package rt_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/raw"
)

// addvSource adds v to every element of p.
const addvSource = "__kernel void addv(__global int *p, int v) { p[get_global_id(0)] += v; }"

// serveRequest is one request of the shutdown tests on q: it allocates
// n ints, writes them, adds 1 to them rounds times with its own kernel
// object k, reads them back and checks every element.
func serveRequest(q *rt.Queue, k *raw.Kernel, seed int32, n, rounds int) error {
	buf, err := rt.Alloc[int32](q, n)
	if err != nil {
		return err
	}
	defer buf.Free()
	in := make([]int32, n)
	for i := range in {
		in[i] = seed + int32(i)
	}
	if err := buf.Write(q, in); err != nil {
		return err
	}
	if err := errors.Join(raw.SetBuffer(k, 0, buf), raw.SetArg(k, 1, int32(1))); err != nil {
		return err
	}
	for range rounds {
		if err := raw.Submit(q, k, rt.Range1(n)); err != nil {
			return err
		}
	}
	out := make([]int32, n)
	if err := buf.Read(q, out); err != nil {
		return err
	}
	for i, v := range out {
		if want := in[i] + int32(rounds); v != want {
			return fmt.Errorf("element %d is %d, want %d", i, v, want)
		}
	}
	return nil
}

// addvKernels builds addvSource on ctx and returns n kernel objects of
// addv, one per goroutine.
func addvKernels(t *testing.T, ctx *rt.Context, n int) []*raw.Kernel {
	t.Helper()
	p, err := raw.Build(ctx, "addv.cl", addvSource, "")
	if err != nil {
		t.Fatal(err)
	}
	ks := make([]*raw.Kernel, n)
	for i := range ks {
		if ks[i], err = p.Kernel("addv"); err != nil {
			t.Fatal(err)
		}
	}
	return ks
}

// waitDraining waits until Health reports ctx draining.
func waitDraining(t *testing.T, ctx *rt.Context) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !errors.Is(ctx.Health(), rt.ErrShuttingDown); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Health: %v, want draining after Shutdown began", ctx.Health())
		}
	}
}

// TestShutdownInFlight: 16 goroutines each acquire a queue of the pool
// before Shutdown, then serve a request on it while Shutdown drains:
// every request completes and is verified, Shutdown returns only after
// the last request has ended and its queue is being given back (and every
// ReleaseQueue succeeds), with the context closed, within its
// deadline; meanwhile AcquireQueue, NewQueue and a call on the default
// queue fail at once with ErrShuttingDown. It runs on the device that
// DGEN_DEVICE selects (PoCL here; a GPU in the GPU bundle) and logs its
// times.
func TestShutdownInFlight(t *testing.T) {
	const requests, n, rounds = 16, 4096, 8
	ctx := openCPUConfig(t, rt.Config{Device: testenv.Device(), QueuePool: requests})
	ks := addvKernels(t, ctx, requests)
	buf, err := rt.NewBuffer[int32](ctx, 16)
	if err != nil {
		t.Fatal(err)
	}

	var acquired, done sync.WaitGroup
	start := make(chan struct{})
	var releasing atomic.Int32 // requests served, whose ReleaseQueue has begun
	errs := make([]error, requests)
	acquired.Add(requests)
	done.Add(requests)
	for i := range requests {
		go func() {
			defer done.Done()
			q, err := ctx.AcquireQueue()
			acquired.Done()
			if err != nil {
				errs[i] = err
				return
			}
			<-start
			errs[i] = serveRequest(q, ks[i], int32(i)<<16, n, rounds)
			// Counted before the call: Shutdown may return once the
			// hold is dropped, before ReleaseQueue itself returns.
			releasing.Add(1)
			if err := ctx.ReleaseQueue(q); err != nil && errs[i] == nil {
				errs[i] = err
			}
		}()
	}
	acquired.Wait()

	const deadline = 10 * time.Second
	sctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	began := time.Now()
	shut := make(chan error, 1)
	var releasingAtReturn int32
	var returned time.Time
	go func() {
		err := ctx.Shutdown(sctx)
		releasingAtReturn, returned = releasing.Load(), time.Now()
		shut <- err
	}()
	waitDraining(t, ctx)
	refused := []struct {
		name string
		call func() error
	}{
		{"AcquireQueue", func() error { _, err := ctx.AcquireQueue(); return err }},
		{"NewQueue", func() error { _, err := ctx.NewQueue(ctx.Devices()[0]); return err }},
		{"Write on the default queue", func() error { return buf.Write(ctx.Queue(), make([]int32, 16)) }},
	}
	var slowest time.Duration // of the refusals
	for _, r := range refused {
		at := time.Now()
		err := r.call()
		if !errors.Is(err, rt.ErrShuttingDown) || errors.Is(err, rt.ErrClosed) {
			t.Errorf("%s while draining: %v, want an error wrapping ErrShuttingDown (not ErrClosed)", r.name, err)
		}
		d := time.Since(at)
		if d > 100*time.Millisecond {
			t.Errorf("%s while draining took %v, want it at once", r.name, d)
		}
		slowest = max(slowest, d)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v before any request ran", err)
	default:
	}
	close(start)
	served := time.Now()
	done.Wait()
	last := time.Now()
	for i, err := range errs {
		if err != nil {
			t.Errorf("request %d: %v", i, err)
		}
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	took := returned.Sub(began)
	if took > deadline {
		t.Errorf("Shutdown took %v, past its deadline %v", took, deadline)
	}
	t.Logf("%s, backend %s: %d requests served in %v while draining; the slowest refusal took %v; Shutdown (with Close) returned %v after it began, %v after the last request, within its deadline of %v",
		ctx.Devices()[0], ctx.Backend(), requests, last.Sub(served), slowest, took, returned.Sub(last), deadline)
	if releasingAtReturn != requests {
		t.Errorf("Shutdown returned when %d of %d requests had ended and were giving their queues back, want all", releasingAtReturn, requests)
	}
	if err := ctx.Err(); !errors.Is(err, rt.ErrClosed) {
		t.Errorf("Err after Shutdown: %v, want ErrClosed", err)
	}
	if _, err := ctx.AcquireQueue(); !errors.Is(err, rt.ErrClosed) {
		t.Errorf("AcquireQueue after Shutdown: %v, want ErrClosed", err)
	}
}

// TestShutdownDeadline: a Shutdown whose ctx ends while a queue is held
// returns ctx's error, saying how many holds are left, and leaves the
// context draining: the held queue still works, and once it is given
// back the context closes itself; a later Shutdown returns nil.
func TestShutdownDeadline(t *testing.T) {
	ctx := openCPUConfig(t, rt.Config{})
	ks := addvKernels(t, ctx, 1)
	q, err := ctx.AcquireQueue()
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	began := time.Now()
	err = ctx.Shutdown(sctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Shutdown past its deadline: %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(began); d > time.Second {
		t.Errorf("Shutdown returned %v after it began, want at its 20 ms deadline", d)
	}
	t.Log(err)
	if err := ctx.Health(); !errors.Is(err, rt.ErrShuttingDown) {
		t.Errorf("Health after the deadline: %v, want draining", err)
	}
	if err := serveRequest(q, ks[0], 7, 256, 2); err != nil {
		t.Errorf("a request on the held queue after the deadline: %v", err)
	}
	if err := ctx.ReleaseQueue(q); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); !errors.Is(ctx.Err(), rt.ErrClosed); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the context did not close itself once the held queue was given back")
		}
	}
	if err := ctx.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown after the drain: %v, want nil", err)
	}
}

// TestShutdownConcurrent: Shutdowns from several goroutines all wait for
// the held queue and all return nil once it is given back; a Shutdown
// that waits returns when another goroutine closes the context.
func TestShutdownConcurrent(t *testing.T) {
	for _, end := range []string{"release", "close"} {
		t.Run(end, func(t *testing.T) {
			ctx := openCPUConfig(t, rt.Config{})
			q, err := ctx.AcquireQueue()
			if err != nil {
				t.Fatal(err)
			}
			const callers = 8
			results := make(chan error, callers)
			for range callers {
				go func() {
					sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					results <- ctx.Shutdown(sctx)
				}()
			}
			waitDraining(t, ctx)
			time.Sleep(20 * time.Millisecond)
			if len(results) != 0 {
				t.Fatalf("a Shutdown returned %v while a queue was held", <-results)
			}
			if end == "release" {
				err = ctx.ReleaseQueue(q)
			} else {
				err = ctx.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
			for range callers {
				select {
				case err := <-results:
					if err != nil {
						t.Errorf("Shutdown: %v, want nil", err)
					}
				case <-time.After(5 * time.Second):
					t.Fatal("a Shutdown hangs")
				}
			}
		})
	}
}

// TestHealthStates: Health tells ready, draining, closed and faulted
// apart by their sentinels; a fault that no call of the user's noticed
// turns it unhealthy within a second, by its probe alone.
func TestHealthStates(t *testing.T) {
	sentinels := []error{rt.ErrShuttingDown, rt.ErrClosed, rt.ErrDeviceFault}
	tests := []struct {
		name  string
		state func(t *testing.T) *rt.Context
		want  []error // the sentinels Health's error wraps; nil for healthy
	}{
		{"ready", func(t *testing.T) *rt.Context { return openCPUConfig(t, rt.Config{}) }, nil},
		{"draining", func(t *testing.T) *rt.Context {
			ctx := openCPUConfig(t, rt.Config{})
			if _, err := ctx.AcquireQueue(); err != nil {
				t.Fatal(err)
			}
			sctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := ctx.Shutdown(sctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("Shutdown: %v, want context.Canceled", err)
			}
			return ctx
		}, []error{rt.ErrShuttingDown}},
		{"closed", func(t *testing.T) *rt.Context {
			ctx := openCPUConfig(t, rt.Config{})
			if err := ctx.Close(); err != nil {
				t.Fatal(err)
			}
			return ctx
		}, []error{rt.ErrClosed}},
		{"faulted", func(t *testing.T) *rt.Context {
			resetDeviceFaults(t)
			ctx := openFaultDev(t, 0, rt.Config{})
			buf, err := rt.NewBuffer[int32](ctx, 16)
			if err != nil {
				t.Fatal(err)
			}
			_, bad := faultKernels(t, ctx, buf)
			if err := ctx.Health(); err != nil {
				t.Fatalf("Health before the fault: %v", err)
			}
			launched := time.Now()
			if err := raw.Submit(ctx.Queue(), bad, rt.Range1(1)); err != nil {
				t.Fatal(err)
			}
			for ctx.Health() == nil {
				if d := time.Since(launched); d > time.Second {
					t.Fatalf("Health still reports healthy %v after the faulting launch", d)
				}
				time.Sleep(5 * time.Millisecond)
			}
			t.Logf("Health reported the fault %v after the faulting launch (the fake device faults %v after it)", time.Since(launched), faultDelay)
			if err := ctx.Err(); !errors.Is(err, rt.ErrDeviceFault) {
				t.Errorf("Err after Health noticed the fault: %v, want it recorded", err)
			}
			return ctx
		}, []error{rt.ErrDeviceFault}},
		{"closed after a fault", func(t *testing.T) *rt.Context {
			resetDeviceFaults(t)
			ctx := openFaultDev(t, 0, rt.Config{})
			buf, err := rt.NewBuffer[int32](ctx, 16)
			if err != nil {
				t.Fatal(err)
			}
			_, bad := faultKernels(t, ctx, buf)
			if err := raw.Submit(ctx.Queue(), bad, rt.Range1(1)); err != nil {
				t.Fatal(err)
			}
			if err := ctx.Queue().Finish(); !errors.Is(err, rt.ErrDeviceFault) {
				t.Fatalf("Finish after the faulting launch: %v", err)
			}
			ctx.Close()
			return ctx
		}, []error{rt.ErrClosed, rt.ErrDeviceFault}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.state(t)
			err := ctx.Health()
			if tt.want == nil {
				if err != nil {
					t.Errorf("Health: %v, want nil", err)
				}
				return
			}
			for _, s := range sentinels {
				want := false
				for _, w := range tt.want {
					want = want || w == s
				}
				if errors.Is(err, s) != want {
					t.Errorf("Health: %v; errors.Is(err, %q) = %v, want %v", err, s, !want, want)
				}
			}
		})
	}
}
