package core

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

// Pinned is host memory of n elements of T that the device reaches
// directly: an OpenCL buffer allocated with CL_MEM_ALLOC_HOST_PTR and
// mapped once for the host, which on GPUs is page-locked memory that
// transfers copy by DMA, without staging through a driver buffer. Programs
// that transfer every iteration keep their host side in one: pass Slice to
// Buffer.Read and Buffer.Write, or the Pinned itself to ReadAsync and
// WriteAsync, which return before the copy is done. Its methods are safe
// for concurrent use.
type Pinned[T any] struct {
	pinnedMem
}

// pinnedMem is what Pinned holds whatever its element type: graphs that
// transfer to and from it keep it. From NewPinned until Free it is live
// in its context (live.go), whose Close releases it if Free did not.
type pinnedMem struct {
	q    *Queue // maps and unmaps it; holds its driver queue (queueGate.refs) while mapped
	drv  driver.Buffer
	n    int   // elements
	size int64 // bytes

	mu      sync.Mutex
	p       unsafe.Pointer // the mapped memory; nil once freed
	freed   bool
	pending []pinnedUse // asynchronous transfers and graph launches that may still use it
}

// pinnedUse is an asynchronous transfer or a graph launch that uses
// pinned memory: its queue, its event if it has one (the caller may
// release it), and its point on the queue, which tells when it has
// completed all the same.
type pinnedUse struct {
	q  *Queue
	ev *Event
	pt uint64
}

// NewPinned allocates pinned host memory of n elements of T, mapped for
// the host through q, and zeroes it. The mapping runs after the commands
// enqueued on q before it: NewPinnedContext bounds that wait.
func NewPinned[T any](q *Queue, n int) (*Pinned[T], error) {
	return newPinned[T](nil, q, n)
}

// NewPinnedContext is NewPinned bounded by ctx: when ctx is done before
// the commands enqueued on q before it have completed, it returns an error
// wrapping ctx.Err() and allocates nothing, and they run on.
func NewPinnedContext[T any](ctx context.Context, q *Queue, n int) (*Pinned[T], error) {
	return newPinned[T](ctx, q, n)
}

// newPinned is NewPinned, bounded by ctx where it is not nil.
func newPinned[T any](ctx context.Context, q *Queue, n int) (*Pinned[T], error) {
	size, err := byteSize[T](n)
	if err != nil {
		return nil, fmt.Errorf("pinned memory: %w", err)
	}
	if ctx != nil {
		if err := q.waitBefore(ctx, "pinned memory", nil); err != nil {
			return nil, err
		}
	}
	if err := q.enter(); err != nil {
		return nil, fmt.Errorf("pinned memory of %d bytes: %w", size, err)
	}
	defer q.exit()
	p := &Pinned[T]{pinnedMem: pinnedMem{q: q, n: n, size: size}}
	if size == 0 {
		return p, nil
	}
	if max := q.ctx.maxAlloc(); size > max {
		return nil, fmt.Errorf("pinned memory of %d bytes on %q: %w: the device allocates at most %d bytes at once", size, q.dev.Name, ErrTooLarge, max)
	}
	hc, ok := q.ctx.drv.(driver.HostBufferContext)
	mq, ok2 := q.drv.(driver.MapQueue)
	if !ok || !ok2 {
		return nil, fmt.Errorf("pinned memory of %d bytes: %w: the backend has no host buffers", size, errors.ErrUnsupported)
	}
	if p.drv, err = hc.NewHostBuffer(size); err != nil {
		return nil, fmt.Errorf("pinned memory of %d bytes on %q: %w", size, q.dev.Name, err)
	}
	if p.p, err = mq.MapBuffer(p.drv, 0, size, nil); err != nil {
		p.drv.Release()
		return nil, fmt.Errorf("map pinned memory of %d bytes on %q: %w", size, q.dev.Name, err)
	}
	clear(unsafe.Slice((*byte)(p.p), size))
	q.gate.refs.Add(1)           // it unmaps through q's driver queue, which a Release of q leaves it
	q.ctx.live.add(&p.pinnedMem) // live.go
	return p, nil
}

// Slice returns the memory as a slice, valid until Free or the context's
// Close; nil after them (a slice returned before must not be used after
// them either). The host must not touch the elements an asynchronous
// transfer is copying until its event completes.
func (p *Pinned[T]) Slice() []T {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.p == nil {
		return nil
	}
	return unsafe.Slice((*T)(p.p), p.n)
}

// Free waits for the asynchronous transfers that use the memory (those
// whose events were released too), unmaps it and releases it. A second
// Free returns an error wrapping ErrFreed; Free after the context's Close
// returns nil (Close released the memory).
func (p *Pinned[T]) Free() error {
	if p == nil || p.q == nil {
		return fmt.Errorf("free pinned memory: %w: nil, or not from NewPinned", ErrInvalidArgument)
	}
	c := p.q.ctx
	if c.enter() != nil {
		return nil // Close releases it
	}
	defer c.exit()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.freed {
		return fmt.Errorf("free pinned memory of %d bytes: %w", p.size, ErrFreed)
	}
	var errs []error
	for _, u := range p.pending {
		errs = append(errs, u.wait())
	}
	c.live.remove(&p.pinnedMem) // inside enter: Close has not taken it
	errs = append(errs, p.release())
	return errors.Join(errs...)
}

// release unmaps and releases the memory, which no transfer uses any
// more. Called with mu held, by Free or by Close (releaseLive).
func (p *pinnedMem) release() error {
	p.freed, p.pending = true, nil
	ptr := p.p
	p.p = nil
	if p.drv == nil {
		return nil
	}
	var errs []error
	if err := p.q.drv.(driver.MapQueue).UnmapBuffer(p.drv, ptr); err != nil {
		errs = append(errs, fmt.Errorf("unmap pinned memory on %q: %w", p.q.dev.Name, err))
	}
	if err := p.drv.Release(); err != nil {
		errs = append(errs, fmt.Errorf("release pinned memory: %w", err))
	}
	errs = append(errs, p.q.unref())
	return errors.Join(errs...)
}

