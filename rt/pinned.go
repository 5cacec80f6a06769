package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// Pinned is host memory of n elements of T that the device reaches
// directly: an OpenCL buffer allocated with CL_MEM_ALLOC_HOST_PTR and
// mapped once for the host, which on GPUs is page-locked memory that
// transfers copy by DMA, without staging through a driver buffer. Programs
// that transfer every iteration keep their host side in one: pass Slice to
// Buffer.Read and Buffer.Write, or the Pinned itself to ReadAsync and
// WriteAsync, which return before the copy is done. Its methods are safe
// for concurrent use.
type Pinned[T any] = core.Pinned[T]

// NewPinned allocates pinned host memory of n elements of T, mapped for
// the host through q, and zeroes it.
func NewPinned[T any](q *Queue, n int) (*Pinned[T], error) {
	return core.NewPinned[T](q, n)
}
