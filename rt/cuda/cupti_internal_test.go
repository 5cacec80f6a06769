package cuda

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dgen-go/dgen/rt/driver"
)

// openTimed opens a context on the first CUDA device and a kernel-timed
// queue on it, skipping where libcuda, NVIDIA's OpenCL or CUPTI is absent,
// and builds a kernel spin.
func openTimed(t *testing.T) (*queue, driver.Kernel) {
	t.Helper()
	ps, err := Backend{}.Platforms()
	if err != nil || len(ps[0].Devices) == 0 {
		t.Skipf("no CUDA device: %v", err)
	}
	if err := loadCUPTI(); err != nil {
		t.Skipf("no CUPTI: %v", err)
	}
	dc, err := Backend{}.NewContext(ps[0].Devices[:1])
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { dc.Release() })
	dq, err := dc.(*context).NewKernelTimedQueue(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dq.Release() })
	q := dq.(*queue)
	if q.kt == nil {
		t.Fatal("CUPTI loads, but the kernel-timed queue does not use it")
	}
	p, err := dc.BuildProgram("__kernel void spin(__global int* o, int n) { int s = 0; for (int i = 0; i < n; i++) s += i * o[1]; o[get_global_id(0) & 1] = s; }", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Release() })
	k, err := p.NewKernel("spin")
	if err != nil {
		t.Fatal(err)
	}
	b, err := dc.NewBuffer(8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Release() })
	k.SetArgBuffer(0, b)
	k.SetArgScalar(1, 4, 10)
	return q, k
}

