#include "helpers.h"
#include "helpers.h"
__kernel void apply(__global float* a) {
	int i = get_global_id(0) * STEP / 2;
	a[i] = shift(SCALED(a[i]));
}
