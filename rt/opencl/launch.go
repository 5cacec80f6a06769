package opencl

/*
#cgo noescape dgen_launch
#cgo nocallback dgen_launch
#include "dgen_cl.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/dgen-go/dgen/rt/driver"
)

// Handle implements driver.NativeBuffer: the cl_mem.
func (b buffer) Handle() uint64 { return uint64(uintptr(unsafe.Pointer(b.h))) }

// Handle implements driver.NativeSampler: the cl_sampler.
func (s sampler) Handle() uint64 { return uint64(uintptr(unsafe.Pointer(s.h))) }

// LaunchArgs implements driver.ArgLauncher: one cgo call sets the changed
// arguments and enqueues the kernel (dgen_launch).
func (q queue) LaunchArgs(k driver.Kernel, a *driver.Args, r *driver.NDRange, wait []driver.Event, wantEvent bool) (driver.Event, error) {
	kk, ok := k.(kernel)
	if !ok {
		return nil, fmt.Errorf("clEnqueueNDRangeKernel: kernel of another backend (%T)", k)
	}
	if !kk.ran.Load() {
		var ev driver.Event
		err := kk.first(func() (err error) {
			ev, err = q.LaunchArgs(k, a, r, wait, wantEvent)
			return err
		})
		return ev, err
	}
	var wb [8]C.cl_event
	wl, wp, err := waitList(wb[:0], wait)
	if err != nil {
		return nil, err
	}
	var global, local [3]C.size_t
	for i := range 3 {
		global[i], local[i] = C.size_t(r.Global[i]), C.size_t(r.Local[i])
	}
	lp := &local[0]
	if r.Local == [3]int{} {
		lp = nil
	}
	var offset [3]C.size_t
	op := offsetOf(r, &offset)
	// dgen_launch visits the slots only when one changed: a loop that
	// launches with the same arguments costs nothing per argument.
	var args *C.dgen_arg
	nargs := 0
	if a.Changed > 0 {
		args, nargs = (*C.dgen_arg)(unsafe.Pointer(&a.Slots[0])), len(a.Slots)
	}
	var bytes *C.uchar
	if len(a.Bytes) > 0 {
		bytes = (*C.uchar)(unsafe.Pointer(&a.Bytes[0]))
	}
	var ev C.cl_event
	evp := &ev
	if !wantEvent {
		evp = nil
	}
	var failed C.cl_uint
	code := C.dgen_launch(C.uintptr_t(uintptr(unsafe.Pointer(q.h))), C.uintptr_t(uintptr(unsafe.Pointer(kk.h))), args, C.cl_uint(nargs), bytes, C.cl_uint(r.Dims), op, &global[0], lp, C.cl_uint(len(wl)), wp, evp, &failed)
	if a.Changed > 0 {
		a.Changed = countChanged(a.Slots)
	}
	if code != C.CL_SUCCESS {
		if a.Changed > 0 && int(failed) < len(a.Slots) && a.Slots[failed].Changed {
			return nil, fmt.Errorf("argument %d: %w", int(failed), check("clSetKernelArg", code))
		}
		return nil, queueError(q.h, "clEnqueueNDRangeKernel", code)
	}
	if !wantEvent {
		return nil, nil
	}
	return event{ev}, nil
}

// offsetOf returns r's global work offset as clEnqueueNDRangeKernel takes
// it, in buf: nil for none.
func offsetOf(r *driver.NDRange, buf *[3]C.size_t) *C.size_t {
	if r.Offset == [3]int{} {
		return nil
	}
	for i := range 3 {
		buf[i] = C.size_t(r.Offset[i])
	}
	return &buf[0]
}

// countChanged returns the number of slots still marked changed.
func countChanged(slots []driver.Arg) int {
	n := 0
	for i := range slots {
		if slots[i].Changed {
			n++
		}
	}
	return n
}

var (
	_ driver.ArgLauncher   = queue{}
	_ driver.NativeBuffer  = buffer{}
	_ driver.NativeSampler = sampler{}
)

// dgen_launch spells the argument kinds as numbers.
var (
	_ [driver.ArgBuffer - 1]byte
	_ [1 - driver.ArgBuffer]byte
	_ [driver.ArgLocal - 2]byte
	_ [2 - driver.ArgLocal]byte
	_ [driver.ArgSampler - 3]byte
	_ [3 - driver.ArgSampler]byte
)

// driver.Arg and dgen_arg must agree field for field: each array length
// below is a constant that overflows (a compile error) where they do not.
var (
	_ [unsafe.Sizeof(driver.Arg{}) - C.sizeof_dgen_arg]byte
	_ [C.sizeof_dgen_arg - unsafe.Sizeof(driver.Arg{})]byte
	_ [unsafe.Offsetof(driver.Arg{}.Bits)]byte
	_ [-unsafe.Offsetof(driver.Arg{}.Bits)]byte
	_ [unsafe.Offsetof(driver.Arg{}.Size) - C.dgen_arg_size_off]byte
	_ [C.dgen_arg_size_off - unsafe.Offsetof(driver.Arg{}.Size)]byte
	_ [unsafe.Offsetof(driver.Arg{}.Kind) - C.dgen_arg_kind_off]byte
	_ [C.dgen_arg_kind_off - unsafe.Offsetof(driver.Arg{}.Kind)]byte
	_ [unsafe.Offsetof(driver.Arg{}.Changed) - C.dgen_arg_changed_off]byte
	_ [C.dgen_arg_changed_off - unsafe.Offsetof(driver.Arg{}.Changed)]byte
)
