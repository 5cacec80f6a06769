// The CUDA driver API declarations dgen uses, written here so that no CUDA
// header is needed to build, and the wrappers of dgen_cu.c.
#ifndef DGEN_CU_H
#define DGEN_CU_H
#include <stddef.h>

#include <stdint.h>

typedef int CUresult;
typedef int CUdevice;
// The handles that a command passes, CUDA's pointers to opaque structs,
// are integers here: the same in the C calling convention, and what cgo
// passes without checking them as Go pointers on every call (a profile on
// an H100's host gave a launch's seven checks 3% of its time).
typedef uintptr_t CUcontext;
typedef struct CUmod_st *CUmodule;
typedef uintptr_t CUfunction;
typedef uintptr_t CUstream;
typedef uintptr_t CUevent;
typedef unsigned long long CUdeviceptr;

enum {
	DGEN_CUDA_SUCCESS = 0,
	DGEN_CUDA_ERROR_NOT_READY = 600,
	DGEN_JIT_INFO_LOG_BUFFER = 3,
	DGEN_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
	DGEN_JIT_ERROR_LOG_BUFFER = 5,
	DGEN_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
	DGEN_JIT_GENERATE_LINE_INFO = 13,
	// CUfunction_attribute values.
	DGEN_FUNC_MAX_THREADS_PER_BLOCK = 0,
	DGEN_FUNC_SHARED_SIZE_BYTES = 1,
	DGEN_FUNC_LOCAL_SIZE_BYTES = 3,
};

// Steps of a wrapper, which an error names.
enum { STEP_CTX, STEP_WAIT, STEP_RECORD_START, STEP_OP, STEP_RECORD_END, STEP_SYNC, STEP_EVENT_SYNC, STEP_ELAPSED };

// Copy kinds of dgen_copy.
enum { COPY_HTOD, COPY_DTOH, COPY_DTOD };

int dgen_cu_count(void);
const char *dgen_cu_name(int i);
const char *dgen_cu_open(const char *lib);
int dgen_cu_sym(int i);
CUresult dgen_init(int *version);
const char *dgen_err_name(CUresult r);
const char *dgen_err_string(CUresult r);
CUresult dgen_device(int i, CUdevice *d, char *name, int n, size_t *mem);
CUresult dgen_attr(int *v, int a, CUdevice d);
CUresult dgen_device_count(int *n);
CUresult dgen_ctx_retain(CUcontext *c, CUdevice d);
CUresult dgen_ctx_release(CUdevice d);
CUresult dgen_launch(CUcontext ctx, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream s, uintptr_t params,
		int nwait, CUevent *waits, CUevent start, CUevent end, int *step);
// dgen_launch_plain is dgen_launch without a wait list or events: it
// returns cuLaunchKernel's result, or the negated result of cuCtxSetCurrent
// when that fails.
CUresult dgen_launch_plain(CUcontext ctx, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream s, uintptr_t params);
// dgen_ctx_current makes ctx the thread's current context, and
// dgen_launch_current launches on it: a thread that keeps one context (a
// submission ring's, dgen_ring.c) sets it once.
CUresult dgen_ctx_current(CUcontext ctx);
CUresult dgen_launch_current(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
		unsigned bx, unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params);
// dgen_copy's host memory is a byte pointer, not void *, so that cgo does
// not search the Go memory it points to for Go pointers on every copy.
CUresult dgen_copy(CUcontext ctx, CUstream s, int kind, CUdeviceptr dst, CUdeviceptr src, unsigned char *host,
		size_t size, int nwait, CUevent *waits, CUevent start, CUevent end, int sync, int *step);
CUresult dgen_fill(CUcontext ctx, CUstream s, CUdeviceptr dst, const unsigned char *p, size_t n, size_t size,
		int nwait, CUevent *waits, CUevent start, CUevent end, int *step);
