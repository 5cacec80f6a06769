// The kernels of the priority measurement (bench/priority).

// spin is the batch job's long kernel: each work-item steps a linear
// congruential generator iters times and stores the result only in the
// case that never happens, so that the loop stays and the memory is quiet.
__kernel void spin(__global uint *out, uint iters) {
	uint v = (uint)get_global_id(0);
	for (uint k = 0; k < iters; k++)
		v = v * 1664525u + 1013904223u;
	if (v == 0xffffffffu)
		out[0] = (uint)get_global_id(0);
}

// tick is a request's short kernel.
__kernel void tick(__global int *out, int value) {
	int i = get_global_id(0);
	out[i] = value + i;
}
