__kernel void k(__global float *out) { out[0] = OnlyLinux; }
