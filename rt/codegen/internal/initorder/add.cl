__kernel void add_base(__global int *out) {
	out[get_global_id(0)] += Base;
}
