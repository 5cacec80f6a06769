// A kernel with a read_write image, which needs OpenCL C 2.0 or later: on
// an OpenCL C 1.2 compiler the program's build fails with dgen's message.
__kernel void brighten(read_write image2d_t img) {
	int2 p = (int2)(get_global_id(0), get_global_id(1));
	write_imagef(img, p, read_imagef(img, p) * 2.0f);
}
