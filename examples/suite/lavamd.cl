// Rodinia's lavaMD: particles in a cube of boxes interact with every
// particle of their own and the 26 neighbouring boxes. One work-group per
// home box, one work-item per particle; each neighbour box is staged in
// local memory. PerBox, the particles per box, is a specialization
// constant.

__kernel void lavamd(__global float *fv, __global float *fx, __global float *fy, __global float *fz,
                     __global const float *v, __global const float *x, __global const float *y,
                     __global const float *z, __global const float *q,
                     __global const int *neighbours, float a2,
                     __local float *lv, __local float *lx, __local float *ly, __local float *lz,
                     __local float *lq)
{
	int box = get_group_id(0), t = get_local_id(0);
	int i = box * PerBox + t;
	float vi = 0, xi = 0, yi = 0, zi = 0;
	if (t < PerBox) {
		vi = v[i];
		xi = x[i];
		yi = y[i];
		zi = z[i];
	}
	float sv = 0, sx = 0, sy = 0, sz = 0;
	for (int k = 0; k < 27; k++) {
		int nb = neighbours[box * 27 + k];
		if (nb < 0)
			break;
		barrier(CLK_LOCAL_MEM_FENCE);
		if (t < PerBox) {
			int j = nb * PerBox + t;
			lv[t] = v[j];
			lx[t] = x[j];
			ly[t] = y[j];
			lz[t] = z[j];
			lq[t] = q[j];
		}
		barrier(CLK_LOCAL_MEM_FENCE);
		if (t < PerBox) {
			for (int j = 0; j < PerBox; j++) {
				float r2 = vi + lv[j] - (xi * lx[j] + yi * ly[j] + zi * lz[j]);
				float vij = exp(-a2 * r2);
				float fs = 2.0f * vij;
				sv += lq[j] * vij;
				sx += lq[j] * fs * (xi - lx[j]);
				sy += lq[j] * fs * (yi - ly[j]);
				sz += lq[j] * fs * (zi - lz[j]);
			}
		}
	}
	if (t < PerBox) {
		fv[i] = sv;
		fx[i] = sx;
		fy[i] = sy;
		fz[i] = sz;
	}
}
