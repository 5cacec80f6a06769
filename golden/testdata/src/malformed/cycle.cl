#include __FILE__
__kernel void k(__global float* a) { a[0] = 1; }
