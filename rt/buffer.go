package rt

import "github.com/dgen-go/dgen/rt/internal/core"

// Buffer is a typed array of n elements of T in device memory. T must be
// plain data (numbers, booleans, arrays and structs of them). A Buffer is a
// small handle: copies refer to the same memory. The zero Buffer is nil.
type Buffer[T any] = core.Buffer[T]

// NewBuffer allocates a buffer of n elements of T directly from the driver.
func NewBuffer[T any](c *Context, n int) (Buffer[T], error) {
	return core.NewBuffer[T](c, n)
}

// Memory is device memory of any element type: an rt.Buffer, whichever
// its T, or what its Mem method returns. An Image1DBuffer's
// ImageDesc.Buffer and rt/raw's Kernel.SetBuffer take it. Only rt
// implements it.
type Memory = core.Memory
