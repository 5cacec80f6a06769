__kernel void m2(__global float* a) { a[0] = TestOnly; }
