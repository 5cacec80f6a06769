// C side of the submission rings (ring.go).
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "dgen_ring.h"

static void futex(uint32_t *w, int op, uint32_t v) { syscall(SYS_futex, w, op, v, NULL, NULL, 0); }

static int64_t now_ns(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

// ring_spin is how long the thread looks for records before it sleeps.
#define RING_SPIN_NS 50000

// ring_idle waits for tail to pass h: it spins for RING_SPIN_NS, then
// sleeps until a producer wakes it, and spins again. It returns tail, or h
// when the ring is to stop.
static uint32_t ring_idle(dgen_ring *r, uint32_t h) {
	for (;;) {
		int64_t until = now_ns() + RING_SPIN_NS;
		for (int i = 0;; i++) {
			uint32_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
			if (t != h) return t;
			if ((i & 31) == 31 && now_ns() > until) break;
			__builtin_ia32_pause();
		}
		if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) return h;
		__atomic_store_n(&r->sleeping, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&r->tail, __ATOMIC_SEQ_CST) == h && !__atomic_load_n(&r->stop, __ATOMIC_SEQ_CST)) {
			futex(&r->tail, FUTEX_WAIT_PRIVATE, h);
		}
		__atomic_store_n(&r->sleeping, 0, __ATOMIC_SEQ_CST);
	}
}

// ring_main is a ring's thread: it makes the ring's context current once,
// launches the records as producers publish them, in order, keeps the
// first error (dgen_launch_plain's), and wakes the waiters whose record
// has been launched.
static void *ring_main(void *p) {
	dgen_ring *r = p;
	uint32_t h = 0;
	int current = 0; // the thread's context is r's
	for (;;) {
		uint32_t t = ring_idle(r, h);
		if (t == h) return NULL;
		for (; h != t; h++) {
			dgen_rec *rec = &r->recs[h % DGEN_RING];
			void *ps[DGEN_RING_PARAMS];
			for (int i = 0; i < rec->n; i++) ps[i] = rec->args + rec->off[i];
			CUresult e = current ? 0 : -dgen_ctx_current(r->ctx);
			current = e == 0;
			if (current) {
				e = dgen_launch_current(rec->f, rec->grid[0], rec->grid[1], rec->grid[2],
					rec->block[0], rec->block[1], rec->block[2], rec->shared, r->s, ps);
			}
			int32_t none = 0;
			if (e) __atomic_compare_exchange_n(&r->err, &none, e, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
			__atomic_store_n(&r->head, h + 1, __ATOMIC_SEQ_CST);
			uint64_t w = __atomic_load_n(&r->want, __ATOMIC_SEQ_CST);
			while (w && (int32_t)(h + 1 - (uint32_t)w) >= 0) {
				if (__atomic_compare_exchange_n(&r->want, &w, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
					futex(&r->head, FUTEX_WAKE_PRIVATE, INT32_MAX);
					break;
				}
			}
		}
	}
}

// dgen_ring_new allocates a ring, or returns NULL.
dgen_ring *dgen_ring_new(void) { return aligned_alloc(64, (sizeof(dgen_ring) + 63) / 64 * 64); }

// dgen_ring_start empties r and starts its thread, to launch on stream s
// of ctx; it returns pthread_create's result.
int dgen_ring_start(dgen_ring *r, CUcontext ctx, CUstream s) {
	memset(r, 0, sizeof *r);
	r->ctx = ctx;
	r->s = s;
	return pthread_create(&r->th, NULL, ring_main, r);
}

// dgen_ring_stop stops r's thread once it has launched every record, and
// joins it.
void dgen_ring_stop(dgen_ring *r) {
	__atomic_store_n(&r->stop, 1, __ATOMIC_SEQ_CST);
	futex(&r->tail, FUTEX_WAKE_PRIVATE, 1);
	pthread_join(r->th, NULL);
}

// RING_NEAR is how many records before its own a waiter asks to be woken
// at: it spins through the last ones (a launch takes the thread about 4
// µs), for at most RING_SPIN_NS, so that a sleeping waiter's wake-up
// overlaps them.
#define RING_NEAR 2

// ring_want registers a waiter for head to reach want, keeping the least.
static void ring_want(dgen_ring *r, uint32_t want) {
	uint64_t w = __atomic_load_n(&r->want, __ATOMIC_SEQ_CST);
	while ((w == 0 || (int32_t)(want - (uint32_t)w) < 0) &&
		!__atomic_compare_exchange_n(&r->want, &w, (uint64_t)1 << 32 | want, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
	}
}

// dgen_ring_wait returns once the thread has launched the records before
// want: it sleeps on head until RING_NEAR records are left, then spins.
void dgen_ring_wait(dgen_ring *r, uint32_t want) {
	int64_t until = 0;
	for (int i = 0;; i++) {
		uint32_t h = __atomic_load_n(&r->head, __ATOMIC_SEQ_CST);
		if ((int32_t)(h - want) >= 0) return;
		uint32_t near = want - RING_NEAR;
		if ((int32_t)(h - near) >= 0) { // RING_NEAR or fewer left: spin, for a while
			if (until == 0) until = now_ns() + RING_SPIN_NS;
			if ((i & 31) != 31 || now_ns() < until) {
				__builtin_ia32_pause();
				continue;
			}
			near = want;
		}
		ring_want(r, near);
		futex(&r->head, FUTEX_WAIT_PRIVATE, h);
	}
}

// dgen_ring_wake wakes r's thread.
void dgen_ring_wake(dgen_ring *r) { futex(&r->tail, FUTEX_WAKE_PRIVATE, 1); }
