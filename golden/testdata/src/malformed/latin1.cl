// Größe in Latin-1
__kernel void k(__global float* a) { a[0] = 1; }
