__kernel void k(__global float* a) { a[0] = 1; }
__kernel int k2(__global float* a) { return 1; }
__kernel void k(__global float* a) { a[0] = 2; }
