// C side of rt/cuda: libcuda loaded with dlopen, and one wrapper per
// operation (see cu.go).
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dgen_cu.h"

static struct {
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*GetErrorString)(CUresult, const char **);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*DeviceTotalMem)(size_t *, CUdevice);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*FuncGetAttribute)(int *, int, CUfunction);
	CUresult (*FuncSetAttribute)(CUfunction, int, int);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemAllocManaged)(CUdeviceptr *, size_t, unsigned);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemHostAlloc)(void **, size_t, unsigned);
	CUresult (*MemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
	CUresult (*MemFreeHost)(void *);
	CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
	CUresult (*MemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*MemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
	CUresult (*MemsetD16Async)(CUdeviceptr, unsigned short, size_t, CUstream);
	CUresult (*MemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
	CUresult (*MemsetD2D32Async)(CUdeviceptr, size_t, unsigned, size_t, size_t, CUstream);
	CUresult (*StreamDestroy)(CUstream);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventDestroy)(CUevent);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventQuery)(CUevent);
	CUresult (*EventSynchronize)(CUevent);
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*Array3DCreate)(CUarray *, const dgen_array_desc *);
	CUresult (*ArrayDestroy)(CUarray);
	CUresult (*Memcpy3DAsync)(const dgen_memcpy3d *, CUstream);
	CUresult (*TexObjectCreate)(unsigned long long *, const dgen_res_desc *, const dgen_tex_desc *, const void *);
	CUresult (*TexObjectDestroy)(unsigned long long);
	CUresult (*SurfObjectCreate)(unsigned long long *, const dgen_res_desc *);
	CUresult (*SurfObjectDestroy)(unsigned long long);
	CUresult (*CtxGetStreamPriorityRange)(int *, int *);
	CUresult (*StreamCreateWithPriority)(CUstream *, unsigned, int);
	CUresult (*MemGetInfo)(size_t *, size_t *);
} cu;

// The symbols in the order of the struct's fields, each a function pointer.
static const char *dgen_cu_names[] = {
	"cuInit", "cuDriverGetVersion", "cuGetErrorName", "cuGetErrorString",
	"cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName", "cuDeviceGetAttribute", "cuDeviceTotalMem_v2",
	"cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent",
	"cuModuleLoadDataEx", "cuModuleUnload", "cuModuleGetFunction", "cuFuncGetAttribute", "cuFuncSetAttribute",
	"cuLaunchKernel", "cuMemAlloc_v2", "cuMemAllocManaged", "cuMemFree_v2", "cuMemHostAlloc",
	"cuMemHostGetDevicePointer_v2", "cuMemFreeHost", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2",
	"cuMemcpyAsync", "cuMemsetD8Async", "cuMemsetD16Async", "cuMemsetD32Async", "cuMemsetD2D32Async",
	"cuStreamDestroy_v2", "cuStreamSynchronize", "cuStreamWaitEvent",
	"cuEventCreate", "cuEventDestroy_v2", "cuEventRecord", "cuEventQuery", "cuEventSynchronize",
	"cuEventElapsedTime", "cuArray3DCreate_v2", "cuArrayDestroy", "cuMemcpy3DAsync_v2",
	"cuTexObjectCreate", "cuTexObjectDestroy", "cuSurfObjectCreate", "cuSurfObjectDestroy",
	"cuCtxGetStreamPriorityRange", "cuStreamCreateWithPriority", "cuMemGetInfo_v2",
};

int dgen_cu_count(void) { return sizeof dgen_cu_names / sizeof dgen_cu_names[0]; }
const char *dgen_cu_name(int i) { return dgen_cu_names[i]; }

static void *dgen_lib;

// dgen_cu_open opens lib; it returns NULL, or dlerror's message.
const char *dgen_cu_open(const char *lib) {
	dgen_lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	return dgen_lib ? NULL : dlerror();
}

// dgen_cu_sym finds symbol i; it returns 0 when libcuda lacks it.
int dgen_cu_sym(int i) {
	void *p = dlsym(dgen_lib, dgen_cu_names[i]);
	((void **)&cu)[i] = p;
	return p != NULL;
}

CUresult dgen_init(int *version) {
	CUresult r = cu.Init(0);
	if (r == 0) r = cu.DriverGetVersion(version);
	return r;
}

const char *dgen_err_name(CUresult r) {
	const char *s = NULL;
	if (cu.GetErrorName == NULL || cu.GetErrorName(r, &s) != 0) return NULL;
	return s;
}

