package rt

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/dgen-go/dgen/rt/driver"
)

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
