__kernel void k(__global float* a, int n) { a[0] = (float)n; }
