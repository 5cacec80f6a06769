package rt_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/dgen-go/dgen/rt"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/opencl"
	"github.com/dgen-go/dgen/rt/raw"
)

// TestPinnedStaging moves data through pinned memory with blocking and
// asynchronous transfers, ordered by wait lists alone.
func TestPinnedStaging(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	const n = 4099
	p, err := rt.NewPinned[int32](q, n)
	if err != nil {
		t.Fatal(err)
	}
	s := p.Slice()
	if len(s) != n {
		t.Fatalf("Slice has %d elements, want %d", len(s), n)
	}
	for i := range s {
		if s[i] != 0 {
			t.Fatalf("fresh pinned element %d = %d, want 0", i, s[i])
		}
		s[i] = int32(i * 3)
	}
	a, _ := rt.NewBuffer[int32](ctx, n)
	b, _ := rt.NewBuffer[int32](ctx, 2*n)
	defer a.Free()
	defer b.Free()
	// pinned -> a (async) -> b at n (copy waits) -> pinned (async), then
	// the host waits for the last event only.
	w, err := a.WriteAsync(q, 0, p)
	if err != nil {
		t.Fatal(err)
	}
	fill, err := b.Fill(q, -1)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAt(q, n, s, w, fill); err != nil {
		t.Fatal(err)
	}
	clear(s)
	r, err := b.ReadAsync(q, n, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	for i := range s {
		if s[i] != int32(i*3) {
			t.Fatalf("element %d after the round trip = %d, want %d", i, s[i], i*3)
		}
	}
	// The pageable buffer a got the async write.
	back := make([]int32, n)
	if err := a.Read(q, back); err != nil {
		t.Fatal(err)
	}
	if back[n-1] != int32((n-1)*3) {
		t.Errorf("a[%d] = %d after WriteAsync, want %d", n-1, back[n-1], (n-1)*3)
	}
	if _, err := b.ReadAsync(q, n+1, p); !errors.Is(err, rt.ErrOutOfRange) {
		t.Errorf("ReadAsync past the end: %v, want ErrOutOfRange", err)
	}
	if err := p.Free(); err != nil {
		t.Fatal(err)
	}
	if p.Slice() != nil {
		t.Error("Slice after Free is not nil")
	}
	if err := p.Free(); !errors.Is(err, rt.ErrFreed) {
		t.Errorf("second Free: %v, want ErrFreed", err)
	}
	if _, err := a.WriteAsync(q, 0, p); !errors.Is(err, rt.ErrFreed) {
		t.Errorf("WriteAsync from freed pinned memory: %v, want ErrFreed", err)
	}
	if _, err := a.ReadAsync(q, 0, nil); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("ReadAsync into nil: %v, want ErrInvalidArgument", err)
	}
	empty, err := rt.NewPinned[int32](q, 0)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := a.ReadAsync(q, 0, empty, w)
	if err != nil || ev.Wait() != nil {
		t.Errorf("empty ReadAsync: %v", err)
	}
	if err := empty.Free(); err != nil {
		t.Error(err)
	}
}

// TestPinnedFreeWaits frees pinned memory while a read into it waits, on
// another queue, behind a slow kernel: Free must wait for the read, so the
// kernel has completed when Free returns. Goroutines enqueue reads into it
// meanwhile; those after Free fail with ErrFreed.
func TestPinnedFreeWaits(t *testing.T) {
	r, src, sum, p, slow, onUnmap := pinnedBehindSlowKernel(t)
	if _, err := sum.ReadAsync(r.qb, 0, p); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if _, err := src.ReadAsync(r.qb, 0, p); err != nil && !errors.Is(err, rt.ErrFreed) {
					t.Error(err)
				}
			}
		}()
	}
	*onUnmap = func() {
		if st, err := ce(slow).Status(); err != nil || st != driver.StatusComplete {
			t.Errorf("the slow kernel before a pending read is %v (%v) when Free unmaps, want complete", st, err)
		}
	}
	if err := p.Free(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
}

// TestPinnedFreeWaitsReleased is TestPinnedFreeWaits with the events of
// the reads released at once, as code that orders by the queue does: Free
// must still wait for the reads (it unmapped the memory while PoCL wrote
// into it, and crashed, or returned ErrReleased), and return no error.
// Twelve reads make the list of pending transfers prune itself.
func TestPinnedFreeWaitsReleased(t *testing.T) {
	r, _, sum, p, slow, onUnmap := pinnedBehindSlowKernel(t)
	for range 12 {
		if err := released(sum.ReadAsync(r.qb, 0, p)); err != nil {
			t.Fatal(err)
		}
	}
	*onUnmap = func() {
		if st, err := ce(slow).Status(); err != nil || st != driver.StatusComplete {
			t.Errorf("the slow kernel before pending reads is %v (%v) when Free unmaps, want complete", st, err)
		}
	}
	if err := p.Free(); err != nil {
		t.Errorf("Free after reads whose events were released: %v", err)
	}
}

