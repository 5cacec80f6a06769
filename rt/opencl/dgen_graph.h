// C side of command graphs (graph.go): a graph's commands prepared in C
// memory, replayed by one call into C, either as a loop of enqueues or as
// an OpenCL command buffer (cl_khr_command_buffer), whose entry points
// are found at run time with clGetExtensionFunctionAddressForPlatform.
#ifndef DGEN_GRAPH_H
#define DGEN_GRAPH_H
#include <CL/cl.h>
#include <stdlib.h>
#include <string.h>

// dgen_gcmd is one prepared command.
typedef struct {
	int kind; // 0 kernel, 1 copy, 2 fill, 3 write from host, 4 read into host (a loop only)
	cl_kernel kernel;
	cl_uint dims;
	size_t global[3], local[3];
	int has_local;
	cl_mem src, dst;
	size_t src_off, dst_off, size;
	void *pattern; // C memory
	size_t pattern_size;
	void *host; // pinned host memory of a write or read
} dgen_gcmd;

// dgen_replay enqueues the n commands in order, the first after the wait
// list, the last returning *ev when ev is not NULL, and each its own event
// in evs[i] when evs is not NULL. On failure *failed is the index of the
// command that failed, and the events made so far are released.
static inline cl_int dgen_replay(cl_command_queue q, const dgen_gcmd *c, cl_uint n, cl_uint nwait, const cl_event *wait, cl_event *ev, cl_event *evs, cl_uint *failed) {
	if (n == 0)
		return clEnqueueMarkerWithWaitList(q, nwait, wait, ev);
	for (cl_uint i = 0; i < n; i++) {
		const dgen_gcmd *x = &c[i];
		cl_uint nw = i == 0 ? nwait : 0;
		const cl_event *w = i == 0 ? wait : NULL;
		cl_event *e = evs ? &evs[i] : i == n - 1 ? ev : NULL;
		cl_int err;
		switch (x->kind) {
		case 0:
			err = clEnqueueNDRangeKernel(q, x->kernel, x->dims, NULL, x->global, x->has_local ? x->local : NULL, nw, w, e);
			break;
		case 1:
			err = clEnqueueCopyBuffer(q, x->src, x->dst, x->src_off, x->dst_off, x->size, nw, w, e);
			break;
		case 3:
			err = clEnqueueWriteBuffer(q, x->dst, CL_FALSE, x->dst_off, x->size, x->host, nw, w, e);
			break;
		case 4:
			err = clEnqueueReadBuffer(q, x->src, CL_FALSE, x->src_off, x->size, x->host, nw, w, e);
			break;
		default:
			err = clEnqueueFillBuffer(q, x->dst, x->pattern, x->pattern_size, x->dst_off, x->size, nw, w, e);
		}
		if (err != CL_SUCCESS) {
			*failed = i;
			for (cl_uint j = 0; evs && j < i; j++)
				clReleaseEvent(evs[j]);
			return err;
		}
	}
	return CL_SUCCESS;
}

// The entry points of cl_khr_command_buffer, declared here so that the
// binding does not depend on the version of the Khronos headers.
typedef void *dgen_cb;
typedef cl_uint dgen_sync;
typedef dgen_cb (*dgen_cb_create_fn)(cl_uint, const cl_command_queue *, const cl_ulong *, cl_int *);
typedef cl_int (*dgen_cb_one_fn)(dgen_cb);
typedef cl_int (*dgen_cb_enqueue_fn)(cl_uint, cl_command_queue *, dgen_cb, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*dgen_cb_ndrange_fn)(dgen_cb, cl_command_queue, const cl_ulong *, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *,
	cl_uint, const dgen_sync *, dgen_sync *, void **);
typedef cl_int (*dgen_cb_copy_fn)(dgen_cb, cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint, const dgen_sync *, dgen_sync *, void **);
typedef cl_int (*dgen_cb_fill_fn)(dgen_cb, cl_command_queue, cl_mem, const void *, size_t, size_t, size_t, cl_uint, const dgen_sync *, dgen_sync *, void **);

typedef struct {
	dgen_cb_create_fn create;
	dgen_cb_one_fn finalize, release;
	dgen_cb_enqueue_fn enqueue;
	dgen_cb_ndrange_fn ndrange;
	dgen_cb_copy_fn copy;
	dgen_cb_fill_fn fill;
	int simultaneous;
} dgen_cb_fns;

#define DGEN_CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR 0x12A9
#define DGEN_CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR (1 << 2)
#define DGEN_CL_COMMAND_BUFFER_FLAGS_KHR 0x1293
#define DGEN_CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR (1 << 0)

