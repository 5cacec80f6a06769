// Rodinia Hotspot: one launch advances the chip's temperature by
// `iteration` time steps (the pyramid height) in 16x16 work-groups. Each
// group loads a 16x16 tile with a halo of `iteration` cells on every side
// into local memory, steps it `iteration` times, the valid region
// shrinking by one cell per side per step, and writes the inner
// (16 - 2*iteration)^2 cells. Neighbours outside the chip are the cell
// itself (an insulated edge). The structure follows Rodinia 3.1's
// opencl/hotspot/hotspot_kernel.cl; the code is dgen's.

#define BLOCK 16
#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) <= (hi))

__kernel void hotspot(int iteration,
                      __global const float *power,
                      __global const float *temp_src,
                      __global float *temp_dst,
                      int cols, int rows,
                      int border_cols, int border_rows,
                      float cap, float rx, float ry, float rz, float step)
{
	__local float t[BLOCK][BLOCK];
	__local float p[BLOCK][BLOCK];
	__local float next[BLOCK][BLOCK];

	const float amb = 80.0f;
	const float sdc = step / cap;
	const float rx1 = 1.0f / rx, ry1 = 1.0f / ry, rz1 = 1.0f / rz;

	int tx = get_local_id(0), ty = get_local_id(1);
	// Tiles are laid out for the pyramid height (border = height); a last
	// launch may take fewer steps (iteration < border) and still writes
	// only its tile's inner cells. (Rodinia sizes the inner tile by
	// iteration, which is wrong for such a last launch.)
	int y0 = (BLOCK - 2 * border_rows) * (int)get_group_id(1) - border_rows;
	int x0 = (BLOCK - 2 * border_cols) * (int)get_group_id(0) - border_cols;
	int y = y0 + ty, x = x0 + tx;
	int idx = cols * y + x;

	if (IN_RANGE(y, 0, rows - 1) && IN_RANGE(x, 0, cols - 1)) {
		t[ty][tx] = temp_src[idx];
		p[ty][tx] = power[idx];
	}
	barrier(CLK_LOCAL_MEM_FENCE);

	// The part of the tile that lies on the chip.
	int vymin = y0 < 0 ? -y0 : 0;
	int vymax = y0 + BLOCK - 1 > rows - 1 ? BLOCK - 1 - (y0 + BLOCK - rows) : BLOCK - 1;
	int vxmin = x0 < 0 ? -x0 : 0;
	int vxmax = x0 + BLOCK - 1 > cols - 1 ? BLOCK - 1 - (x0 + BLOCK - cols) : BLOCK - 1;

	int n = max(ty - 1, vymin), s = min(ty + 1, vymax);
	int w = max(tx - 1, vxmin), e = min(tx + 1, vxmax);

	bool computed = false;
	for (int i = 0; i < iteration; i++) {
		computed = false;
		if (IN_RANGE(tx, i + 1, BLOCK - i - 2) && IN_RANGE(ty, i + 1, BLOCK - i - 2) &&
		    IN_RANGE(tx, vxmin, vxmax) && IN_RANGE(ty, vymin, vymax)) {
			computed = true;
			float c = t[ty][tx];
			next[ty][tx] = c + sdc * (p[ty][tx] +
				(t[s][tx] + t[n][tx] - 2.0f * c) * ry1 +
				(t[ty][e] + t[ty][w] - 2.0f * c) * rx1 +
				(amb - c) * rz1);
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		if (i == iteration - 1)
			break;
		if (computed)
			t[ty][tx] = next[ty][tx];
		barrier(CLK_LOCAL_MEM_FENCE);
	}
	if (computed && IN_RANGE(tx, border_cols, BLOCK - border_cols - 1) &&
	    IN_RANGE(ty, border_rows, BLOCK - border_rows - 1))
		temp_dst[idx] = next[ty][tx];
}
