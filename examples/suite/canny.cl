// Canny edge detection, after Accelerate's canny: grey scale, a separable
// 5-tap Gaussian blur, the Sobel gradient, non-maximum suppression into
// none/weak/strong, and hysteresis repeated until no weak pixel next to a
// strong one is left (the device global Changed counts promotions). Every
// stage writes a fresh image. Products are not contracted, so that the Go
// reference reproduces every value exactly; magnitudes stay squared.

#pragma OPENCL FP_CONTRACT OFF

#define AT(img, x, y) img[clamp(y, 0, h - 1) * w + clamp(x, 0, w - 1)]

__kernel void canny_grey(__global float *grey, __global const uint *rgba, int w, int h)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x >= w || y >= h)
		return;
	uint p = rgba[y * w + x];
	grey[y * w + x] = 0.3f * (float)(p & 0xff) + 0.59f * (float)((p >> 8) & 0xff) +
	                  0.11f * (float)((p >> 16) & 0xff);
}

float blur(__global const float *in, int x, int y, int dx, int dy, int w, int h)
{
	return 0.0625f * AT(in, x - 2 * dx, y - 2 * dy) + 0.25f * AT(in, x - dx, y - dy) +
	       0.375f * AT(in, x, y) + 0.25f * AT(in, x + dx, y + dy) +
	       0.0625f * AT(in, x + 2 * dx, y + 2 * dy);
}

__kernel void canny_blur_x(__global float *out, __global const float *in, int w, int h)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x < w && y < h)
		out[y * w + x] = blur(in, x, y, 1, 0, w, h);
}

__kernel void canny_blur_y(__global float *out, __global const float *in, int w, int h)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x < w && y < h)
		out[y * w + x] = blur(in, x, y, 0, 1, w, h);
}

// Directions: 0 east-west, 1 north-south, 2 the diagonal through (x+1,
// y+1), 3 the one through (x+1, y-1).
__kernel void canny_gradient(__global float *mag2, __global uchar *dir,
                             __global const float *in, int w, int h)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x >= w || y >= h)
		return;
	float gx = (AT(in, x + 1, y - 1) + 2.0f * AT(in, x + 1, y) + AT(in, x + 1, y + 1)) -
	           (AT(in, x - 1, y - 1) + 2.0f * AT(in, x - 1, y) + AT(in, x - 1, y + 1));
	float gy = (AT(in, x - 1, y + 1) + 2.0f * AT(in, x, y + 1) + AT(in, x + 1, y + 1)) -
	           (AT(in, x - 1, y - 1) + 2.0f * AT(in, x, y - 1) + AT(in, x + 1, y - 1));
	const float t = 0.41421356f; // tan(22.5 degrees)
	float ax = fabs(gx), ay = fabs(gy);
	mag2[y * w + x] = gx * gx + gy * gy;
	dir[y * w + x] = ay <= t * ax ? 0 : ax <= t * ay ? 1 : (gx > 0) == (gy > 0) ? 2 : 3;
}

// Classes: 0 none, 1 weak, 2 strong.
__kernel void canny_suppress(__global uchar *cls, __global const float *mag2,
                             __global const uchar *dir, int w, int h, float low2, float high2)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x >= w || y >= h)
		return;
	const int DX[4] = {1, 0, 1, 1}, DY[4] = {0, 1, 1, -1};
	int d = dir[y * w + x], dx = DX[d], dy = DY[d];
	float m = mag2[y * w + x];
	float a = AT(mag2, x + dx, y + dy), b = AT(mag2, x - dx, y - dy);
	cls[y * w + x] = m < low2 || m < a || m < b ? 0 : m >= high2 ? 2 : 1;
}

__kernel void canny_hysteresis(__global uchar *next, __global const uchar *cls, int w, int h)
{
	int x = get_global_id(0), y = get_global_id(1);
	if (x >= w || y >= h)
		return;
	uchar c = cls[y * w + x];
	if (c == 1) {
		for (int j = -1; j <= 1; j++)
			for (int i = -1; i <= 1; i++)
				if (AT(cls, x + i, y + j) == 2)
					c = 2;
		if (c == 2)
			atomic_inc(&Changed);
	}
	next[y * w + x] = c;
}
