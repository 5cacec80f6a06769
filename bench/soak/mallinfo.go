package main

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

// dgen_arenas counts glibc's malloc arenas: the <heap> elements of
// malloc_info's report; -1 where malloc_info is missing.
static int dgen_arenas(void) {
	int (*f)(int, FILE *) = (int (*)(int, FILE *))dlsym(RTLD_DEFAULT, "malloc_info");
	if (!f)
		return -1;
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);
	if (!m)
		return -1;
	int r = f(0, m);
	fclose(m);
	int count = 0;
	for (char *p = buf; r == 0 && (p = strstr(p, "<heap nr=")) != NULL; p++)
		count++;
	free(buf);
	return r == 0 ? count : -1;
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

// mallocArenas returns how many arenas glibc's malloc has made, each
// keeping the memory freed in it (a thread's first malloc gets one, up to
// 8 per core by default, or MALLOC_ARENA_MAX); -1 where glibc's
// malloc_info is missing.
func mallocArenas() int { return int(C.dgen_arenas()) }
