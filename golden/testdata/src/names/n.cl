__kernel void read(__global double* out) {
	out[0] = Mine.G;
	out[1] = Theirs.G;
	out[2] = PI.B;
	out[3] = PF.B;
}
