package rt_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/dgen-go/dgen/internal/testenv"
	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/codegen"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/raw"
)

// spinSrc is a kernel that runs for as long as n asks: a chain of n
// dependent multiplications per work-item, which no compiler folds (a
// linear congruential step has no closed form that LLVM's scalar
// evolution finds), stored so that it is not dropped.
const spinSrc = `
__kernel void spin(__global uint *out, ulong n) {
	uint x = (uint)get_global_id(0) + 1u;
	for (ulong i = 0; i < n; i++) {
		x = x * 1664525u + 1013904223u;
	}
	out[get_global_id(0)] = x;
}
`

// spinKernel builds spinSrc on ctx and returns the kernel, set up on a
// buffer of its own, with n iterations chosen so that one launch of one
// work-item runs for about d on ctx's device.
func spinKernel(t *testing.T, ctx *rt.Context, d time.Duration) *raw.Kernel {
	t.Helper()
	prog, err := raw.Build(ctx, "spin", spinSrc, "")
	if err != nil {
		t.Fatal(err)
	}
	k, err := prog.Kernel("spin")
	if err != nil {
		t.Fatal(err)
	}
	out, err := rt.NewBuffer[uint32](ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := raw.SetBuffer(k, 0, out); err != nil {
		t.Fatal(err)
	}
	q := ctx.Queue()
	n := itersFor(t, q, d, func(n uint64) error {
		return errors.Join(raw.SetArg(k, 1, n), raw.Submit(q, k, rt.Range1(1)))
	})
	if err := raw.SetArg(k, 1, n); err != nil {
		t.Fatal(err)
	}
	return k
}

// itersFor returns the n for which launch(n), a launch on q of a kernel
// that loops n times, runs for about d on q's device, timed from a run of
// 50 ms or more after one that has the driver make the kernel's code.
func itersFor(t *testing.T, q *rt.Queue, d time.Duration, launch func(n uint64) error) uint64 {
	t.Helper()
	n := uint64(1 << 12)
	for warm := false; ; warm = true {
		start := time.Now()
		if err := errors.Join(launch(n), q.Finish()); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); warm && took >= 50*time.Millisecond {
			return uint64(float64(n) * d.Seconds() / took.Seconds())
		}
		if warm {
			n *= 4
		}
	}
}

var (
	noWaitProg rt.Program
	_          = codegen.Register(&codegen.Program{Var: codegen.ProgramVar(&noWaitProg), ID: pkg + "noWaitProg", Name: "nowait.cl",
		Image: "__kernel void nowait(__global int *out) { out[0] = 1; }"})
)

// TestNoWaitBehindKernel: while a kernel of a few seconds runs on the
// default queue of a fresh context (one that has made no second queue)
// of the device DGEN_DEVICE selects, what a request does to get going
// (AcquireQueue, NewQueue, Stats, NewBuffer and Free, the first
// allocation on a new queue and a transfer on it, a Program.Build bounded
// by a deadline) returns well within the kernel's time. (rt/cuda's
// cuMemFree waited for the kernel, and the calls of other goroutines
// behind it: its buffers now come from a CUDA memory pool and free in
// stream order.) The first extra queue of a
// context used to finish the default queue while holding the context's
// mutex: NewQueue and AcquireQueue waited for the kernel, and anything
// that took the mutex behind them. NVIDIA's drivers (H200, driver 580,
// both backends) load a program only once the kernels running on the
// device end: the Build returns at its deadline all the same.
func TestNoWaitBehindKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("short: a kernel of seconds")
	}
	const kernelTime = 3 * time.Second
	const bound = kernelTime / 4
	ctx := openCPUConfig(t, rt.Config{Device: testenv.Device()})
	// Calibrating runs on the default queue and makes no other: the
	// context is still fresh when the long launch starts.
	k := spinKernel(t, ctx, kernelTime)
	earlier, err := rt.NewBuffer[float32](ctx, 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	q := ctx.Queue()
	start := time.Now()
	if err := raw.Submit(q, k, rt.Range1(1)); err != nil {
		t.Fatal(err)
	}
	if err := q.Flush(); err != nil {
		t.Fatal(err)
	}
	kernelDone := make(chan time.Duration, 1)
	go func() {
		q.Finish()
		kernelDone <- time.Since(start)
	}()
	time.Sleep(50 * time.Millisecond) // the kernel is running
	calls := []struct {
		name string
		do   func() error
	}{
		{"AcquireQueue", func() error {
			aq, err := ctx.AcquireQueue()
			if err != nil {
				return err
			}
			return ctx.ReleaseQueue(aq)
		}},
		{"NewQueue", func() error { _, err := ctx.NewQueue(ctx.Devices()[0]); return err }},
		{"Stats", func() error { ctx.Stats(); return nil }},
		{"NewBuffer and its Free", func() error {
			b, err := rt.NewBuffer[float32](ctx, 1024)
			if err != nil {
				return err
			}
			return b.Free()
		}},
		{"Free of a buffer made before the kernel", earlier.Free},
		{"Program.Build with a deadline of 50 ms", func() error {
			c, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if err := noWaitProg.Build(c, ctx); !errors.Is(err, context.DeadlineExceeded) {
				return err
			}
			return nil
		}},
		{"NewQueue, Alloc and a transfer on it", func() error {
			nq, err := ctx.NewQueue(ctx.Devices()[0])
			if err != nil {
				return err
			}
			b, err := rt.Alloc[float32](nq, 1024)
			if err != nil {
				return err
			}
			if err := b.Write(nq, make([]float32, 1024)); err != nil {
				return err
			}
			return b.Free()
		}},
	}
	took := make([]time.Duration, len(calls))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := time.Now()
			errs[i] = c.do()
			took[i] = time.Since(s)
		}()
	}
	wg.Wait()
	kt := <-kernelDone
	if kt < kernelTime/2 {
		t.Fatalf("the kernel ran %v, not about %v: the test measured nothing", kt, kernelTime)
	}
	for i, c := range calls {
		if errs[i] != nil {
			t.Errorf("%s: %v", c.name, errs[i])
		}
		if took[i] > bound {
			t.Errorf("%s took %v while a kernel of %v ran on the default queue (at most %v)", c.name, took[i].Round(time.Millisecond), kt.Round(time.Millisecond), bound)
		} else {
			t.Logf("%s: %v (the kernel: %v)", c.name, took[i].Round(time.Microsecond), kt.Round(time.Millisecond))
		}
	}
}

