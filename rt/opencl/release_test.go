package opencl

import (
	"testing"
	"time"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// spinSource is a kernel that runs for as long as n asks and then adds
// one to each element of a into b.
const spinSource = `__kernel void spin(__global const int *a, __global int *b, int n) {
	size_t i = get_global_id(0);
	int x = a[i];
	for (int j = 0; j < n; j++) x = x * 1103515245 + 12345;
	b[i] = a[i] + 1 + (x == 7 && n < 0);
}`

// TestDeferredRelease releases a buffer that a running kernel reads on a
// context that defers releases, as one on NVIDIA's platform does (PoCL's
// own release would not wait): Release returns at once, the object waits
// until the kernel has ended, the kernel reads what the buffer held, and
// the release happens then; drainReleases waits for it; flush, which a
// queue's Release calls, releases what is pending without waiting, and
// releases keep their order; a release pending when the context is
// released is done by then.
func TestDeferredRelease(t *testing.T) {
	c := cpuContext(t)
	c.deferRelease = true
	dq, err := c.NewQueue(0, false)
	if err != nil {
		t.Fatal(err)
	}
	defer dq.Release()
	q := dq.(queue)
	p, err := c.BuildProgram(spinSource, "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	k, err := p.NewKernel("spin")
	if err != nil {
		t.Fatal(err)
	}
	defer k.Release()
	const n = 64
	in := make([]int32, n)
	for i := range in {
		in[i] = int32(i) * 3
	}
	// launch runs iters iterations of spin over a copy of in and returns
	// its buffers.
	launch := func(iters int32) (a, b driver.Buffer) {
		t.Helper()
		if a, err = c.NewBuffer(4 * n); err == nil {
			b, err = c.NewBuffer(4 * n)
		}
		if err == nil {
			_, err = q.WriteBuffer(a, true, 0, 4*n, unsafe.Pointer(&in[0]), nil)
		}
		if err == nil {
			err = k.SetArgBuffer(0, a)
		}
		if err == nil {
			err = k.SetArgBuffer(1, b)
		}
		if err == nil {
			err = k.SetArgScalar(2, 4, uint64(uint32(iters)))
		}
		if err == nil {
			err = q.SubmitKernel(k, driver.NDRange{Dims: 1, Global: [3]int{n, 1, 1}}, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
	// marker returns a marker behind the commands enqueued on q so far,
	// released before the queue; ended reports whether its status says
	// they have ended (or the look failed).
	var marks []driver.Event
	defer func() {
		for _, m := range marks {
			m.Release()
		}
	}()
	marker := func() driver.Event {
		t.Helper()
		m, err := q.Marker(nil)
		if err != nil {
			t.Fatal(err)
		}
		marks = append(marks, m)
		return m
	}
	ended := func(s driver.EventStatus, err error) bool { return err != nil || s == driver.StatusComplete }
	start := time.Now()
	a, b := launch(1 << 18)
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	a.Release()
	b.Release()
	drained(t, c)
	iters := int32(min(float64(1<<18)*float64(300*time.Millisecond)/float64(max(time.Since(start), time.Millisecond)), 1<<30))

	a, b = launch(iters) // runs about 300 ms
	mark := marker()
	start = time.Now()
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if got := c.pendingReleases(); got != 1 {
		t.Errorf("releases pending while the kernel runs: %d, want 1", got)
	}
	if s, err := mark.Status(); ended(s, err) {
		t.Fatalf("the kernel ended (%v, %v) before the release was looked at: the test checked nothing", s, err)
	}
	out := make([]int32, n)
	if _, err := q.ReadBuffer(b, true, 0, 4*n, unsafe.Pointer(&out[0]), nil); err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if v != in[i]+1 {
			t.Fatalf("element %d: %d, want %d: the kernel did not read what the released buffer held", i, v, in[i]+1)
		}
	}
	drained(t, c)
	b.Release()
	drained(t, c)
	t.Logf("Release beside a kernel of about 300 ms took %v", took)

	// An allocation that found the device out of memory waits for the
	// pending releases.
	if c.drainReleases() {
		t.Error("drainReleases with no release pending reports one")
	}
	a, b = launch(iters)
	a.Release()
	if !c.drainReleases() || c.pendingReleases() != 0 {
		t.Errorf("drainReleases returned with %d releases pending, or reported none", c.pendingReleases())
	}
	b.Release()
	drained(t, c)

	// A queue's Release first releases what is pending, without waiting
	// for the markers (flush): here another queue's, beside the kernel.
	other, err := c.NewQueue(0, false)
	if err != nil {
		t.Fatal(err)
	}
	a, b = launch(iters)
	running := marker()
	a.Release()
	if got := c.pendingReleases(); got != 1 {
		t.Errorf("releases pending before a queue's Release: %d, want 1", got)
	}
	if err := other.Release(); err != nil {
		t.Fatal(err)
	}
	if got := c.pendingReleases(); got != 0 {
		t.Errorf("releases pending once a queue was released: %d", got)
	}
	if s, err := running.Status(); ended(s, err) {
		t.Errorf("the queue's Release returned once the kernel had ended (%v, %v): it waited for the markers", s, err)
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	b.Release()
	drained(t, c)

	// An object that no queue takes a marker for waits behind those
	// pending: releases keep their order.
	a, b = launch(iters)
	behind := marker()
	a.Release()
	c.queues.Remove(q.h) // no queue takes a marker now
	x, err := c.NewBuffer(64)
	if err != nil {
		t.Fatal(err)
	}
	x.Release()
	if got := c.pendingReleases(); got != 2 {
		t.Errorf("releases pending after one without markers behind one with: %d, want 2", got)
	}
	if s, err := behind.Status(); ended(s, err) {
		t.Fatalf("the kernel ended (%v, %v) before the order was looked at: the test checked nothing", s, err)
	}
	c.queues.Add(q.h)
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
	drained(t, c)
	b.Release()
	drained(t, c)

	a, b = launch(iters)
	last := marker()
	a.Release()
	b.Release()
	if got := c.pendingReleases(); got != 2 {
		t.Fatalf("releases pending before the releaser closed: %d, want 2: the test checks nothing", got)
	}
	c.releases.close() // as the context's Release does first
	if got := c.pendingReleases(); got != 0 {
		t.Errorf("releases pending once the releaser closed: %d", got)
	}
	if s, err := last.Status(); ended(s, err) {
		t.Errorf("close returned once the kernel had ended (%v, %v): it waited for the markers", s, err)
	}
	if err := q.Finish(); err != nil {
		t.Fatal(err)
	}
}

// drained waits until c's releases pending now are done: once the
// commands before them have ended, within 5 s.
func drained(t *testing.T, c *context) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); c.pendingReleases() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("a release still waits 5 s after the commands before it ended")
		}
	}
}