// releaseLive and describe make pinned memory a liveObject (live.go): it
// is live under its *pinnedMem until freed.
func (p *pinnedMem) releaseLive() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.freed {
		return nil
	}
	// The queues have drained: no transfer uses it any more.
	return p.release()
}

func (p *pinnedMem) describe() string {
	return fmt.Sprintf("pinned memory of %d bytes", p.size)
}

// ReadAsync enqueues a copy of len(dst.Slice()) elements of b, from
// element off, into dst after wait, and returns at once with the command's
// event; dst holds the elements once it completes. A span outside b is an
// error wrapping ErrOutOfRange, and nothing is enqueued.
func (b Buffer[T]) ReadAsync(q *Queue, off int, dst *Pinned[T], wait ...*Event) (*Event, error) {
	return b.async(q, "read buffer", trace.Read, off, dst, wait, q.drvReadAsync)
}

// WriteAsync enqueues a copy of src into b from element off after wait,
// and returns at once with the command's event. src must not change until
// the event completes. A span outside b is an error wrapping
// ErrOutOfRange, and nothing is enqueued.
func (b Buffer[T]) WriteAsync(q *Queue, off int, src *Pinned[T], wait ...*Event) (*Event, error) {
	return b.async(q, "write buffer", trace.Write, off, src, wait, q.drvWriteAsync)
}

// async enqueues a non-blocking transfer between b and h with do.
func (b Buffer[T]) async(q *Queue, op string, kind trace.CmdKind, off int, h *Pinned[T], wait []*Event,
	do func(b driver.Buffer, off, size int64, p unsafe.Pointer, dw []driver.Event) (driver.Event, error)) (*Event, error) {
	if h == nil || h.q == nil {
		return nil, fmt.Errorf("%s: %w: nil pinned memory, or not from NewPinned", op, ErrInvalidArgument)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.freed {
		if h.q.ctx.closed.Load() {
			return nil, fmt.Errorf("%s: pinned memory: %w", op, h.q.ctx.closedError())
		}
		return nil, fmt.Errorf("%s: pinned memory: %w", op, ErrFreed)
	}
	if q != nil && h.q.ctx != q.ctx {
		return nil, fmt.Errorf("%s: %w: pinned memory of another context", op, ErrInvalidArgument)
	}
	m, drv, boff, size, err := b.span(q, op, off, h.n)
	if err != nil {
		return nil, err
	}
	defer m.doneAll()
	if r := q.recorder(); r != nil {
		return nil, q.recordPinned(r, op, kind, drv, boff, size, m, &h.pinnedMem, wait)
	}
	ev, err := q.command(op, kind, func(dw []driver.Event, _ bool) (driver.Event, error) {
		if size == 0 {
			return q.drv.Marker(dw)
		}
		return do(drv, boff, size, h.p, dw)
	}, wait, true, 1)
	if err != nil {
		return nil, err
	}
	q.record(m) // as Buffer.fill's record
	h.pending = append(pruneDone(h.pending), pinnedUse{q: q, ev: ev, pt: q.pts.point()})
	return ev, nil
}

func (q *Queue) drvReadAsync(b driver.Buffer, off, size int64, p unsafe.Pointer, dw []driver.Event) (driver.Event, error) {
	return q.drv.ReadBuffer(b, false, off, size, p, dw)
}

func (q *Queue) drvWriteAsync(b driver.Buffer, off, size int64, p unsafe.Pointer, dw []driver.Event) (driver.Event, error) {
	return q.drv.WriteBuffer(b, false, off, size, p, dw)
}

// done reports whether the transfer is known to have completed, or
// failed.
func (u pinnedUse) done() bool {
	if u.q.pts.done.Load() >= u.pt {
		return true
	}
	if u.ev == nil {
		return false
	}
	s, err := u.ev.status()
	return err == nil && s == driver.StatusComplete || err != nil && !errors.Is(err, ErrReleased)
}

// wait blocks until the transfer has completed and returns its error.
// Without its event (a graph launch, or a transfer whose caller released
// it) wait waits for a marker enqueued after it, on its queue.
func (u pinnedUse) wait() error {
	if u.ev != nil {
		err := u.ev.Wait()
		if !errors.Is(err, ErrReleased) {
			return err
		}
	}
	q := u.q
	if q.pts.done.Load() >= u.pt || !q.hold() { // released: every command on q has completed
		return nil
	}
	defer q.exit()
	n := q.pts.enq.Load()
	ev, err := q.drv.Marker(nil)
	if err != nil {
		return fmt.Errorf("wait for %s on %q: marker: %w", u.name(), q.dev.Name, err)
	}
	defer ev.Release()
	if err := ev.Wait(); err != nil {
		return fmt.Errorf("wait for %s on %q: %w", u.name(), q.dev.Name, err)
	}
	q.pts.complete(n) // the marker came after every point up to n
	return nil
}

// name names the use in errors.
func (u pinnedUse) name() string {
	if u.ev == nil {
		return "a graph launch"
	}
	return u.ev.name
}

// pruneDone drops the transfers that have completed, or failed, from us
// once it has grown past a few.
func pruneDone(us []pinnedUse) []pinnedUse {
	if len(us) < 8 {
		return us
	}
	kept := us[:0]
	for _, u := range us {
		if !u.done() {
			kept = append(kept, u)
		}
	}
	clear(us[len(kept):])
	return kept
}
