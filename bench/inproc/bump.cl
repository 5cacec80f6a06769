// The kernel of bench/inproc's spec family: 256 work-items, each adding
// the specialization constant Add to its element.
__kernel void bump(__global int *p) { p[get_global_id(0)] += Add; }
