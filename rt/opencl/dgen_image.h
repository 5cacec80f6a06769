// C helpers of the image binding (image.go): they fill OpenCL's structs
// from values, so that Go passes no struct to C.
#ifndef DGEN_IMAGE_H
#define DGEN_IMAGE_H
#include <string.h>
#include <CL/cl.h>

static inline cl_mem dgen_create_image(cl_context c, cl_mem_flags flags, cl_channel_order order, cl_channel_type type,
		cl_mem_object_type kind, size_t w, size_t h, size_t d, size_t layers, cl_mem buffer, cl_int *err) {
	cl_image_format f = {order, type};
	cl_image_desc desc;
	memset(&desc, 0, sizeof desc);
	desc.image_type = kind;
	desc.image_width = w;
	desc.image_height = h;
	desc.image_depth = d;
	desc.image_array_size = layers;
	desc.buffer = buffer;
	return clCreateImage(c, flags, &f, &desc, NULL, err);
}

static inline cl_int dgen_set_arg_sampler(cl_kernel k, cl_uint i, cl_sampler s) {
	return clSetKernelArg(k, i, sizeof(cl_sampler), &s);
}

// The transfers take the host memory as an address: a non-blocking one
// keeps using it after the call returns.
static inline cl_int dgen_rw_image(cl_command_queue q, int read, cl_mem img, cl_bool blocking, const size_t *box,
		size_t row, size_t slice, void *p, cl_uint n, const cl_event *wait, cl_event *ev) {
	if (read)
		return clEnqueueReadImage(q, img, blocking, box, box + 3, row, slice, p, n, wait, ev);
	return clEnqueueWriteImage(q, img, blocking, box, box + 3, row, slice, p, n, wait, ev);
}
#endif
