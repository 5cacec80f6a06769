package opencl

/*
#include "dgen_cl.h"
*/
import "C"

import (
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

var (
	_ driver.SubBufferContext  = (*context)(nil)
	_ driver.HostBufferContext = (*context)(nil)
	_ driver.MapQueue          = queue{}
)

// NewSubBuffer implements driver.SubBufferContext with clCreateSubBuffer.
func (c *context) NewSubBuffer(parent driver.Buffer, offset, size int64) (driver.Buffer, error) {
	m, err := asBuffer("clCreateSubBuffer", parent)
	if err != nil {
		return nil, err
	}
	region := C.cl_buffer_region{origin: C.size_t(offset), size: C.size_t(size)}
	var code C.cl_int
	h := C.clCreateSubBuffer(m, C.CL_MEM_READ_WRITE, C.CL_BUFFER_CREATE_TYPE_REGION, unsafe.Pointer(&region), &code)
	if err := check("clCreateSubBuffer", code); err != nil {
		return nil, err
	}
	return buffer{h, c}, nil
}

// NewHostBuffer implements driver.HostBufferContext with a buffer created
// with CL_MEM_ALLOC_HOST_PTR.
func (c *context) NewHostBuffer(size int64) (driver.Buffer, error) {
	var code C.cl_int
	h := C.clCreateBuffer(c.h, C.CL_MEM_READ_WRITE|C.CL_MEM_ALLOC_HOST_PTR, C.size_t(size), nil, &code)
	if err := check("clCreateBuffer", code); err != nil {
		return nil, err
	}
	return buffer{h, c}, nil
}

// MapBuffer implements driver.MapQueue with a blocking clEnqueueMapBuffer.
func (q queue) MapBuffer(b driver.Buffer, offset, size int64, wait []driver.Event) (unsafe.Pointer, error) {
	m, err := asBuffer("clEnqueueMapBuffer", b)
	if err != nil {
		return nil, err
	}
	var wb [8]C.cl_event
	wl, wp, err := waitList(wb[:0], wait)
	if err != nil {
		return nil, err
	}
	var code C.cl_int
	p := C.clEnqueueMapBuffer(q.h, m, C.CL_TRUE, C.CL_MAP_READ|C.CL_MAP_WRITE, C.size_t(offset), C.size_t(size), C.cl_uint(len(wl)), wp, nil, &code)
	if err := queueError(q.h, "clEnqueueMapBuffer", code); err != nil {
		return nil, err
	}
	return p, nil
}

// UnmapBuffer implements driver.MapQueue with clEnqueueUnmapMemObject and
// waits for it.
func (q queue) UnmapBuffer(b driver.Buffer, p unsafe.Pointer) error {
	m, err := asBuffer("clEnqueueUnmapMemObject", b)
	if err != nil {
		return err
	}
	var ev C.cl_event
	if err := queueError(q.h, "clEnqueueUnmapMemObject", C.clEnqueueUnmapMemObject(q.h, m, p, 0, nil, &ev)); err != nil {
		return err
	}
	defer C.clReleaseEvent(ev)
	return check("clWaitForEvents", C.clWaitForEvents(1, &ev))
}
