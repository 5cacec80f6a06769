#include <stdint.h>
int sc_open(int cuda, int cpu, const char *src, int n);
double sc_run(int mode, int g, double window_ns, long *counts, float *lat, int cap);
/* The launch loop's cgo floor (floor.go). */
uintptr_t sc_floor_open(void);
int sc_floor_launch(uintptr_t f);
int sc_floor_sync(uintptr_t f);
int sc_noop(uintptr_t f);