// TestKernelTimesUnlistedKernel launches a kernel on a kernel-timed
// queue's stream without listing it, as a launch path that forgot the
// list would: the next listed kernel must get an error, not the unlisted
// kernel's time.
func TestKernelTimesUnlistedKernel(t *testing.T) {
	q, k := openTimed(t)
	r := func(n int) driver.NDRange { return driver.NDRange{Dims: 1, Global: [3]int{n}, Local: [3]int{n}} }
	first, err := q.EnqueueKernel(k, r(32), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Release()
	kt := q.kt
	q.kt = nil
	err = q.SubmitKernel(k, r(64), nil) // unlisted
	q.kt = kt
	if err != nil {
		t.Fatal(err)
	}
	next, err := q.EnqueueKernel(k, r(32), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release()
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, _, done, err := first.(driver.Spanner).Span(); !done || err != nil {
		t.Errorf("first kernel: done %v, %v; want its times", done, err)
	}
	_, _, done, err := next.(driver.Spanner).Span()
	if !done || err == nil || !strings.Contains(err.Error(), "grid and block") {
		t.Errorf("kernel after an unlisted one: done %v, err %v; want an error about grid and block", done, err)
	}
}

// TestKernelTimesDurations checks that CUPTI's times are the kernel's
// own: a kernel that spins 100 times longer takes longer, and a short
// kernel on an idle GPU is not charged the launch's latency, which a
// profiling queue's event pair counts.
func TestKernelTimesDurations(t *testing.T) {
	q, k := openTimed(t)
	r := driver.NDRange{Dims: 1, Global: [3]int{32}, Local: [3]int{32}}
	span := func(n int) uint64 {
		k.SetArgScalar(1, 4, uint64(n))
		ev, err := q.EnqueueKernel(k, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ev.Release()
		if err := ev.Wait(); err != nil {
			t.Fatal(err)
		}
		s, e, done, err := ev.(driver.Spanner).Span()
		if !done || err != nil {
			t.Fatalf("Span: done %v, %v", done, err)
		}
		return e - s
	}
	span(1) // measures the clock offset
	short, long := span(10), span(1000)
	if long <= short {
		t.Errorf("spin 10: %d ns, spin 1000: %d ns", short, long)
	}
	t.Logf("spin 10: %d ns, spin 1000: %d ns", short, long)
}

// TestKernelTimesBetweenMarkers checks CUPTI's times against the event
// clock: a kernel between two markers of its queue (timed events) starts
// after the first, and ends within 2 µs of the second, which the GPU
// records as soon as the kernel has completed (the median over 20
// launches: another process on the GPU can delay a marker). (The queue's clock offset
// is measured the same way, on its first kernel, so a kernel may end up
// to that measure's jitter, tens of ns, after the marker.)
func TestKernelTimesBetweenMarkers(t *testing.T) {
	q, k := openTimed(t)
	k.SetArgScalar(1, 4, 100000) // long enough for the markers to be apart
	r := driver.NDRange{Dims: 1, Global: [3]int{32}, Local: [3]int{32}}
	const slack = 2000 // ns
	var gaps []int64
	for i := range 20 {
		before, err := q.Marker(nil)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := q.EnqueueKernel(k, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		after, err := q.Marker(nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Finish(); err != nil {
			t.Fatal(err)
		}
		b, errB := before.Profile()
		a, errA := after.Profile()
		s, e, done, err := ev.(driver.Spanner).Span()
		before.Release()
		after.Release()
		ev.Release()
		if errB != nil || errA != nil || err != nil || !done {
			t.Fatalf("times: %v, %v, %v (done %v)", errB, errA, err, done)
		}
		gap := int64(a.Ended) - int64(e)
		gaps = append(gaps, gap)
		if s < b.Ended || e <= s || gap < -slack {
			t.Errorf("launch %d: kernel [%d, %d], markers at %d and %d: starts %+d ns after the first, ends %+d ns before the second", i, s, e, b.Ended, a.Ended, int64(s)-int64(b.Ended), gap)
		}
	}
	// Another process's work on the GPU can delay a marker by tens of
	// µs now and then; the kernel's end is early only if most are.
	slices.Sort(gaps)
	if m := gaps[len(gaps)/2]; m > slack {
		t.Errorf("the second marker comes a median %d ns after the kernel's end (gaps %v), more than %d ns: CUPTI's end times are early", m, gaps, slack)
	}
	cupti.mu.Lock()
	t.Logf("clock offset %d ns", q.kt.offset)
	cupti.mu.Unlock()
}

// TestKernelTimesRelease checks that a released kernel-timed queue stops
// counting as a user of CUPTI's records, which the last one disables so
// that the process's other launches do not pay for them.
func TestKernelTimesRelease(t *testing.T) {
	q, _ := openTimed(t)
	users := func() (int, int) {
		cupti.mu.Lock()
		defer cupti.mu.Unlock()
		return cupti.users, len(cupti.streams)
	}
	if u, s := users(); u != 1 || s != 1 {
		t.Fatalf("%d users, %d streams; want 1 and 1", u, s)
	}
	q2, err := q.c.NewKernelTimedQueue(0)
	if err != nil {
		t.Fatal(err)
	}
	if u, s := users(); u != 2 || s != 2 {
		t.Errorf("with a second queue: %d users, %d streams; want 2 and 2", u, s)
	}
	if err := q2.Release(); err != nil {
		t.Fatal(err)
	}
	if u, s := users(); u != 1 || s != 1 {
		t.Errorf("after its Release: %d users, %d streams; want 1 and 1", u, s)
	}
}

// TestKernelTimesConcurrentQueues runs kernel-timed queues side by side,
// each finishing now and then while the others' kernels run: every kernel
// must get its times.
func TestKernelTimesConcurrentQueues(t *testing.T) {
	q0, k0 := openTimed(t)
	const queues, launches = 4, 200
	var wg sync.WaitGroup
	errs := make(chan error, queues)
	for i := range queues {
		q, k := q0, k0
		if i > 0 {
			dq, err := q0.c.NewKernelTimedQueue(0)
			if err != nil {
				t.Fatal(err)
			}
			defer dq.Release()
			q = dq.(*queue)
			p, err := q0.c.BuildProgram("__kernel void spin(__global int* o, int n) { int s = 0; for (int i = 0; i < n; i++) s += i; o[get_global_id(0) & 1] = s; }", "")
			if err != nil {
				t.Fatal(err)
			}
			defer p.Release()
			if k, err = p.NewKernel("spin"); err != nil {
				t.Fatal(err)
			}
			b, err := q0.c.NewBuffer(8)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Release()
			k.SetArgBuffer(0, b)
			k.SetArgScalar(1, 4, 1000)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- runTimed(q, k, launches)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// runTimed launches k n times on q with events, finishing every 50, and
// checks that each gets its times.
func runTimed(q *queue, k driver.Kernel, n int) error {
	r := driver.NDRange{Dims: 1, Global: [3]int{32}, Local: [3]int{32}}
	var evs []driver.Event
	defer func() {
		for _, ev := range evs {
			ev.Release()
		}
	}()
	for i := range n {
		ev, err := q.EnqueueKernel(k, r, nil)
		if err != nil {
			return err
		}
		evs = append(evs, ev)
		if i%50 == 49 {
			if err := q.Finish(); err != nil {
				return err
			}
		}
	}
	if err := q.Finish(); err != nil {
		return err
	}
	for i, ev := range evs {
		if _, _, done, err := ev.(driver.Spanner).Span(); !done || err != nil {
			return fmt.Errorf("kernel %d of %d: done %v, %v", i, n, done, err)
		}
	}
	return nil
}

// TestKernelTimesWithoutEvent launches kernels through LaunchArgsTimed, as
// rt does for the sampled kernels it launches without an event: they
// record no end event (but the first, which measures the clock offset),
// their times come in launch order after Wait on the newest, and a wait
// list that names one is refused.
func TestKernelTimesWithoutEvent(t *testing.T) {
	q, k := openTimed(t)
	r := driver.NDRange{Dims: 1, Global: [3]int{32}, Local: [3]int{32}}
	var evs []driver.Event
	defer func() {
		for _, ev := range evs {
			ev.Release()
		}
	}()
	for range 50 {
		ev, err := q.LaunchArgsTimed(k, &driver.Args{}, &r, nil)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
	}
	if ends := evs[0].(*kernelEvent).end != nil && evs[1].(*kernelEvent).end == nil; !ends {
		t.Errorf("end events: the first kernel's %v, the second's %v; want the first only", evs[0].(*kernelEvent).end, evs[1].(*kernelEvent).end)
	}
	if _, err := q.EnqueueKernel(k, r, evs[10:11]); err == nil || !strings.Contains(err.Error(), "only times") {
		t.Errorf("a wait list naming a times-only event: %v", err)
	}
	if err := evs[len(evs)-1].Wait(); err != nil {
		t.Fatal(err)
	}
	var last uint64
	for i, ev := range evs {
		s, e, done, err := ev.(driver.Spanner).Span()
		if !done || err != nil || s < last || e <= s {
			t.Fatalf("kernel %d: [%d, %d] after %d, done %v, %v", i, s, e, last, done, err)
		}
		last = e
	}
}
