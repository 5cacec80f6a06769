package rt

import (
	"context"

	"github.com/dgen-go/dgen/rt/internal/core"
)

// ErrTooLarge reports an allocation above the device's maximum single
// allocation (CL_DEVICE_MAX_MEM_ALLOC_SIZE). No driver call is made.
var ErrTooLarge = core.ErrTooLarge

// Alloc allocates an untagged buffer of n elements of T on q's device
// from the allocator's size-class pool (or, under the "tagged"
// Config.AllocPolicy, from the driver). Free gives it back to the pool.
// Errors are as for AllocSite.Alloc. NewBuffer, by contrast, always asks
// the driver.
func Alloc[T any](q *Queue, n int) (Buffer[T], error) {
	b, err := core.Alloc[T](q.core(), n)
	return Buffer[T](b), err
}

// AllocContext is Alloc, waiting under ctx past Config.MemoryLimit as
// AllocSite.AllocContext does.
func AllocContext[T any](ctx context.Context, q *Queue, n int) (Buffer[T], error) {
	b, err := core.AllocContext[T](ctx, q.core(), n)
	return Buffer[T](b), err
}
