// A histogram in two passes, written for dgen's tests: per-work-group
// partial histograms in __local memory with local atomics, then their sum.
// It exercises conditional macro definitions (#ifndef / #else), object-like
// macros built from sizeof and other macros, and function-like macros that
// wrap built-in functions.

#pragma OPENCL EXTENSION cl_khr_local_int32_base_atomics : enable

#define BINS (256)
#define BIN_BYTES (BINS * sizeof(uint))
#ifndef LANES_LOG
#define LANES_LOG 5
#else
#error "LANES_LOG is set by this file"
#endif
#define LANES (1 << LANES_LOG)
#define MUL(a, b) mul24(a, b)
#define BIN_OF(v) ((v) & (BINS - 1))

__kernel void histogram_partial(__global const uint4 *data, int n4,
                                __global uint *partial, __local uint *bins)
{
    for (int i = get_local_id(0); i < BINS; i += get_local_size(0))
        bins[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    int stride = MUL((int)get_global_size(0), 1);
    for (int i = get_global_id(0); i < n4; i += stride) {
        uint4 v = data[i];
        atomic_inc(&bins[BIN_OF(v.x)]);
        atomic_inc(&bins[BIN_OF(v.y)]);
        atomic_inc(&bins[BIN_OF(v.z)]);
        atomic_inc(&bins[BIN_OF(v.w)]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __global uint *mine = partial + MUL((int)get_group_id(0), BINS);
    for (int i = get_local_id(0); i < BINS; i += get_local_size(0))
        mine[i] = bins[i];
}

__kernel void histogram_merge(__global uint *histogram, __global const uint *partial,
                              uint groups)
{
    uint bin = get_global_id(0);
    if (bin >= BINS || BIN_BYTES / sizeof(uint) != BINS || LANES != 32)
        return;
    uint sum = 0;
    for (uint g = 0; g < groups; g++)
        sum += partial[MUL(g, (uint)BINS) + bin];
    histogram[bin] = sum;
}
