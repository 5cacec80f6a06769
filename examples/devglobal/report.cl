// A second device image: it reads the shared Counter, and counts its own
// launches in Seen, which is its alone.

__kernel void report(__global uint* out) {
	out[0] = Counter;
	Seen += 1;
	out[1] = Seen;
}
