// The pipeline of imaging.cl on buffers: pixels are float4 (the input
// uchar4) in rows of width, and clamping to the edge is explicit.

__constant float taps[5] = {1.0f / 16, 4.0f / 16, 6.0f / 16, 4.0f / 16, 1.0f / 16};

int at(int x, int y, int w, int h) { return clamp(y, 0, h - 1) * w + clamp(x, 0, w - 1); }

__kernel void gauss_blur_buf(__global const uchar4 *in, __global float4 *out, int w, int h) {
	int x = get_global_id(0), y = get_global_id(1);
	float4 sum = (float4)(0.0f);
	for (int j = 0; j < 5; j++) {
		float4 row = (float4)(0.0f);
		for (int i = 0; i < 5; i++)
			row += taps[i] * convert_float4(in[at(x + i - 2, y + j - 2, w, h)]) * (1.0f / 255);
		sum += taps[j] * row;
	}
	out[y * w + x] = sum;
}

float luma(float4 c) { return 0.299f * c.x + 0.587f * c.y + 0.114f * c.z; }

__kernel void sobel_buf(__global const float4 *in, __global float *mag, int w, int h) {
	int x = get_global_id(0), y = get_global_id(1);
	float l[3][3];
	for (int j = 0; j < 3; j++)
		for (int i = 0; i < 3; i++)
			l[j][i] = luma(in[at(x + i - 1, y + j - 1, w, h)]);
	float gx = (l[0][2] + 2 * l[1][2] + l[2][2]) - (l[0][0] + 2 * l[1][0] + l[2][0]);
	float gy = (l[2][0] + 2 * l[2][1] + l[2][2]) - (l[0][0] + 2 * l[0][1] + l[0][2]);
	mag[y * w + x] = sqrt(gx * gx + gy * gy);
}

float eaw_weight(float4 c1, float4 c2, float sharpen) {
	float4 d = c1 - c2;
	return exp(-(d.x * d.x + d.y * d.y + d.z * d.z) * sharpen);
}

__kernel void eaw_step_buf(__global const float4 *in, __global float4 *coarse, __global float4 *detail, int w, int h, int scale, float sharpen) {
	int x = get_global_id(0), y = get_global_id(1);
	int mult = 1 << scale;
	float4 c = in[y * w + x];
	float4 sum = (float4)(0.0f);
	float wsum = 0.0f;
	for (int j = 0; j < 5; j++)
		for (int i = 0; i < 5; i++) {
			float4 t = in[at(x + mult * (i - 2), y + mult * (j - 2), w, h)];
			float wt = taps[i] * taps[j] * eaw_weight(c, t, sharpen);
			sum += wt * t;
			wsum += wt;
		}
	sum /= wsum;
	sum.w = c.w;
	coarse[y * w + x] = sum;
	detail[y * w + x] = c - sum;
}
