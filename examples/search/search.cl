// The score of every base vector against a query: their dot product. Dim,
// the vectors' length, is a specialization constant: each index launches
// with its own (a field of the kernel spec), so that the compiler unrolls
// the loop for it.
__kernel void scores(__global const float *base, __global const float *query, __global float *score) {
	int i = get_global_id(0);
	float s = 0.0f;
	for (int d = 0; d < Dim; d++)
		s += base[i * Dim + d] * query[d];
	score[i] = s;
}