const char *dgen_err_string(CUresult r) {
	const char *s = NULL;
	if (cu.GetErrorString == NULL || cu.GetErrorString(r, &s) != 0) return NULL;
	return s;
}

CUresult dgen_device(int i, CUdevice *d, char *name, int n, size_t *mem) {
	CUresult r = cu.DeviceGet(d, i);
	if (r == 0) r = cu.DeviceGetName(name, n, *d);
	if (r == 0) r = cu.DeviceTotalMem(mem, *d);
	return r;
}

CUresult dgen_attr(int *v, int a, CUdevice d) { return cu.DeviceGetAttribute(v, a, d); }
CUresult dgen_device_count(int *n) { return cu.DeviceGetCount(n); }
CUresult dgen_ctx_retain(CUcontext *c, CUdevice d) { return cu.DevicePrimaryCtxRetain(c, d); }
CUresult dgen_ctx_release(CUdevice d) { return cu.DevicePrimaryCtxRelease(d); }


// dgen_pre makes ctx current, makes s wait for waits and records start.
static CUresult dgen_pre(CUcontext ctx, CUstream s, int nwait, CUevent *waits, CUevent start, int *step) {
	*step = STEP_CTX;
	CUresult r = cu.CtxSetCurrent(ctx);
	*step = STEP_WAIT;
	for (int i = 0; r == 0 && i < nwait; i++) r = cu.StreamWaitEvent(s, waits[i], 0);
	*step = STEP_RECORD_START;
	if (r == 0 && start) r = cu.EventRecord(start, s);
	*step = STEP_OP;
	return r;
}

// dgen_post records end and, if sync, waits for s.
static CUresult dgen_post(CUresult r, CUstream s, CUevent end, int sync, int *step) {
	if (r != 0) return r;
	*step = STEP_RECORD_END;
	if (end) r = cu.EventRecord(end, s);
	*step = STEP_SYNC;
	if (r == 0 && sync) r = cu.StreamSynchronize(s);
	return r;
}

CUresult dgen_launch(CUcontext ctx, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream s, uintptr_t params,
		int nwait, CUevent *waits, CUevent start, CUevent end, int *step) {
	CUresult r = dgen_pre(ctx, s, nwait, waits, start, step);
	if (r == 0) r = cu.LaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, (void **)params, NULL);
	return dgen_post(r, s, end, 0, step);
}

CUresult dgen_launch_plain(CUcontext ctx, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream s, uintptr_t params) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r != 0) return -r;
	return dgen_launch_current(f, gx, gy, gz, bx, by, bz, shmem, s, (void **)params);
}

CUresult dgen_ctx_current(CUcontext ctx) { return cu.CtxSetCurrent(ctx); }

CUresult dgen_launch_current(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params) {
	return cu.LaunchKernel(f, gx, gy, gz, bx, by, bz, shmem, s, params, NULL);
}

CUresult dgen_copy(CUcontext ctx, CUstream s, int kind, CUdeviceptr dst, CUdeviceptr src, unsigned char *host,
		size_t size, int nwait, CUevent *waits, CUevent start, CUevent end, int sync, int *step) {
	CUresult r = dgen_pre(ctx, s, nwait, waits, start, step);
	if (r == 0 && size > 0) {
		switch (kind) {
		case COPY_HTOD: r = cu.MemcpyHtoDAsync(dst, host, size, s); break;
		case COPY_DTOH: r = cu.MemcpyDtoHAsync(host, src, size, s); break;
		default: r = cu.MemcpyAsync(dst, src, size, s);
		}
	}
	return dgen_post(r, s, end, sync, step);
}

// dgen_fill repeats the n-byte pattern p (n is 1, 2, or a multiple of 4)
// over size bytes (a multiple of n) at dst.
CUresult dgen_fill(CUcontext ctx, CUstream s, CUdeviceptr dst, const unsigned char *p, size_t n, size_t size,
		int nwait, CUevent *waits, CUevent start, CUevent end, int *step) {
	CUresult r = dgen_pre(ctx, s, nwait, waits, start, step);
	if (r == 0 && size > 0) {
		if (n == 1) r = cu.MemsetD8Async(dst, p[0], size, s);
		else if (n == 2) { unsigned short v; memcpy(&v, p, 2); r = cu.MemsetD16Async(dst, v, size / 2, s); }
		else if (n == 4) { unsigned v; memcpy(&v, p, 4); r = cu.MemsetD32Async(dst, v, size / 4, s); }
		else for (size_t j = 0; r == 0 && j < n; j += 4) {
			unsigned v; memcpy(&v, p + j, 4);
			r = cu.MemsetD2D32Async(dst + j, n, v, 1, size / n, s);
		}
	}
	return dgen_post(r, s, end, 0, step);
}

