// The kernels of bench/scaling: a 64-item launch, and a request's work.
__kernel void touch64(__global int *p) { p[get_global_id(0)] += 1; }

__kernel void axpb(float a, __global const float *x, __global float *y) {
	size_t i = get_global_id(0);
	y[i] = a * x[i] + 1.0f;
}
