package rt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/internal/desc"
	"github.com/dgen-go/dgen/rt/stats"
	"github.com/dgen-go/dgen/rt/trace"
)

// Device memory: Mem and Buffer with their transfers, views, pinned host
// memory, the allocator of each device and its statistics, and the
// storage of device globals.

// Mem is an untyped region of device memory: the storage behind a Buffer,
// which Buffer.Mem returns. It is what code that handles buffers of
// several element types alike passes (rt/raw's Kernel.SetBuffer,
// generated code, a list of buffers to free). A Mem is freed once; every
// later use is an error wrapping ErrFreed.
//
// The fields that a launch reads come first, so that they share a cache
// line or two: between two launches the driver's own work evicts them.
type Mem struct {
	// gen counts the Frees of m. A Buffer records it when it is made, so
	// that a Buffer whose memory was freed sees the difference even after
	// the allocator has handed the same Mem out again (allocMem reuses a
	// pooled block's Mem, so that a hit allocates nothing).
	gen   atomic.Uint32
	freed atomic.Bool
	// pooled is set for memory from an allocator, whose handle is h and
	// whose uses are recorded in uses for stream-ordered reuse (queue.go).
	pooled bool
	// native is set where handle is drv's driver.NativeBuffer handle, what
	// a kernel argument holds: read once, not at every launch.
	native bool
	handle uint64
	// id names the driver buffer for as long as it lives, and never another:
	// a kernel that skips setting an argument to the buffer it already holds
	// compares ids, since a driver may hand a released buffer's handle to a
	// new one. 0 for a zero-sized region.
	id uint64
	// parent is the memory a view (Buffer.View) lies in, at byte offset;
	// cleanup releases the view's sub-buffer if it becomes unreachable.
	parent *Mem
	ctx    *Context
	drv    driver.Buffer // nil for a zero-sized region
	// h is the allocator's handle of a pooled region; its zero value for
	// memory straight from the driver.
	h       alloc.Allocation
	size    int64 // bytes usable, at least the buffer's length
	offset  int64
	uses    useLog
	cleanup runtime.Cleanup
	// release gives the storage back: to the driver, or to the allocator
	// that handed it out. It is called once.
	release func(*Mem) error
}

// setDriver makes drv, a new driver buffer, m's, under a new id.
func (m *Mem) setDriver(drv driver.Buffer) {
	m.drv, m.id = drv, bufferIDs.Add(1)
	if nb, ok := drv.(driver.NativeBuffer); ok {
		m.handle, m.native = nb.Handle(), true
	}
}

// bufferIDs numbers driver buffers for Mem.id.
var bufferIDs atomic.Uint64

// usable reports whether m's driver buffer may be used: m is not freed,
// nor the buffer a view of it lies in, nor taken back by its allocator.
// driverBuffer says which when it is not.
func (m *Mem) usable() bool {
	if m.freed.Load() || m.pooled && !m.h.Live() {
		return false
	}
	return m.parent == nil || !m.parent.freed.Load()
}

