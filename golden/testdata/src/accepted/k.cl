typedef struct { float m; float4 v; } particle;

__kernel void move(__global particle* ps, __global const int* größe) {
	ps[größe[0]].m += Höhe + Teilchen.M + Teilchen.V[0];
}

#if defined(cl_khr_fp16)
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define HALF_AVAILABLE
#endif

#ifdef HALF_AVAILABLE
__kernel void half_k(__global float* out) {
	half h = 1;
	out[0] = h;
}
#endif

#if defined(cl_khr_fp64) || defined(cl_amd_fp64)
__kernel void double_k(__global float* out) {
	double d = 1;
	out[0] = d;
}
#endif
