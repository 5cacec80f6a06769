#include "helpers.h"
#include "helpers.h"
__kernel void apply(__global float* a) {
	int i = get_global_id(0) * STEP / 2;
	a[i] = shift(SCALED(a[i]));
}
#ifdef WIDE
__kernel void alt(__global double* a) {
#else
__kernel void alt(__global float* a) {
#endif
	a[0] = SCALED(a[0]);
}