CUresult dgen_marker(CUcontext ctx, CUstream s, int nwait, CUevent *waits, CUevent end, int *step) {
	CUresult r = dgen_pre(ctx, s, nwait, waits, 0, step);
	return dgen_post(r, s, end, 0, step);
}

CUresult dgen_sync(CUcontext ctx, CUstream s) {
	CUresult r = cu.CtxSetCurrent(ctx);
	return r == 0 ? cu.StreamSynchronize(s) : r;
}

// dgen_stream_create creates a stream at priority prio (0 is CUDA's
// default, cuStreamCreate's).
CUresult dgen_stream_create(CUcontext ctx, CUstream *s, int prio) {
	CUresult r = cu.CtxSetCurrent(ctx);
	return r == 0 ? cu.StreamCreateWithPriority(s, 1, prio) : r; // CU_STREAM_NON_BLOCKING
}

// dgen_priority_range reads ctx's stream priorities: CUDA's least and
// greatest, numerically the greater and the lesser.
CUresult dgen_priority_range(CUcontext ctx, int *least, int *greatest) {
	CUresult r = cu.CtxSetCurrent(ctx);
	return r == 0 ? cu.CtxGetStreamPriorityRange(least, greatest) : r;
}

CUresult dgen_stream_destroy(CUcontext ctx, CUstream s) {
	CUresult r = cu.CtxSetCurrent(ctx);
	return r == 0 ? cu.StreamDestroy(s) : r;
}

CUresult dgen_event_create(CUcontext ctx, CUevent *e, int timed) {
	CUresult r = cu.CtxSetCurrent(ctx);
	return r == 0 ? cu.EventCreate(e, timed ? 0 : 2) : r; // CU_EVENT_DISABLE_TIMING
}

CUresult dgen_event_destroy(CUcontext ctx, CUevent e) { CUresult r = cu.CtxSetCurrent(ctx); return r == 0 ? cu.EventDestroy(e) : r; }
CUresult dgen_event_query(CUcontext ctx, CUevent e) { CUresult r = cu.CtxSetCurrent(ctx); return r == 0 ? cu.EventQuery(e) : r; }
CUresult dgen_event_sync(CUcontext ctx, CUevent e) { CUresult r = cu.CtxSetCurrent(ctx); return r == 0 ? cu.EventSynchronize(e) : r; }
// dgen_times waits for end and reads the milliseconds from anchor to end
// into ms[1] and, unless start is NULL, from anchor to start into ms[0]:
// a command's device times in one call.
CUresult dgen_times(CUcontext ctx, CUevent anchor, CUevent start, CUevent end, float *ms, int *step) {
	*step = STEP_CTX;
	CUresult r = cu.CtxSetCurrent(ctx);
	*step = STEP_EVENT_SYNC;
	if (r == 0) r = cu.EventSynchronize(end);
	*step = STEP_ELAPSED;
	if (r == 0) r = cu.EventElapsedTime(&ms[1], anchor, end);
	if (r == 0 && start) r = cu.EventElapsedTime(&ms[0], anchor, start);
	return r;
}

CUresult dgen_alloc(CUcontext ctx, CUdeviceptr *p, size_t size, int managed) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r != 0) return r;
	return managed ? cu.MemAllocManaged(p, size, 1) : cu.MemAlloc(p, size); // CU_MEM_ATTACH_GLOBAL
}

CUresult dgen_free(CUcontext ctx, CUdeviceptr p) {
	CUresult r = cu.CtxSetCurrent(ctx);
	return r == 0 ? cu.MemFree(p) : r;
}

// dgen_mem_info reads the free and total bytes of ctx's device.
CUresult dgen_mem_info(CUcontext ctx, size_t *free, size_t *total) {
	CUresult r = cu.CtxSetCurrent(ctx);
	return r == 0 ? cu.MemGetInfo(free, total) : r;
}

