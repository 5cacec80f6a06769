package main

// #cgo CFLAGS: -I${SRCDIR}/.. -Wno-unused-function
// #cgo LDFLAGS: -lOpenCL
// #define main rawcl_main
// #define hotspot_loop cl_hotspot_loop
// #define hotspot_open cl_hotspot_open
// #define hotspot_steps cl_hotspot_steps
// #define hotspot_step cl_hotspot_step
// #define hotspot_finish cl_hotspot_finish
// #define hotspot_rw4 cl_hotspot_rw4
// #define hotspot_rw4s cl_hotspot_rw4s
// #include "rawcl/rawcl.c"
import "C"

import (
	"time"
	"unsafe"
)

// clLoop is rawcl's Hotspot loop on a context of its own.
type clLoop struct{ h *C.struct_cl_hotspot_loop }

func openCL(src string, size int) cWays {
	s := C.CString(src)
	defer C.free(unsafe.Pointer(s))
	h := C.cl_hotspot_open(s, C.int(size), 1)
	plus := func(x extra) stepper {
		return perCallPlus{func(i int) { C.cl_hotspot_step(h, C.int(i&1), 1) }, func() { C.cl_hotspot_finish(h) }, x}
	}
	return cWays{clLoop{h}, clPerCall{h}, clRW{h}, clRWPerCall{h}, plus}
}

func (l clLoop) steps(n int) (float64, error) { return float64(C.cl_hotspot_steps(l.h, C.int(n))), nil }

// clPerCall is the same C loop on the same context, with one call from Go
// per launch: what a cgo call adds to a launch.
type clPerCall struct{ h *C.struct_cl_hotspot_loop }

func (l clPerCall) steps(n int) (float64, error) {
	start := time.Now()
	for i := range n {
		C.cl_hotspot_step(l.h, C.int(i&1), 1)
	}
	enqueued(start, n)
	C.cl_hotspot_finish(l.h)
	return perStep(start, n), nil
}

// clRW writes 4 bytes and reads them back, both waited for, in C.
type clRW struct{ h *C.struct_cl_hotspot_loop }

func (l clRW) steps(n int) (float64, error) { return float64(C.cl_hotspot_rw4s(l.h, C.int(n))), nil }

// clRWPerCall is clRW with one call from Go per pair.
type clRWPerCall struct{ h *C.struct_cl_hotspot_loop }

func (l clRWPerCall) steps(n int) (float64, error) {
	v := (*C.uint)(C.malloc(4))
	defer C.free(unsafe.Pointer(v))
	*v = 1
	start := time.Now()
	for range n {
		C.cl_hotspot_rw4(l.h, v)
	}
	return perStep(start, n), nil
}