// spinFillSrc spins as spinSrc does, then writes every element of out.
const spinFillSrc = `
__kernel void spinfill(__global uint *out, ulong n, uint len) {
	uint x = 1u;
	for (ulong i = 0; i < n; i++) {
		x = x * 1664525u + 1013904223u;
	}
	for (uint i = 0; i < len; i++) {
		out[i] = x | 1u;
	}
}
`

// TestFreeBehindKernel frees a buffer while a kernel that ends by writing
// every element of it runs: Free returns well within the kernel's time,
// and the buffers allocated and zeroed meanwhile, of the same size, still
// read zero once the kernel has ended, so none of them was the freed
// memory while the kernel could write it (rt/cuda frees in stream order,
// and rt/opencl on NVIDIA's platform releases after markers, both after
// the commands enqueued on every queue; PoCL releases the memory once the
// commands that use it have completed).
func TestFreeBehindKernel(t *testing.T) {
	if testing.Short() {
		t.Skip("short: a kernel of seconds")
	}
	const kernelTime = 2 * time.Second
	const bound = kernelTime / 4
	const n, reallocs = 1 << 20, 8
	ctx := openCPUConfig(t, rt.Config{Device: testenv.Device()})
	q := ctx.Queue()
	other, err := ctx.NewQueue(ctx.Devices()[0])
	if err != nil {
		t.Fatal(err)
	}
	freed, err := rt.NewBuffer[uint32](ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	k := kernelOf(t, ctx, spinFillSrc, "spinfill")
	if err := errors.Join(raw.SetBuffer(k, 0, freed), raw.SetArg(k, 2, uint32(n))); err != nil {
		t.Fatal(err)
	}
	iters := itersFor(t, q, kernelTime, func(i uint64) error {
		return errors.Join(raw.SetArg(k, 1, i), raw.Submit(q, k, rt.Range1(1)))
	})
	if err := errors.Join(raw.SetArg(k, 1, iters), raw.Submit(q, k, rt.Range1(1)), q.Flush()); err != nil {
		t.Fatal(err)
	}
	ev, err := q.Marker()
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Release()
	time.Sleep(50 * time.Millisecond) // the kernel is running
	start := time.Now()
	if err := freed.Free(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	bufs := make([]rt.Buffer[uint32], reallocs)
	for i := range bufs {
		if bufs[i], err = rt.NewBuffer[uint32](ctx, n); err != nil {
			t.Fatal(err)
		}
		defer bufs[i].Free()
		if err := bufs[i].Write(other, make([]uint32, n)); err != nil {
			t.Fatal(err)
		}
	}
	if s, err := ce(ev).Status(); err != nil || s == driver.StatusComplete {
		t.Fatalf("the kernel ended (status %v, %v) before the buffers were allocated: the test checked nothing; the bound %v is too short for this machine", s, err, kernelTime)
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	for i, b := range bufs {
		got := make([]uint32, n)
		if err := b.Read(other, got); err != nil {
			t.Fatal(err)
		}
		if j := slices.IndexFunc(got, func(v uint32) bool { return v != 0 }); j >= 0 {
			t.Errorf("buffer %d, allocated after the Free while the kernel ran and zeroed, reads %#x at %d once the kernel has ended: it was the freed memory, and the kernel wrote it", i, got[j], j)
		}
	}
	if took > bound {
		t.Errorf("Free of a buffer that a running kernel uses took %v (at most %v)", took.Round(time.Millisecond), bound)
	} else {
		t.Logf("Free of a buffer that a running kernel uses: %v", took.Round(time.Microsecond))
	}
}
