// IDEA encryption and decryption of 8-byte blocks, after the Java Grande
// Forum's crypt benchmark (JGFCryptBench), one block per work-item. The
// two key schedules are device globals.

// mul multiplies modulo 2^16+1, where 0 stands for 2^16.
uint mul(uint a, uint b) {
	if (a == 0)
		return (0x10001u - b) & 0xffffu;
	if (b == 0)
		return (0x10001u - a) & 0xffffu;
	uint p = a * b;
	uint lo = p & 0xffffu, hi = p >> 16;
	return (lo - hi + (lo < hi ? 1u : 0u)) & 0xffffu;
}

void idea_block(__global uchar *out, __global const uchar *in, int i, __global const int *key) {
	in += 8 * i;
	out += 8 * i;
	uint x1 = in[0] | (uint)in[1] << 8, x2 = in[2] | (uint)in[3] << 8;
	uint x3 = in[4] | (uint)in[5] << 8, x4 = in[6] | (uint)in[7] << 8;
	int k = 0;
	for (int r = 0; r < 8; r++) {
		x1 = mul(x1, key[k++]);
		x2 = (x2 + key[k++]) & 0xffffu;
		x3 = (x3 + key[k++]) & 0xffffu;
		x4 = mul(x4, key[k++]);
		uint t2 = mul(x1 ^ x3, key[k++]);
		uint t1 = mul((t2 + (x2 ^ x4)) & 0xffffu, key[k++]);
		t2 = (t1 + t2) & 0xffffu;
		x1 ^= t1;
		x4 ^= t2;
		t2 ^= x2;
		x2 = x3 ^ t1;
		x3 = t2;
	}
	x1 = mul(x1, key[k++]);
	x3 = (x3 + key[k++]) & 0xffffu;
	x2 = (x2 + key[k++]) & 0xffffu;
	x4 = mul(x4, key[k++]);
	out[0] = x1; out[1] = x1 >> 8;
	out[2] = x3; out[3] = x3 >> 8;
	out[4] = x2; out[5] = x2 >> 8;
	out[6] = x4; out[7] = x4 >> 8;
}

__kernel void idea_encrypt(__global uchar *out, __global const uchar *in, int blocks) {
	int i = get_global_id(0);
	if (i < blocks)
		idea_block(out, in, i, EncryptKey.Z);
}

__kernel void idea_decrypt(__global uchar *out, __global const uchar *in, int blocks) {
	int i = get_global_id(0);
	if (i < blocks)
		idea_block(out, in, i, DecryptKey.Z);
}
