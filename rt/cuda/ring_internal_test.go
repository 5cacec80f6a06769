package cuda

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// ringSource's kernels compute p = p*3 + v and p = p*5 + a0, whose result
// depends on the order of the launches. big takes more parameters than a
// ring's record carries.
var ringSource = `__kernel void muladd(__global int *p, int v) { size_t i = get_global_id(0); p[i] = p[i] * 3 + v; }
__kernel void big(__global int *p, int a0` + bigParams() + `) { size_t i = get_global_id(0); p[i] = p[i] * 5 + a0; }`

func bigParams() string {
	var b strings.Builder
	for i := 1; i < 32; i++ {
		fmt.Fprintf(&b, ", int a%d", i)
	}
	return b.String()
}

// ringRange is the launches' range: one block of 64 items.
var ringRange = driver.NDRange{Dims: 1, Global: [3]int{64, 1, 1}, Local: [3]int{64, 1, 1}}

// openRing opens a context on the first CUDA device, skipping where
// libcuda or NVIDIA's OpenCL is absent, and builds ringSource.
func openRing(t *testing.T) (*context, driver.Program) {
	t.Helper()
	ps, err := Backend{}.Platforms()
	if err != nil || len(ps[0].Devices) == 0 {
		t.Skipf("no CUDA device: %v", err)
	}
	dc, err := Backend{}.NewContext(ps[0].Devices[:1])
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { dc.Release() })
	p, err := dc.BuildProgram(ringSource, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Release() })
	return dc.(*context), p
}

// ringUser is a queue, a buffer of 64 ints and muladd set on it, with the
// value the host expects the buffer's ints to hold.
type ringUser struct {
	q    *queue
	b    driver.Buffer
	k    driver.Kernel
	want int32
}

func newRingUser(t *testing.T, c *context, p driver.Program, q *queue) *ringUser {
	t.Helper()
	if q == nil {
		dq, err := c.NewQueue(0, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { dq.Release() })
		q = dq.(*queue)
	}
	b, err := c.NewBuffer(64 * 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Release() })
	u := &ringUser{q: q, b: b}
	if _, err := q.FillBuffer(b, make([]byte, 4), 0, 64*4, nil); err != nil {
		t.Fatal(err)
	}
	if u.k, err = p.NewKernel("muladd"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.k.Release() })
	if err := u.k.SetArgBuffer(0, b); err != nil {
		t.Fatal(err)
	}
	return u
}

// launch launches muladd n times back to back, each with a value of its
// own, which the record must carry.
func (u *ringUser) launch(n int) error {
	for i := range n {
		v := int32(i%7 - 3)
		if err := u.k.SetArgScalar(1, 4, uint64(uint32(v))); err != nil {
			return err
		}
		if err := u.q.SubmitKernel(u.k, ringRange, nil); err != nil {
			return err
		}
		u.want = u.want*3 + v
	}
	return nil
}

// check reads the buffer back and compares every int with want.
func (u *ringUser) check() error {
	got := make([]int32, 64)
	if _, err := u.q.ReadBuffer(u.b, true, 0, 64*4, unsafe.Pointer(&got[0]), nil); err != nil {
		return err
	}
	for i, g := range got {
		if g != u.want {
			return fmt.Errorf("p[%d] = %d, want %d", i, g, u.want)
		}
	}
	return nil
}

// TestRingOrder launches back to back, so that the launches take the
// queue's ring, with other commands between them: each command must run
// after the launches before it, and each launch with its own arguments.
func TestRingOrder(t *testing.T) {
	c, p := openRing(t)
	u := newRingUser(t, c, p, nil)
	if err := u.launch(3000); err != nil {
		t.Fatal(err)
	}
	if u.q.ring.r == nil {
		t.Fatal("3000 launches back to back did not take the ring")
	}
	if err := u.check(); err != nil {
		t.Fatalf("after 3000 launches: %v", err)
	}
	// A fill after launches, then more launches, then a launch of a kernel
	// too big for a record, which is made directly after the ring's.
	if err := u.launch(1000); err != nil {
		t.Fatal(err)
	}
	if err := u.q.SubmitFill(u.b, []byte{1, 0, 0, 0}, 0, 64*4, nil); err != nil {
		t.Fatal(err)
	}
	u.want = 1
	if err := u.launch(1000); err != nil {
		t.Fatal(err)
	}
	big, err := p.NewKernel("big")
	if err != nil {
		t.Fatal(err)
	}
	defer big.Release()
	if big.(*kernel).ring.offs != nil {
		t.Fatalf("big's %d parameters fit a record", len(big.(*kernel).offs))
	}
	big.SetArgBuffer(0, u.b)
	for i := 1; i <= 32; i++ {
		big.SetArgScalar(i, 4, 2)
	}
	if err := u.q.SubmitKernel(big, ringRange, nil); err != nil {
		t.Fatal(err)
	}
	u.want = u.want*5 + 2
	if err := u.launch(1000); err != nil {
		t.Fatal(err)
	}
	if err := u.check(); err != nil {
		t.Fatalf("after a fill, a big kernel and launches between them: %v", err)
	}
}