// driverBuffer returns the backend buffer, or an error if m is nil or freed.
func (m *Mem) driverBuffer() (driver.Buffer, error) {
	if m == nil {
		return nil, fmt.Errorf("buffer: %w: nil buffer", ErrInvalidArgument)
	}
	if m.usable() {
		return m.drv, nil
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
	m.setDriver(drv)
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
	if !isNumber[T]() { // numbers, the common case, need no reflect
		t := reflect.TypeFor[T]()
		if err := checkPlain(t); err != nil {
			return 0, fmt.Errorf("buffer of %v: %w", t, err)
		}
	}
	es := elemSize[T]()
	if n < 0 {
		return 0, fmt.Errorf("buffer of %d %v: %w: negative length", n, reflect.TypeFor[T](), ErrInvalidArgument)
	}
	if es > 0 && int64(n) > (1<<62)/es {
		return 0, fmt.Errorf("buffer of %d %v: %w: too large", n, reflect.TypeFor[T](), ErrInvalidArgument)
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
	return q.transferEntered(x, wait, skip+1)
}

// transferEntered is transfer for a caller inside q's enter (x.size is
// not 0); skip is as for beginTask.
func (q *Queue) transferEntered(x xfer, wait []*Event, skip int) error {
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
		tk.Release()
	} else {
		_, err = x.enqueue(q, dw, true)
		tk.EndRelease()
		if err != nil {
			err = fmt.Errorf("%s on %q: %w", x.op, q.dev.Name, err)
		}
	}
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
	v.setDriver(drv)
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
	pending []pinnedUse // asynchronous transfers that may still use it
}

// pinnedUse is an asynchronous transfer that uses pinned memory: its
// event, which the caller may release, and its point on the event's
// queue, which tells when it has completed all the same.
type pinnedUse struct {
	ev *Event
	pt uint64
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

// Free waits for the asynchronous transfers that use the memory (those
// whose events were released too), unmaps it and releases it. A second
// Free returns an error wrapping ErrFreed; Free after the context's Close,
// one wrapping ErrClosed (Close has released the queue that would unmap
// it).
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
	for _, u := range p.pending {
		errs = append(errs, u.wait())
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
	h.pending = append(pruneDone(h.pending), pinnedUse{ev: ev, pt: q.pts.point()})
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
	if u.ev.q.pts.done.Load() >= u.pt {
		return true
	}
	s, err := u.ev.status()
	return err == nil && s == driver.StatusComplete || err != nil && !errors.Is(err, ErrReleased)
}

// wait blocks until the transfer has completed and returns its error. The
// caller may have released its event: then wait waits for a marker
// enqueued after it, on its queue.
func (u pinnedUse) wait() error {
	err := u.ev.Wait()
	if !errors.Is(err, ErrReleased) {
		return err
	}
	q := u.ev.q
	if q.pts.done.Load() >= u.pt {
		return nil
	}
	n := q.pts.enq.Load()
	ev, err := q.drv.Marker(nil)
	if err != nil {
		return fmt.Errorf("wait for %s on %q: marker: %w", u.ev.name, q.dev.Name, err)
	}
	defer ev.Release()
	if err := ev.Wait(); err != nil {
		return fmt.Errorf("wait for %s on %q: %w", u.ev.name, q.dev.Name, err)
	}
	q.pts.complete(n) // the marker came after every point up to n
	return nil
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
	b.mem.setDriver(drv) // allocMem keeps it: the block's buffer stays the same
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
	cfg.Hook = allocTracer{q.dev.tr}
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
	s.Devices = c.addImageStats(s.Devices) // images of allocation sites, below
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

// allocTracer reports the allocator's decisions as memory events of its
// device's trace handle: driver allocations and releases, and reuses from
// the free list (Pooled). It is one pointer, which an alloc.Hook holds
// without a copy.
type allocTracer struct{ tr *trace.Device }

// mem describes e as a memory event; pooled is set for the free list.
func (h allocTracer) mem(e *alloc.Event, pooled bool) trace.Mem {
	return trace.Mem{Tag: uint64(e.Tag), Size: e.BlockSize, Pooled: pooled, TagName: tagName(uint32(e.Tag))}
}

// DriverAlloc implements alloc.Hook.
func (h allocTracer) DriverAlloc(e alloc.Event) {
	if h.tr.MemTraced() {
		h.tr.MemAlloc(h.mem(&e, false))
	}
}

// Reuse implements alloc.Hook: the allocation's memory event, if memory
// events have a subscriber, in one frame below the allocator's.
func (h allocTracer) Reuse(e alloc.Event) {
	if h.tr.MemTraced() {
		h.tr.MemAlloc(h.mem(&e, true))
	}
}

// DriverRelease implements alloc.Hook.
func (h allocTracer) DriverRelease(e alloc.Event) {
	if h.tr.MemTraced() {
		h.tr.MemRelease(h.mem(&e, false))
	}
}

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
	if !g.ImageScope {
		prog = nil
	}
	if h := q.global.Load(); h != nil && h.g == g && h.prog == prog {
		return h.m, nil
	}
	m, err := q.globalSlot(g, prog)
	if err == nil {
		q.global.Store(&globalHit{g: g, prog: prog, m: m})
	}
	return m, err
}

// globalHit is a device global's storage on a queue's device.
type globalHit struct {
	g    *desc.Global
	prog *desc.Program // the program of an image-scope global, else nil
	m    *Mem
}

// globalSlot is globalMem's lookup in the context's table of storage,
// called inside enter.
func (q *Queue) globalSlot(g *desc.Global, prog *desc.Program) (*Mem, error) {
	c := q.ctx
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

// isNumber reports whether T is one of Go's numeric types, which are plain
// data.
func isNumber[T any]() bool {
	var z T
	switch any(z).(type) {
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64, complex64, complex128:
		return true
	}
	return false
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

// Images. An image is device memory with a pixel format that kernels read
// through image read functions (and samplers) and write with image write
// functions. One handle type, Image, holds any of the six image types of
// OpenCL C; its ImageDesc.Kind says which, and a kernel parameter of
// another type refuses it when the argument is set. Its memory is a Mem
// like a buffer's: freed once, counted, traced and, from an allocation
// site, reused in stream order.

// ImageDesc describes an image: its type, its pixel format, its size in
// pixels and what kernels may do with it.
//
// Kind is the OpenCL C image type that the image is: "image1d_t",
// "image1d_buffer_t", "image1d_array_t", "image2d_t", "image2d_array_t"
// or "image3d_t". It is required. A kernel parameter of another type
// refuses the image: the launch returns an error wrapping
// ErrInvalidArgument.
//
// Order and Type are the channel order and channel data type as OpenCL
// names them without the CL_ prefix: Order "R", "RG", "RGBA", "BGRA",
// "LUMINANCE", ...; Type "UNORM_INT8", "UNSIGNED_INT16", "FLOAT",
// "HALF_FLOAT", ... An image is created only in a format that the device
// lists for its kind and access; another is an error wrapping
// errors.ErrUnsupported that lists the formats the device has.
//
// Width is the size of every kind; Height that of the 2D and 3D kinds,
// Depth that of image3d_t, Layers the array size of image1d_array_t and
// image2d_array_t. Sizes that a kind does not have are left 0.
//
// Access is what kernels may do: "read_write" (also when empty),
// "read_only" or "write_only", as the OpenCL C qualifiers say it. A
// kernel parameter whose qualifier the image does not allow is an error
// when the argument is set. The host may read and write any image.
//
// Buffer is the memory of an image1d_buffer_t, which lies over a buffer:
// its pixels are the buffer's bytes (Buffer.Mem).
type ImageDesc struct {
	Kind                         string
	Order, Type                  string
	Width, Height, Depth, Layers int
	Access                       string
	Buffer                       *Mem
}

// Image is an image of any of OpenCL C's six image types (ImageDesc.Kind).
// The zero Image is no image; handles are copied freely and refer to the
// same image. Transfers (Read, Write) block until they are done; CopyTo
// and Fill return at once with the command's event.
type Image struct{ h *imageHandle }

// Desc returns the image's description; the zero ImageDesc for the zero
// image.
func (i Image) Desc() ImageDesc { return i.h.Desc() }

// Free gives the image's memory back (to the allocation site's free list
// for an image from AllocImage). Later uses of the image, and a second
// Free, are errors wrapping ErrFreed.
func (i Image) Free() error { return i.h.free() }

// Read copies the box r of the image into dst after wait and returns when
// it is done. dst is a slice of plain data laid out with r's pitches, or an
// *image.RGBA, *image.Gray, *image.RGBA64 or *image.Gray16 with the box's
// size and the image's channel count, filled in place when its pixels are
// the image's (8-bit channels), else converted from 8- or 16-bit integer or
// FLOAT channels (floats in [0, 1] scale to the integer range). See
// ImageRegion for the box and the errors.
func (i Image) Read(q *Queue, r ImageRegion, dst any, wait ...*Event) error {
	return i.h.transfer(q, true, r, dst, wait, 0)
}

// Write copies src into the box r of the image after wait and returns when
// it is done; src is as Read's dst.
func (i Image) Write(q *Queue, r ImageRegion, src any, wait ...*Event) error {
	return i.h.transfer(q, false, r, src, wait, 0)
}

// CopyTo copies the box r of the image to dst, which has the same format
// and may be of another kind (a 2D image into a slice of a 3D one), at
// dstOrigin.
func (i Image) CopyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait ...*Event) (*Event, error) {
	return i.h.copyTo(q, dst, r, dstOrigin, wait, 0)
}

// Fill sets every pixel of the box r to color, whose values are converted
// as write_imagef (normalized and float types), write_imagei (signed) or
// write_imageui (unsigned) would.
func (i Image) Fill(q *Queue, r ImageRegion, color [4]float64, wait ...*Event) (*Event, error) {
	return i.h.fill(q, r, color, wait, 0)
}

// imageKinds maps ImageDesc.Kind to the driver's kinds.
var imageKinds = map[string]driver.ImageKind{
	"image1d_t": driver.Image1D, "image1d_buffer_t": driver.Image1DBuffer, "image1d_array_t": driver.Image1DArray,
	"image2d_t": driver.Image2D, "image2d_array_t": driver.Image2DArray, "image3d_t": driver.Image3D,
}

// imageKind returns the driver kind that ImageDesc.Kind names.
func imageKind(kind string) (driver.ImageKind, error) {
	if k, ok := imageKinds[kind]; ok {
		return k, nil
	}
	return 0, fmt.Errorf("%w: image kind %q: want image1d_t, image1d_buffer_t, image1d_array_t, image2d_t, image2d_array_t or image3d_t", ErrInvalidArgument, kind)
}

// imageHandle is one image as long as it is not freed: its memory, the
// Mem's generation when it was handed out (as a Buffer keeps it), and
// what the image is.
type imageHandle struct {
	m     *Mem
	gen   uint32
	desc  ImageDesc
	kind  driver.ImageKind
	dims  [3]int // width, height or layers, depth or layers: the extent of a region
	px    int64  // bytes per pixel
	chans int    // channels per pixel, 0 for a packed format
	acc   driver.MemAccess
}

// mem returns the image's memory: freedMem once it has been freed, and nil
// for the zero image.
func (h *imageHandle) mem() *Mem {
	if h == nil {
		return nil
	}
	if h.m.gen.Load() != h.gen {
		return freedMem
	}
	return h.m
}

// Desc returns the description of the image; the zero ImageDesc for the
// zero image.
func (h *imageHandle) Desc() ImageDesc {
	if h == nil {
		return ImageDesc{}
	}
	return h.desc
}

// free gives the image's memory back; later uses are errors wrapping
// ErrFreed.
func (h *imageHandle) free() error {
	if h == nil {
		return fmt.Errorf("free image: %w: zero image", ErrInvalidArgument)
	}
	err := h.mem().Free()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrFreed):
		return fmt.Errorf("free image: %w", ErrFreed)
	}
	return fmt.Errorf("free image: %w", err)
}

// accesses are the values of ImageDesc.Access.
var accesses = map[string]driver.MemAccess{"": driver.ReadWrite, "read_write": driver.ReadWrite, "read_only": driver.ReadOnly, "write_only": driver.WriteOnly}

var accessNames = [...]string{driver.ReadWrite: "read_write", driver.ReadOnly: "read_only", driver.WriteOnly: "write_only"}

// describe checks d and returns the handle that the image will have,
// without its memory.
func describe(d ImageDesc) (*imageHandle, error) {
	k, err := imageKind(d.Kind)
	if err != nil {
		return nil, err
	}
	acc, ok := accesses[d.Access]
	if !ok {
		return nil, fmt.Errorf("%w: access %q: want read_write, read_only or write_only", ErrInvalidArgument, d.Access)
	}
	d.Access = accessNames[acc]
	px, chans, err := pixelSize(d.Order, d.Type)
	if err != nil {
		return nil, err
	}
	h := &imageHandle{desc: d, kind: k, px: px, chans: chans, acc: acc}
	w, ht, dp, l := d.Width, d.Height, d.Depth, d.Layers
	var extra []string
	switch k {
	case driver.Image1D, driver.Image1DBuffer:
		h.dims = [3]int{w, 1, 1}
		extra = nonzero(map[string]int{"Height": ht, "Depth": dp, "Layers": l})
	case driver.Image1DArray:
		h.dims = [3]int{w, l, 1}
		extra = nonzero(map[string]int{"Height": ht, "Depth": dp})
	case driver.Image2D:
		h.dims = [3]int{w, ht, 1}
		extra = nonzero(map[string]int{"Depth": dp, "Layers": l})
	case driver.Image2DArray:
		h.dims = [3]int{w, ht, l}
		extra = nonzero(map[string]int{"Depth": dp})
	case driver.Image3D:
		h.dims = [3]int{w, ht, dp}
		extra = nonzero(map[string]int{"Layers": l})
	}
	if len(extra) > 0 {
		return nil, fmt.Errorf("%w: %s has no %s", ErrInvalidArgument, k, strings.Join(extra, " or "))
	}
	for i, n := range h.dims {
		if n <= 0 {
			return nil, fmt.Errorf("%w: %s of %s (%s): every size must be positive", ErrInvalidArgument, [3]string{"width", "height or layers", "depth or layers"}[i], k, sizeString(h.dims))
		}
	}
	if (k == driver.Image1DBuffer) != (d.Buffer != nil) {
		return nil, fmt.Errorf("%w: %s: ImageDesc.Buffer is set for an image1d_buffer_t and only for one", ErrInvalidArgument, k)
	}
	return h, nil
}

// nonzero returns the names of the non-zero values of m, sorted.
func nonzero(m map[string]int) []string {
	var s []string
	for k, v := range m {
		if v != 0 {
			s = append(s, k)
		}
	}
	slices.Sort(s)
	return s
}

func sizeString(d [3]int) string { return fmt.Sprintf("%d×%d×%d", d[0], d[1], d[2]) }

// bytes returns the size of the image's pixels in bytes.
func (h *imageHandle) bytes() int64 {
	return int64(h.dims[0]) * int64(h.dims[1]) * int64(h.dims[2]) * h.px
}

// driverDesc returns the driver's description of the image.
func (h *imageHandle) driverDesc() driver.ImageDesc {
	d := h.desc
	dd := driver.ImageDesc{Kind: h.kind, Format: driver.ImageFormat{Order: d.Order, Type: d.Type},
		Width: d.Width, Height: d.Height, Depth: d.Depth, Layers: d.Layers, Access: h.acc}
	if d.Buffer != nil {
		dd.Buffer = d.Buffer.drv
	}
	return dd
}

// imageState is a context's image machinery: the formats each device
// supports, the samplers made so far and the free lists of images from
// allocation sites. It is released by Close.
type imageState struct {
	mu       sync.Mutex
	formats  map[formatKey][]driver.ImageFormat
	samplers map[Sampler]*samplerObject
	pools    map[poolKey]*alloc.Allocator
}

type formatKey struct {
	kind driver.ImageKind
	acc  driver.MemAccess
}

// imageContext returns the context's driver as an ImageContext, or an
// error wrapping errors.ErrUnsupported.
func (c *Context) imageContext(op string) (driver.ImageContext, error) {
	ic, ok := c.drv.(driver.ImageContext)
	if !ok {
		return nil, fmt.Errorf("%s: %w: the backend has no images", op, errors.ErrUnsupported)
	}
	return ic, nil
}

// checkFormat checks that the context's devices support h's format for
// its kind and access; the error lists what they support.
func (c *Context) checkFormat(ic driver.ImageContext, h *imageHandle) error {
	key := formatKey{h.kind, h.acc}
	c.images.mu.Lock()
	fs, ok := c.images.formats[key]
	c.images.mu.Unlock()
	if !ok {
		var err error
		if fs, err = ic.ImageFormats(h.kind, h.acc); err != nil {
			return fmt.Errorf("list image formats: %w", err)
		}
		c.images.mu.Lock()
		if c.images.formats == nil {
			c.images.formats = map[formatKey][]driver.ImageFormat{}
		}
		c.images.formats[key] = fs
		c.images.mu.Unlock()
	}
	want := driver.ImageFormat{Order: h.desc.Order, Type: h.desc.Type}
	if slices.Contains(fs, want) {
		return nil
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.String()
	}
	slices.Sort(names)
	if len(names) == 0 {
		names = []string{"none"}
	}
	return fmt.Errorf("%w: format %s is not one that %s supports for %s %s images (it supports %s)",
		errors.ErrUnsupported, want, c.deviceLabel(), h.desc.Access, h.kind, strings.Join(names, ", "))
}

// newImageHandle checks d on c and returns the handle of the image to
// create.
func (c *Context) newImageHandle(op string, d ImageDesc) (driver.ImageContext, *imageHandle, error) {
	ic, err := c.imageContext(op)
	if err != nil {
		return nil, nil, err
	}
	h, err := describe(d)
	if err == nil && d.Buffer != nil {
		err = c.checkImageBuffer(h)
	}
	if err == nil {
		err = c.checkFormat(ic, h)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	return ic, h, nil
}

// checkImageBuffer checks the buffer of an image1d_buffer_t.
func (c *Context) checkImageBuffer(h *imageHandle) error {
	m := h.desc.Buffer
	if _, err := m.driverBuffer(); err != nil {
		return err
	}
	if err := c.sameContext("the image's buffer", m.ctx); err != nil {
		return err
	}
	if m.parent != nil {
		return fmt.Errorf("%w: an image cannot lie over a view", ErrInvalidArgument)
	}
	if m.pooled {
		// The allocator could hand the block out again while the image lives.
		return fmt.Errorf("%w: an image lies over a buffer from NewBuffer, not from an allocator", ErrInvalidArgument)
	}
	if m.size < h.bytes() {
		return fmt.Errorf("%w: the buffer has %d bytes, the image needs %d", ErrOutOfRange, m.size, h.bytes())
	}
	return nil
}

// NewImage creates an image as d describes, straight from the driver:
// Free releases it. A format the device lacks is an error wrapping
// errors.ErrUnsupported that lists the formats it has; a kind that
// ImageDesc does not name, and sizes that do not fit the kind, are errors
// wrapping ErrInvalidArgument.
func NewImage(c *Context, d ImageDesc) (Image, error) {
	op := "create " + imageOp(d.Kind)
	if err := c.enter(); err != nil {
		return Image{}, fmt.Errorf("%s: %w", op, err)
	}
	defer c.exit()
	ic, h, err := c.newImageHandle(op, d)
	if err != nil {
		return Image{}, err
	}
	drv, err := ic.NewImage(h.driverDesc())
	if err != nil {
		return Image{}, fmt.Errorf("%s %s %s on %s: %w", op, sizeString(h.dims), d.Order+"/"+d.Type, c.deviceLabel(), err)
	}
	c.driverAllocs.Add(1)
	// An image1d_buffer_t is a view of its buffer: freeing the buffer ends it.
	h.m = &Mem{ctx: c, size: h.bytes(), release: releaseToDriver, parent: d.Buffer}
	h.m.setDriver(drv)
	c.traceMem(0, memTrace(h.m), true)
	return Image{h}, nil
}

// imageOp names an image of kind in an operation: its kind, or "image"
// when the kind is not one.
func imageOp(kind string) string {
	if _, ok := imageKinds[kind]; ok {
		return kind
	}
	return "image"
}

// closeImages releases the samplers and the images held for allocation
// sites. Called by Close with c.closed set, after the queues have drained.
func (c *Context) closeImages() []error {
	c.images.mu.Lock()
	defer c.images.mu.Unlock()
	var errs []error
	for _, a := range c.images.pools {
		if err := a.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close context: images: %w", err))
		}
	}
	for _, err := range c.releaseSamplers() {
		errs = append(errs, fmt.Errorf("close context: %w", err))
	}
	c.images.pools = nil
	return errs
}

// Images from allocation sites. Each device has one allocator per kind,
// format, size and access of image, so that a tag's free block is always
// an image of the request's shape: the free list is keyed by tag, kind,
// format and dimensions, and the allocator's stream-ordered reuse,
// statistics hooks and Close serve images as they serve buffers.

// poolKey is the shape of images that one allocator holds, on one device.
type poolKey struct {
	dev             int
	kind            driver.ImageKind
	fmt             driver.ImageFormat
	w, h, d, layers int
	acc             driver.MemAccess
}

// imageDevice is the alloc.Device of one poolKey: it creates the images.
type imageDevice struct {
	devAlloc // Completed and Order
	ic       driver.ImageContext
	desc     driver.ImageDesc
}

// Alloc implements alloc.Device.
func (d *imageDevice) Alloc(size int64) (alloc.Block, error) {
	drv, err := d.ic.NewImage(d.desc)
	if err != nil {
		return nil, fmt.Errorf("create %s on %q: %w", d.desc.Kind, d.dev.Name, err)
	}
	d.ctx.driverAllocs.Add(1)
	b := &block{drv: drv}
	b.mem.setDriver(drv)
	return b, nil
}

// MaxAlloc implements alloc.Device: the driver checks an image's size.
func (d *imageDevice) MaxAlloc() int64 { return 0 }

// imagePool returns the allocator of images of h's shape on q's device.
func (c *Context) imagePool(q *Queue, ic driver.ImageContext, h *imageHandle) (*alloc.Allocator, error) {
	dd := h.driverDesc()
	key := poolKey{dev: q.dev.index, kind: h.kind, fmt: dd.Format, w: dd.Width, h: dd.Height, d: dd.Depth, layers: dd.Layers, acc: h.acc}
	c.images.mu.Lock()
	defer c.images.mu.Unlock()
	if a := c.images.pools[key]; a != nil {
		return a, nil
	}
	if c.closed.Load() {
		return nil, ErrClosed
	}
	cfg := c.allocCfg
	cfg.BestFit = false // one shape per allocator: the tag is the key's last part
	cfg.Hook = allocTracer{q.dev.tr}
	a, err := alloc.New(&imageDevice{devAlloc: devAlloc{ctx: c, dev: q.dev}, ic: ic, desc: dd}, cfg)
	if err != nil {
		return nil, err
	}
	if c.images.pools == nil {
		c.images.pools = map[poolKey]*alloc.Allocator{}
	}
	c.images.pools[key] = a
	return a, nil
}

// AllocImage allocates an image as d describes under the allocation
// site's tag on q's device (declare the site as rt.AllocSite[rt.Image]
// with //dgen:alloc). It is served from the free list of the tag and the
// image's kind, format, size and access when that holds an image, in
// stream order as AllocSite.Alloc serves buffers, and otherwise created.
// Free gives it back. Errors are as for NewImage; an image1d_buffer_t,
// which lies over a buffer, has no allocation site.
func AllocImage(q *Queue, s *AllocSite[Image], d ImageDesc) (Image, error) {
	var zero Image
	op := "allocate " + imageOp(d.Kind)
	info, err := s.registration()
	if err != nil {
		return zero, fmt.Errorf("%s: %w", op, err)
	}
	if q == nil {
		return zero, fmt.Errorf("%s: %w: nil queue", op, ErrInvalidArgument)
	}
	if d.Kind == "image1d_buffer_t" {
		return zero, fmt.Errorf("%s for %s: %w: an image over a buffer has no allocation site; use NewImage", op, info.Name, ErrInvalidArgument)
	}
	c := q.ctx
	if err := c.enter(); err != nil {
		return zero, fmt.Errorf("%s: %w", op, err)
	}
	defer c.exit()
	ic, h, err := c.newImageHandle(op+" for "+info.Name, d)
	if err != nil {
		return zero, err
	}
	a, err := c.imagePool(q, ic, h)
	if err != nil {
		return zero, fmt.Errorf("%s for %s: %w", op, info.Name, err)
	}
	ah, err := a.AllocOn(q, alloc.Tag(info.Tag()), h.bytes())
	if err != nil {
		return zero, fmt.Errorf("%s %s for %s on %q: %w", op, sizeString(h.dims), info.Name, q.dev.Name, err)
	}
	blk, err := ah.Block()
	if err != nil {
		return zero, fmt.Errorf("%s for %s: %w", op, info.Name, err)
	}
	b := blk.(*block)
	m := &b.mem
	m.ctx, m.drv, m.size, m.h, m.pooled, m.release = c, b.drv, h.bytes(), ah, true, releaseToAllocator
	m.uses.reset()
	m.freed.Store(false)
	h.m, h.gen = m, m.gen.Load()
	return Image{h}, nil
}

// addImageStats adds the statistics of the image allocators to those of
// the devices' buffer allocators in ds (allocStats), so that a tag's
// counts, and the totals, count its images too. A device whose only
// allocations are images gets an entry of its own, in device order.
func (c *Context) addImageStats(ds []stats.DeviceAlloc) []stats.DeviceAlloc {
	c.images.mu.Lock()
	byDev := map[int][]alloc.Stats{}
	for k, a := range c.images.pools {
		byDev[k.dev] = append(byDev[k.dev], a.Stats())
	}
	c.images.mu.Unlock()
	if len(byDev) == 0 {
		return ds
	}
	for dev, all := range byDev {
		i := slices.IndexFunc(ds, func(d stats.DeviceAlloc) bool { return d.Index == dev })
		if i < 0 {
			ds = append(ds, stats.DeviceAlloc{Device: c.devices[dev].Name, Index: dev, Stats: alloc.Stats{Total: alloc.TagStats{Name: "total"}}})
			i = len(ds) - 1
		}
		for _, s := range all {
			ds[i].Stats = mergeStats(ds[i].Stats, s)
		}
	}
	slices.SortFunc(ds, func(a, b stats.DeviceAlloc) int { return a.Index - b.Index })
	return ds
}

// mergeStats returns the statistics of two allocators of one device
// together; peaks are the larger of the two.
func mergeStats(a, b alloc.Stats) alloc.Stats {
	tags := slices.Clone(a.Tags)
	for _, t := range b.Tags {
		i, found := slices.BinarySearchFunc(tags, t.Tag, func(x alloc.TagStats, tag alloc.Tag) int { return int(x.Tag) - int(tag) })
		if !found {
			tags = slices.Insert(tags, i, alloc.TagStats{Tag: t.Tag, Name: t.Name})
		}
		tags[i].Add(t)
	}
	a.Tags = tags
	a.Total.Add(b.Total)
	a.OOMRetries += b.OOMRetries
	return a
}

// The pixels of images: formats, regions, transfers, copies, fills, and
// the conversion of Go's image types.

// ImageRegion is a box of an image's pixels and, for a transfer, the
// layout of the host memory on the other side.
//
// Origin is the first pixel (x, y, z), where y is the layer of an
// image1d_array_t and z that of an image2d_array_t. Size is the box's extent in
// the same axes; the zero Size means everything from Origin to the
// image's end. A box outside the image is an error wrapping ErrOutOfRange.
//
// RowPitch and SlicePitch are the bytes from one row, and from one slice
// (or layer), of the host memory to the next; 0 means rows and slices
// packed without gaps. A pitch smaller than a row (or than the rows of a
// slice) is an error wrapping ErrInvalidArgument. They are ignored when
// the host side is one of Go's image types, whose Stride is the pitch.
type ImageRegion struct {
	Origin, Size         [3]int
	RowPitch, SlicePitch int
}

// channelCounts and typeSizes give the pixel size of a format: the
// channels of the order times the bytes of the type, or the bytes of a
// packed type, whose pixel is one value.
var (
	channelCounts = map[string]int{
		"R": 1, "A": 1, "INTENSITY": 1, "LUMINANCE": 1, "DEPTH": 1, "Rx": 1,
		"RG": 2, "RA": 2, "RGx": 2, "RGB": 3, "RGBx": 3, "sRGB": 3, "sRGBx": 3,
		"RGBA": 4, "BGRA": 4, "ARGB": 4, "ABGR": 4, "sRGBA": 4, "sBGRA": 4,
	}
	typeSizes = map[string]int{
		"SNORM_INT8": 1, "UNORM_INT8": 1, "SIGNED_INT8": 1, "UNSIGNED_INT8": 1,
		"SNORM_INT16": 2, "UNORM_INT16": 2, "SIGNED_INT16": 2, "UNSIGNED_INT16": 2, "HALF_FLOAT": 2,
		"SIGNED_INT32": 4, "UNSIGNED_INT32": 4, "FLOAT": 4,
	}
	packedSizes = map[string]int{"UNORM_SHORT_565": 2, "UNORM_SHORT_555": 2, "UNORM_INT_101010": 4, "UNORM_INT24": 4, "UNORM_INT_101010_2": 4}
)

// pixelSize returns the bytes and channels of a pixel of the format; 0
// channels for a packed type.
func pixelSize(order, typ string) (int64, int, error) {
	n, ok := channelCounts[order]
	if !ok {
		return 0, 0, fmt.Errorf("%w: channel order %q: want one of R, RG, RGBA, BGRA, LUMINANCE, ... as OpenCL names them without CL_", ErrInvalidArgument, order)
	}
	if s, ok := packedSizes[typ]; ok {
		return int64(s), 0, nil
	}
	s, ok := typeSizes[typ]
	if !ok {
		return 0, 0, fmt.Errorf("%w: channel type %q: want one of UNORM_INT8, UNSIGNED_INT16, FLOAT, ... as OpenCL names them without CL_", ErrInvalidArgument, typ)
	}
	return int64(n * s), n, nil
}

// box resolves r against h: the box in pixels, checked to lie in the
// image.
func (h *imageHandle) box(r ImageRegion) ([3]int, [3]int, error) {
	o, s := r.Origin, r.Size
	if s == [3]int{} {
		for i := range s {
			s[i] = h.dims[i] - o[i]
		}
	}
	for i := range 3 {
		if o[i] < 0 || s[i] <= 0 || o[i] > h.dims[i] || s[i] > h.dims[i]-o[i] {
			return o, s, fmt.Errorf("%w: box %s at (%d, %d, %d) of a %s %s", ErrOutOfRange, sizeString(s), o[0], o[1], o[2], sizeString(h.dims), h.kind)
		}
	}
	return o, s, nil
}

// layout returns the pitches of host memory for a box of size s, checked
// against the row, and the bytes the box spans in it.
func (h *imageHandle) layout(s [3]int, row, slice int) (int64, int64, int64, error) {
	rowBytes := int64(s[0]) * h.px
	rp, sp := int64(row), int64(slice)
	if rp == 0 {
		rp = rowBytes
	}
	if rp < rowBytes {
		return 0, 0, 0, fmt.Errorf("%w: row pitch %d is smaller than a row of %d pixels of %d bytes", ErrInvalidArgument, row, s[0], h.px)
	}
	if sp == 0 {
		sp = rp * int64(s[1])
	}
	if sp < rp*int64(s[1]) {
		return 0, 0, 0, fmt.Errorf("%w: slice pitch %d is smaller than %d rows of pitch %d", ErrInvalidArgument, slice, s[1], rp)
	}
	span := int64(s[2]-1)*sp + int64(s[1]-1)*rp + rowBytes
	return rp, sp, span, nil
}

// checkUse checks that the image may be used on q and returns its memory.
func (h *imageHandle) checkUse(q *Queue, what string) (*Mem, error) {
	if h == nil {
		return nil, fmt.Errorf("%w: zero %s", ErrInvalidArgument, what)
	}
	m := h.mem()
	if _, err := m.driverBuffer(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, unwrapBuffer(err))
	}
	if q == nil {
		return nil, fmt.Errorf("%w: nil queue", ErrInvalidArgument)
	}
	if err := q.ctx.sameContext("the "+what, m.ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// unwrapBuffer drops the "buffer: " of Mem's errors, which name a buffer.
func unwrapBuffer(err error) error {
	type wrapped interface{ Unwrap() error }
	if w, ok := err.(wrapped); ok && w.Unwrap() != nil {
		return w.Unwrap()
	}
	return err
}

// hostMem is host memory that a transfer reads or writes: a pointer, its
// length in bytes, and the pitches of its rows and slices when they are
// its own (Go's image types).
type hostMem struct {
	p         unsafe.Pointer
	n         int64
	row, sl   int
	keep      any          // what p points into, alive until the transfer ends
	convertIn func([]byte) // for a read: converts the bytes read into the Go image
	conv      []byte       // the converted pixels, when there are
}

// sliceMem returns the memory of v, a slice of plain data.
func sliceMem(v any) (hostMem, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice {
		return hostMem{}, fmt.Errorf("%w: pixels of type %T: want a slice of plain data or *image.RGBA, *image.Gray, *image.Gray16, *image.RGBA64", ErrInvalidArgument, v)
	}
	if err := checkPlain(rv.Type().Elem()); err != nil {
		return hostMem{}, fmt.Errorf("pixels of type %T: %w", v, err)
	}
	return hostMem{p: rv.UnsafePointer(), n: int64(rv.Len()) * int64(rv.Type().Elem().Size()), keep: v}, nil
}

// transfer reads (into host) or writes (from host) the box r of the image,
// blocking until it is done. skip is as for beginTask.
func (h *imageHandle) transfer(q *Queue, read bool, r ImageRegion, host any, wait []*Event, skip int) error {
	op := "write " + h.kind.String()
	kind := trace.Write
	if read {
		op, kind = "read "+h.kind.String(), trace.Read
	}
	m, err := h.checkUse(q, "image")
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	o, s, err := h.box(r)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	hm, err := h.hostFor(host, read, s)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if hm.row != 0 {
		r.RowPitch, r.SlicePitch = hm.row, hm.sl
	}
	rp, sp, span, err := h.layout(s, r.RowPitch, r.SlicePitch)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if hm.n < span {
		return fmt.Errorf("%s: %w: the host memory has %d bytes, the box %s needs %d", op, ErrOutOfRange, hm.n, sizeString(s), span)
	}
	iq, ok := q.drv.(driver.ImageQueue)
	if !ok {
		return fmt.Errorf("%s: %w", op, errNoImages)
	}
	dr := driver.ImageRegion{Origin: o, Size: s, RowPitch: rp, SlicePitch: sp}
	switch h.kind {
	case driver.Image1D, driver.Image1DBuffer, driver.Image2D:
		dr.SlicePitch = 0
	case driver.Image1DArray:
		dr.SlicePitch = rp // the step between layers, which are its rows
	}
	if err := q.imageTransfer(op, kind, func(dw []driver.Event) error {
		var err error
		if read {
			_, err = iq.ReadImage(m.drv, true, dr, hm.p, dw)
		} else {
			_, err = iq.WriteImage(m.drv, true, dr, hm.p, dw)
		}
		return err
	}, wait, skip+1); err != nil {
		return err
	}
	if hm.convertIn != nil {
		hm.convertIn(hm.conv)
	}
	return nil
}

// imageTransfer runs the blocking transfer do on q after wait; skip is as
// for beginTask.
func (q *Queue) imageTransfer(op string, kind trace.CmdKind, do func([]driver.Event) error, wait []*Event, skip int) error {
	if err := q.enter(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	defer q.ctx.exit()
	dw, err := q.driverEvents(wait)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	tk := q.beginTask(kind, op, skip+1, wait)
	n := q.pts.enq.Load() // a blocking transfer completes what was enqueued before it
	err = do(dw)
	tk.EndRelease()
	if err != nil {
		return fmt.Errorf("%s on %q: %w", op, q.dev.Name, err)
	}
	q.pts.complete(n)
	return nil
}

var errNoImages = fmt.Errorf("%w: the backend's queues have no image commands", errors.ErrUnsupported)

// copyTo copies the box r of h to dst at dstOrigin. skip is as for
// beginTask.
func (h *imageHandle) copyTo(q *Queue, dst Image, r ImageRegion, dstOrigin [3]int, wait []*Event, skip int) (*Event, error) {
	op := "copy " + h.kind.String()
	m, err := h.checkUse(q, "source image")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	dh := dst.h
	dm, err := dh.checkUse(q, "destination image")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	o, s, err := h.box(r)
	if err == nil {
		_, _, err = dh.box(ImageRegion{Origin: dstOrigin, Size: s})
	}
	if err == nil && (dh.desc.Order != h.desc.Order || dh.desc.Type != h.desc.Type) {
		err = fmt.Errorf("%w: the images' formats differ (%s/%s, %s/%s)", ErrInvalidArgument, h.desc.Order, h.desc.Type, dh.desc.Order, dh.desc.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	iq, ok := q.drv.(driver.ImageQueue)
	if !ok {
		return nil, fmt.Errorf("%s: %w", op, errNoImages)
	}
	ev, err := q.command(op, trace.Copy, func(dw []driver.Event) (driver.Event, error) {
		return iq.CopyImage(m.drv, dm.drv, o, dstOrigin, s, dw)
	}, wait, skip+1)
	if err == nil {
		q.record(m, dm)
	}
	return ev, err
}

// fill sets the box r of h to color. skip is as for beginTask.
func (h *imageHandle) fill(q *Queue, r ImageRegion, color [4]float64, wait []*Event, skip int) (*Event, error) {
	op := "fill " + h.kind.String()
	m, err := h.checkUse(q, "image")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	o, s, err := h.box(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	iq, ok := q.drv.(driver.ImageQueue)
	if !ok {
		return nil, fmt.Errorf("%s: %w", op, errNoImages)
	}
	var c [16]byte
	for i, v := range color {
		var bits uint32
		switch h.desc.Type {
		case "SIGNED_INT8", "SIGNED_INT16", "SIGNED_INT32":
			bits = uint32(int32(v))
		case "UNSIGNED_INT8", "UNSIGNED_INT16", "UNSIGNED_INT32":
			bits = uint32(v)
		default:
			bits = math.Float32bits(float32(v))
		}
		binary.NativeEndian.PutUint32(c[4*i:], bits)
	}
	ev, err := q.command(op, trace.Fill, func(dw []driver.Event) (driver.Event, error) {
		return iq.FillImage(m.drv, c, o, s, dw)
	}, wait, skip+1)
	if err == nil {
		q.record(m)
	}
	return ev, err
}

// goImage describes the pixels of one of Go's image types: the bytes from
// the box's first pixel, the stride, the channels and the bytes of a
// channel (16-bit channels are big-endian).
type goImage struct {
	pix    []byte
	stride int
	chans  int
	depth  int
	bounds image.Rectangle
}

func asGoImage(v any) (goImage, bool) {
	switch m := v.(type) {
	case *image.RGBA:
		return goImage{m.Pix, m.Stride, 4, 1, m.Rect}, true
	case *image.Gray:
		return goImage{m.Pix, m.Stride, 1, 1, m.Rect}, true
	case *image.RGBA64:
		return goImage{m.Pix, m.Stride, 4, 2, m.Rect}, true
	case *image.Gray16:
		return goImage{m.Pix, m.Stride, 1, 2, m.Rect}, true
	}
	return goImage{}, false
}

// hostFor returns the host memory of a transfer of a box of size s from
// or to host: a slice as it is, or a Go image, used in place when its
// pixels are the image's, else converted.
func (h *imageHandle) hostFor(host any, read bool, s [3]int) (hostMem, error) {
	g, ok := asGoImage(host)
	if !ok {
		return sliceMem(host)
	}
	if s[2] != 1 || g.bounds.Dx() < s[0] || g.bounds.Dy() < s[1] {
		return hostMem{}, fmt.Errorf("%w: a %dx%d %T holds no box %s", ErrOutOfRange, g.bounds.Dx(), g.bounds.Dy(), host, sizeString(s))
	}
	if h.chans != g.chans {
		return hostMem{}, fmt.Errorf("%w: %T has %d channels, a pixel of %s/%s %d", ErrInvalidArgument, host, g.chans, h.desc.Order, h.desc.Type, h.chans)
	}
	dev, ok := deviceChannels[h.desc.Type]
	if !ok {
		return hostMem{}, fmt.Errorf("%w: %T converts to and from 8- and 16-bit integer and FLOAT channels, not %s", ErrInvalidArgument, host, h.desc.Type)
	}
	if dev.size == 1 && g.depth == 1 {
		// The pixels are the image's: no copy.
		n := len(g.pix)
		return hostMem{p: unsafe.Pointer(unsafe.SliceData(g.pix)), n: int64(n), row: g.stride, keep: host}, nil
	}
	rowBytes := s[0] * int(h.px)
	conv := make([]byte, rowBytes*s[1])
	hm := hostMem{p: unsafe.Pointer(unsafe.SliceData(conv)), n: int64(len(conv)), row: rowBytes, conv: conv}
	samples := s[0] * g.chans
	if read {
		hm.convertIn = func(b []byte) {
			for y := range s[1] {
				fromDevice(g.pix[y*g.stride:], g.depth, b[y*rowBytes:], dev, samples)
			}
		}
		return hm, nil
	}
	for y := range s[1] {
		toDevice(conv[y*rowBytes:], dev, g.pix[y*g.stride:], g.depth, samples)
	}
	return hm, nil
}

// channelKind is how a device channel type is stored: size bytes, as an
// integer scaled to its full range (norm) or not, or a float32.
type channelKind struct {
	size  int
	float bool
}

var deviceChannels = map[string]channelKind{
	"UNORM_INT8": {1, false}, "UNSIGNED_INT8": {1, false},
	"UNORM_INT16": {2, false}, "UNSIGNED_INT16": {2, false},
	"FLOAT": {4, true},
}

// toDevice converts n samples of depth bytes (big-endian) from src into
// the device's channels in dst: an integer to the other width by scaling
// its range, or to float in [0, 1].
func toDevice(dst []byte, dev channelKind, src []byte, depth, n int) {
	for i := range n {
		var v uint32 // 16-bit
		if depth == 1 {
			v = uint32(src[i]) * 0x101
		} else {
			v = uint32(src[2*i])<<8 | uint32(src[2*i+1])
		}
		switch {
		case dev.float:
			binary.NativeEndian.PutUint32(dst[4*i:], math.Float32bits(float32(v)/65535))
		case dev.size == 1:
			dst[i] = byte((v*255 + 32767) / 65535)
		default:
			binary.NativeEndian.PutUint16(dst[2*i:], uint16(v))
		}
	}
}

// fromDevice is the inverse of toDevice, rounding and clamping floats.
func fromDevice(dst []byte, depth int, src []byte, dev channelKind, n int) {
	for i := range n {
		var v uint32 // 16-bit
		switch {
		case dev.float:
			f := math.Float32frombits(binary.NativeEndian.Uint32(src[4*i:]))
			v = uint32(math.Round(float64(min(max(f, 0), 1)) * 65535))
		case dev.size == 1:
			v = uint32(src[i]) * 0x101
		default:
			v = uint32(binary.NativeEndian.Uint16(src[2*i:]))
		}
		if depth == 1 {
			dst[i] = byte((v*255 + 32767) / 65535)
		} else {
			dst[2*i], dst[2*i+1] = byte(v>>8), byte(v)
		}
	}
}

// Sampler says how a kernel's read_imagef (and friends) reads an image:
// with coordinates normalized to [0, 1] or in pixels, what it returns
// outside the image, and how it filters. It is a value: a kernel spec's
// sampler_t field takes one, and the context makes the driver's sampler
// object on first use and keeps it until Close.
//
// Address is "clamp_to_edge" (also when empty), "clamp", "none", "repeat"
// or "mirrored_repeat" (the last two need Normalized), and Filter "nearest"
// (also when empty) or "linear", as OpenCL C spells CLK_ADDRESS_* and
// CLK_FILTER_* in lower case. A sampler declared as a constant in the
// kernel source needs no field at all.
type Sampler struct {
	Normalized bool
	Address    string
	Filter     string
}

// desc checks s and returns its driver description.
func (s Sampler) desc() (driver.SamplerDesc, error) {
	d := driver.SamplerDesc{Normalized: s.Normalized, Address: s.Address, Filter: s.Filter}
	if d.Address == "" {
		d.Address = "clamp_to_edge"
	}
	if d.Filter == "" {
		d.Filter = "nearest"
	}
	switch d.Address {
	case "none", "clamp_to_edge", "clamp":
	case "repeat", "mirrored_repeat":
		if !s.Normalized {
			return d, fmt.Errorf("sampler: %w: address mode %s needs normalized coordinates", ErrInvalidArgument, d.Address)
		}
	default:
		return d, fmt.Errorf("sampler: %w: address mode %q: want clamp_to_edge, clamp, none, repeat or mirrored_repeat", ErrInvalidArgument, s.Address)
	}
	if d.Filter != "nearest" && d.Filter != "linear" {
		return d, fmt.Errorf("sampler: %w: filter %q: want nearest or linear", ErrInvalidArgument, s.Filter)
	}
	return d, nil
}

// samplerObject is a driver sampler of a context. released is set, under
// the context's images.mu, when the driver object is released (by Close),
// after which a graph that recorded it refuses to launch.
type samplerObject struct {
	drv      driver.Sampler
	released atomic.Bool
}

// check returns the error of a use of s after its release.
func (s *samplerObject) check() error {
	if s.released.Load() {
		return fmt.Errorf("sampler: %w: its driver object was released", ErrInvalidArgument)
	}
	return nil
}

// releaseSamplers releases the context's driver samplers, marking each
// released. Called with c.images.mu held.
func (c *Context) releaseSamplers() []error {
	var errs []error
	for _, s := range c.images.samplers {
		s.released.Store(true)
		if err := s.drv.Release(); err != nil {
			errs = append(errs, fmt.Errorf("sampler: %w", err))
		}
	}
	c.images.samplers = nil
	return errs
}

// sampler returns the context's driver sampler for s, made on first use.
func (c *Context) sampler(s Sampler) (*samplerObject, error) {
	d, err := s.desc()
	if err != nil {
		return nil, err
	}
	s = Sampler{Normalized: d.Normalized, Address: d.Address, Filter: d.Filter}
	c.images.mu.Lock()
	defer c.images.mu.Unlock()
	if ds, ok := c.images.samplers[s]; ok {
		return ds, nil
	}
	if c.closed.Load() {
		return nil, fmt.Errorf("sampler: %w", ErrClosed)
	}
	ic, err := c.imageContext("sampler")
	if err != nil {
		return nil, err
	}
	drv, err := ic.NewSampler(d)
	if err != nil {
		return nil, fmt.Errorf("create sampler on %s: %w", c.deviceLabel(), err)
	}
	if c.images.samplers == nil {
		c.images.samplers = map[Sampler]*samplerObject{}
	}
	ds := &samplerObject{drv: drv}
	c.images.samplers[s] = ds
	return ds, nil
}

// setSamplerArg is rt/raw's Kernel.SetSampler: it sets argument i, a
// sampler_t, to s.
func (k *Kernel) setSamplerArg(i int, s Sampler) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	if err := k.setSampler(i, s); err != nil {
		return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
	}
	return nil
}

// setSampler records argument i as the context's driver sampler for s in
// the launch record: an ArgSampler slot holding its native handle, or,
// for a backend whose samplers have none, a slot that flush sets through
// driver.SamplerKernel.
func (k *Kernel) setSampler(i int, s Sampler) error {
	ds, err := k.prog.ctx.sampler(s)
	if err != nil {
		return err
	}
	if _, ok := k.drv.(driver.SamplerKernel); !ok {
		return fmt.Errorf("%w: the backend's kernels take no samplers", errors.ErrUnsupported)
	}
	if k.samplers == nil {
		k.samplers = make([]*samplerObject, k.nargs)
	}
	slot := &k.args.Slots[i]
	if slot.Kind != driver.ArgSampler || k.samplers[i] != ds {
		var h uint64
		if ns, ok := ds.drv.(driver.NativeSampler); ok {
			h = ns.Handle()
		} else {
			k.foreign = 1 // launched through flush, which sets it by SetArgSampler
		}
		*slot = driver.Arg{Kind: driver.ArgSampler, Size: uint32(unsafe.Sizeof(uintptr(0))), Bits: h, Changed: slot.Changed}
		k.samplers[i] = ds
		k.mark(i)
	}
	k.bind(i, nil)
	return nil
}

// setArgSampler sets argument i, recorded by setSampler, through the
// driver's kernel.
func (k *Kernel) setArgSampler(i int) error {
	sk, ok := k.drv.(driver.SamplerKernel)
	if !ok {
		return fmt.Errorf("%w: the backend's kernels take no samplers", errors.ErrUnsupported)
	}
	return sk.SetArgSampler(i, k.samplers[i].drv)
}

// specImage and specSampler are the image launch path of generated code:
// an error is kept for Submit or Launch to return. kind is the OpenCL C
// type of the parameter, which the image must be.
func (k *Kernel) specImage(i int, img Image, kind, access string) {
	if err := k.setImage(i, img, kind, access); err != nil && k.setErr == nil {
		k.setErr = fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
	}
}

func (k *Kernel) specSampler(i int, s Sampler) {
	if err := k.setSampler(i, s); err != nil && k.setErr == nil {
		k.setErr = fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
	}
}

// setImageArg is rt/raw's Kernel.SetImage: it sets argument i, an image
// parameter with the OpenCL C access qualifier access, to img, of any
// kind.
func (k *Kernel) setImageArg(i int, img Image, access string) error {
	if err := k.checkArg(i); err != nil {
		return err
	}
	if err := k.setImage(i, img, "", access); err != nil {
		return fmt.Errorf("set argument %d of kernel %q: %w", i, k.name, err)
	}
	return nil
}

// setImage records img as argument i; kind, when not empty, is the
// parameter's OpenCL C image type, which img must be.
func (k *Kernel) setImage(i int, img Image, kind, access string) error {
	h := img.h
	if h == nil {
		return fmt.Errorf("%w: zero image", ErrInvalidArgument)
	}
	m := h.mem()
	_, err := m.driverBuffer()
	if err != nil {
		return fmt.Errorf("image: %w", unwrapBuffer(err))
	}
	if err := k.prog.ctx.sameContext("the image", m.ctx); err != nil {
		return err
	}
	if kind != "" && kind != h.desc.Kind {
		return fmt.Errorf("%w: an %s image passed to an %s parameter", ErrInvalidArgument, h.desc.Kind, kind)
	}
	want, ok := accesses[access]
	if !ok || access == "" {
		return fmt.Errorf("%w: access qualifier %q: want read_only, write_only or read_write", ErrInvalidArgument, access)
	}
	if h.acc != driver.ReadWrite && h.acc != want {
		return fmt.Errorf("%w: a %s image passed to a %s parameter", ErrInvalidArgument, accessNames[h.acc], access)
	}
	if want == driver.ReadWrite {
		if err := k.prog.ctx.readWriteImages(); err != nil {
			return err
		}
	}
	k.recordBuffer(i, m)
	return nil
}

// readWriteImages reports, as an error wrapping errors.ErrUnsupported,
// a device of the context that is an OpenCL 1.x device, which has no
// read_write images. (An OpenCL 3.0 device may lack them too: its compiler
// then refuses the program, whose image dgen guards with
// __opencl_c_read_write_images.)
func (c *Context) readWriteImages() error {
	for _, d := range c.devices {
		if v := clVersion(d.Version); v != 0 && v < 200 {
			return fmt.Errorf("%w: a read_write image parameter needs an OpenCL 2.0 device or later, but %s is %q",
				errors.ErrUnsupported, d.Label(), d.Version)
		}
	}
	return nil
}

// clVersion returns 120 for "OpenCL 1.2 ...", 0 when unknown.
func clVersion(s string) int {
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0
	}
	maj, min, ok := strings.Cut(f[1], ".")
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if !ok || err1 != nil || err2 != nil {
		return 0
	}
	return a*100 + b*10
}
