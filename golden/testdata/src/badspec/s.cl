__kernel void k(__global int *out, int n) { out[0] = n * Dim + Block; }
