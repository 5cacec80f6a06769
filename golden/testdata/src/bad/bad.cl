__kernel void k(__global float* a, int n) { a[0] = Img + (float)n; }
__kernel void k2(void) { Img += 1.0f; }
