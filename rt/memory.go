package rt

// Device memory: Mem and Buffer with their transfers, views, pinned host
// memory, the allocator of each device and its statistics, and the
// storage of device globals.

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/stats"
	"github.com/dgen-go/dgen/rt/trace"
)

// Mem is an untyped region of device memory: the storage behind a Buffer.
// A Mem is freed once; every later use is an error wrapping ErrFreed.
type Mem struct {
	ctx   *Context
	drv   driver.Buffer // nil for a zero-sized region
	size  int64         // bytes usable, at least the buffer's length
	freed atomic.Bool
	// release gives the storage back: to the driver, or to the allocator
	// that handed it out. It is called once.
	release func(*Mem) error
	// h is the allocator's handle of a pooled region; its zero value for
	// memory straight from the driver. pooled is set for the former, whose
	// uses are recorded in uses for stream-ordered reuse (queue.go).
	h      alloc.Allocation
	pooled bool
	uses   useLog
	// parent is the memory a view (Buffer.View) lies in, at byte offset;
	// cleanup releases the view's sub-buffer if it becomes unreachable.
	parent  *Mem
	offset  int64
	cleanup runtime.Cleanup
	// gen counts the Frees of m. A Buffer records it when it is made, so
	// that a Buffer whose memory was freed sees the difference even after
	// the allocator has handed the same Mem out again (allocMem reuses a
	// pooled block's Mem, so that a hit allocates nothing).
	gen atomic.Uint32
	// id names the driver buffer for as long as it lives, and never another:
	// a kernel that skips setting an argument to the buffer it already holds
	// compares ids, since a driver may hand a released buffer's handle to a
	// new one. 0 for a zero-sized region.
	id uint64
}

// bufferIDs numbers driver buffers for Mem.id.
var bufferIDs atomic.Uint64

// Size returns the size of the region in bytes.
func (m *Mem) Size() int64 {
	if m == nil {
		return 0
	}
	return m.size
}

// driverBuffer returns the backend buffer, or an error if m is nil or freed.
func (m *Mem) driverBuffer() (driver.Buffer, error) {
	if m == nil {
		return nil, fmt.Errorf("buffer: %w: nil buffer", ErrInvalidArgument)
	}
	if m.freed.Load() {
		return nil, fmt.Errorf("buffer: %w", ErrFreed)
	}
	if p := m.parent; p != nil && (p.freed.Load() || m.pooled && !m.h.Live()) {
		// A pooled parent's block may be in use again, even through the same
		// Mem: its handle, copied into the view, tells.
		return nil, fmt.Errorf("buffer: %w: the buffer this view lies in was freed", ErrFreed)
	}
	if m.pooled && !m.h.Live() {
		// The allocator took the block back: Context.Close.
		return nil, fmt.Errorf("buffer: %w: %w (released by Close)", ErrClosed, ErrFreed)
	}
	return m.drv, nil
}

// newMem allocates size bytes from the driver, without any pool. The
// allocator and device globals build on it.
func (c *Context) newMem(size int64) (*Mem, error) {
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	if size < 0 {
		return nil, fmt.Errorf("allocate %d bytes: %w: negative size", size, ErrInvalidArgument)
	}
	m := &Mem{ctx: c, size: size, release: releaseToDriver}
	if size == 0 {
		return m, nil
	}
	if max := c.maxAlloc(); size > max {
		// Some drivers (NVIDIA's) accept any size here and fail at first use.
		return nil, fmt.Errorf("allocate %d bytes on %q: %w: the device allocates at most %d bytes at once", size, c.devices[0].Name, ErrOutOfMemory, max)
	}
	drv, err := c.drv.NewBuffer(size)
	if err != nil {
		return nil, fmt.Errorf("allocate %d bytes on %q: %w", size, c.devices[0].Name, err)
	}
	c.driverAllocs.Add(1)
	m.drv, m.id = drv, bufferIDs.Add(1)
	c.traceMem(0, memTrace(m), true)
	return m, nil
}

// maxAlloc returns the largest single allocation every device of the
// context allows.
func (c *Context) maxAlloc() int64 {
	max := int64(1<<63 - 1)
	for _, d := range c.devices {
		if d.MaxAllocSize > 0 && d.MaxAllocSize < max {
			max = d.MaxAllocSize
		}
	}
	return max
}

func releaseToDriver(m *Mem) error {
	if m.drv == nil {
		return nil
	}
	if err := m.drv.Release(); err != nil {
		return fmt.Errorf("release %d bytes: %w", m.size, err)
	}
	m.ctx.driverReleases.Add(1)
	m.ctx.traceMem(0, memTrace(m), false)
	return nil
}

// Free gives the memory back. A second Free returns an error wrapping
// ErrFreed and changes nothing.
func (m *Mem) Free() error {
	if m == nil {
		return fmt.Errorf("free buffer: %w: nil buffer", ErrInvalidArgument)
	}
	if m.freed.Swap(true) {
		return fmt.Errorf("free buffer: %w", ErrFreed)
	}
	m.gen.Add(1)
	return m.release(m)
}

