typedef struct { float a; float b; } pair;
__kernel void k(__global pair* ps) { ps[0].a = ps[0].b; }
