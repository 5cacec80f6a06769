// Kernels written for dgen's tests in the manner of OpenCL throughput
// benchmarks: every vector width of the scalar types, vectors by value and
// as buffer elements, kernels that exist only behind extension guards, and
// chains of nested function-like macros redefined after #undef.

#if defined(cl_khr_fp64)
  #pragma OPENCL EXTENSION cl_khr_fp64 : enable
  #define HAVE_DOUBLE
#endif

#if defined(cl_khr_fp16)
  #pragma OPENCL EXTENSION cl_khr_fp16 : enable
  #define HAVE_HALF
#endif

#if defined(cl_khr_integer_dot_product)
  #pragma OPENCL EXTENSION cl_khr_integer_dot_product : enable
  #define HAVE_DOT
#endif

// STEP_32 is 32 dependent multiply-adds: 4 of 8 of 2.
#undef STEP_2
#undef STEP_8
#undef STEP_32
#define STEP_2(v, k)  v = (v * v) + k; v = (v * v) + k;
#define STEP_8(v, k)  STEP_2(v, k) STEP_2(v, k) STEP_2(v, k) STEP_2(v, k)
#define STEP_32(v, k) STEP_8(v, k) STEP_8(v, k) STEP_8(v, k) STEP_8(v, k)

// SUM2 .. SUM16 add up a vector's components.
#define SUM2(v)  ((v).s0 + (v).s1)
#define SUM4(v)  (SUM2((v).lo) + SUM2((v).hi))
#define SUM8(v)  (SUM4((v).lo) + SUM4((v).hi))
#define SUM16(v) (SUM8((v).lo) + SUM8((v).hi))

__kernel void steps_char2(__global char *out, char a)
{
    char2 v = (char2)(a, a + 1);
    char2 k = (char2)((char)get_local_id(0));
    for (int i = 0; i < 16; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = SUM2(v);
}

__kernel void steps_uchar16(__global uchar *out, uchar a)
{
    uchar16 v = (uchar16)(a);
    uchar16 k = (uchar16)((uchar)get_local_id(0));
    for (int i = 0; i < 4; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = SUM16(v);
}

__kernel void steps_short4(__global short *out, short a)
{
    short4 v = (short4)(a, a + 1, a + 2, a + 3);
    short4 k = (short4)((short)get_local_id(0));
    for (int i = 0; i < 8; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = SUM4(v);
}

__kernel void steps_ushort8(__global ushort *out, ushort a)
{
    ushort8 v = (ushort8)(a);
    ushort8 k = (ushort8)((ushort)get_local_id(0));
    for (int i = 0; i < 8; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = SUM8(v);
}

__kernel void steps_int8(__global int *out, int a)
{
    int8 v = (int8)(a);
    int8 k = (int8)((int)get_local_id(0));
    for (int i = 0; i < 8; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = SUM8(v);
}

__kernel void steps_uint16(__global uint *out, uint a)
{
    uint16 v = (uint16)(a);
    uint16 k = (uint16)((uint)get_local_id(0));
    for (int i = 0; i < 4; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = SUM16(v);
}

__kernel void steps_long2(__global long *out, long a)
{
    long2 v = (long2)(a, a + 1);
    long2 k = (long2)((long)get_local_id(0));
    for (int i = 0; i < 8; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = SUM2(v);
}

__kernel void steps_float(__global float *out, float a)
{
    float v = a;
    float k = (float)get_local_id(0);
    for (int i = 0; i < 32; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = v;
}

__kernel void steps_float4(__global float *out, float a)
{
    float4 v = (float4)(a, a + 1, a + 2, a + 3);
    float4 k = (float4)((float)get_local_id(0));
    for (int i = 0; i < 8; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = SUM4(v);
}

__kernel void steps_float16(__global float *out, float a)
{
    float16 v = (float16)(a);
    float16 k = (float16)((float)get_local_id(0));
    for (int i = 0; i < 2; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = SUM16(v);
}

// Vectors by value, and as the elements of buffers; a three-component
// vector is stored as four.
__kernel void scale_vectors(__global float4 *dst, __global const float4 *src,
                            float4 gain, uchar3 mask, int2 span)
{
    int i = get_global_id(0);
    if (i >= span.x && i < span.y) {
        float4 m = (float4)(mask.x, mask.y, mask.z, 1);
        dst[i] = src[i] * gain * m;
    }
}

__kernel void widen(__global int4 *dst, __global const char4 *src, short8 bias)
{
    int i = get_global_id(0);
    dst[i] = convert_int4(src[i]) + convert_int4(bias.lo);
}

#ifdef HAVE_DOUBLE
__kernel void steps_double2(__global double *out, double a, double2 k0)
{
    double2 v = (double2)(a, a + 1);
    double2 k = k0 + (double2)((double)get_local_id(0));
    for (int i = 0; i < 8; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = SUM2(v);
}
#endif

#ifdef HAVE_HALF
__kernel void steps_half(__global half *out, float a)
{
    half v = (half)a;
    half k = (half)get_local_id(0);
    for (int i = 0; i < 8; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = v;
}

__kernel void steps_half8(__global half *out, float a)
{
    half8 v = (half8)((half)a);
    half8 k = (half8)((half)get_local_id(0));
    for (int i = 0; i < 4; i++) { STEP_32(v, k) }
    out[get_global_id(0)] = SUM8(v);
}
#endif

#ifdef HAVE_DOT
__kernel void dot_chars(__global int *out, char a)
{
    char4 x = (char4)(a, a + 1, a + 2, a + 3);
    char4 y = (char4)((char)get_local_id(0));
    int acc = 0;
    for (int i = 0; i < 16; i++) { acc = dot_acc_sat(x, y, acc); }
    out[get_global_id(0)] = acc;
}
#endif