// freedMem stands for the memory of a Buffer that has been freed: every
// use of it is an error wrapping ErrFreed.
var freedMem = func() *Mem {
	m := &Mem{}
	m.freed.Store(true)
	return m
}()

// Buffer is a typed array of n elements of T in device memory. T must be
// plain data (numbers, booleans, arrays and structs of them). A Buffer is a
// small handle: copies refer to the same memory. The zero Buffer is nil.
type Buffer[T any] struct {
	m   *Mem
	n   int
	gen uint32 // m.gen when the buffer was made
}

// bufferOver returns a Buffer of n elements over m.
func bufferOver[T any](m *Mem, n int) Buffer[T] {
	return Buffer[T]{m: m, n: n, gen: m.gen.Load()}
}

// mem returns the buffer's memory: nil for the zero Buffer, freedMem once
// it has been freed.
func (b Buffer[T]) mem() *Mem {
	if b.m != nil && b.m.gen.Load() != b.gen {
		return freedMem
	}
	return b.m
}

// NewBuffer allocates a buffer of n elements of T directly from the driver.
func NewBuffer[T any](c *Context, n int) (Buffer[T], error) {
	size, err := byteSize[T](n)
	if err != nil {
		return Buffer[T]{}, err
	}
	m, err := c.newMem(size)
	if err != nil {
		return Buffer[T]{}, err
	}
	return bufferOver[T](m, n), nil
}

func byteSize[T any](n int) (int64, error) {
	t := reflect.TypeFor[T]()
	if err := checkPlain(t); err != nil {
		return 0, fmt.Errorf("buffer of %v: %w", t, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("buffer of %d %v: %w: negative length", n, t, ErrInvalidArgument)
	}
	es := int64(t.Size())
	if es > 0 && int64(n) > (1<<62)/es {
		return 0, fmt.Errorf("buffer of %d %v: %w: too large", n, t, ErrInvalidArgument)
	}
	return int64(n) * es, nil
}

// Len returns the number of elements.
func (b Buffer[T]) Len() int { return b.n }

// Mem returns the memory behind the buffer; nil for the zero Buffer. The
// Mem stands for the buffer until the buffer is freed: an allocator may
// then hand the same Mem out again, so do not keep it beyond that. A
// freed Buffer's Mem is one whose every use is an error wrapping ErrFreed.
func (b Buffer[T]) Mem() *Mem { return b.mem() }

// Free gives the buffer's memory back. Later uses of b, or of any copy of
// it, and a second Free, return errors wrapping ErrFreed.
func (b Buffer[T]) Free() error { return b.mem().Free() }

func elemSize[T any]() int64 {
	var z T
	return int64(unsafe.Sizeof(z))
}

// span checks that elements [off, off+n) lie in b, and that b may be used on
// q, and returns their byte offset and length.
func (b Buffer[T]) span(q *Queue, op string, off, n int) (driver.Buffer, int64, int64, error) {
	m := b.mem()
	drv, err := m.driverBuffer()
	if err == nil && q != nil {
		err = q.ctx.sameContext("the buffer", m.ctx)
	}
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", op, err)
	}
	if off < 0 || n < 0 || off > b.n || n > b.n-off {
		return nil, 0, 0, fmt.Errorf("%s: %w: elements [%d, %d) of a buffer of %d", op, ErrOutOfRange, off, off+n, b.n)
	}
	es := elemSize[T]()
	return drv, int64(off) * es, int64(n) * es, nil
}

// Write copies src into the buffer from element 0 and waits until it is
// done. src may be shorter than the buffer.
func (b Buffer[T]) Write(q *Queue, src []T, wait ...*Event) error {
	return b.writeAt(q, 0, src, wait, 0)
}

// WriteAt copies src into the buffer from element off and waits until it
// is done. A span outside the buffer is an error wrapping ErrOutOfRange,
// and nothing is written.
func (b Buffer[T]) WriteAt(q *Queue, off int, src []T, wait ...*Event) error {
	return b.writeAt(q, off, src, wait, 0)
}

// writeAt is WriteAt; skip is as for beginTask.
func (b Buffer[T]) writeAt(q *Queue, off int, src []T, wait []*Event, skip int) error {
	drv, boff, size, err := b.span(q, "write buffer", off, len(src))
	if err != nil {
		return err
	}
	x := xfer{op: "write buffer", kind: trace.Write, buf: drv, off: boff, size: size, host: unsafe.Pointer(unsafe.SliceData(src)), mem: b.mem()}
	return q.transfer(x, wait, skip+1)
}

// Read copies the first len(dst) elements of the buffer into dst and waits
// until it is done.
func (b Buffer[T]) Read(q *Queue, dst []T, wait ...*Event) error {
	return b.readAt(q, 0, dst, wait, 0)
}

