// Blocked LU decomposition without pivoting, in place, after Rodinia's
// lud: for each diagonal block, lud_diagonal factors it, lud_perimeter
// solves the blocks right of it and below it, lud_internal updates the
// trailing matrix. Each step's factors are also written to fresh strips
// that the next kernel reads.

#define BS 16

__kernel void lud_diagonal(__global float *diag, __global float *a, int n, int k)
{
	__local float t[BS][BS];
	int c = get_local_id(0);
	for (int i = 0; i < BS; i++)
		t[i][c] = a[(k + i) * n + k + c];
	barrier(CLK_LOCAL_MEM_FENCE);
	for (int i = 0; i < BS - 1; i++) {
		if (c > i)
			t[c][i] /= t[i][i];
		barrier(CLK_LOCAL_MEM_FENCE);
		if (c > i)
			for (int j = i + 1; j < BS; j++)
				t[c][j] -= t[c][i] * t[i][j];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	for (int i = 0; i < BS; i++) {
		a[(k + i) * n + k + c] = t[i][c];
		diag[i * BS + c] = t[i][c];
	}
}

// Work-items [0, w) solve L x = a for column k+BS+id of the block row;
// work-items [w, 2w) solve x U = a for row k+BS+id-w of the block column,
// where w = n-k-BS.
__kernel void lud_perimeter(__global float *row, __global float *col, __global float *a,
                            __global const float *diag, int n, int k)
{
	int id = get_global_id(0), w = n - k - BS;
	float x[BS];
	if (id < w) {
		int c = k + BS + id;
		for (int i = 0; i < BS; i++) {
			float v = a[(k + i) * n + c];
			for (int p = 0; p < i; p++)
				v -= diag[i * BS + p] * x[p];
			x[i] = v;
			a[(k + i) * n + c] = v;
			row[i * w + id] = v;
		}
	} else if (id < 2 * w) {
		int r = k + BS + id - w;
		for (int j = 0; j < BS; j++) {
			float v = a[r * n + k + j];
			for (int p = 0; p < j; p++)
				v -= x[p] * diag[p * BS + j];
			x[j] = v / diag[j * BS + j];
			a[r * n + k + j] = x[j];
			col[(id - w) * BS + j] = x[j];
		}
	}
}

// One BS x BS work-group per trailing block: a -= col * row.
__kernel void lud_internal(__global float *a, __global const float *row,
                           __global const float *col, int n, int k)
{
	__local float lr[BS][BS], lc[BS][BS];
	int tx = get_local_id(0), ty = get_local_id(1);
	int x = get_global_id(0), y = get_global_id(1), w = n - k - BS;
	lr[ty][tx] = row[ty * w + x];
	lc[ty][tx] = col[y * BS + tx];
	barrier(CLK_LOCAL_MEM_FENCE);
	float s = 0;
	for (int p = 0; p < BS; p++)
		s += lc[ty][p] * lr[p][tx];
	a[(k + BS + y) * n + k + BS + x] -= s;
}