CUresult dgen_marker(CUcontext ctx, CUstream s, int nwait, CUevent *waits, CUevent end, int *step);
CUresult dgen_sync(CUcontext ctx, CUstream s);
CUresult dgen_stream_create(CUcontext ctx, CUstream *s, int prio);
CUresult dgen_priority_range(CUcontext ctx, int *least, int *greatest);
CUresult dgen_stream_destroy(CUcontext ctx, CUstream s);
CUresult dgen_event_create(CUcontext ctx, CUevent *e, int timed);
CUresult dgen_event_destroy(CUcontext ctx, CUevent e);
CUresult dgen_event_query(CUcontext ctx, CUevent e);
CUresult dgen_event_sync(CUcontext ctx, CUevent e);
CUresult dgen_times(CUcontext ctx, CUevent anchor, CUevent start, CUevent end, float *ms, int *step);
CUresult dgen_alloc(CUcontext ctx, CUdeviceptr *p, size_t size, int managed);
CUresult dgen_free(CUcontext ctx, CUdeviceptr p);
CUresult dgen_mem_info(CUcontext ctx, size_t *free, size_t *total);
CUresult dgen_host_alloc(CUcontext ctx, void **p, CUdeviceptr *d, size_t size);
CUresult dgen_host_free(CUcontext ctx, void *p);
CUresult dgen_module_load(CUcontext ctx, CUmodule *m, const char *ptx, char *log, size_t n, int lineinfo);
CUresult dgen_module_unload(CUcontext ctx, CUmodule m);
CUresult dgen_function(CUcontext ctx, CUmodule m, const char *name, CUfunction *f, int *shared, int *local, int *tpb, int *step);
CUresult dgen_func_set_attr(CUcontext ctx, CUfunction f, int a, int v);

// Stream-ordered memory (pool.go).
typedef struct CUmemPoolHandle_st *CUmemoryPool;
typedef struct {
	int allocType, handleTypes;
	int locationType, locationId;
	void *win32SecurityAttributes;
	unsigned char reserved[64]; // maxSize and usage in CUDA 12's cuda.h: 0 is the default
} dgen_pool_props; // CUmemPoolProps
int dgen_pool_load(void);
CUresult dgen_pool_create(CUcontext ctx, CUdevice dev, CUmemoryPool *pool, CUstream *alloc, CUstream *frees);
CUresult dgen_pool_alloc(CUcontext ctx, CUmemoryPool pool, CUstream s, CUdeviceptr *p, size_t size);
CUresult dgen_pool_free(CUcontext ctx, CUstream frees, CUstream *streams, int n, CUevent e, CUdeviceptr p);
CUresult dgen_pool_drain(CUcontext ctx, CUmemoryPool pool, CUstream frees);
CUresult dgen_pool_destroy(CUcontext ctx, CUmemoryPool pool, CUstream alloc, CUstream frees);

// Images (image.go). The structs are CUDA's, as cuda.h lays them out.
typedef struct CUarray_st *CUarray;
typedef struct {
	size_t Width, Height, Depth;
	int Format;
	unsigned NumChannels, Flags;
} dgen_array_desc; // CUDA_ARRAY3D_DESCRIPTOR
typedef struct {
	size_t srcXInBytes, srcY, srcZ, srcLOD;
	int srcMemoryType;
	const void *srcHost;
	CUdeviceptr srcDevice;
	CUarray srcArray;
	void *reserved0;
	size_t srcPitch, srcHeight;
	size_t dstXInBytes, dstY, dstZ, dstLOD;
	int dstMemoryType;
	void *dstHost;
	CUdeviceptr dstDevice;
	CUarray dstArray;
	void *reserved1;
	size_t dstPitch, dstHeight;
	size_t WidthInBytes, Height, Depth;
} dgen_memcpy3d; // CUDA_MEMCPY3D
typedef struct {
	int resType;
	union {
		CUarray hArray;
		int reserved[32];
	};
	unsigned flags;
} dgen_res_desc; // CUDA_RESOURCE_DESC
typedef struct {
	int addressMode[3];
	int filterMode;
	unsigned flags, maxAnisotropy;
	int mipmapFilterMode;
	float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
	float borderColor[4];
	int reserved[12];
} dgen_tex_desc; // CUDA_TEXTURE_DESC

