// An image pipeline on OpenCL images: a 5x5 Gaussian blur, the Sobel
// gradient magnitude of the blurred luminance, and one step of an
// edge-avoiding à-trous wavelet decomposition in the manner of darktable's
// eaw_decompose (a 5x5 B3-spline kernel dilated by 2^scale, each tap
// weighted by how close its colour is to the centre's). Borders clamp to
// the edge. pipeline_buffers.cl computes the same on buffers.

// The sampler of eaw_step: a constant of the program, not a parameter.
__constant sampler_t clamp_nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

// The binomial weights of the 5x5 blur and of the B3 spline, /16 each way.
__constant float taps[5] = {1.0f / 16, 4.0f / 16, 6.0f / 16, 4.0f / 16, 1.0f / 16};

__kernel void gauss_blur(__read_only image2d_t in, sampler_t s, __write_only image2d_t out) {
	int2 p = (int2)(get_global_id(0), get_global_id(1));
	float4 sum = (float4)(0.0f);
	for (int j = 0; j < 5; j++) {
		float4 row = (float4)(0.0f);
		for (int i = 0; i < 5; i++)
			row += taps[i] * read_imagef(in, s, p + (int2)(i - 2, j - 2));
		sum += taps[j] * row;
	}
	write_imagef(out, p, sum);
	if (p.x == 0 && p.y == 0)
		Frames += 1; // a device global: dgen passes it as a hidden argument
}

float luma(float4 c) { return 0.299f * c.x + 0.587f * c.y + 0.114f * c.z; }

__kernel void sobel(__read_only image2d_t in, sampler_t s, __write_only image2d_t mag) {
	int2 p = (int2)(get_global_id(0), get_global_id(1));
	float l[3][3];
	for (int j = 0; j < 3; j++)
		for (int i = 0; i < 3; i++)
			l[j][i] = luma(read_imagef(in, s, p + (int2)(i - 1, j - 1)));
	float gx = (l[0][2] + 2 * l[1][2] + l[2][2]) - (l[0][0] + 2 * l[1][0] + l[2][0]);
	float gy = (l[2][0] + 2 * l[2][1] + l[2][2]) - (l[0][0] + 2 * l[0][1] + l[0][2]);
	write_imagef(mag, p, (float4)(sqrt(gx * gx + gy * gy), 0.0f, 0.0f, 1.0f));
}

// eaw_weight is how much a tap of colour c2 counts beside the centre c1.
float eaw_weight(float4 c1, float4 c2, float sharpen) {
	float4 d = c1 - c2;
	return exp(-(d.x * d.x + d.y * d.y + d.z * d.z) * sharpen);
}

__kernel void eaw_step(__read_only image2d_t in, __write_only image2d_t coarse, __write_only image2d_t detail, int scale, float sharpen) {
	int2 p = (int2)(get_global_id(0), get_global_id(1));
	int mult = 1 << scale;
	float4 c = read_imagef(in, clamp_nearest, p);
	float4 sum = (float4)(0.0f);
	float wsum = 0.0f;
	for (int j = 0; j < 5; j++)
		for (int i = 0; i < 5; i++) {
			float4 t = read_imagef(in, clamp_nearest, p + mult * (int2)(i - 2, j - 2));
			float w = taps[i] * taps[j] * eaw_weight(c, t, sharpen);
			sum += w * t;
			wsum += w;
		}
	sum /= wsum;
	sum.w = c.w;
	write_imagef(coarse, p, sum);
	write_imagef(detail, p, c - sum);
}
