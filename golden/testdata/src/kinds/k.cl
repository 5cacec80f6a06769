float helper(float x) { return x * Scale + Vec[1] + (float)Pt.Y; }

__kernel void all(__global float* a, __global const int* b, __constant uint* c,
                  __local float* tile, int i, uint u, long l, ulong ul, float f,
                  double d, char ch, uchar uc, short s, ushort us, float4 v4, float3 v3) {
	a[0] = helper(f) + (float)B8 + (float)I16 + (float)U64 + (float)I64 + (float)D;
	tile[0] = a[0];
}