CUresult dgen_host_alloc(CUcontext ctx, void **p, CUdeviceptr *d, size_t size) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r == 0) r = cu.MemHostAlloc(p, size, 1 | 2); // PORTABLE | DEVICEMAP
	if (r == 0) {
		r = cu.MemHostGetDevicePointer(d, *p, 0);
		if (r != 0) cu.MemFreeHost(*p);
	}
	return r;
}

CUresult dgen_host_free(CUcontext ctx, void *p) {
	CUresult r = cu.CtxSetCurrent(ctx);
	return r == 0 ? cu.MemFreeHost(p) : r;
}

// dgen_module_load loads PTX; with lineinfo set, ptxas keeps the PTX's
// .loc line information in the code (CU_JIT_GENERATE_LINE_INFO), which
// compute-sanitizer reports.
CUresult dgen_module_load(CUcontext ctx, CUmodule *m, const char *ptx, char *log, size_t n, int lineinfo) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r != 0) return r;
	int opts[] = {DGEN_JIT_ERROR_LOG_BUFFER, DGEN_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, DGEN_JIT_GENERATE_LINE_INFO};
	void *vals[] = {log, (void *)(uintptr_t)n, (void *)(uintptr_t)1};
	return cu.ModuleLoadDataEx(m, ptx, lineinfo ? 3 : 2, opts, vals);
}

CUresult dgen_module_unload(CUcontext ctx, CUmodule m) {
	CUresult r = cu.CtxSetCurrent(ctx);
	return r == 0 ? cu.ModuleUnload(m) : r;
}

// cuFuncLoad (CUDA 12.4), which dgen_function does without where the
// driver lacks it; dgen_function finds it on its first call.
static CUresult (*func_load)(CUfunction);
static int func_load_found;

// dgen_function finds a function of a module, loads its code (under lazy
// loading, CUDA's default, cuModuleGetFunction may leave that to the first
// launch) and reads the attributes a kernel needs: its static shared and
// private memory and most threads per block. *step is the call that
// failed: 0 cuModuleGetFunction, 1 cuFuncLoad, 2 cuFuncGetAttribute.
CUresult dgen_function(CUcontext ctx, CUmodule m, const char *name, CUfunction *f, int *shared, int *local, int *tpb, int *step) {
	if (!__atomic_load_n(&func_load_found, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&func_load, dgen_lib ? (CUresult (*)(CUfunction))dlsym(dgen_lib, "cuFuncLoad") : NULL, __ATOMIC_RELAXED);
		__atomic_store_n(&func_load_found, 1, __ATOMIC_RELEASE);
	}
	*step = 0;
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r == 0) r = cu.ModuleGetFunction(f, m, name);
	if (r != 0) return r;
	CUresult (*load)(CUfunction) = __atomic_load_n(&func_load, __ATOMIC_RELAXED);
	*step = 1;
	if (load != NULL && (r = load(*f)) != 0) return r;
	*step = 2;
	if ((r = cu.FuncGetAttribute(shared, DGEN_FUNC_SHARED_SIZE_BYTES, *f)) != 0) return r;
	if ((r = cu.FuncGetAttribute(local, DGEN_FUNC_LOCAL_SIZE_BYTES, *f)) != 0) return r;
	return cu.FuncGetAttribute(tpb, DGEN_FUNC_MAX_THREADS_PER_BLOCK, *f);
}
CUresult dgen_func_set_attr(CUcontext ctx, CUfunction f, int a, int v) {
	CUresult r = cu.CtxSetCurrent(ctx);
	return r == 0 ? cu.FuncSetAttribute(f, a, v) : r;
}

