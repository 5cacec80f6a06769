// A tiled matrix multiply, C = A x B, for n x n matrices with n a multiple
// of TILE: each work-group of TILE x TILE work-items computes one tile of
// C, staging tiles of A and B through local memory. TILE is a
// specialization constant that rt.Tune chooses by timing.
__kernel void matmul(__global const float *a, __global const float *b, __global float *c, int n) {
	__local float as[TILE][TILE];
	__local float bs[TILE][TILE];
	int tx = get_local_id(0), ty = get_local_id(1);
	int col = get_global_id(0), row = get_global_id(1);
	float acc = 0.0f;
	for (int t = 0; t < n; t += TILE) {
		as[ty][tx] = a[row * n + t + tx];
		bs[ty][tx] = b[(t + ty) * n + col];
		barrier(CLK_LOCAL_MEM_FENCE);
		for (int k = 0; k < TILE; k++)
			acc += as[ty][k] * bs[k][tx];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	c[row * n + col] = acc;
}
