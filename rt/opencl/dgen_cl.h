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
// Non-blocking transfers: the host memory p is used after the call
// returns, so these are bound without noescape.
static inline cl_int dgen_read_async(cl_command_queue q, cl_mem m, size_t off, size_t size, void *p, cl_uint n, const cl_event *wait, cl_event *ev) {
	return clEnqueueReadBuffer(q, m, CL_FALSE, off, size, p, n, wait, ev);
}
static inline cl_int dgen_write_async(cl_command_queue q, cl_mem m, size_t off, size_t size, const void *p, cl_uint n, const cl_event *wait, cl_event *ev) {
	return clEnqueueWriteBuffer(q, m, CL_FALSE, off, size, p, n, wait, ev);
}
#endif