// The optional functions of command graphs, found by dgen_graph_load.
static struct {
	CUresult (*StreamBeginCapture)(CUstream, int);
	CUresult (*StreamEndCapture)(CUstream, CUgraph *);
	CUresult (*StreamGetCaptureInfo)(CUstream, int *, unsigned long long *, CUgraph *, const CUgraphNode **, size_t *);
	CUresult (*GraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
	CUresult (*GraphLaunch)(CUgraphExec, CUstream);
	CUresult (*GraphExecKernelNodeSetParams)(CUgraphExec, CUgraphNode, const void *);
	CUresult (*GraphExecDestroy)(CUgraphExec);
	CUresult (*GraphDestroy)(CUgraph);
} cug;

static const char *dgen_cug_names[] = {
	"cuStreamBeginCapture_v2", "cuStreamEndCapture", "cuStreamGetCaptureInfo_v2",
	"cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphExecKernelNodeSetParams",
	"cuGraphExecDestroy", "cuGraphDestroy",
};

// CUDA_KERNEL_NODE_PARAMS as cuGraphExecKernelNodeSetParams (the first
// version, CUDA 10) takes it.
typedef struct {
	CUfunction func;
	unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
	void **kernelParams;
	void **extra;
} dgen_kernel_node_params;

// cuGraphUpload (CUDA 11.1), which graphs do without where the driver
// lacks it: then the first launch uploads.
static CUresult (*graph_upload)(CUgraphExec, CUstream);

// The node setters of copies and fills (CUDA 10.2), which graph
// parameters do without where the driver lacks them: then a graph whose
// copy or fill takes other buffers is captured anew.
static CUresult (*graph_set_memcpy)(CUgraphExec, CUgraphNode, const dgen_memcpy3d *, CUcontext);
static CUresult (*graph_set_memset)(CUgraphExec, CUgraphNode, const dgen_memset_params *, CUcontext);

// dgen_graph_load finds the graph functions once; it returns 1 when
// libcuda has them all.
int dgen_graph_load(void) {
	static int state; // 0: not tried, 1: found, 2: missing
	if (state == 0) {
		state = 1;
		for (size_t i = 0; i < sizeof dgen_cug_names / sizeof dgen_cug_names[0]; i++) {
			void *p = dgen_lib ? dlsym(dgen_lib, dgen_cug_names[i]) : NULL;
			((void **)&cug)[i] = p;
			if (p == NULL) state = 2;
		}
		graph_upload = dgen_lib ? dlsym(dgen_lib, "cuGraphUpload") : NULL;
		graph_set_memcpy = dgen_lib ? dlsym(dgen_lib, "cuGraphExecMemcpyNodeSetParams") : NULL;
		graph_set_memset = dgen_lib ? dlsym(dgen_lib, "cuGraphExecMemsetNodeSetParams") : NULL;
	}
	return state == 1;
}

// dgen_gcmd_node keeps in c the node that s, which captures, added last.
static CUresult dgen_gcmd_node(CUstream s, dgen_gcmd *c) {
	int status;
	const CUgraphNode *deps = NULL;
	size_t nd = 0;
	CUresult r = cug.StreamGetCaptureInfo(s, &status, NULL, NULL, &deps, &nd);
	if (r == 0) c->node = nd == 1 ? deps[0] : NULL;
	return r;
}

int dgen_memset_of(const dgen_gcmd *c, dgen_memset_params *p) {
	size_t n = c->pattern_size;
	if (c->kind != GCMD_FILL || c->size == 0 || (n != 1 && n != 2 && n != 4)) return 0;
	unsigned v = 0;
	memcpy(&v, c->pattern, n);
	*p = (dgen_memset_params){.dst = c->dst, .pitch = c->size, .value = v, .elementSize = (unsigned)n, .width = c->size / n, .height = 1};
	return 1;
}

// dgen_gcmd_one issues command c on s; while s captures, the node of a
// kernel, of a copy and of a fill of one node is kept in c.
static CUresult dgen_gcmd_one(CUstream s, dgen_gcmd *c, int capture) {
	CUresult r = 0;
	switch (c->kind) {
	case GCMD_KERNEL:
		r = cu.LaunchKernel(c->f, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2],
			c->shared, s, c->params, NULL);
		return r == 0 && capture ? dgen_gcmd_node(s, c) : r;
	case GCMD_COPY:
		r = c->size ? cu.MemcpyAsync(c->dst, c->src, c->size, s) : 0;
		return r == 0 && capture && c->size ? dgen_gcmd_node(s, c) : r;
	}
	size_t n = c->pattern_size, size = c->size;
	const unsigned char *p = c->pattern;
	if (size == 0) return 0;
	if (n == 1) r = cu.MemsetD8Async(c->dst, p[0], size, s);
	else if (n == 2) { unsigned short v; memcpy(&v, p, 2); r = cu.MemsetD16Async(c->dst, v, size / 2, s); }
	else if (n == 4) { unsigned v; memcpy(&v, p, 4); r = cu.MemsetD32Async(c->dst, v, size / 4, s); }
	else {
		// Several nodes: none is kept, and a new buffer captures anew.
		for (size_t j = 0; r == 0 && j < n; j += 4) {
			unsigned v; memcpy(&v, p + j, 4);
			r = cu.MemsetD2D32Async(c->dst + j, n, v, 1, size / n, s);
		}
		return r;
	}
	return r == 0 && capture ? dgen_gcmd_node(s, c) : r;
}

