package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"unsafe"
	"weak"

	"github.com/dgen-go/dgen/rt/alloc"
	"github.com/dgen-go/dgen/rt/driver"
	"github.com/dgen-go/dgen/rt/trace"
)

// Device memory: Mem and Buffer with their transfers and views. Pinned
// host memory (pinned.go), the allocator of each device (allocator.go),
// device globals (global.go), images (image.go) and samplers (sampler.go)
// live beside this file.

// Mem is an untyped region of device memory: the storage behind a Buffer
// or an Image. rt does not export it; kernel instances (Kernel.SpecBuffer,
// raw's SetBuffer) take it from a Buffer. A Mem is freed once; every
// later use is an error wrapping ErrFreed.
//
// Invariants:
//   - Every allocation is a new Mem, also when an allocator hands out a
//     block it held: a Mem is never reused, so an old *Mem, and every
//     Buffer over it, stays freed. What a pooled block keeps from one Mem
//     to the next is the allocator's (h): the driver buffer, its id and
//     its stream-ordered uses; the Mem keeps nothing of its predecessor.
//   - Immutable after allocation: ctx, drv, id, handle, native, parent,
//     size, offset, h and release. The rest are atomics (gen, freed,
//     busy, pending) or guarded as their comments say (uses).
//   - No lock is held across a driver call: a call that passes drv to
//     the driver brackets it with use and done, and a Free that races it
//     leaves the release to the last done.
//
// The fields that a launch reads come first, so that they share a cache
// line or two: between two launches the driver's own work evicts them.
type Mem struct {
	// gen counts the Frees of m. A Buffer or an Image records it when it
	// is made, and reads as freed once it differs.
	gen   atomic.Uint32
	freed atomic.Bool
	// pooled is set for memory from an allocator, whose handle is h and
	// whose uses are recorded in uses for stream-ordered reuse (streamorder.go).
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
	// that handed it out. It is called once: by Free, or, when Free finds
	// calls using the storage (busy), by the last of them (done).
	release func(*Mem) error
	// busy counts the calls that pass drv to the driver right now (use,
	// done); pending is set by a Free that left the release to them.
	busy    atomic.Int32
	pending atomic.Bool
}

// use registers a call that passes m's storage to the driver, so that a
// Free meanwhile does not release it under the call: it reports false,
// registering nothing, once m is freed. Every true is matched by one done.
//
// use increments busy and then reads freed; Free sets freed and then reads
// busy. Both are sequentially consistent atomics, so either use sees the
// Free, or Free sees the call and leaves the release to done.
func (m *Mem) use() bool {
	m.busy.Add(1)
	if m.freed.Load() {
		m.done()
		return false
	}
	return true
}

// done ends a call that use registered, releasing the storage if Free
// left that to it.
func (m *Mem) done() {
	if m.busy.Add(-1) == 0 && m.freed.Load() {
		m.releaseLeft()
	}
}

// releaseLeft releases m's storage if Free left that to the last call
// that used it, which has ended.
func (m *Mem) releaseLeft() {
	if m.pending.CompareAndSwap(true, false) {
		if err := m.release(m); err != nil && m.ctx != nil {
			// Free returned already: no caller is left to tell.
			m.ctx.log().Warn("dgen: release of freed memory", "bytes", m.size, "err", err)
		}
	}
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
		return nil, fmt.Errorf("allocate %d bytes: %w", size, err)
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
		return nil, fmt.Errorf("allocate %d bytes on %q: %w: the device allocates at most %d bytes at once", size, c.devices[0].Name, ErrTooLarge, max)
	}
	dev := c.devices[0] // where the context's memory from the driver counts (budget.go)
	if err := dev.tooLarge(size); err != nil {
		return nil, fmt.Errorf("allocate %w", err)
	}
	if err := dev.charge(size); err != nil {
		return nil, fmt.Errorf("allocate %w", err)
	}
	drv, err := c.drv.NewBuffer(size)
	if err != nil {
		dev.refund(size)
		return nil, c.failed(nil, fmt.Errorf("allocate %d bytes on %q: %w", size, c.devices[0].Name, err))
	}
	c.counters.driverAllocs.Add(1)
	m.setDriver(drv)
	c.live.add(m) // live.go
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

