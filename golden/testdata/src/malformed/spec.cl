#define BS 8
#define Scale 2.0f
__kernel void k(__global float* a) { a[0] = BS * Scale; }