// dgen_gcmd_issue issues the n commands on s in order, after waits; on an
// error *failed is the failing command's index (n: outside the commands).
CUresult dgen_gcmd_issue(CUcontext ctx, CUstream s, dgen_gcmd *cmds, int n, int capture,
		int nwait, CUevent *waits, CUevent start, CUevent end, int *failed, int *step) {
	*failed = n;
	CUresult r = dgen_pre(ctx, s, nwait, waits, start, step);
	for (int i = 0; r == 0 && i < n; i++) {
		r = dgen_gcmd_one(s, &cmds[i], capture);
		if (r != 0) *failed = i;
	}
	return dgen_post(r, s, end, 0, step);
}

// dgen_graph_capture captures the commands on s, a stream of the graph's
// own, into *g, instantiates it into *x and uploads it to the device, so
// that the first launch costs what the others cost (CuPy's graphs are
// launched once before they are timed; a graph that rt records is
// uploaded when it is prepared for a queue). An upload the driver refuses
// is left to the first launch.
CUresult dgen_graph_capture(CUcontext ctx, CUstream s, dgen_gcmd *cmds, int n, CUgraph *g, CUgraphExec *x, int *failed) {
	*failed = n;
	*g = NULL;
	*x = NULL;
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r == 0) r = cug.StreamBeginCapture(s, 2); // CU_STREAM_CAPTURE_MODE_RELAXED
	if (r != 0) return r;
	for (int i = 0; r == 0 && i < n; i++) {
		r = dgen_gcmd_one(s, &cmds[i], 1);
		if (r != 0) *failed = i;
	}
	CUresult e = cug.StreamEndCapture(s, g);
	if (r == 0) r = e;
	if (r == 0) r = cug.GraphInstantiateWithFlags(x, *g, 0);
	if (r == 0 && graph_upload && graph_upload(*x, s) == 0) r = cu.StreamSynchronize(s);
	if (r != 0 && *x) {
		cug.GraphExecDestroy(*x);
		*x = NULL;
	}
	if (r != 0 && *g) {
		cug.GraphDestroy(*g);
		*g = NULL;
	}
	return r;
}

CUresult dgen_graph_launch(CUcontext ctx, CUstream s, CUgraphExec x, int nwait, CUevent *waits, CUevent start, CUevent end, int *step) {
	CUresult r = dgen_pre(ctx, s, nwait, waits, start, step);
	if (r == 0) r = cug.GraphLaunch(x, s);
	return dgen_post(r, s, end, 0, step);
}

// dgen_graph_set sets the function, shape and arguments of c's node in x.
CUresult dgen_graph_set(CUcontext ctx, CUgraphExec x, dgen_gcmd *c) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r != 0) return r;
	dgen_kernel_node_params p = {c->f, c->grid[0], c->grid[1], c->grid[2], c->block[0], c->block[1], c->block[2],
		c->shared, c->params, NULL};
	return cug.GraphExecKernelNodeSetParams(x, c->node, &p);
}

// dgen_graph_set_cmd sets the buffers of c's node in x, a copy or a
// fill of one node; an error where the driver lacks the setter or c has
// no node of its own.
CUresult dgen_graph_set_cmd(CUcontext ctx, CUgraphExec x, dgen_gcmd *c) {
	if (c->node == NULL) return 1; // CUDA_ERROR_INVALID_VALUE
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r != 0) return r;
	if (c->kind == GCMD_COPY) {
		if (!graph_set_memcpy) return 801; // CUDA_ERROR_NOT_SUPPORTED
		dgen_memcpy3d m = {.srcMemoryType = 2, .srcDevice = c->src, .srcPitch = c->size, .srcHeight = 1,
			.dstMemoryType = 2, .dstDevice = c->dst, .dstPitch = c->size, .dstHeight = 1,
			.WidthInBytes = c->size, .Height = 1, .Depth = 1}; // CU_MEMORYTYPE_DEVICE
		return graph_set_memcpy(x, c->node, &m, ctx);
	}
	dgen_memset_params p;
	if (!dgen_memset_of(c, &p)) return 1;
	if (!graph_set_memset) return 801;
	return graph_set_memset(x, c->node, &p, ctx);
}