// ReadAt copies len(dst) elements from element off into dst and waits
// until it is done. A span outside the buffer is an error wrapping
// ErrOutOfRange, and dst is left alone.
func (b Buffer[T]) ReadAt(q *Queue, off int, dst []T, wait ...*Event) error {
	return b.readAt(q, off, dst, wait, 0)
}

// readAt is ReadAt; skip is as for beginTask.
func (b Buffer[T]) readAt(q *Queue, off int, dst []T, wait []*Event, skip int) error {
	drv, boff, size, err := b.span(q, "read buffer", off, len(dst))
	if err != nil {
		return err
	}
	x := xfer{op: "read buffer", kind: trace.Read, buf: drv, off: boff, size: size, host: unsafe.Pointer(unsafe.SliceData(dst))}
	return q.transfer(x, wait, skip+1)
}

// Fill sets every element to v. It returns at once with the command's event.
func (b Buffer[T]) Fill(q *Queue, v T, wait ...*Event) (*Event, error) {
	drv, _, size, err := b.span(q, "fill buffer", 0, b.n)
	if err != nil {
		return nil, err
	}
	pattern := unsafe.Slice((*byte)(unsafe.Pointer(&v)), elemSize[T]())
	if r := q.recorder(); r != nil {
		if size == 0 {
			return nil, nil
		}
		dc := driver.GraphCommand{Kind: driver.GraphFill, Dst: drv, Size: size, Data: bytes.Clone(pattern)}
		return nil, q.recordOp(r, "fill buffer", trace.Fill, dc, []*Mem{b.mem()}, wait, 0)
	}
	ev, err := q.command("fill buffer", trace.Fill, func(dw []driver.Event) (driver.Event, error) {
		if size == 0 {
			return q.drv.Marker(dw)
		}
		return q.drv.FillBuffer(drv, pattern, 0, size, dw)
	}, wait, 0)
	if err == nil {
		q.record(b.mem())
	}
	return ev, err
}

// CopyTo copies the whole buffer to the start of dst, which must be at least
// as long. It returns at once with the command's event.
func (b Buffer[T]) CopyTo(q *Queue, dst Buffer[T], wait ...*Event) (*Event, error) {
	src, _, size, err := b.span(q, "copy buffer", 0, b.n)
	if err != nil {
		return nil, err
	}
	d, _, _, err := dst.span(q, "copy buffer", 0, b.n)
	if err != nil {
		return nil, err
	}
	if r := q.recorder(); r != nil {
		if size == 0 {
			return nil, nil
		}
		dc := driver.GraphCommand{Kind: driver.GraphCopy, Src: src, Dst: d, Size: size}
		return nil, q.recordOp(r, "copy buffer", trace.Copy, dc, []*Mem{b.mem(), dst.mem()}, wait, 0)
	}
	ev, err := q.command("copy buffer", trace.Copy, func(dw []driver.Event) (driver.Event, error) {
		if size == 0 {
			return q.drv.Marker(dw)
		}
		return q.drv.CopyBuffer(src, d, 0, 0, size, dw)
	}, wait, 0)
	if err == nil {
		q.record(b.mem(), dst.mem())
	}
	return ev, err
}

// xfer is a transfer between host and device memory: a value, not a
// closure, so that a blocking transfer allocates nothing.
type xfer struct {
	op   string        // "read buffer", "write device global", ...
	kind trace.CmdKind // trace.Read, trace.Write, trace.GlobalRead or trace.GlobalWrite
	buf  driver.Buffer
	off  int64
	size int64
	host unsafe.Pointer // the host memory read into or written from
	mem  *Mem           // the memory of buf, for a graph that records x
}

// read reports whether x copies from the device to the host.
func (x *xfer) read() bool { return x.kind == trace.Read || x.kind == trace.GlobalRead }

// enqueue enqueues x on q after dw, blocking or not; a blocking transfer
// returns no event.
func (x *xfer) enqueue(q *Queue, dw []driver.Event, blocking bool) (driver.Event, error) {
	if x.read() {
		return q.drv.ReadBuffer(x.buf, blocking, x.off, x.size, x.host, dw)
	}
	return q.drv.WriteBuffer(x.buf, blocking, x.off, x.size, x.host, dw)
}

