// The kernels of the faulting service loop (bench/faultloop).

// inc adds add to each of the first n elements of x: a request's work.
__kernel void inc(__global int *x, int n, int add) {
	int i = get_global_id(0);
	if (i < n) x[i] += add;
}

// bad writes 1 TiB past x: on a GPU a device fault (CUDA's
// CUDA_ERROR_ILLEGAL_ADDRESS, NVIDIA OpenCL's lost queue); on a CPU
// (PoCL) it would end the process, which faultloop refuses to run.
__kernel void bad(__global int *x, int n) {
	long i = get_global_id(0);
	x[i + (1L << 38)] = n;
}