// TestRingConcurrent launches back to back from several goroutines, on
// one queue and on queues of their own.
func TestRingConcurrent(t *testing.T) {
	c, p := openRing(t)
	shared := newRingUser(t, c, p, nil)
	users := []*ringUser{shared}
	for range 3 {
		users = append(users, newRingUser(t, c, p, shared.q), newRingUser(t, c, p, nil))
	}
	var wg sync.WaitGroup
	errs := make([]error, len(users))
	for i, u := range users {
		wg.Go(func() {
			for range 10 {
				if errs[i] = u.launch(300); errs[i] != nil {
					return
				}
				if errs[i] = u.check(); errs[i] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// TestRingSettle frees a buffer and unloads a module while launches that
// use them wait in a ring: each must wait until they have been launched.
func TestRingSettle(t *testing.T) {
	c, p := openRing(t)
	u := newRingUser(t, c, p, nil)
	for _, what := range []string{"buffer", "module"} {
		if err := u.launch(3000); err != nil {
			t.Fatal(err)
		}
		switch what {
		case "buffer":
			if err := u.b.Release(); err != nil {
				t.Fatal(err)
			}
		case "module":
			p.(*program).unload()
		}
		r, tail := u.q.ring.written()
		if r == nil {
			t.Fatal("3000 launches back to back did not take the ring")
		}
		if uint32(r.head) != tail {
			t.Errorf("after the %s's release, the ring has launched %d of %d records", what, r.head, tail)
		}
		if what == "buffer" {
			b, err := c.NewBuffer(64 * 4)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Release()
			u.b = b
			u.k.SetArgBuffer(0, b)
		}
	}
}

// TestRingEarlierError launches, back to back, a record whose function
// cuLaunchKernel refuses (a fault injected: no real kernel fails so without
// poisoning the context): the queue's next command returns the error, with
// the driver's code, and the queue then works again.
func TestRingEarlierError(t *testing.T) {
	c, p := openRing(t)
	u := newRingUser(t, c, p, nil)
	if err := u.launch(100); err != nil {
		t.Fatal(err)
	}
	// The bad launch goes directly, failing at once, where it finds the
	// ring's thread asleep (a goroutine descheduled for 50 µs): try again.
	k := u.k.(*kernel)
	f := k.fns[0]
	var err error
	for try := 0; ; try++ {
		k.fns[0] = 0
		err = u.q.SubmitKernel(k, ringRange, nil)
		k.fns[0] = f
		if err == nil && u.q.ring.r != nil {
			break
		}
		if try == 20 {
			t.Fatalf("the bad launch returned %v (ring %v) 20 times: want it to take the ring", err, u.q.ring.r != nil)
		}
		if err := u.launch(100); err != nil {
			t.Fatal(err)
		}
	}
	err = u.q.Finish()
	var de *driver.Error
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "an earlier launch") || de.Call != "cuLaunchKernel" {
		t.Fatalf("Finish after a bad launch: %v; want the launch's driver error", err)
	}
	if err := u.q.Finish(); err != nil {
		t.Fatalf("a second Finish: %v", err)
	}
	u.want = 0
	u.q.FillBuffer(u.b, make([]byte, 4), 0, 64*4, nil)
	if err := u.launch(100); err != nil {
		t.Fatal(err)
	}
	if err := u.check(); err != nil {
		t.Fatal(err)
	}
}

// TestRingDirect checks which launches are made directly: a launch that a
// synchronisation follows, as under Config.SyncLaunches, never takes the
// ring; and a queue released with launches in its ring launches them.
func TestRingDirect(t *testing.T) {
	c, p := openRing(t)
	u := newRingUser(t, c, p, nil)
	for range 200 {
		if err := u.launch(1); err != nil {
			t.Fatal(err)
		}
		if err := u.q.Finish(); err != nil {
			t.Fatal(err)
		}
	}
	if u.q.ring.r != nil {
		t.Error("launches each followed by Finish took the ring")
	}
	if err := u.check(); err != nil {
		t.Fatal(err)
	}
	dq, err := c.NewQueue(0, false)
	if err != nil {
		t.Fatal(err)
	}
	v := newRingUser(t, c, p, dq.(*queue))
	if err := v.launch(3000); err != nil {
		t.Fatal(err)
	}
	r := v.q.ring.r
	if err := dq.Flush(); err != nil {
		t.Fatal(err)
	}
	if r != nil && uint32(r.head) != uint32(r.tail) {
		t.Errorf("after Flush: the ring launched %d of its %d records", r.head, r.tail)
	}
	if err := dq.Release(); err != nil {
		t.Fatal(err)
	}
	switch {
	case r == nil:
		t.Fatal("3000 launches back to back did not take the ring")
	case uint32(r.head) != uint32(r.tail) || r.tail < 1000 || v.q.ring.r != nil:
		t.Fatalf("after Release: the ring launched %d of its %d records (of 3000 launches), queue's ring %p", r.head, r.tail, v.q.ring.r)
	}
}
