#include "probe.h"
#include "/work/wt/shared/cl-corpus/clpeak/src/opencl/kernels/image_bandwidth_kernels.cl"
__kernel void dgen_probe(__global float* out) { out[0] = DGEN_SCALED(1.0f) + dgen_bias(); }
