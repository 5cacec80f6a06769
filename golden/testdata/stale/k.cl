struct pair { int a, b; };

__kernel void k(__global int *out, int n, float f, __global struct pair *pts) {
	out[0] = n + (int)f + (int)G.X + pts[0].a;
}
