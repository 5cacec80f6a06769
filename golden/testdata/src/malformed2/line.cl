#line 4294967296
__kernel void k(__global float* a) { a[0] = __LINE__; }
