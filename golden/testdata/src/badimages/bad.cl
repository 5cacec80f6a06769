__kernel void k(__read_only image2d_t a, sampler_t s, __write_only image3d_t b, __global float *p, image2d_array_t c) {}
