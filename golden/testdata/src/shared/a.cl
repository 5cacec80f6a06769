__kernel void inc(void) { Shared += 1; Mine += 1; }
