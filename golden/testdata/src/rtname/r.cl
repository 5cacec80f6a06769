__kernel void k(__global int* x) { x[0] = G; }
