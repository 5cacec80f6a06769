// Small C helpers for the cgo binding: they take values, not pointers, so
// that Go passes no memory to C for the common kernel arguments.
#ifndef DGEN_CL_H
#define DGEN_CL_H
#include <CL/cl.h>

static inline cl_int dgen_set_arg_scalar(cl_kernel k, cl_uint i, size_t size, cl_ulong v) {
	return clSetKernelArg(k, i, size, &v);
}
static inline cl_int dgen_set_arg_mem(cl_kernel k, cl_uint i, cl_mem m) {
	return clSetKernelArg(k, i, sizeof(cl_mem), m ? (void*)&m : NULL);
}
static inline cl_int dgen_set_arg_local(cl_kernel k, cl_uint i, size_t size) {
	return clSetKernelArg(k, i, size, NULL);
}
static inline cl_context dgen_create_context(cl_platform_id p, cl_uint n, const cl_device_id *devs, cl_int *err) {
	cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, 0};
	return clCreateContext(props, n, devs, NULL, NULL, err);
}
#endif
