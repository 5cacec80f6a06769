// Dim and Block are specialization constants: macros the build defines.
__kernel void nearest(__global const float *base, __global const float *query, __global int *best, int n) {
	int i = get_global_id(0);
	float s = 0;
	for (int d = 0; d < Dim; d++)
		s += base[i * Dim + d] * query[d];
	best[i] = (int)(s * Block) * r;
}