// releaseToDriver releases m, memory from the driver, unless Close has
// (live.go).
func releaseToDriver(m *Mem) error {
	if m.drv == nil {
		return nil
	}
	if err := m.ctx.ownerRelease(m); err != nil {
		return fmt.Errorf("release %d bytes: %w", m.size, err)
	}
	return nil
}

// Free gives the memory back. A second Free returns an error wrapping
// ErrFreed and changes nothing. On a context that recorded a device
// fault, Free gives the memory back all the same and returns the fault;
// after the context's Close, Free returns nil (Close released the memory).
func (m *Mem) Free() error {
	if m == nil {
		return fmt.Errorf("free buffer: %w: nil buffer", ErrInvalidArgument)
	}
	if m.ctxClosed() {
		return nil
	}
	if m.freed.Swap(true) {
		return fmt.Errorf("free buffer: %w", ErrFreed)
	}
	m.gen.Add(1)
	m.pending.Store(true)
	var err error
	if m.busy.Load() == 0 && m.pending.CompareAndSwap(true, false) {
		err = m.release(m)
	} // else a call that uses the storage releases it when it returns (done)
	if m.ctx != nil {
		if f := m.ctx.faultErr(); f != nil {
			return fmt.Errorf("free buffer: %w", f) // the release's own error only repeats it
		}
	}
	return err
}

// ctxClosed reports whether m belongs to a context that Close has begun
// to close: then Close releases m, and Free has nothing to do.
func (m *Mem) ctxClosed() bool {
	return m != nil && m.ctx != nil && m.ctx.closed.Load()
}

// releaseLive and describe make memory from the driver (newMem, NewImage)
// a liveObject (live.go): it is live under its *Mem until freed.
func (m *Mem) releaseLive() error {
	err := m.drv.Release()
	if m.parent == nil { // an image over a buffer was not charged
		m.ctx.devices[0].refund(m.size)
	}
	if err != nil {
		return err
	}
	m.ctx.counters.driverReleases.Add(1)
	m.ctx.traceMem(0, memTrace(m), false)
	return nil
}

// describe names m in errors: its size, the allocation site of memory
// from an allocator, and for a view its place in the buffer it lies in.
func (m *Mem) describe() string {
	s := fmt.Sprintf("buffer of %d bytes", m.size)
	if m.parent != nil {
		s = fmt.Sprintf("view of %d bytes at byte %d of a %s", m.size, m.offset, m.parent.describe())
	} else if m.pooled {
		s += " from " + tagName(uint32(m.h.Tag()))
	}
	return s
}

// named returns err, the error of the command op on m, with m's label
// after op ("write buffer (buffer of 64 bytes from pkg.site): ..."), so
// that it says which buffer; nil for nil. Only a failing command pays for
// the label.
func (m *Mem) named(op string, err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, op); ok {
		msg = op + " (" + m.describe() + ")" + rest
	} else {
		msg = op + " (" + m.describe() + "): " + msg
	}
	return &namedError{msg: msg, err: err}
}

// namedError is an error that Mem.named labelled: msg, wrapping err.
type namedError struct {
	msg string
	err error
}

func (e *namedError) Error() string { return e.msg }
func (e *namedError) Unwrap() error { return e.err }

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
//
// Read, Write, ReadAt and WriteAt block until the copy is done; their
// Context forms bound the wait for the commands before the copy with a
// context.Context. Fill and CopyTo return at once with the command's
// event, and so do ReadAsync and WriteAsync, which copy to and from pinned
// memory (Pinned).
type Buffer[T any] struct {
	// A Buffer is a typed handle on a Mem. Its fields and its mem are
	// bufferRef's, embedded, so that rt's Buffer, defined over this one,
	// implements Memory as this one does.
	bufferRef
}

// bufferRef is a Buffer's handle on its memory. gen is the generation of
// m that the handle was made in (a Free ends it).
type bufferRef struct {
	m   *Mem
	n   int
	gen uint32 // m.gen when the buffer was made
}

// Memory is device memory of any element type: an rt.Buffer, whichever
// its T. An Image1DBuffer's ImageDesc.Buffer takes it. Only rt implements
// it.
type Memory interface {
	mem() *Mem
}

