// Rodinia's Hotspot as Futhark writes it: one launch per time step, each
// writing a fresh temperature grid. The chip's coefficients are the device
// global Chip; neighbours outside the chip are the cell itself.

#pragma OPENCL FP_CONTRACT OFF

__kernel void hotspot_step(__global float *next, __global const float *temp,
                           __global const float *power, int rows, int cols)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x >= cols || y >= rows)
		return;
	int i = y * cols + x;
	float c = temp[i];
	float n = temp[max(y - 1, 0) * cols + x], s = temp[min(y + 1, rows - 1) * cols + x];
	float w = temp[y * cols + max(x - 1, 0)], e = temp[y * cols + min(x + 1, cols - 1)];
	next[i] = c + Chip.Sdc * (power[i] + (s + n - 2.0f * c) * Chip.Ry1 +
	                          (e + w - 2.0f * c) * Chip.Rx1 + (Chip.Amb - c) * Chip.Rz1);
}
