package rt

import (
	"context"

	"github.com/dgen-go/dgen/rt/internal/core"
)

// Pinned is host memory of n elements of T that the device reaches
// directly: an OpenCL buffer allocated with CL_MEM_ALLOC_HOST_PTR and
// mapped once for the host, which on GPUs is page-locked memory that
// transfers copy by DMA, without staging through a driver buffer. Programs
// that transfer every iteration keep their host side in one: pass Slice to
// Buffer.Read and Buffer.Write, or the Pinned itself to ReadAsync and
// WriteAsync, which return before the copy is done. Its methods are safe
// for concurrent use.
type Pinned[T any] core.Pinned[T]

// core returns p as the core's pinned memory.
func (p *Pinned[T]) core() *core.Pinned[T] { return (*core.Pinned[T])(p) }

// NewPinned allocates pinned host memory of n elements of T, mapped for
// the host through q, and zeroes it. The mapping runs after the commands
// enqueued on q before it: NewPinnedContext bounds that wait.
func NewPinned[T any](q *Queue, n int) (*Pinned[T], error) {
	p, err := core.NewPinned[T](q.core(), n)
	return (*Pinned[T])(p), err
}

// NewPinnedContext is NewPinned bounded by ctx: when ctx is done before
// the commands enqueued on q before it have completed, it returns an error
// wrapping ctx.Err() and allocates nothing, and they run on.
func NewPinnedContext[T any](ctx context.Context, q *Queue, n int) (*Pinned[T], error) {
	p, err := core.NewPinnedContext[T](ctx, q.core(), n)
	return (*Pinned[T])(p), err
}

// Slice returns the memory as a slice, valid until Free or the context's
// Close; nil after them (a slice returned before must not be used after
// them either). The host must not touch the elements an asynchronous
// transfer is copying until its event completes.
func (p *Pinned[T]) Slice() []T { return p.core().Slice() }

// Free waits for the asynchronous transfers that use the memory (those
// whose events were released too), unmaps it and releases it. A second
// Free returns an error wrapping ErrFreed; Free after the context's Close
// returns nil (Close released the memory).
func (p *Pinned[T]) Free() error { return p.core().Free() }

// ReadAsync enqueues a copy of len(dst.Slice()) elements of b, from
// element off, into dst after wait, and returns at once with the command's
// event; dst holds the elements once it completes. A span outside b is an
// error wrapping ErrOutOfRange, and nothing is enqueued.
func (b Buffer[T]) ReadAsync(q *Queue, off int, dst *Pinned[T], wait ...*Event) (*Event, error) {
	var w core.WaitList
	e, err := b.core().ReadAsync(q.core(), off, dst.core(), waits(&w, wait)...)
	return (*Event)(e), err
}

// WriteAsync enqueues a copy of src into b from element off after wait,
// and returns at once with the command's event. src must not change until
// the event completes. A span outside b is an error wrapping
// ErrOutOfRange, and nothing is enqueued.
func (b Buffer[T]) WriteAsync(q *Queue, off int, src *Pinned[T], wait ...*Event) (*Event, error) {
	var w core.WaitList
	e, err := b.core().WriteAsync(q.core(), off, src.core(), waits(&w, wait)...)
	return (*Event)(e), err
}
