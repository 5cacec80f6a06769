// Attributes written after a member's name change the layout as much as
// those written before it.
typedef struct { int a; int b __attribute__((aligned(16))); } AlignedAfter; // b at 16, 32 bytes
typedef struct { char c; int x __attribute__((packed)); } PackedMember;     // x at 1
typedef int int16a __attribute__((aligned(16)));
typedef struct { int a; int16a b; } AlignedTypedef;                          // b at 16, 32 bytes

__kernel void after(__global AlignedAfter* p) { p->b = p->a; }
__kernel void packedmember(__global PackedMember* p) { p->x = p->c; }
__kernel void typedefd(__global AlignedTypedef* p) { p->b = p->a; }

// An alignment given by an expression, or by a macro in parentheses.
#define CACHE_LINE (32)
typedef struct __attribute__((aligned(CACHE_LINE))) { float x; } Wide;   // 32 bytes
typedef struct { float x; } __attribute__((aligned(2 * 16))) Wide2;      // 32 bytes
__kernel void wide(__global Wide* w, __global Wide2* w2) { w->x = w2->x; }
