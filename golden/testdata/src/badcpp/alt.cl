#ifdef WIDE
__kernel void alt(__global double* a) {
#else
__kernel void alt(__global float* a) {
#endif
	a[0] = G;
}