// bufferOver returns a Buffer of n elements over m.
func bufferOver[T any](m *Mem, n int) Buffer[T] {
	return Buffer[T]{bufferRef{m: m, n: n, gen: m.gen.Load()}}
}

// mem returns the buffer's memory: nil for the zero Buffer, freedMem once
// it has been freed.
func (b bufferRef) mem() *Mem {
	if b.m != nil && b.m.gen.Load() != b.gen {
		return freedMem
	}
	return b.m
}

// NewBuffer allocates a buffer of n elements of T directly from the driver.
// Past Config.MemoryLimit it returns the blocks held in the free lists of
// the context's first device, where its memory counts, and, if that is
// not enough, fails at once with an error wrapping ErrMemoryLimit.
func NewBuffer[T any](c *Context, n int) (Buffer[T], error) {
	return NewBufferContext[T](nil, c, n)
}

// NewBufferContext is NewBuffer, waiting under ctx past Config.MemoryLimit
// as AllocSite.AllocContext does.
func NewBufferContext[T any](ctx context.Context, c *Context, n int) (Buffer[T], error) {
	size, err := byteSize[T](n)
	if err != nil {
		return Buffer[T]{}, err
	}
	m, err := c.newMem(size)
	if err != nil && c != nil && errors.Is(err, ErrMemoryLimit) {
		err = c.waitForMemory(ctx, c.devices[0], err, func() (err error) {
			m, err = c.newMem(size)
			return err
		})
	}
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
		// Far above any device's largest allocation, or not a number
		// of bytes an int64 holds.
		return 0, fmt.Errorf("buffer of %d %v: %w: %d × %d bytes overflows the sizes a device allocates", n, reflect.TypeFor[T](), ErrTooLarge, n, es)
	}
	return int64(n) * es, nil
}

// Len returns the number of elements.
func (b Buffer[T]) Len() int { return b.n }

// Free gives the buffer's memory back. Later uses of b, or of any copy of
// it, and a second Free, return errors wrapping ErrFreed; after the
// context's Close, Free returns nil (Close released the memory). Free of
// the zero Buffer does nothing and returns nil, as C's free(NULL) and
// cudaFree(0) do, so that a deferred Free needs no guard.
func (b Buffer[T]) Free() error {
	if b.m == nil || b.m.ctxClosed() {
		return nil
	}
	return b.mem().Free()
}

