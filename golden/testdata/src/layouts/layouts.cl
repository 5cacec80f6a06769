// Structs whose Go counterparts are wrong in every way dgen must catch.
typedef struct { float y, x; } Particle;          // Go has X, Y: same types, other order
typedef struct { int a; float b; } Swapped;       // Go has float32, int32
typedef struct { float x, y, z; } Vec3;           // 12 bytes; Go has 4
typedef struct { int starting; int no_of_edges; } Node; // 8 bytes; Go has 16
typedef struct { float w; float4 v; } Aligned;    // v at 16: Go puts [4]float32 at 4
typedef struct { float3 p; } V3;                  // float3 is 16 bytes
typedef struct { char c; Swapped in; } Outer;     // nested: Go's inner is wrong
typedef struct { Node nodes[2]; } Nodes;          // an array of structs
typedef struct __attribute__((packed)) { char c; int a; } Packed; // a at 1: no padding
typedef struct { int a; bool b; } HasBool;        // no host layout

__kernel void particles(__global Particle* p) { p->x += 100; }
__kernel void swapped(__global Swapped* s) {}
__kernel void vec3(__global Vec3* v) {}
__kernel void nodes(__global Node* n) {}
__kernel void aligned(Aligned a) {}
__kernel void v3(__global V3* v) {}
__kernel void outer(__global Outer* o) {}
__kernel void arrays(__global Nodes* n) {}
__kernel void packed(__global Packed* p) {}
__kernel void hasbool(__global HasBool* h) {}