CUresult dgen_graph_destroy(CUcontext ctx, CUgraph g, CUgraphExec x) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r != 0) return r;
	if (x) r = cug.GraphExecDestroy(x);
	CUresult e = g ? cug.GraphDestroy(g) : 0;
	return r ? r : e;
}

// Images (image.go): CUDA arrays, their copies, and the texture and
// surface objects that kernels read and write them through.

CUresult dgen_array_create(CUcontext ctx, CUarray *a, size_t w, size_t h, size_t d, int format, int channels, int flags) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r != 0) return r;
	dgen_array_desc desc = {w, h, d, format, (unsigned)channels, (unsigned)flags};
	return cu.Array3DCreate(a, &desc);
}

CUresult dgen_array_destroy(CUcontext ctx, CUarray a) {
	CUresult r = cu.CtxSetCurrent(ctx);
	return r == 0 ? cu.ArrayDestroy(a) : r;
}

// dgen_copy3d copies a box between an array and host memory or another
// array: src and dst are arrays, or 0 for host memory at host, laid out
// with pitch and slice (bytes).
CUresult dgen_copy3d(CUcontext ctx, CUstream s, CUarray src, CUarray dst, unsigned char *host, size_t pitch, size_t slice,
		const size_t *srcOrigin, const size_t *dstOrigin, const size_t *box, int nwait, CUevent *waits, CUevent start,
		CUevent end, int sync, int *step) {
	CUresult r = dgen_pre(ctx, s, nwait, waits, start, step);
	if (r == 0) {
		dgen_memcpy3d c;
		memset(&c, 0, sizeof c);
		c.srcXInBytes = srcOrigin[0]; c.srcY = srcOrigin[1]; c.srcZ = srcOrigin[2];
		c.dstXInBytes = dstOrigin[0]; c.dstY = dstOrigin[1]; c.dstZ = dstOrigin[2];
		if (src) { c.srcMemoryType = 3; c.srcArray = src; }
		else { c.srcMemoryType = 1; c.srcHost = host; c.srcPitch = pitch; c.srcHeight = pitch ? slice / pitch : 0; }
		if (dst) { c.dstMemoryType = 3; c.dstArray = dst; }
		else { c.dstMemoryType = 1; c.dstHost = host; c.dstPitch = pitch; c.dstHeight = pitch ? slice / pitch : 0; }
		c.WidthInBytes = box[0]; c.Height = box[1]; c.Depth = box[2];
		r = cu.Memcpy3DAsync(&c, s);
	}
	return dgen_post(r, s, end, sync, step);
}

CUresult dgen_tex_create(CUcontext ctx, unsigned long long *t, CUarray a, int address, int filter, int flags) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r != 0) return r;
	dgen_res_desc res;
	memset(&res, 0, sizeof res);
	res.resType = 0; // CU_RESOURCE_TYPE_ARRAY
	res.hArray = a;
	dgen_tex_desc tex;
	memset(&tex, 0, sizeof tex);
	tex.addressMode[0] = tex.addressMode[1] = tex.addressMode[2] = address;
	tex.filterMode = filter;
	tex.flags = (unsigned)flags;
	return cu.TexObjectCreate(t, &res, &tex, NULL);
}

CUresult dgen_surf_create(CUcontext ctx, unsigned long long *t, CUarray a) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r != 0) return r;
	dgen_res_desc res;
	memset(&res, 0, sizeof res);
	res.hArray = a;
	return cu.SurfObjectCreate(t, &res);
}

CUresult dgen_obj_destroy(CUcontext ctx, unsigned long long t, int surface) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r != 0) return r;
	return surface ? cu.SurfObjectDestroy(t) : cu.TexObjectDestroy(t);
}

// Stream-ordered memory (pool.go): the optional functions of CUDA's memory
// pools (CUDA 11.2), found by dgen_pool_create.
static struct {
	CUresult (*MemPoolCreate)(CUmemoryPool *, const dgen_pool_props *);
	CUresult (*MemPoolDestroy)(CUmemoryPool);
	CUresult (*MemPoolSetAttribute)(CUmemoryPool, int, void *);
	CUresult (*MemPoolTrimTo)(CUmemoryPool, size_t);
	CUresult (*MemAllocFromPoolAsync)(CUdeviceptr *, size_t, CUmemoryPool, CUstream);
	CUresult (*MemFreeAsync)(CUdeviceptr, CUstream);
} cup;

static const char *dgen_cup_names[] = {
	"cuMemPoolCreate", "cuMemPoolDestroy", "cuMemPoolSetAttribute", "cuMemPoolTrimTo",
	"cuMemAllocFromPoolAsync", "cuMemFreeAsync",
};

