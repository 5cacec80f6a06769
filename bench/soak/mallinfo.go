package main

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

// The fields of glibc's struct mallinfo2 (glibc 2.33 and later), looked up
// at run time so that the program runs where it is missing.
struct dgen_mallinfo2 {
	size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};

static int dgen_mallinfo(size_t *inuse, size_t *free, size_t *mmapped) {
	struct dgen_mallinfo2 (*f)(void) = (struct dgen_mallinfo2 (*)(void))dlsym(RTLD_DEFAULT, "mallinfo2");
	if (!f)
		return -1;
	struct dgen_mallinfo2 m = f();
	*inuse = m.uordblks;
	*free = m.fordblks;
	*mmapped = m.hblkhd;
	return 0;
}
*/
import "C"

// mallocStats returns what C's malloc holds: bytes in use and free in its
// arenas, and bytes in blocks it mapped on their own; -1 each where glibc's
// mallinfo2 is missing. Memory in use that grows is held by someone; free
// memory that grows is the allocator keeping what was freed.
func mallocStats() (inuse, free, mapped int64) {
	var u, f, m C.size_t
	if C.dgen_mallinfo(&u, &f, &m) != 0 {
		return -1, -1, -1
	}
	return int64(u), int64(f), int64(m)
}
