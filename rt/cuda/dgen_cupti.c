// C side of rt/cuda's kernel times from CUPTI (cupti.go): libcupti loaded
// with dlopen, its activity buffers, and the kernel records they deliver,
// kept in a list that Go takes from. CUPTI calls the buffer callbacks on a
// thread of its own; they call no Go.
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "dgen_cu.h"

typedef int CUptiResult;

static struct {
	CUptiResult (*GetVersion)(uint32_t *);
	CUptiResult (*GetResultString)(CUptiResult, const char **);
	CUptiResult (*ActivityRegisterCallbacks)(void (*)(uint8_t **, size_t *, size_t *),
		void (*)(CUcontext, uint32_t, uint8_t *, size_t, size_t));
	CUptiResult (*ActivityEnable)(int);
	CUptiResult (*ActivityDisable)(int);
	CUptiResult (*ActivityFlushAll)(uint32_t);
	CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, void **);
	CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
	CUptiResult (*GetStreamIdEx)(CUcontext, CUstream, uint8_t, uint32_t *);
	CUptiResult (*Finalize)(void);
} cupti;

static const char *dgen_cupti_names[] = {
	"cuptiGetVersion", "cuptiGetResultString", "cuptiActivityRegisterCallbacks",
	"cuptiActivityEnable", "cuptiActivityDisable", "cuptiActivityFlushAll",
	"cuptiActivityGetNextRecord", "cuptiActivityGetNumDroppedRecords", "cuptiGetStreamIdEx",
	"cuptiFinalize",
};

// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, and where a kernel record keeps
// what dgen reads: the same offsets in every CUpti_ActivityKernel from
// version 4 on (CUDA 9) to 9 and later.
enum { KIND_CONCURRENT_KERNEL = 10, OFF_START = 16, OFF_END = 24, OFF_STREAM = 48, OFF_DIMS = 52 };

// The size of CUPTI's activity buffers: small enough that CUPTI hands a
// loop's records over as it goes (a few hundred a buffer), without a flush.
enum { BUFFER_SIZE = 64 << 10 };

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static dgen_krec *recs;       // records not yet taken, in delivery order
static int nrecs, caprecs;
static unsigned long long dropped; // records CUPTI dropped, or that did not fit

// dgen_cupti_open opens lib and finds its functions; it returns NULL, or
// what is missing.
const char *dgen_cupti_open(const char *lib, uint32_t *version) {
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!h) return dlerror();
	for (int i = 0; i < (int)(sizeof dgen_cupti_names / sizeof dgen_cupti_names[0]); i++) {
		void *p = dlsym(h, dgen_cupti_names[i]);
		if (!p) return dgen_cupti_names[i];
		((void **)&cupti)[i] = p;
	}
	return cupti.GetVersion(version) == 0 ? NULL : "cuptiGetVersion";
}

const char *dgen_cupti_error(int r) {
	const char *s = NULL;
	if (cupti.GetResultString == NULL || cupti.GetResultString(r, &s) != 0) return NULL;
	return s;
}

static void requested(uint8_t **buf, size_t *size, size_t *max) {
	*buf = aligned_alloc(8, BUFFER_SIZE);
	*size = *buf ? BUFFER_SIZE : 0;
	*max = 0;
}

// keep appends a kernel record to recs.
static void keep(const uint8_t *p) {
	if (nrecs == caprecs) {
		int c = caprecs ? 2 * caprecs : 1024;
		dgen_krec *n = realloc(recs, c * sizeof *recs);
		if (!n) {
			dropped++;
			return;
		}
		recs = n, caprecs = c;
	}
	dgen_krec *r = &recs[nrecs++];
	memcpy(&r->start, p + OFF_START, 8);
	memcpy(&r->end, p + OFF_END, 8);
	memcpy(&r->stream, p + OFF_STREAM, 4);
	memcpy(r->dims, p + OFF_DIMS, sizeof r->dims);
}

static void completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid) {
	void *rec = NULL;
	pthread_mutex_lock(&mu);
	while (cupti.ActivityGetNextRecord(buf, valid, &rec) == 0)
		if (*(const int *)rec == KIND_CONCURRENT_KERNEL) keep(rec);
	size_t d = 0;
	if (cupti.ActivityGetNumDroppedRecords(ctx, stream, &d) == 0) dropped += d;
	pthread_mutex_unlock(&mu);
	free(buf);
}

// dgen_cupti_enable attaches CUPTI to the process, registers the buffer
// callbacks and enables CUPTI's kernel records.
int dgen_cupti_enable(void) {
	CUptiResult r = cupti.ActivityRegisterCallbacks(requested, completed);
	return r != 0 ? r : cupti.ActivityEnable(KIND_CONCURRENT_KERNEL);
}

// dgen_cupti_disable disables the kernel records and detaches CUPTI from
// the process: attached, it leaves launches about 1 µs slower (on the
// H100, in BenchmarkTraceCost) even with no record enabled.
int dgen_cupti_disable(void) {
	CUptiResult r = cupti.ActivityDisable(KIND_CONCURRENT_KERNEL);
	CUptiResult f = cupti.Finalize();
	return r != 0 ? r : f;
}

// dgen_cupti_flush hands over the records of completed kernels that CUPTI
// still holds in a buffer that is not full.
int dgen_cupti_flush(void) { return cupti.ActivityFlushAll(0); }

int dgen_cupti_stream(CUcontext ctx, CUstream s, uint32_t *id) { return cupti.GetStreamIdEx(ctx, s, 0, id); }

// dgen_cupti_take moves up to max records into out, oldest first, and
// returns how many; *lost is set to the records lost so far.
int dgen_cupti_take(dgen_krec *out, int max, unsigned long long *lost) {
	pthread_mutex_lock(&mu);
	int n = nrecs < max ? nrecs : max;
	memcpy(out, recs, n * sizeof *recs);
	memmove(recs, recs + n, (nrecs - n) * sizeof *recs);
	nrecs -= n;
	*lost = dropped;
	pthread_mutex_unlock(&mu);
	return n;
}
