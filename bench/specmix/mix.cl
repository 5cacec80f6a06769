// The kernel of bench/specmix: every work-item writes i*K + 7, so that the
// output tells which value of the specialization constant K the launch
// ran with.
__kernel void spec_mix(__global int *out) {
	int i = get_global_id(0);
	out[i] = i * K + 7;
}
