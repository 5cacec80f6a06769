package cuda

/*
#include "dgen_cu.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

var (
	_ driver.SubBufferContext  = (*context)(nil)
	_ driver.HostBufferContext = (*context)(nil)
	_ driver.MapQueue          = (*queue)(nil)
	_ driver.MemInfoContext    = (*context)(nil)
)

// buffer is device memory: an allocation, a view into one (a pointer
// offset) or pinned host memory that the devices reach.
type buffer struct {
	c    *context
	ptr  C.CUdeviceptr
	size int64
	host unsafe.Pointer // pinned host memory, nil for device memory
	view bool
	pool bool // from the device's memPool (pool.go)
}

// NewBuffer allocates device memory, behind the gate (gate.go): on the
// device of a one-device context, from its memPool where it has one, and
// managed memory, which every device reaches, in a context over several
// (as an OpenCL buffer belongs to its whole context).
func (c *context) NewBuffer(size int64) (driver.Buffer, error) {
	b := &buffer{c: c, size: size}
	if d := c.devs[0]; len(c.devs) == 1 && d.mem.h != nil {
		p, err := d.mem.allocate(d, max(size, 1))
		if err != nil {
			return nil, err
		}
		b.ptr, b.pool = p, true
		return b, nil
	}
	managed := C.int(0)
	if len(c.devs) > 1 {
		managed = 1
	}
	call := "cuMemAlloc"
	if managed != 0 {
		call = "cuMemAllocManaged"
	}
	defer c.devs[0].gate.hold()()
	if err := cuError(call, C.dgen_alloc(c.devs[0].ctx, &b.ptr, C.size_t(max(size, 1)), managed)); err != nil {
		return nil, err
	}
	return b, nil
}

// NewSubBuffer returns a view of parent: its pointer plus offset.
func (c *context) NewSubBuffer(parent driver.Buffer, offset, size int64) (driver.Buffer, error) {
	p, err := asBuffer("view", parent)
	if err != nil {
		return nil, err
	}
	if p.view {
		return nil, errors.New("view: the parent is a view")
	}
	if err := p.span("view", offset, size); err != nil {
		return nil, err
	}
	v := &buffer{c: c, ptr: p.ptr + C.CUdeviceptr(offset), size: size, view: true}
	if p.host != nil {
		v.host = unsafe.Add(p.host, offset)
	}
	return v, nil
}

// NewHostBuffer allocates pinned host memory that every device reaches
// (cuMemHostAlloc, portable and mapped), behind the gate.
func (c *context) NewHostBuffer(size int64) (driver.Buffer, error) {
	b := &buffer{c: c, size: size}
	defer c.devs[0].gate.hold()()
	if err := cuError("cuMemHostAlloc", C.dgen_host_alloc(c.devs[0].ctx, &b.host, &b.ptr, C.size_t(max(size, 1)))); err != nil {
		return nil, err
	}
	return b, nil
}

// Release frees the memory: memory of a memPool in stream order, after
// the commands enqueued so far (pool.go), other memory behind the gate
// (gate.go), where cuMemFree and cuMemFreeHost wait for the device's
// kernels. Releasing a view does nothing.
func (b *buffer) Release() error {
	if b.view {
		return nil
	}
	if d := b.c.devs[0]; b.pool {
		return d.mem.free(d, b.ptr)
	}
	for _, d := range b.c.devs {
		d.settleRings()
	}
	defer b.c.devs[0].gate.hold()()
	if b.host != nil {
		return cuError("cuMemFreeHost", C.dgen_host_free(b.c.devs[0].ctx, b.host))
	}
	return cuError("cuMemFree", C.dgen_free(b.c.devs[0].ctx, b.ptr))
}

// MapBuffer returns the host address of bytes of a host buffer, after
// wait and everything enqueued on q before it.
func (q *queue) MapBuffer(b driver.Buffer, offset, size int64, wait []driver.Event) (unsafe.Pointer, error) {
	bb, err := asBuffer("map", b)
	if err != nil {
		return nil, err
	}
	if bb.host == nil {
		return nil, fmt.Errorf("map: %w: only host buffers map on CUDA", errors.ErrUnsupported)
	}
	if err := bb.span("map", offset, size); err != nil {
		return nil, err
	}
	ev, err := q.Marker(wait)
	if err != nil {
		return nil, err
	}
	defer ev.Release()
	if err := ev.Wait(); err != nil {
		return nil, err
	}
	return unsafe.Add(bb.host, offset), nil
}

// UnmapBuffer does nothing: host memory stays mapped.
func (q *queue) UnmapBuffer(b driver.Buffer, p unsafe.Pointer) error {
	_, err := asBuffer("unmap", b)
	return err
}

// BuffersResident implements driver.ResidentContext: cuMemAlloc commits
// device memory at once; managed memory (a context of several devices)
// is committed where it is first touched.
func (c *context) BuffersResident() bool { return len(c.devs) == 1 }

// MemInfo implements driver.MemInfoContext: cuMemGetInfo on device dev's
// primary context, which counts the device's memory of every context and
// process. It first waits for the frees of the device's memPool enqueued
// so far, which wait for the commands before them, and gives the pool's
// unused memory back, so that memory released counts as free.
func (c *context) MemInfo(dev int) (free, total int64, err error) {
	if dev < 0 || dev >= len(c.devs) {
		return 0, 0, fmt.Errorf("cuMemGetInfo: device %d of %d", dev, len(c.devs))
	}
	if err := c.devs[dev].mem.drain(c.devs[dev]); err != nil {
		return 0, 0, err
	}
	var f, t C.size_t
	if err := cuError("cuMemGetInfo", C.dgen_mem_info(c.devs[dev].ctx, &f, &t)); err != nil {
		return 0, 0, err
	}
	return int64(f), int64(t), nil
}