// dgen_cb_load fills f for q's device and returns 1 when the device
// supports cl_khr_command_buffer with simultaneous use (a command buffer
// enqueued again before its last launch completed), else 0.
static inline int dgen_cb_load(cl_command_queue q, dgen_cb_fns *f) {
	cl_device_id d;
	cl_platform_id p;
	memset(f, 0, sizeof *f);
	if (clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL) != CL_SUCCESS ||
	    clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof p, &p, NULL) != CL_SUCCESS)
		return 0;
	size_t n = 0;
	if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &n) != CL_SUCCESS || n == 0)
		return 0;
	char *ext = malloc(n + 1);
	if (!ext)
		return 0;
	int has = clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, n, ext, NULL) == CL_SUCCESS && (ext[n] = 0, strstr(ext, "cl_khr_command_buffer") != NULL);
	free(ext);
	if (!has)
		return 0;
	cl_ulong caps = 0;
	if (clGetDeviceInfo(d, DGEN_CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR, sizeof caps, &caps, NULL) != CL_SUCCESS)
		return 0;
	f->simultaneous = (caps & DGEN_CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) != 0;
	f->create = (dgen_cb_create_fn)clGetExtensionFunctionAddressForPlatform(p, "clCreateCommandBufferKHR");
	f->finalize = (dgen_cb_one_fn)clGetExtensionFunctionAddressForPlatform(p, "clFinalizeCommandBufferKHR");
	f->release = (dgen_cb_one_fn)clGetExtensionFunctionAddressForPlatform(p, "clReleaseCommandBufferKHR");
	f->enqueue = (dgen_cb_enqueue_fn)clGetExtensionFunctionAddressForPlatform(p, "clEnqueueCommandBufferKHR");
	f->ndrange = (dgen_cb_ndrange_fn)clGetExtensionFunctionAddressForPlatform(p, "clCommandNDRangeKernelKHR");
	f->copy = (dgen_cb_copy_fn)clGetExtensionFunctionAddressForPlatform(p, "clCommandCopyBufferKHR");
	f->fill = (dgen_cb_fill_fn)clGetExtensionFunctionAddressForPlatform(p, "clCommandFillBufferKHR");
	return f->simultaneous && f->create && f->finalize && f->release && f->enqueue && f->ndrange && f->copy && f->fill;
}

// dgen_cb_build records the n commands into a new, finalized command
// buffer on q, each after the previous one (sync points chain them). On
// failure *failed is the index of the command that failed, n for the
// creation or finalization.
static inline cl_int dgen_cb_build(const dgen_cb_fns *f, cl_command_queue q, const dgen_gcmd *c, cl_uint n, dgen_cb *out, cl_uint *failed) {
	cl_ulong props[] = {DGEN_CL_COMMAND_BUFFER_FLAGS_KHR, DGEN_CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR, 0};
	cl_int err = CL_SUCCESS;
	*failed = n;
	dgen_cb cb = f->create(1, &q, props, &err);
	if (err != CL_SUCCESS)
		return err;
	dgen_sync prev = 0, next = 0;
	for (cl_uint i = 0; i < n; i++) {
		const dgen_gcmd *x = &c[i];
		cl_uint nw = i == 0 ? 0 : 1;
		const dgen_sync *w = i == 0 ? NULL : &prev;
		switch (x->kind) {
		case 0:
			err = f->ndrange(cb, NULL, NULL, x->kernel, x->dims, NULL, x->global, x->has_local ? x->local : NULL, nw, w, &next, NULL);
			break;
		case 1:
			err = f->copy(cb, NULL, x->src, x->dst, x->src_off, x->dst_off, x->size, nw, w, &next, NULL);
			break;
		default:
			err = f->fill(cb, NULL, x->dst, x->pattern, x->pattern_size, x->dst_off, x->size, nw, w, &next, NULL);
		}
		if (err != CL_SUCCESS) {
			*failed = i;
			f->release(cb);
			return err;
		}
		prev = next;
	}
	if ((err = f->finalize(cb)) != CL_SUCCESS) {
		f->release(cb);
		return err;
	}
	*out = cb;
	return CL_SUCCESS;
}

static inline cl_int dgen_cb_launch(const dgen_cb_fns *f, dgen_cb cb, cl_uint nwait, const cl_event *wait, cl_event *ev) {
	return f->enqueue(0, NULL, cb, nwait, wait, ev);
}

static inline cl_int dgen_cb_release(const dgen_cb_fns *f, dgen_cb cb) { return f->release(cb); }
#endif
