package rt

import (
	"context"

	"github.com/dgen-go/dgen/rt/internal/core"
)

// Buffer is a typed array of n elements of T in device memory. T must be
// plain data (numbers, booleans, arrays and structs of them). A Buffer is a
// small handle: copies refer to the same memory. The zero Buffer is nil.
//
// Read, Write, ReadAt and WriteAt block until the copy is done; their
// Context forms bound the wait for the commands before the copy with a
// context.Context. Fill and CopyTo return once the command is enqueued,
// without an event (FillEvent and CopyToEvent return one, as a kernel
// spec's EnqueueEvent does); ReadAsync and WriteAsync, which copy to and
// from pinned memory (Pinned), return at once with the command's event.
type Buffer[T any] core.Buffer[T]

// core returns b as the core's buffer.
func (b Buffer[T]) core() core.Buffer[T] { return core.Buffer[T](b) }

// memory implements Memory.
func (b Buffer[T]) memory() *core.Mem { return core.BufferMem(b.core()) }

// NewBuffer allocates a buffer of n elements of T directly from the driver.
func NewBuffer[T any](c *Context, n int) (Buffer[T], error) {
	b, err := core.NewBuffer[T](c.core(), n)
	return Buffer[T](b), err
}

// Len returns the number of elements.
func (b Buffer[T]) Len() int { return b.core().Len() }

// Free gives the buffer's memory back. Later uses of b, or of any copy of
// it, and a second Free, return errors wrapping ErrFreed; after the
// context's Close, Free returns nil (Close released the memory). Free of
// the zero Buffer does nothing and returns nil, as C's free(NULL) and
// cudaFree(0) do, so that a deferred Free needs no guard.
func (b Buffer[T]) Free() error { return b.core().Free() }

// Write copies src into the buffer from element 0 and waits until it is
// done. src may be shorter than the buffer.
func (b Buffer[T]) Write(q *Queue, src []T, wait ...*Event) error {
	var w core.WaitList
	return b.core().Write(q.core(), src, waits(&w, wait)...)
}

// WriteAt copies src into the buffer from element off and waits until it
// is done. A span outside the buffer is an error wrapping ErrOutOfRange,
// and nothing is written.
func (b Buffer[T]) WriteAt(q *Queue, off int, src []T, wait ...*Event) error {
	var w core.WaitList
	return b.core().WriteAt(q.core(), off, src, waits(&w, wait)...)
}

// Read copies the first len(dst) elements of the buffer into dst and waits
// until it is done.
func (b Buffer[T]) Read(q *Queue, dst []T, wait ...*Event) error {
	var w core.WaitList
	return b.core().Read(q.core(), dst, waits(&w, wait)...)
}

// ReadAt copies len(dst) elements from element off into dst and waits
// until it is done. A span outside the buffer is an error wrapping
// ErrOutOfRange, and dst is left alone.
func (b Buffer[T]) ReadAt(q *Queue, off int, dst []T, wait ...*Event) error {
	var w core.WaitList
	return b.core().ReadAt(q.core(), off, dst, waits(&w, wait)...)
}

// WriteContext is Write bounded by ctx. The copy runs after the commands
// enqueued on q before it and the events of wait: when ctx is done before
// they have completed, WriteContext returns an error wrapping ctx.Err(),
// writes nothing, and they run on. The copy itself, once they have
// completed, is not interrupted.
func (b Buffer[T]) WriteContext(ctx context.Context, q *Queue, src []T, wait ...*Event) error {
	var w core.WaitList
	return b.core().WriteAtContext(ctx, q.core(), 0, src, waits(&w, wait)...)
}

// WriteAtContext is WriteAt bounded by ctx, as WriteContext is Write.
func (b Buffer[T]) WriteAtContext(ctx context.Context, q *Queue, off int, src []T, wait ...*Event) error {
	var w core.WaitList
	return b.core().WriteAtContext(ctx, q.core(), off, src, waits(&w, wait)...)
}

// ReadContext is Read bounded by ctx. The copy runs after the commands
// enqueued on q before it and the events of wait: when ctx is done before
// they have completed, ReadContext returns an error wrapping ctx.Err(),
// leaves dst alone, and they run on. The copy itself, once they have
// completed, is not interrupted.
func (b Buffer[T]) ReadContext(ctx context.Context, q *Queue, dst []T, wait ...*Event) error {
	var w core.WaitList
	return b.core().ReadAtContext(ctx, q.core(), 0, dst, waits(&w, wait)...)
}

// ReadAtContext is ReadAt bounded by ctx, as ReadContext is Read.
func (b Buffer[T]) ReadAtContext(ctx context.Context, q *Queue, off int, dst []T, wait ...*Event) error {
	var w core.WaitList
	return b.core().ReadAtContext(ctx, q.core(), off, dst, waits(&w, wait)...)
}

// Fill sets every element to v. It returns once the command is enqueued,
// without an event; FillEvent returns one.
func (b Buffer[T]) Fill(q *Queue, v T, wait ...*Event) error {
	var w core.WaitList
	return b.core().Fill(q.core(), v, waits(&w, wait)...)
}

// FillEvent is Fill, returning the command's event.
func (b Buffer[T]) FillEvent(q *Queue, v T, wait ...*Event) (*Event, error) {
	var w core.WaitList
	e, err := b.core().FillEvent(q.core(), v, waits(&w, wait)...)
	return (*Event)(e), err
}

// CopyTo copies the whole buffer to the start of dst, which must be at
// least as long. It returns once the command is enqueued, without an
// event; CopyToEvent returns one.
func (b Buffer[T]) CopyTo(q *Queue, dst Buffer[T], wait ...*Event) error {
	var w core.WaitList
	return b.core().CopyTo(q.core(), dst.core(), waits(&w, wait)...)
}

// CopyToEvent is CopyTo, returning the command's event.
func (b Buffer[T]) CopyToEvent(q *Queue, dst Buffer[T], wait ...*Event) (*Event, error) {
	var w core.WaitList
	e, err := b.core().CopyToEvent(q.core(), dst.core(), waits(&w, wait)...)
	return (*Event)(e), err
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
	v, err := b.core().View(off, n)
	return Buffer[T](v), err
}

// Memory is device memory of any element type: an rt.Buffer, whichever
// its T. An Image1DBuffer's ImageDesc.Buffer takes it. Only rt implements
// it.
type Memory interface {
	memory() *core.Mem
}
