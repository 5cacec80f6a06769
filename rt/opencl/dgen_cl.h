// Small C helpers for the cgo binding: they take values, not pointers, so
// that Go passes no memory to C for the common kernel arguments.
#ifndef DGEN_CL_H
#define DGEN_CL_H
#include <CL/cl.h>
#include <CL/cl_ext.h>

static inline cl_int dgen_set_arg_scalar(cl_kernel k, cl_uint i, size_t size, cl_ulong v) {
	return clSetKernelArg(k, i, size, &v);
}
static inline cl_int dgen_set_arg_mem(cl_kernel k, cl_uint i, cl_mem m) {
	return clSetKernelArg(k, i, sizeof(cl_mem), m ? (void*)&m : NULL);
}
static inline cl_int dgen_set_arg_local(cl_kernel k, cl_uint i, size_t size) {
	return clSetKernelArg(k, i, size, NULL);
}
// dgen_times reads n profiling times of e's command: from
// CL_PROFILING_COMMAND_START (n 2: start and end) or from
// CL_PROFILING_COMMAND_QUEUED (n 4: queued, submitted, start and end).
static inline cl_int dgen_times(cl_event e, cl_ulong *t, int n) {
	cl_profiling_info p = n == 2 ? CL_PROFILING_COMMAND_START : CL_PROFILING_COMMAND_QUEUED;
	cl_int r = CL_SUCCESS;
	for (int i = 0; r == CL_SUCCESS && i < n; i++) r = clGetEventProfilingInfo(e, p + i, sizeof t[i], &t[i], NULL);
	return r;
}
// clCreateCommandQueueWithProperties is OpenCL 2.0's, which the 1.2
// headers (CL_TARGET_OPENCL_VERSION=120) leave out; every ICD loader since
// 2.0 exports it. dgen calls it only on a device that reports
// cl_khr_priority_hints, whose priorities are properties of it.
#ifndef CL_VERSION_2_0
extern CL_API_ENTRY cl_command_queue CL_API_CALL clCreateCommandQueueWithProperties(cl_context, cl_device_id, const cl_ulong *, cl_int *);
#endif
// dgen_priority_queue creates a queue at the cl_khr_priority_hints
// priority prio (CL_QUEUE_PRIORITY_HIGH_KHR, _MED_ or _LOW_).
static inline cl_command_queue dgen_priority_queue(cl_context c, cl_device_id d, int profiling, cl_uint prio, cl_int *err) {
	cl_ulong props[] = {CL_QUEUE_PROPERTIES, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, CL_QUEUE_PRIORITY_KHR, prio, 0};
	return clCreateCommandQueueWithProperties(c, d, props, err);
}
// dgen_nothing does nothing: BenchmarkCgoCall times a call into C alone.
static inline void dgen_nothing(void) {}
static inline cl_context dgen_create_context(cl_platform_id p, cl_uint n, const cl_device_id *devs, cl_int *err) {
	cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, 0};
	return clCreateContext(props, n, devs, NULL, NULL, err);
}
// dgen_transfer is a blocking read (into p) or write (from p) of m; the
// queue and the buffer come as integers, which cgo passes unchecked. p is
// a byte pointer, not void *: cgo checks a Go pointer passed as void * for
// Go pointers in the memory it points to (a heap lookup per transfer), and
// bytes hold none.
static inline cl_int dgen_transfer(uintptr_t q, uintptr_t m, int read, size_t off, size_t size, unsigned char *p, cl_uint n, const cl_event *wait) {
	if (read)
		return clEnqueueReadBuffer((cl_command_queue)q, (cl_mem)m, CL_TRUE, off, size, p, n, wait, NULL);
	return clEnqueueWriteBuffer((cl_command_queue)q, (cl_mem)m, CL_TRUE, off, size, p, n, wait, NULL);
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

#ifndef DGEN_CL_LAUNCH_H
#define DGEN_CL_LAUNCH_H
#include <stdint.h>
// dgen_arg is rt/driver.Arg, field for field (checked at compile time in launch.go).
typedef struct {
	cl_ulong bits; // a value, a handle, or a value's offset in bytes
	cl_uint size;
	unsigned char kind; // 0 scalar, 1 buffer (or image), 2 local, 3 sampler
	unsigned char changed;
} dgen_arg;
#include <stddef.h>
enum {
	dgen_arg_size_off = offsetof(dgen_arg, size),
	dgen_arg_kind_off = offsetof(dgen_arg, kind),
	dgen_arg_changed_off = offsetof(dgen_arg, changed),
};

// dgen_launch sets the changed arguments of k (clearing their marks) and
// enqueues it, at the global work offset offset (NULL for none): one call
// from Go per launch. On a failed clSetKernelArg it
// returns its code with the argument's index in *failed. The queue and the
// kernel come as integers, which cgo passes without checking them as Go
// pointers.
static inline cl_int dgen_launch(uintptr_t qh, uintptr_t kh, dgen_arg *args, cl_uint nargs, const unsigned char *bytes,
		cl_uint dims, const size_t *offset, const size_t *global, const size_t *local, cl_uint nwait, const cl_event *wait, cl_event *ev, cl_uint *failed) {
	cl_command_queue q = (cl_command_queue)qh;
	cl_kernel k = (cl_kernel)kh;
	for (cl_uint i = 0; i < nargs; i++) {
		dgen_arg *a = &args[i];
		if (!a->changed)
			continue;
		cl_int err;
		if (a->kind == 1) {
			cl_mem m = (cl_mem)(uintptr_t)a->bits;
			err = clSetKernelArg(k, i, sizeof(cl_mem), m ? (void *)&m : NULL);
		} else if (a->kind == 2) {
			err = clSetKernelArg(k, i, a->size, NULL);
		} else if (a->kind == 3) {
			cl_sampler s = (cl_sampler)(uintptr_t)a->bits;
			err = clSetKernelArg(k, i, sizeof(cl_sampler), &s);
		} else if (a->size <= 8) {
			err = clSetKernelArg(k, i, a->size, &a->bits);
		} else {
			err = clSetKernelArg(k, i, a->size, bytes + a->bits);
		}
		if (err != CL_SUCCESS) {
			*failed = i;
			return err;
		}
		a->changed = 0;
	}
	return clEnqueueNDRangeKernel(q, k, dims, offset, global, local, nwait, wait, ev);
}
#endif