// dgen_pool_load looks the memory-pool functions up in libcuda, once per
// process (the Go side calls it under a sync.Once, before any other pool
// function); it returns 1 if libcuda has them all, else 0.
int dgen_pool_load(void) {
	int found = 1;
	for (size_t i = 0; i < sizeof dgen_cup_names / sizeof dgen_cup_names[0]; i++) {
		void *p = dgen_lib ? dlsym(dgen_lib, dgen_cup_names[i]) : NULL;
		((void **)&cup)[i] = p;
		if (p == NULL) found = 0;
	}
	return found;
}

// dgen_pool_create makes a memory pool on device dev of ctx, whose
// allocations never wait for a free that has not completed (neither
// CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES nor
// CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES), and the streams that
// order its allocations and frees, once dgen_pool_load has found the
// functions. It returns CUDA_ERROR_NOT_SUPPORTED where the device has no
// pools.
CUresult dgen_pool_create(CUcontext ctx, CUdevice dev, CUmemoryPool *pool, CUstream *alloc, CUstream *frees) {
	int supported = 0;
	if (cu.DeviceGetAttribute(&supported, 115, dev) != 0 || !supported) // CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED
		return 801; // CUDA_ERROR_NOT_SUPPORTED
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r != 0) return r;
	dgen_pool_props props;
	memset(&props, 0, sizeof props);
	props.allocType = 1;    // CU_MEM_ALLOCATION_TYPE_PINNED
	props.locationType = 1; // CU_MEM_LOCATION_TYPE_DEVICE
	props.locationId = dev;
	if ((r = cup.MemPoolCreate(pool, &props)) != 0) return r;
	int no = 0;
	r = cup.MemPoolSetAttribute(*pool, 1, &no); // CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES
	if (r == 0) r = cup.MemPoolSetAttribute(*pool, 3, &no); // CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES
	*alloc = *frees = 0;
	if (r == 0) r = cu.StreamCreateWithPriority(alloc, 1, 0); // CU_STREAM_NON_BLOCKING
	if (r == 0) r = cu.StreamCreateWithPriority(frees, 1, 0);
	if (r != 0) dgen_pool_destroy(ctx, *pool, *alloc, *frees);
	return r;
}

// dgen_pool_alloc allocates size bytes from pool on stream s and waits
// for the allocation, so that every stream may use the memory.
CUresult dgen_pool_alloc(CUcontext ctx, CUmemoryPool pool, CUstream s, CUdeviceptr *p, size_t size) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r == 0) r = cup.MemAllocFromPoolAsync(p, size, pool, s);
	if (r == 0) r = cu.StreamSynchronize(s);
	return r;
}

// dgen_pool_free frees p on stream frees once every command enqueued on
// the n streams before the call has completed: e is recorded on each in
// turn, and frees waits for each record.
CUresult dgen_pool_free(CUcontext ctx, CUstream frees, CUstream *streams, int n, CUevent e, CUdeviceptr p) {
	CUresult r = cu.CtxSetCurrent(ctx);
	for (int i = 0; r == 0 && i < n; i++) {
		r = cu.EventRecord(e, streams[i]);
		if (r == 0) r = cu.StreamWaitEvent(frees, e, 0);
	}
	return r == 0 ? cup.MemFreeAsync(p, frees) : r;
}

// dgen_pool_drain waits for the frees enqueued on frees and gives the
// pool's unused memory back to the device.
CUresult dgen_pool_drain(CUcontext ctx, CUmemoryPool pool, CUstream frees) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r == 0) r = cu.StreamSynchronize(frees);
	return r == 0 ? cup.MemPoolTrimTo(pool, 0) : r;
}

// dgen_pool_destroy destroys the streams and the pool; the driver frees
// the pool's memory once the frees still enqueued have run.
CUresult dgen_pool_destroy(CUcontext ctx, CUmemoryPool pool, CUstream alloc, CUstream frees) {
	CUresult r = cu.CtxSetCurrent(ctx);
	if (r != 0) return r;
	if (alloc) r = cu.StreamDestroy(alloc);
	if (frees) {
		CUresult r2 = cu.StreamDestroy(frees);
		if (r == 0) r = r2;
	}
	CUresult r3 = cup.MemPoolDestroy(pool);
	return r == 0 ? r3 : r;
}
