__kernel void flags(__global bool* f) { f[0] = true; }
__kernel void größe(__global float* a) { a[0] = 1; }
