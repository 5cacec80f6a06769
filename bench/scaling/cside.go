package main

// #cgo CFLAGS: -I${SRCDIR}/.. -Wno-unused-function -Wno-unused-variable
// #cgo LDFLAGS: -lOpenCL -ldl -lpthread
// #include <stdlib.h>
// #include "cside.h"
import "C"

import (
	"fmt"
	"time"
	"unsafe"
)

// cSide is the C program of the same workloads (cside.c).
type cSide struct{}

// openC opens the C side: CUDA, or OpenCL on the first GPU (cpu false) or
// CPU device, with the source of both kernels and requests of n floats.
func openC(cuda, cpu bool, src string, n int) (cSide, error) {
	s := C.CString(src)
	defer C.free(unsafe.Pointer(s))
	if C.sc_open(cbool(cuda), cbool(cpu), s, C.int(n)) != 0 {
		return cSide{}, fmt.Errorf("C side: no OpenCL device of the kind asked for")
	}
	return cSide{}, nil
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// run runs workload w on g threads for the window and returns what they did.
func (cSide) run(w workload, g int, window time.Duration) result {
	counts := make([]C.long, g)
	lat := make([]C.float, g*latCap)
	ns := C.sc_run(C.int(w), C.int(g), C.double(window.Nanoseconds()), &counts[0], &lat[0], latCap)
	r := result{elapsed: time.Duration(ns)}
	for i, c := range counts {
		r.counts = append(r.counts, int64(c))
		for j := 0; j < min(int(c), latCap); j++ {
			r.lat = append(r.lat, float64(lat[i*latCap+j]))
		}
	}
	return r
}
