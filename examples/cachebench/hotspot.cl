#define AMB_TEMP 80.0f
__kernel void hotspot_step(__global const float *power, __global const float *temp_in,
		__global float *temp_out, int cols, int rows, float cap, float rx, float ry, float rz, float step) {
	int c = get_global_id(0), r = get_global_id(1);
	if (c >= cols || r >= rows) return;
	int i = r * cols + c;
	float t = temp_in[i];
	float n = r > 0 ? temp_in[i - cols] : t;
	float s = r < rows - 1 ? temp_in[i + cols] : t;
	float w = c > 0 ? temp_in[i - 1] : t;
	float e = c < cols - 1 ? temp_in[i + 1] : t;
	float d = (step / cap) * (power[i] + (s + n - 2.0f * t) / ry + (e + w - 2.0f * t) / rx + (AMB_TEMP - t) / rz);
	temp_out[i] = t + d;
}
__kernel void scale(__global float *x, float a, int n) {
	int i = get_global_id(0);
	if (i < n) x[i] *= a;
}
