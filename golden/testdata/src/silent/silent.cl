__kernel void k(__global const float* a, __global float* b, int n) { b[0] = a[0] + (float)n; }
__kernel void v(__global void* p) { }