func elemSize[T any]() int64 {
	var z T
	return int64(unsafe.Sizeof(z))
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

// span checks that elements [off, off+n) lie in b, and that b may be used on
// q, and returns b's memory, driver buffer, and the span's byte offset and
// length. It registers a use of the memory (Mem.use) that the caller ends
// with m.done() once the driver call returns, so that a Free that races
// with the call does not release the memory under it.
func (b Buffer[T]) span(q *Queue, op string, off, n int) (m *Mem, drv driver.Buffer, boff, size int64, err error) {
	m = b.mem()
	drv, err = m.driverBuffer()
	if err == nil && q != nil {
		err = q.ctx.sameContext("the buffer", m.ctx)
	}
	if err == nil && (off < 0 || n < 0 || off > b.n || n > b.n-off) {
		err = fmt.Errorf("%w: elements [%d, %d) of a buffer of %d", ErrOutOfRange, off, off+n, b.n)
	}
	if err == nil && !m.useAll() {
		err = fmt.Errorf("buffer: %w", ErrFreed)
	}
	if err != nil {
		return nil, nil, 0, 0, fmt.Errorf("%s: %w", op, err)
	}
	es := elemSize[T]()
	return m, drv, int64(off) * es, int64(n) * es, nil
}

// useAll is use for m and, for a view, the buffer it lies in, whose memory
// the view's is.
func (m *Mem) useAll() bool {
	if !m.use() {
		return false
	}
	if m.parent != nil && !m.parent.use() {
		m.done()
		return false
	}
	return true
}

// doneAll ends a use that useAll registered.
func (m *Mem) doneAll() {
	if m.parent != nil {
		m.parent.done()
	}
	m.done()
}

// Write copies src into the buffer from element 0 and waits until it is
// done. src may be shorter than the buffer.
func (b Buffer[T]) Write(q *Queue, src []T, wait ...*Event) error {
	return b.writeAt(nil, q, 0, src, wait, 0)
}

// WriteAt copies src into the buffer from element off and waits until it
// is done. A span outside the buffer is an error wrapping ErrOutOfRange,
// and nothing is written.
func (b Buffer[T]) WriteAt(q *Queue, off int, src []T, wait ...*Event) error {
	return b.writeAt(nil, q, off, src, wait, 0)
}

// WriteContext is Write bounded by ctx. The copy runs after the commands
// enqueued on q before it and the events of wait: when ctx is done before
// they have completed, WriteContext returns an error wrapping ctx.Err(),
// writes nothing, and they run on. The copy itself, once they have
// completed, is not interrupted.
func (b Buffer[T]) WriteContext(ctx context.Context, q *Queue, src []T, wait ...*Event) error {
	return b.writeAt(ctx, q, 0, src, wait, 0)
}

// WriteAtContext is WriteAt bounded by ctx, as WriteContext is Write.
func (b Buffer[T]) WriteAtContext(ctx context.Context, q *Queue, off int, src []T, wait ...*Event) error {
	return b.writeAt(ctx, q, off, src, wait, 0)
}

// writeAt is WriteAt, bounded by ctx where it is not nil; skip is as for
// beginTask.
func (b Buffer[T]) writeAt(ctx context.Context, q *Queue, off int, src []T, wait []*Event, skip int) error {
	x := xfer{op: "write buffer", kind: trace.Write, host: unsafe.Pointer(unsafe.SliceData(src))}
	return b.hostCopy(ctx, q, x, off, len(src), wait, skip+1)
}

// Read copies the first len(dst) elements of the buffer into dst and waits
// until it is done.
func (b Buffer[T]) Read(q *Queue, dst []T, wait ...*Event) error {
	return b.readAt(nil, q, 0, dst, wait, 0)
}

// ReadAt copies len(dst) elements from element off into dst and waits
// until it is done. A span outside the buffer is an error wrapping
// ErrOutOfRange, and dst is left alone.
func (b Buffer[T]) ReadAt(q *Queue, off int, dst []T, wait ...*Event) error {
	return b.readAt(nil, q, off, dst, wait, 0)
}

// ReadContext is Read bounded by ctx. The copy runs after the commands
// enqueued on q before it and the events of wait: when ctx is done before
// they have completed, ReadContext returns an error wrapping ctx.Err(),
// leaves dst alone, and they run on. The copy itself, once they have
// completed, is not interrupted.
func (b Buffer[T]) ReadContext(ctx context.Context, q *Queue, dst []T, wait ...*Event) error {
	return b.readAt(ctx, q, 0, dst, wait, 0)
}

// ReadAtContext is ReadAt bounded by ctx, as ReadContext is Read.
func (b Buffer[T]) ReadAtContext(ctx context.Context, q *Queue, off int, dst []T, wait ...*Event) error {
	return b.readAt(ctx, q, off, dst, wait, 0)
}

// readAt is ReadAt, bounded by ctx where it is not nil; skip is as for
// beginTask.
func (b Buffer[T]) readAt(ctx context.Context, q *Queue, off int, dst []T, wait []*Event, skip int) error {
	x := xfer{op: "read buffer", kind: trace.Read, host: unsafe.Pointer(unsafe.SliceData(dst))}
	return b.hostCopy(ctx, q, x, off, len(dst), wait, skip+1)
}

// hostCopy is writeAt and readAt: it runs x, the copy of n elements from
// element off between the buffer and x.host, once the buffer's span is
// checked and held, and, where ctx is not nil or a request's context binds
// q, once the commands before it have completed within ctx.
func (b Buffer[T]) hostCopy(ctx context.Context, q *Queue, x xfer, off, n int, wait []*Event, skip int) error {
	m, drv, boff, size, err := b.span(q, x.op, off, n)
	if err != nil {
		return err
	}
	defer m.doneAll()
	if ctx == nil {
		ctx = q.boundContext() // nil unless a request's context binds q
	}
	if ctx != nil { // a Context form, or a bound queue
		if err := q.waitBefore(ctx, x.op, wait); err != nil {
			return m.named(x.op, err)
		}
	}
	x.buf, x.off, x.size = drv, boff, size
	return m.named(x.op, q.transfer(x, wait, skip+1))
}

// Fill sets every element to v. It returns once the command is enqueued,
// without an event; FillEvent returns one. The element is the fill
// pattern, so T's size must be a power of two of at most 128 bytes, as
// OpenCL's fills ask: every backend refuses another size with an error
// wrapping ErrInvalidArgument (write the values instead).
func (b Buffer[T]) Fill(q *Queue, v T, wait ...*Event) error {
	_, err := b.fill(q, v, wait, false)
	return err
}

// FillEvent is Fill with the command's event.
func (b Buffer[T]) FillEvent(q *Queue, v T, wait ...*Event) (*Event, error) {
	return b.fill(q, v, wait, true)
}

// maxFillPattern is the largest fill pattern, in bytes: OpenCL's
// clEnqueueFillBuffer takes 1, 2, 4, ... 128.
const maxFillPattern = 128

// fill is Fill and FillEvent: event says whether the caller wants the
// command's event.
func (b Buffer[T]) fill(q *Queue, v T, wait []*Event, event bool) (*Event, error) {
	if n := elemSize[T](); n == 0 || n > maxFillPattern || n&(n-1) != 0 {
		return nil, fmt.Errorf("fill buffer: %w: an element of %d bytes is no fill pattern (a power of two of at most %d bytes)", ErrInvalidArgument, n, maxFillPattern)
	}
	m, drv, _, size, err := b.span(q, "fill buffer", 0, b.n)
	if err != nil {
		return nil, err
	}
	defer m.doneAll()
	pattern := unsafe.Slice((*byte)(unsafe.Pointer(&v)), elemSize[T]())
	if r := q.recorder(); r != nil {
		if size == 0 {
			return nil, nil
		}
		dc := driver.GraphCommand{Kind: driver.GraphFill, Dst: drv, Size: size, Data: bytes.Clone(pattern)}
		return nil, m.named("fill buffer", q.recordOp(r, "fill buffer", trace.Fill, dc, []*Mem{b.mem()}, wait, 1))
	}
	ev, err := q.command("fill buffer", trace.Fill, func(dw []driver.Event, event bool) (driver.Event, error) {
		sq, ok := q.drv.(driver.SubmitQueue)
		switch {
		case size == 0:
			return q.noBytes(dw, event)
		case ok && !event:
			return nil, sq.SubmitFill(drv, pattern, 0, size, dw)
		}
		return q.drv.FillBuffer(drv, pattern, 0, size, dw)
	}, wait, event, 1)
	if err != nil {
		return nil, m.named("fill buffer", err)
	}
	// m, not b.mem(): a Free that raced the command has ended b's
	// generation, and the use must reach the log that its release reads.
	q.record(m)
	return ev, nil
}

// CopyTo copies the whole buffer to the start of dst, which must be at
// least as long and must not overlap it: the same buffer, or views of one
// buffer (View) that share elements, are an error wrapping
// ErrInvalidArgument, on every backend and in a graph. It returns once the
// command is enqueued, without an event; CopyToEvent returns one.
func (b Buffer[T]) CopyTo(q *Queue, dst Buffer[T], wait ...*Event) error {
	_, err := b.copyTo(q, dst, wait, false)
	return err
}

// CopyToEvent is CopyTo with the command's event.
func (b Buffer[T]) CopyToEvent(q *Queue, dst Buffer[T], wait ...*Event) (*Event, error) {
	return b.copyTo(q, dst, wait, true)
}

// copyTo is CopyTo and CopyToEvent, as fill is Fill and FillEvent.
func (b Buffer[T]) copyTo(q *Queue, dst Buffer[T], wait []*Event, event bool) (*Event, error) {
	sm, src, _, size, err := b.span(q, "copy buffer", 0, b.n)
	if err != nil {
		return nil, err
	}
	defer sm.doneAll()
	dm, d, _, _, err := dst.span(q, "copy buffer", 0, b.n)
	if err != nil {
		return nil, err
	}
	defer dm.doneAll()
	if err := checkOverlap("copy buffer", sm, dm, 0, 0, size); err != nil {
		return nil, err
	}
	if r := q.recorder(); r != nil {
		if size == 0 {
			return nil, nil
		}
		dc := driver.GraphCommand{Kind: driver.GraphCopy, Src: src, Dst: d, Size: size}
		return nil, sm.named("copy buffer", q.recordOp(r, "copy buffer", trace.Copy, dc, []*Mem{b.mem(), dst.mem()}, wait, 1))
	}
	ev, err := q.command("copy buffer", trace.Copy, func(dw []driver.Event, event bool) (driver.Event, error) {
		sq, ok := q.drv.(driver.SubmitQueue)
		switch {
		case size == 0:
			return q.noBytes(dw, event)
		case ok && !event:
			return nil, sq.SubmitCopy(src, d, 0, 0, size, dw)
		}
		return q.drv.CopyBuffer(src, d, 0, 0, size, dw)
	}, wait, event, 1)
	if err != nil {
		return nil, sm.named("copy buffer", err)
	}
	q.record(sm, dm) // the memory span registered, as fill's record
	return ev, nil
}

// checkOverlap returns an error wrapping ErrInvalidArgument, naming both
// sides and their bytes, when a copy of size bytes from byte soff of src to
// byte doff of dst reads and writes the same memory: src and dst are one
// buffer, or views of one (a view's memory is its parent's). The drivers
// differ there (OpenCL refuses it with CL_MEM_COPY_OVERLAP, which wraps no
// rt sentinel; CUDA's device-to-device copy does not look, and its result
// is undefined), so every copy between buffers is checked here, before any
// backend, whether it runs now or is recorded into a graph.
func checkOverlap(op string, src, dst *Mem, soff, doff, size int64) error {
	if size == 0 {
		return nil
	}
	sr, s0 := src.root()
	dr, d0 := dst.root()
	if sr != dr {
		return nil
	}
	s0, d0 = s0+soff, d0+doff
	if s0 >= d0+size || d0 >= s0+size {
		return nil
	}
	return fmt.Errorf("%s: %w: the source and the destination share memory: bytes [%d, %d) of a buffer of %d bytes, through %s, to its bytes [%d, %d), through %s; copy between buffers that share no memory",
		op, ErrInvalidArgument, s0, s0+size, sr.size, src.side(), d0, d0+size, dst.side())
}

// root returns the memory that m lies in, m itself or a view's parent, and
// m's byte offset there.
func (m *Mem) root() (*Mem, int64) {
	if m.parent != nil {
		return m.parent, m.offset
	}
	return m, 0
}

// side names m in the error of checkOverlap: the buffer, or a view of it.
func (m *Mem) side() string {
	if m.parent != nil {
		return fmt.Sprintf("a view of %d bytes at byte %d", m.size, m.offset)
	}
	return "the buffer itself"
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
	b := q.bound()
	if b != nil {
		if err := b.admit(q, nil); err != nil {
			return fmt.Errorf("%s: %w", x.op, err)
		}
	}
	if x.size == 0 {
		if err := q.enter(); err != nil {
			return fmt.Errorf("%s: %w", x.op, err)
		}
		q.exit() // the wait below must not hold Close off
		for _, e := range wait {
			if err := e.Wait(); err != nil {
				return fmt.Errorf("%s: %w", x.op, err)
			}
		}
		return nil
	}
	if err := q.enter(); err != nil {
		return fmt.Errorf("%s: %w", x.op, err)
	}
	defer q.exit()
	err := q.transferEntered(x, wait, skip+1)
	if err == nil && b != nil {
		b.synchronised() // a blocking transfer completes what was enqueued before it
	}
	return err
}

// transferEntered is transfer for a caller inside q's enter (x.size is
// not 0); skip is as for beginTask.
func (q *Queue) transferEntered(x xfer, wait []*Event, skip int) error {
	if r := q.rec.Load(); r != nil {
		return r.recordTransfer(&x)
	}
	dw, err := q.driverEvents(wait)
	if err != nil {
		return fmt.Errorf("%s: %w", x.op, err)
	}
	tk := q.beginTask(x.kind, x.op, skip+1, wait)
	n, l := q.pts.enq.Load(), q.log.mark() // a blocking transfer completes what was enqueued before it
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
	if err != nil {
		return q.ctx.failed(q, err)
	}
	q.pts.complete(n)
	q.log.synchronised(l)
	return nil
}

// command enqueues one command with do and wraps its event, where event
// is set; without, it keeps the driver's event only where tracing samples
// the command's device times, and returns a nil Event. do's second
// argument says whether the command needs its driver event: where it does
// not, do may enqueue it without one (driver.SubmitQueue) and return nil.
// kind and skip are as for beginTask.
func (q *Queue) command(op string, kind trace.CmdKind, do func(dw []driver.Event, event bool) (driver.Event, error), wait []*Event, event bool, skip int) (*Event, error) {
	if r := q.recorder(); r != nil {
		return nil, r.refuse(op, "graphs do not record this command")
	}
	b := q.bound()
	if b != nil {
		if err := b.admit(q, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
	}
	if err := q.enter(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer q.exit()
	dw, err := q.driverEvents(wait)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	tk := q.beginTask(kind, op, skip+1, wait)
	want := event || q.wantsEvent(tk)
	ev, err := do(dw, want)
	if want {
		tk.End()
	} else {
		tk.EndRelease()
	}
	if err != nil {
		if want {
			tk.Release()
		}
		return nil, q.ctx.failed(q, fmt.Errorf("%s on %q: %w", op, q.dev.Name, err))
	}
	if b != nil {
		b.enqueued(q)
	}
	switch {
	case event:
		return q.newTracedEvent(ev, op, tk), nil
	case want:
		q.addPending(tk, nil, ev)
		tk.Release()
	case ev != nil:
		ev.Release()
	}
	return nil, nil
}

// noBytes enqueues a fill or copy of no bytes after dw: a marker where
// its event is wanted or it has events to wait for (the queue is ordered
// after them), else nothing.
func (q *Queue) noBytes(dw []driver.Event, event bool) (driver.Event, error) {
	if !event && len(dw) == 0 {
		return nil, nil
	}
	return q.drv.Marker(dw)
}

// View returns a buffer of n elements of b from element off that shares
// b's memory: an OpenCL sub-buffer. Kernels and transfers use it as any
// other buffer; commands that use it count as uses of b for the
// allocator's stream-ordered reuse. The byte offset of element off must be
// a multiple of every device's MemBaseAddrAlign (128 bytes on PoCL), since
// a kernel argument starts at an aligned address; a span outside b is an
// error wrapping ErrOutOfRange, a misaligned one an error wrapping
// ErrInvalidArgument. A view of a view is a view of the same memory.
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
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer c.exit()
	root, boff := m, int64(off)*es
	if m.parent != nil {
		root, boff = m.parent, boff+m.offset
	}
	// A Free of the parent while the driver makes the sub-buffer must not
	// release the parent under it.
	if !root.use() {
		return nil, fmt.Errorf("%s: buffer: %w", op, ErrFreed)
	}
	defer root.done()
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
		return nil, c.failed(nil, fmt.Errorf("%s on %q: %w", op, c.devices[0].Name, err))
	}
	v.setDriver(drv)
	w := weak.Make(v)
	v.cleanup = runtime.AddCleanup(v, func(h viewHandle) { h.c.forgetView(h.w, h.drv) }, viewHandle{c, w, drv})
	c.live.addView(w, drv) // live.go
	return v, nil
}

// viewHandle is what the cleanup of an unreachable view releases.
type viewHandle struct {
	c   *Context
	w   weak.Pointer[Mem]
	drv driver.Buffer
}

// releaseView releases a view's sub-buffer, not its parent, unless Close
// has (live.go).
func releaseView(m *Mem) error {
	if m.drv == nil {
		return nil
	}
	c := m.ctx
	if c.enter() != nil {
		return nil // Close releases it
	}
	defer c.exit()
	if !c.live.removeView(weak.Make(m)) {
		return nil
	}
	m.cleanup.Stop()
	if err := m.drv.Release(); err != nil {
		return fmt.Errorf("release view of %d bytes: %w", m.size, err)
	}
	return nil
}
