// The submission ring of a queue (ring.go): launch records that a
// goroutine writes and a thread of the ring's own launches.
#ifndef DGEN_RING_H
#define DGEN_RING_H
#include <pthread.h>
#include "dgen_cu.h"

// A ring holds DGEN_RING records; a record carries at most DGEN_RING_PARAMS
// parameter pointers into DGEN_RING_BYTES bytes of argument values.
enum { DGEN_RING = 256, DGEN_RING_PARAMS = 32, DGEN_RING_BYTES = 256 };

// dgen_rec is a launch: dgen_launch_plain's arguments, with the kernel's
// argument slots copied in (args) and their offsets in it (off), from
// which the thread makes the parameter array. The launch's shape comes
// first, so that a kernel with few arguments takes two of its cache lines.
typedef struct {
	CUfunction f;
	unsigned grid[3], block[3], shared;
	unsigned short n;
	unsigned short off[DGEN_RING_PARAMS];
	unsigned char args[DGEN_RING_BYTES];
	char pad[26]; // to a whole number of cache lines
} dgen_rec;

// dgen_ring's words each sit on a cache line of the end that stores them,
// and its records on lines of their own.
typedef struct {
	uint32_t tail; // records written: producers store it, the thread loads it
	char pad0[60];
	uint32_t head; // records launched: the thread stores it
	uint32_t pad1a;
	uint64_t want; // 1<<32 | the least head a waiter waits for; 0 when none waits
	char pad1[48];
	uint32_t sleeping; // the thread sleeps on tail, for a producer to wake it
	uint32_t stop;     // the thread returns once the ring is empty
	int32_t err;       // the first error of a launch (dgen_launch_plain's result)
	char pad2[52];
	CUcontext ctx;
	CUstream s;
	pthread_t th;
	char pad3[40];
	dgen_rec recs[DGEN_RING];
} dgen_ring;

_Static_assert(sizeof(dgen_rec) % 64 == 0, "dgen_rec is whole cache lines");
_Static_assert(__builtin_offsetof(dgen_ring, recs) % 64 == 0, "dgen_ring's records start a cache line");

dgen_ring *dgen_ring_new(void);
int dgen_ring_start(dgen_ring *r, CUcontext ctx, CUstream s);
void dgen_ring_stop(dgen_ring *r);
void dgen_ring_wait(dgen_ring *r, uint32_t want);
void dgen_ring_wake(dgen_ring *r);
#endif