// transfer runs the blocking transfer x, which creates no event; an empty
// one only waits for wait. When tracing reports device times, transfer
// enqueues it without blocking and waits for its event. skip is as for
// beginTask.
func (q *Queue) transfer(x xfer, wait []*Event, skip int) error {
	if x.size == 0 {
		for _, e := range wait {
			if err := e.Wait(); err != nil {
				return fmt.Errorf("%s: %w", x.op, err)
			}
		}
		return nil
	}
	if err := q.enter(); err != nil {
		return err
	}
	defer q.ctx.exit()
	dw, err := q.driverEvents(wait)
	if err != nil {
		return fmt.Errorf("%s: %w", x.op, err)
	}
	if r := q.rec.Load(); r != nil {
		return r.recordTransfer(q, &x, dw, skip+1)
	}
	tk := q.beginTask(x.kind, x.op, skip+1, wait)
	n := q.pts.enq.Load() // a blocking transfer completes what was enqueued before it
	if q.wantsEvent(tk) {
		err = q.tracedTransfer(&x, tk, dw)
	} else {
		_, err = x.enqueue(q, dw, true)
		tk.End()
		if err != nil {
			err = fmt.Errorf("%s on %q: %w", x.op, q.dev.Name, err)
		}
	}
	tk.Release()
	if err == nil {
		q.pts.complete(n)
	}
	return err
}

// command enqueues one command and wraps its event. kind and skip are as
// for beginTask.
func (q *Queue) command(op string, kind trace.CmdKind, do func([]driver.Event) (driver.Event, error), wait []*Event, skip int) (*Event, error) {
	if err := q.enter(); err != nil {
		return nil, err
	}
	defer q.ctx.exit()
	dw, err := q.driverEvents(wait)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	tk := q.beginTask(kind, op, skip+1, wait)
	ev, err := do(dw)
	tk.End()
	if err != nil {
		return nil, fmt.Errorf("%s on %q: %w", op, q.dev.Name, err)
	}
	return q.newTracedEvent(ev, op, tk), nil
}

// View returns a buffer of n elements of b from element off that shares
// b's memory: an OpenCL sub-buffer. Kernels and transfers use it as any
// other buffer; commands that use it count as uses of b for the
// allocator's stream-ordered reuse. The byte offset of element off must be
// a multiple of every device's MemBaseAddrAlign (128 bytes on PoCL), since
// a kernel argument starts at an aligned address; a span
// outside b is an error wrapping ErrOutOfRange, a misaligned one an error
// wrapping ErrInvalidArgument. A view of a view is a view of the same
// memory.
//
// Free on a view releases the view alone; a view is released when it
// becomes unreachable, too. Using a view after b is freed is an error
// wrapping ErrFreed.
func (b Buffer[T]) View(off, n int) (Buffer[T], error) {
	v, err := b.mem().view(off, n, elemSize[T](), b.n)
	if err != nil {
		return Buffer[T]{}, err
	}
	return bufferOver[T](v, n), nil
}

