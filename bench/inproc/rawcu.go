package main

// #cgo CFLAGS: -I${SRCDIR}/.. -Wno-unused-function
// #cgo LDFLAGS: -lOpenCL -ldl
// #define main rawcu_main
// #define hotspot_loop cu_hotspot_loop
// #define hotspot_open cu_hotspot_open
// #define hotspot_steps cu_hotspot_steps
// #define hotspot_step cu_hotspot_step
// #define hotspot_finish cu_hotspot_finish
// #define hotspot_rw4 cu_hotspot_rw4
// #define hotspot_rw4s cu_hotspot_rw4s
// #include "rawcu/rawcu.c"
import "C"

import (
	"time"
	"unsafe"
)

// cuLoop is rawcu's Hotspot loop on the device's primary context and a
// stream of its own.
type cuLoop struct{ h *C.struct_cu_hotspot_loop }

func openCU(src string, size int) cWays {
	s := C.CString(src)
	defer C.free(unsafe.Pointer(s))
	h := C.cu_hotspot_open(s, C.int(size), 1)
	plus := func(x extra) stepper {
		return perCallPlus{func(i int) { C.cu_hotspot_step(h, C.int(i&1), 1) }, func() { C.cu_hotspot_finish(h) }, x}
	}
	return cWays{cuLoop{h}, cuPerCall{h}, cuRW{h}, cuRWPerCall{h}, plus}
}

func (l cuLoop) steps(n int) (float64, error) { return float64(C.cu_hotspot_steps(l.h, C.int(n))), nil }

// cuPerCall is the same C loop on the same stream, with one call from Go
// per launch: what a cgo call adds to a launch.
type cuPerCall struct{ h *C.struct_cu_hotspot_loop }

func (l cuPerCall) steps(n int) (float64, error) {
	start := time.Now()
	for i := range n {
		C.cu_hotspot_step(l.h, C.int(i&1), 1)
	}
	enqueued(start, n)
	C.cu_hotspot_finish(l.h)
	return perStep(start, n), nil
}

// cuRW writes 4 bytes and reads them back, both waited for, in C.
type cuRW struct{ h *C.struct_cu_hotspot_loop }

func (l cuRW) steps(n int) (float64, error) { return float64(C.cu_hotspot_rw4s(l.h, C.int(n))), nil }

// cuRWPerCall is cuRW with one call from Go per pair.
type cuRWPerCall struct{ h *C.struct_cu_hotspot_loop }

func (l cuRWPerCall) steps(n int) (float64, error) {
	v := (*C.uint)(C.malloc(4))
	defer C.free(unsafe.Pointer(v))
	*v = 1
	start := time.Now()
	for range n {
		C.cu_hotspot_rw4(l.h, v)
	}
	return perStep(start, n), nil
}