CUresult dgen_array_create(CUcontext ctx, CUarray *a, size_t w, size_t h, size_t d, int format, int channels, int flags);
CUresult dgen_array_destroy(CUcontext ctx, CUarray a);
CUresult dgen_copy3d(CUcontext ctx, CUstream s, CUarray src, CUarray dst, unsigned char *host, size_t pitch, size_t slice,
		const size_t *srcOrigin, const size_t *dstOrigin, const size_t *box, int nwait, CUevent *waits, CUevent start,
		CUevent end, int sync, int *step);
CUresult dgen_tex_create(CUcontext ctx, unsigned long long *t, CUarray a, int address, int filter, int flags);
CUresult dgen_surf_create(CUcontext ctx, unsigned long long *t, CUarray a);
CUresult dgen_obj_destroy(CUcontext ctx, unsigned long long t, int surface);

// Command graphs (graph.go). The graph functions are optional: with an
// old driver that lacks one, dgen_graph_load returns 0 and graphs replay
// as a loop in C (dgen_gcmd_issue).
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUgraphExec_st *CUgraphExec;

// Kinds of dgen_gcmd.
enum { GCMD_KERNEL, GCMD_COPY, GCMD_FILL };

// dgen_gcmd is one prepared command of a graph.
typedef struct {
	int kind;
	CUfunction f;
	unsigned grid[3], block[3], shared;
	void **params;
	CUdeviceptr src, dst;
	size_t size;
	unsigned char *pattern;
	size_t pattern_size;
	CUgraphNode node; // the command's node in a captured graph; NULL where it has none or several
} dgen_gcmd;

// dgen_memset_params is CUDA_MEMSET_NODE_PARAMS.
typedef struct {
	CUdeviceptr dst;
	size_t pitch;
	unsigned value, elementSize;
	size_t width, height;
} dgen_memset_params;

// dgen_memset_of fills p with the memset node that a fill command c is
// captured as, and returns 1; 0 where c is captured as several nodes (a
// pattern of more than 4 bytes) or none (no bytes).
int dgen_memset_of(const dgen_gcmd *c, dgen_memset_params *p);

int dgen_graph_load(void);
CUresult dgen_gcmd_issue(CUcontext ctx, CUstream s, dgen_gcmd *cmds, int n, int capture,
		int nwait, CUevent *waits, CUevent start, CUevent end, int *failed, int *step);
CUresult dgen_graph_capture(CUcontext ctx, CUstream s, dgen_gcmd *cmds, int n, CUgraph *g, CUgraphExec *x, int *failed);
CUresult dgen_graph_launch(CUcontext ctx, CUstream s, CUgraphExec x, int nwait, CUevent *waits, CUevent start, CUevent end, int *step);
CUresult dgen_graph_set(CUcontext ctx, CUgraphExec x, dgen_gcmd *c);
CUresult dgen_graph_set_cmd(CUcontext ctx, CUgraphExec x, dgen_gcmd *c);
CUresult dgen_graph_destroy(CUcontext ctx, CUgraph g, CUgraphExec x);

// Kernel times from CUPTI (cupti.go, dgen_cupti.c).

// dgen_krec is what dgen keeps of a CUPTI kernel record: its stream's
// CUPTI id, grid and block, and start and end in CUPTI's clock.
typedef struct {
	unsigned long long start, end;
	uint32_t stream;
	int dims[6];
} dgen_krec;

const char *dgen_cupti_open(const char *lib, uint32_t *version);
const char *dgen_cupti_error(int r);
int dgen_cupti_enable(void);
int dgen_cupti_disable(void);
int dgen_cupti_flush(void);
int dgen_cupti_stream(CUcontext ctx, CUstream s, uint32_t *id);
int dgen_cupti_take(dgen_krec *out, int max, unsigned long long *lost);

#endif
