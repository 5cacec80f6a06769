// A sampler declared as a constant: no parameter, nothing to bind.
__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

#define RO __read_only

__kernel void blur(RO image2d_t in, sampler_t s, __write_only image2d_t out) {
	int2 p = (int2)(get_global_id(0), get_global_id(1));
	write_imagef(out, p, read_imagef(in, s, p) + read_imagef(in, nearest, p));
}

__kernel void kinds(image1d_t a, read_only image1d_buffer_t b, image1d_array_t c, image2d_t d,
		image2d_array_t e, write_only image3d_t f, __global float *g) {
	g[0] = read_imagef(a, nearest, 0).x + read_imagef(b, 0).x + read_imagef(c, nearest, (int2)(0, 0)).x +
		read_imagef(d, nearest, (int2)(0, 0)).x + read_imagef(e, nearest, (int4)(0)).x;
}

__kernel void rw(read_write image2d_t img) {
	int2 p = (int2)(get_global_id(0), get_global_id(1));
	write_imagef(img, p, read_imagef(img, p) * 2);
}