// view returns the memory of elements [off, off+n) of size es of m, which
// holds length elements.
func (m *Mem) view(off, n int, es int64, length int) (*Mem, error) {
	op := fmt.Sprintf("view of elements [%d, %d)", off, off+n)
	if _, err := m.driverBuffer(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if off < 0 || n < 0 || off > length || n > length-off {
		return nil, fmt.Errorf("%s: %w: buffer of %d elements", op, ErrOutOfRange, length)
	}
	c := m.ctx
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.exit()
	root, boff := m, int64(off)*es
	if m.parent != nil {
		root, boff = m.parent, boff+m.offset
	}
	v := &Mem{ctx: c, size: int64(n) * es, parent: root, offset: boff, h: root.h, pooled: root.pooled, release: releaseView}
	if v.size == 0 {
		return v, nil
	}
	for _, d := range c.devices {
		if a := d.MemBaseAddrAlign; a > 0 && boff%a != 0 {
			return nil, fmt.Errorf("%s: %w: its byte offset %d is not a multiple of %d, the base address alignment of %q (CL_DEVICE_MEM_BASE_ADDR_ALIGN)", op, ErrInvalidArgument, boff, a, d.Name)
		}
	}
	sb, ok := c.drv.(driver.SubBufferContext)
	if !ok {
		return nil, fmt.Errorf("%s: %w: the backend has no sub-buffers", op, errors.ErrUnsupported)
	}
	drv, err := sb.NewSubBuffer(root.drv, boff, v.size)
	if err != nil {
		return nil, fmt.Errorf("%s on %q: %w", op, c.devices[0].Name, err)
	}
	v.drv, v.id = drv, bufferIDs.Add(1)
	v.cleanup = runtime.AddCleanup(v, func(d driver.Buffer) { d.Release() }, drv)
	return v, nil
}

// releaseView releases a view's sub-buffer, not its parent.
func releaseView(m *Mem) error {
	if m.drv == nil {
		return nil
	}
	m.cleanup.Stop()
	if err := m.drv.Release(); err != nil {
		return fmt.Errorf("release view of %d bytes: %w", m.size, err)
	}
	return nil
}

// Pinned is host memory of n elements of T that the device reaches
// directly: an OpenCL buffer allocated with CL_MEM_ALLOC_HOST_PTR and
// mapped once for the host, which on GPUs is page-locked memory that
// transfers copy by DMA, without staging through a driver buffer. Programs
// that transfer every iteration keep their host side in one: pass Slice to
// Buffer.Read and Buffer.Write, or the Pinned itself to ReadAsync and
// WriteAsync, which return before the copy is done. Its methods are safe
// for concurrent use.
type Pinned[T any] struct {
	q   *Queue // maps and unmaps it
	drv driver.Buffer
	p   unsafe.Pointer
	s   []T

	mu      sync.Mutex
	freed   bool
	pending []*Event // asynchronous transfers that may still use it
}

// NewPinned allocates pinned host memory of n elements of T, mapped for
// the host through q, and zeroes it.
func NewPinned[T any](q *Queue, n int) (*Pinned[T], error) {
	size, err := byteSize[T](n)
	if err != nil {
		return nil, fmt.Errorf("pinned memory: %w", err)
	}
	if err := q.enter(); err != nil {
		return nil, err
	}
	defer q.ctx.exit()
	p := &Pinned[T]{q: q}
	if size == 0 {
		return p, nil
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
	p.s = unsafe.Slice((*T)(p.p), n)
	clear(p.s)
	return p, nil
}

// Slice returns the memory as a slice, valid until Free; nil after it. The
// host must not touch the elements an asynchronous transfer is copying
// until its event completes.
func (p *Pinned[T]) Slice() []T {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.s
}

// Free waits for the asynchronous transfers that use the memory, unmaps it
// and releases it. A second Free returns an error wrapping ErrFreed; Free
// after the context's Close, one wrapping ErrClosed (Close has released
// the queue that would unmap it).
func (p *Pinned[T]) Free() error {
	if p == nil {
		return fmt.Errorf("free pinned memory: %w: nil", ErrInvalidArgument)
	}
	if err := p.q.enter(); err != nil {
		return fmt.Errorf("free pinned memory: %w", err)
	}
	defer p.q.ctx.exit()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.freed {
		return fmt.Errorf("free pinned memory: %w", ErrFreed)
	}
	p.freed, p.s = true, nil
	var errs []error
	for _, e := range p.pending {
		errs = append(errs, e.Wait())
	}
	p.pending = nil
	if p.drv != nil {
		if err := p.q.drv.(driver.MapQueue).UnmapBuffer(p.drv, p.p); err != nil {
			errs = append(errs, fmt.Errorf("unmap pinned memory on %q: %w", p.q.dev.Name, err))
		}
		if err := p.drv.Release(); err != nil {
			errs = append(errs, fmt.Errorf("release pinned memory: %w", err))
		}
	}
	return errors.Join(errs...)
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
	if h == nil {
		return nil, fmt.Errorf("%s: %w: nil pinned memory", op, ErrInvalidArgument)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.freed {
		return nil, fmt.Errorf("%s: pinned memory: %w", op, ErrFreed)
	}
	if q != nil && h.q.ctx != q.ctx {
		return nil, fmt.Errorf("%s: %w: pinned memory of another context", op, ErrInvalidArgument)
	}
	drv, boff, size, err := b.span(q, op, off, len(h.s))
	if err != nil {
		return nil, err
	}
	if r := q.recorder(); r != nil {
		return nil, r.refuse(op, "transfers to and from pinned memory are not recorded yet")
	}
	ev, err := q.command(op, kind, func(dw []driver.Event) (driver.Event, error) {
		if size == 0 {
			return q.drv.Marker(dw)
		}
		return do(drv, boff, size, h.p, dw)
	}, wait, 1)
	if err != nil {
		return nil, err
	}
	q.record(b.mem())
	h.pending = append(pruneDone(h.pending), ev)
	return ev, nil
}

func (q *Queue) drvReadAsync(b driver.Buffer, off, size int64, p unsafe.Pointer, dw []driver.Event) (driver.Event, error) {
	return q.drv.ReadBuffer(b, false, off, size, p, dw)
}

func (q *Queue) drvWriteAsync(b driver.Buffer, off, size int64, p unsafe.Pointer, dw []driver.Event) (driver.Event, error) {
	return q.drv.WriteBuffer(b, false, off, size, p, dw)
}

// pruneDone drops the events that have completed, or failed, from evs
// once it has grown past a few.
func pruneDone(evs []*Event) []*Event {
	if len(evs) < 8 {
		return evs
	}
	kept := evs[:0]
	for _, e := range evs {
		if s, err := e.status(); err == nil && s != driver.StatusComplete {
			kept = append(kept, e)
		}
	}
	clear(evs[len(kept):])
	return kept
}

// ErrTooLarge reports an allocation above the device's maximum single
// allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE). No driver call is made.
var ErrTooLarge = alloc.ErrTooLarge

func isOutOfMemory(err error) bool {
	return errors.Is(err, ErrOutOfMemory) || errors.Is(err, alloc.ErrDeviceOutOfMemory)
}

// devAlloc is the allocator of one device of a context, with the queue on
// which it forces new blocks to be resident.
type devAlloc struct {
	ctx *Context
	dev *Device
	q   driver.Queue // private: a residency write never waits for user work
	a   *alloc.Allocator
}

// block is what the allocator holds: a driver buffer, and the Mem that
// allocMem hands out for it, again at every reuse, so that a hit
// allocates nothing on the Go heap (Buffer.gen tells the Buffers of
// earlier uses apart).
type block struct {
	drv driver.Buffer
	mem Mem
}

// Alloc implements alloc.Device: a driver buffer, made resident by a
// 4-byte blocking write so that a lazy driver (NVIDIA commits memory at
// first use) reports exhaustion here rather than in a later kernel.
func (d *devAlloc) Alloc(size int64) (alloc.Block, error) {
	drv, err := d.ctx.drv.NewBuffer(size)
	if err != nil {
		return nil, fmt.Errorf("allocate %d bytes on %q: %w", size, d.dev.Name, err)
	}
	d.ctx.driverAllocs.Add(1)
	var zero uint32
	// A blocking write creates no event.
	if _, err := d.q.WriteBuffer(drv, true, 0, 4, unsafe.Pointer(&zero), nil); err != nil {
		if rerr := drv.Release(); rerr == nil {
			d.ctx.driverReleases.Add(1)
		}
		return nil, fmt.Errorf("make %d bytes resident on %q: %w", size, d.dev.Name, err)
	}
	b := &block{drv: drv}
	b.mem.id = bufferIDs.Add(1) // allocMem keeps it: the block's buffer stays the same
	return b, nil
}

// Release implements alloc.Device.
func (d *devAlloc) Release(b alloc.Block) error {
	if err := b.(*block).drv.Release(); err != nil {
		return fmt.Errorf("release buffer on %q: %w", d.dev.Name, err)
	}
	d.ctx.driverReleases.Add(1)
	return nil
}

// MaxAlloc implements alloc.Device.
func (d *devAlloc) MaxAlloc() int64 { return d.dev.MaxAllocSize }

// allocator returns the allocator of q's device, creating it on first
// use. The caller is inside c.enter, and q is not nil.
func (c *Context) allocator(q *Queue) (*alloc.Allocator, error) {
	slot := &c.allocs[q.dev.index]
	if d := slot.Load(); d != nil {
		return d.a, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := slot.Load(); d != nil {
		return d.a, nil
	}
	if c.closed.Load() {
		return nil, fmt.Errorf("allocate: context: %w", ErrClosed)
	}
	dq, err := c.drv.NewQueue(q.dev.index, false)
	if err != nil {
		return nil, fmt.Errorf("create allocator on %q: queue: %w", q.dev.Name, err)
	}
	d := &devAlloc{ctx: c, dev: q.dev, q: dq}
	cfg := c.allocCfg
	cfg.Hook = allocTracer{c: c, dev: q.dev.index}
	if d.a, err = alloc.New(d, cfg); err != nil {
		dq.Release()
		return nil, fmt.Errorf("create allocator on %q: %w", q.dev.Name, err)
	}
	slot.Store(d)
	return d.a, nil
}

// allocMem allocates size bytes under tag on q's device through its
// allocator.
func allocMem(q *Queue, tag alloc.Tag, size int64) (*Mem, error) {
	if q == nil {
		return nil, fmt.Errorf("allocate %d bytes: %w: nil queue", size, ErrInvalidArgument)
	}
	if err := q.ctx.enter(); err != nil {
		return nil, fmt.Errorf("allocate %d bytes: %w", size, err)
	}
	defer q.ctx.exit()
	a, err := q.ctx.allocator(q)
	if err != nil {
		return nil, err
	}
	h, err := a.AllocOn(q, tag, size)
	if err != nil {
		return nil, fmt.Errorf("allocate %d bytes for %s on %q: %w", size, tagName(uint32(tag)), q.dev.Name, err)
	}
	blk, err := h.Block()
	if err != nil { // cannot happen for a fresh allocation
		return nil, fmt.Errorf("allocate %d bytes for %s on %q: %w", size, tagName(uint32(tag)), q.dev.Name, err)
	}
	b := blk.(*block)
	m := &b.mem
	// m is free: its last Free returned it, with the block, to the allocator.
	m.ctx, m.drv, m.size, m.h, m.pooled, m.release = q.ctx, b.drv, size, h, true, releaseToAllocator
	if q.ctx.multiQueue.Load() {
		m.uses.reset() // with one queue, nothing was recorded
	}
	m.freed.Store(false)
	if r := q.rec.Load(); r != nil {
		r.own(m)
	}
	return m, nil
}

// releaseToAllocator gives m's block back to its allocator with the uses
// recorded on it. After Context.Close the block is gone already and there is
// nothing to do.
func releaseToAllocator(m *Mem) error {
	var buf [4]alloc.Use
	// Once FreeAfter returns, allocMem may hand m out again: read it first.
	ctx, size, uses := m.ctx, m.size, m.uses.appendTo(buf[:0])
	err := m.h.FreeAfter(uses)
	if err != nil && ctx.closed.Load() && errors.Is(err, alloc.ErrFreed) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("free %d bytes: %w", size, err)
	}
	return nil
}

// Alloc allocates a buffer of n elements of T under the site's tag on q's
// device. It is served from the tag's free block when that block holds
// between n and 2n elements' worth of bytes, and otherwise from the driver,
// the new block made resident at once so that out of memory shows here
// (errors.Is(err, ErrOutOfMemory), after held blocks were released and the
// allocation retried). A request above the device's maximum allocation is an
// error wrapping ErrTooLarge; a site that dgen did not register is one
// wrapping ErrNotGenerated. Free gives the buffer back to the tag's free list.
func (s *AllocSite[T]) Alloc(q *Queue, n int) (Buffer[T], error) {
	info, err := s.registration()
	if err != nil {
		return Buffer[T]{}, fmt.Errorf("allocate %d elements: %w", n, err)
	}
	size, err := byteSize[T](n)
	if err != nil {
		return Buffer[T]{}, fmt.Errorf("allocate for %s: %w", info.Name, err)
	}
	m, err := allocMem(q, alloc.Tag(info.Tag()), size)
	if err != nil {
		return Buffer[T]{}, err
	}
	return bufferOver[T](m, n), nil
}

// Alloc allocates an untagged buffer of n elements of T on q's device
// from the allocator's size-class pool (or, under the "tagged"
// Config.AllocPolicy, from the driver). Free gives it back to the pool.
// Errors are as for AllocSite.Alloc. NewBuffer, by contrast, always asks the driver.
func Alloc[T any](q *Queue, n int) (Buffer[T], error) {
	size, err := byteSize[T](n)
	if err != nil {
		return Buffer[T]{}, fmt.Errorf("allocate: %w", err)
	}
	m, err := allocMem(q, alloc.NoTag, size)
	if err != nil {
		return Buffer[T]{}, err
	}
	return bufferOver[T](m, n), nil
}

// allocStats returns the context's allocator statistics (Stats).
func (c *Context) allocStats() stats.Alloc {
	var s stats.Alloc
	if c == nil {
		return s
	}
	for i := range c.allocs {
		if d := c.allocs[i].Load(); d != nil {
			s.Devices = append(s.Devices, stats.DeviceAlloc{Device: d.dev.Name, Index: d.dev.index, Stats: d.a.Stats()})
		}
	}
	s.Devices = c.addImageStats(s.Devices) // imagealloc.go
	s.DriverAllocs = c.driverAllocs.Load()
	s.DriverReleases = c.driverReleases.Load()
	return s
}

// ReleaseHeld gives every block held in the allocators' free lists back to
// the driver. Buffers in use are not affected.
func (c *Context) ReleaseHeld() error {
	if c == nil {
		return fmt.Errorf("release held memory: %w: nil context", ErrInvalidArgument)
	}
	var errs []error
	for i := range c.allocs {
		if d := c.allocs[i].Load(); d != nil {
			if err := d.a.ReleaseAll(); err != nil {
				errs = append(errs, fmt.Errorf("release held memory on %q: %w", d.dev.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// closeAllocators releases every allocator's blocks, held or in use, and
// its queue. Called by Close with c.closed set.
func (c *Context) closeAllocators() []error {
	c.mu.Lock() // no allocator is being created
	c.mu.Unlock()
	var errs []error
	for i := range c.allocs {
		d := c.allocs[i].Load()
		if d == nil {
			continue
		}
		if err := d.a.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close context: allocator on %q: %w", d.dev.Name, err))
		}
		if err := d.q.Finish(); err != nil {
			errs = append(errs, fmt.Errorf("close context: allocator queue on %q: %w", d.dev.Name, err))
		}
		if err := d.q.Release(); err != nil {
			errs = append(errs, fmt.Errorf("close context: allocator queue on %q: %w", d.dev.Name, err))
		}
	}
	return errs
}

var _ alloc.Device = (*devAlloc)(nil)

// allocSlot is one device's lazily created allocator.
type allocSlot = atomic.Pointer[devAlloc]

// allocTracer reports the allocator's decisions as memory events: driver
// allocations and releases, and reuses from the free list (Pooled).
type allocTracer struct {
	c   *Context
	dev int
}

// report reports e as a memory event, if memory events have a subscriber.
func (h allocTracer) report(e alloc.Event, pooled, alloc bool) {
	if !h.c.devices[h.dev].tr.MemTraced() {
		return
	}
	m := trace.Mem{Tag: uint64(e.Tag), Size: e.BlockSize, Pooled: pooled, TagName: tagName(uint32(e.Tag))}
	h.c.traceMem(h.dev, m, alloc)
}

// DriverAlloc implements alloc.Hook.
func (h allocTracer) DriverAlloc(e alloc.Event) { h.report(e, false, true) }

// Reuse implements alloc.Hook.
func (h allocTracer) Reuse(e alloc.Event) { h.report(e, true, true) }

// DriverRelease implements alloc.Hook.
func (h allocTracer) DriverRelease(e alloc.Event) { h.report(e, false, false) }

// hostGlobal calls use with the host memory of g, an image-scope global in
// no program, in c: one zero-initialised value per context, as the storage
// of a global in a program is one per context and device.
func (c *Context) hostGlobal(g *desc.Global, use func([]byte)) {
	c.decls.mu.Lock()
	defer c.decls.mu.Unlock()
	h, ok := c.decls.host[g]
	if !ok {
		if c.decls.host == nil {
			c.decls.host = make(map[*desc.Global][]byte)
		}
		h = make([]byte, g.Size())
		c.decls.host[g] = h
	}
	use(h)
}

// globalMem returns the storage of g on q's device: one zero-initialised
// buffer per (global, device), or per (global, program, device) for image
// scope. prog is the program whose image holds an image-scope global. The
// declarations' lock is not held while the storage is allocated and
// zeroed (a blocking write): the first caller for a key makes it, later
// ones wait for that key alone. A failure is returned to the callers that
// waited, and the next call tries again.
func (q *Queue) globalMem(g *desc.Global, prog *desc.Program) (*Mem, error) {
	// Close waits for the call, so that every slot is done when it frees
	// them.
	if err := q.enter(); err != nil {
		return nil, err
	}
	defer q.ctx.exit()
	c := q.ctx
	if !g.ImageScope {
		prog = nil
	}
	key := globalKey{g: g, prog: prog, dev: q.dev.index}
	c.decls.mu.Lock()
	s, ok := c.decls.globals[key]
	if !ok {
		if c.decls.globals == nil {
			c.decls.globals = make(map[globalKey]*globalSlot)
		}
		s = &globalSlot{done: make(chan struct{})}
		c.decls.globals[key] = s
	}
	c.decls.mu.Unlock()
	if ok {
		<-s.done
		return s.m, s.err
	}
	s.m, s.err = q.newGlobalMem(g)
	if s.err != nil {
		c.decls.mu.Lock()
		delete(c.decls.globals, key)
		c.decls.mu.Unlock()
	}
	close(s.done)
	return s.m, s.err
}

// newGlobalMem allocates and zeroes the storage of g on q's device.
func (q *Queue) newGlobalMem(g *desc.Global) (*Mem, error) {
	size := max(g.Size(), 4)
	m, err := q.ctx.newMem(size)
	if err != nil {
		return nil, fmt.Errorf("storage of device global %s: %w", g.ID, err)
	}
	zero := make([]byte, size)
	// A blocking write creates no event.
	if _, err := q.drv.WriteBuffer(m.drv, true, 0, size, unsafe.Pointer(&zero[0]), nil); err != nil {
		m.Free()
		return nil, fmt.Errorf("zero device global %s on %q: %w", g.ID, q.dev.Name, err)
	}
	return m, nil
}

// declState is a context's storage of device globals.
type declState struct {
	mu      sync.Mutex
	globals map[globalKey]*globalSlot
	host    map[*desc.Global][]byte // image-scope globals in no program, in host memory
}

type globalKey struct {
	g    *desc.Global
	prog *desc.Program // nil unless image scope
	dev  int
}

// globalSlot is the storage of one global on one device, made once: the
// goroutine that made the slot allocates and zeroes it outside the
// declarations' lock, and others wait for it on done.
type globalSlot struct {
	done chan struct{}
	m    *Mem
	err  error
}

// releaseDecls frees the storage of device globals. Close calls it once
// no call is in progress, so no slot is being made.
func (c *Context) releaseDecls() error {
	c.decls.mu.Lock()
	defer c.decls.mu.Unlock()
	var errs []error
	for _, s := range c.decls.globals {
		if s.m != nil {
			errs = append(errs, s.m.Free())
		}
	}
	c.decls.globals, c.decls.host = nil, nil
	return errors.Join(errs...)
}

// checkPlain returns an error unless t is plain data that can be copied to a
// device byte for byte: booleans, numbers, and arrays and structs of them.
// Pointers, slices, maps, strings, interfaces, channels and functions are not.
func checkPlain(t reflect.Type) error {
	switch t.Kind() {
	case reflect.Bool, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return nil
	case reflect.Array:
		if err := checkPlain(t.Elem()); err != nil {
			return fmt.Errorf("array element of %v: %w", t, err)
		}
		return nil
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if err := checkPlain(f.Type); err != nil {
				return fmt.Errorf("field %s of %v: %w", f.Name, t, err)
			}
		}
		return nil
	}
	return fmt.Errorf("%w: %v is not plain data (a %s)", ErrInvalidArgument, t, t.Kind())
}
