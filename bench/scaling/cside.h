#include <stdint.h>
int sc_open(int cuda, int cpu, const char *src, int n);
double sc_run(int mode, int g, double window_ns, long *counts, float *lat, int cap);
/* The launch loop's cgo floor (floor.go). */
uintptr_t sc_floor_open(void);
int sc_floor_launch(uintptr_t f);
int sc_floor_sync(uintptr_t f);
int sc_noop(uintptr_t f);
long sc_floor_count(uintptr_t f);
/* The launch loop's submission rings (ring.go), of SC_RING records. */
#define SC_RING 1024
struct sc_rec {
	unsigned long long arg;
	unsigned gx, bx;
};
struct sc_ring {
	uint32_t tail; /* records written: the goroutine stores, the thread loads */
	char pad0[60];
	uint32_t head; /* records launched: the thread stores, the goroutine loads */
	uint32_t want; /* the goroutine sleeps on head until it passes want; 0 when it does not */
	char pad1[56];
	uint32_t sleeping; /* the thread sleeps on tail */
	int err;           /* the first driver error the thread met */
	char pad2[56];
	struct sc_rec recs[SC_RING];
	uintptr_t f; /* the floor whose stream it launches on */
};
struct sc_ring *sc_ring_open(uintptr_t f);
unsigned long long sc_ring_arg(struct sc_ring *r);
void sc_ring_wait(struct sc_ring *r, uint32_t v);
void sc_ring_wake(struct sc_ring *r);
