#if 0
__kernel void gone(int a) {}
#endif
#define MAKE(name) __kernel void name(__global float* a) { a[0] = G; }
MAKE(made)
