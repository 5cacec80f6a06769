// Kernels written for dgen's tests in the manner of OpenCL bandwidth
// benchmarks: an image read through a sampler parameter and a program-scope
// sampler, and values passed around a work-group through __local memory.

#define SUM4(v) ((v).x + (v).y + (v).z + (v).w)

// Reads a 2D image through a sampler given as a parameter and one declared
// in the program.
__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

__kernel void image_sum(__read_only image2d_t img, sampler_t s, __global float *out)
{
    int2 at = (int2)(get_global_id(0), get_global_id(1));
    float4 a = read_imagef(img, s, at);
    float4 b = read_imagef(img, nearest, at + (int2)(1, 0));
    out[at.y * get_global_size(0) + at.x] = SUM4(a + b);
}

// Passes values around a work-group through __local scratch memory.
__kernel void local_rotate(__global float *out, __local float *scratch, int rounds)
{
    uint lid = get_local_id(0);
    uint next = (lid + 1) % get_local_size(0);
    float v = (float)get_global_id(0);
    for (int i = 0; i < rounds; i++) {
        scratch[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
        v = scratch[next];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = v;
}
