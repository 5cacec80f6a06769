__kernel void get(__global uint* out) { out[0] = Shared; }
