float helper(float x) { return x; }
__kernel void k(__global float* a) { a[0] = helper(1); }