// pinnedBehindSlowKernel opens a context on a backend whose unmaps call
// *onUnmap first, and returns pinned memory made on queue A, with a slow
// kernel launched on queue B that reads src and writes sum: a read of sum
// into p waits behind it.
func pinnedBehindSlowKernel(t *testing.T) (r *crossQueueRig, src, sum rt.Buffer[float32], p *rt.Pinned[float32], slow *rt.Event, onUnmap *func()) {
	const n, iters = 1 << 16, 2000
	onUnmap = new(func())
	u := &unmapHook{hook: func() { (*onUnmap)() }}
	name := fmt.Sprintf("unmaphook%d", faultyN.Add(1))
	driver.Register(name, u)
	r = newCrossQueueRigConfig(t, rt.Config{Backend: rt.Backend(name)})
	src, _ = rt.NewBuffer[float32](r.ctx, n)
	sum, _ = rt.NewBuffer[float32](r.ctx, n)
	t.Cleanup(func() { src.Free(); sum.Free() })
	if err := released(src.Fill(r.qb, 1)); err != nil {
		t.Fatal(err)
	}
	p, err := rt.NewPinned[float32](r.qa, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(raw.SetBuffer(r.slowSum, 0, src), raw.SetBuffer(r.slowSum, 1, sum), raw.SetArg(r.slowSum, 2, int32(iters))); err != nil {
		t.Fatal(err)
	}
	slow, err = raw.Launch(r.qb, r.slowSum, rt.Range1(n))
	if err != nil {
		t.Fatal(err)
	}
	return r, src, sum, p, slow, onUnmap
}

// unmapHook is the OpenCL backend with a hook called before each unmap:
// PoCL orders an unmap after every command that uses the buffer, on any
// queue, so only the hook sees whether Free waited for them itself.
type unmapHook struct{ hook func() }

func (u *unmapHook) Platforms() ([]driver.PlatformInfo, error) { return opencl.Backend{}.Platforms() }

func (u *unmapHook) NewContext(devs []driver.DeviceInfo) (driver.Context, error) {
	d, err := opencl.Backend{}.NewContext(devs)
	if err != nil {
		return nil, err
	}
	return unmapHookCtx{d, u}, nil
}

type unmapHookCtx struct {
	driver.Context
	u *unmapHook
}

func (c unmapHookCtx) NewHostBuffer(size int64) (driver.Buffer, error) {
	return c.Context.(driver.HostBufferContext).NewHostBuffer(size)
}

func (c unmapHookCtx) NewQueue(dev int, profiling bool) (driver.Queue, error) {
	q, err := c.Context.NewQueue(dev, profiling)
	return unmapHookQueue{q, c.u}, err
}

type unmapHookQueue struct {
	driver.Queue
	u *unmapHook
}

func (q unmapHookQueue) MapBuffer(b driver.Buffer, offset, size int64, wait []driver.Event) (unsafe.Pointer, error) {
	return q.Queue.(driver.MapQueue).MapBuffer(b, offset, size, wait)
}

func (q unmapHookQueue) UnmapBuffer(b driver.Buffer, p unsafe.Pointer) error {
	q.u.hook()
	return q.Queue.(driver.MapQueue).UnmapBuffer(b, p)
}

// TestPinnedAfterClose frees pinned memory after its context is closed,
// which released it: nil, as every Free after Close, and its Slice is nil.
func TestPinnedAfterClose(t *testing.T) {
	ctx := openCPU(t)
	p, err := rt.NewPinned[float64](ctx.Queue(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := ctx.Close(); err != nil {
		t.Fatal(err)
	}
	if s := p.Slice(); s != nil {
		t.Errorf("Slice after Close: %d elements, want nil", len(s))
	}
	if err := p.Free(); err != nil {
		t.Errorf("Free after Close: %v, want nil", err)
	}
	if _, err := rt.NewPinned[float64](ctx.Queue(), 10); !errors.Is(err, rt.ErrClosed) {
		t.Errorf("NewPinned after Close: %v, want ErrClosed", err)
	}
}

// TestZeroPinned uses a Pinned that NewPinned did not make: an error
// wrapping ErrInvalidArgument, not a nil dereference.
func TestZeroPinned(t *testing.T) {
	ctx := openCPU(t)
	q := ctx.Queue()
	buf, err := rt.NewBuffer[float32](ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	var zero rt.Pinned[float32]
	if _, err := buf.WriteAsync(q, 0, &zero); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("WriteAsync from a zero Pinned: %v, want ErrInvalidArgument", err)
	}
	if _, err := buf.ReadAsync(q, 0, &zero); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("ReadAsync into a zero Pinned: %v, want ErrInvalidArgument", err)
	}
	if err := zero.Free(); !errors.Is(err, rt.ErrInvalidArgument) {
		t.Errorf("Free of a zero Pinned: %v, want ErrInvalidArgument", err)
	}
	if s := zero.Slice(); s != nil {
		t.Errorf("Slice of a zero Pinned: %d elements, want nil", len(s))
	}
}
