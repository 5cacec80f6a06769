#define OPEN {
__kernel void alt(__global float* a) OPEN
	a[0] = G;
}
