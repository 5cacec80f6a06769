// Device globals: Counter is shared by every program on a device; Steps
// and Seen have one instance per device image; P is a struct.

void bump(uint n) {
	atomic_add(&Counter, n);
}

__kernel void count(uint per) {
	bump(per);
	if (get_global_id(0) == 0) {
		Steps += 1;
	}
}

__kernel void count_twice(uint per) {
	bump(2 * per);
}

__kernel void scale(__global float* out, float k) {
	size_t i = get_global_id(0);
	out[i] = k * P.Gain * (float)i + P.Offset[0] + (float)P.N;
}
