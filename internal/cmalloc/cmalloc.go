// Package cmalloc gives the free memory of C's heap back to the system.
//
// A driver that a context loads (NVIDIA's OpenCL and CUDA libraries,
// PoCL) allocates and frees tens of MiB with C's malloc while a context
// opens, builds and closes. A Go program makes those calls on many
// threads, and glibc's malloc gives each thread an arena of its own and
// keeps what is freed in it: over hundreds of Open and Close cycles a
// process's resident memory grows by the memory glibc keeps free in
// those arenas, not by memory anyone holds (docs/BENCHMARKS.md, "Open and
// close"). A backend calls Trim when it releases a context, so that what
// the driver freed goes back to the system; Trim changes none of malloc's
// settings.
package cmalloc

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

// dgen_trim returns the free memory of every malloc arena to the system
// (malloc_trim), where the C library is glibc; it does nothing elsewhere.
static void dgen_trim(void) {
#ifdef __GLIBC__
	malloc_trim(0);
#endif
}
*/
import "C"

// Trim gives the free memory of C's heap (every glibc malloc arena) back
// to the system, with malloc_trim(0); it does nothing where the C library
// is not glibc.
func Trim() { C.dgen_trim() }
