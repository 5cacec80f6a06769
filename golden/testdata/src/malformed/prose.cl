#include "notc.h"
__kernel void after(__global float* a) { a[0] = 1; }
