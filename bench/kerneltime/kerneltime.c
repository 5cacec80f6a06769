/*
 * kerneltime: the device time of every kernel a CUDA process runs, from
 * CUPTI's kernel records, for any process: rt/cuda's, CuPy's, raw C's.
 * The CUDA driver loads it at cuInit where CUDA_INJECTION64_PATH names it
 * (CUPTI's injection, as Nsight's tools attach), so the same measurement
 * covers dgen and its peers, with no change to either:
 *
 *	CUDA_INJECTION64_PATH=$PWD/libkerneltime.so ./stencil -graph ...
 *	CUDA_INJECTION64_PATH=$PWD/libkerneltime.so python3 hotspot.py -alloc graph
 *
 * When the process's first CUDA context is destroyed (rt's Context.Close
 * releases the primary context; a Go program's exit runs no atexit
 * function), or else at exit, it prints to stderr one JSON line per kernel
 * name:
 *
 *	{"kerneltime":NAME,"count":N,"skipped":S,"ns_median":..,"ns_p10":..,"ns_p90":..,"ns_min":..,
 *	 "gap_ns_median":..,"period_ns_median":..,"regs":R,"static_smem":B,"dyn_smem":B,"local_per_thread":B,
 *	 "grid":[x,y,z],"block":[x,y,z]}
 *
 * ns_* is the kernel's own duration (CUPTI's end - start); gap_ns_median
 * the median idle time on the stream between a kernel's end and the start
 * of the next kernel on it (of any name), and period_ns_median the median
 * time from a kernel's start to the next one's: a loop that keeps the GPU
 * busy runs at one period a kernel, its duration plus the gap the launch
 * path leaves. KERNELTIME_SKIP=N leaves out each name's first N records
 * (warm-up: the first launches and builds); KERNELTIME_LIBRARY names
 * libcupti (default: the loader's, then /usr/local/cuda's). Built by make
 * gpu-bundle (cc -shared -fPIC); needs no CUDA header.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUptiResult;

typedef void (*callback)(void *userdata, int domain, uint32_t cbid, const void *data);

static struct {
	CUptiResult (*ActivityRegisterCallbacks)(void (*)(uint8_t **, size_t *, size_t *),
		void (*)(void *, uint32_t, uint8_t *, size_t, size_t));
	CUptiResult (*ActivityEnable)(int);
	CUptiResult (*ActivityFlushAll)(uint32_t);
	CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, void **);
	CUptiResult (*Subscribe)(void **, callback, void *);
	CUptiResult (*EnableCallback)(uint32_t, void *, int, uint32_t);
} cupti;

static const char *names[] = {"cuptiActivityRegisterCallbacks", "cuptiActivityEnable", "cuptiActivityFlushAll",
	"cuptiActivityGetNextRecord", "cuptiSubscribe", "cuptiEnableCallback"};

/* CUPTI_CB_DOMAIN_RESOURCE and CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING. */
enum { DOMAIN_RESOURCE = 3, CONTEXT_DESTROY_STARTING = 2 };

/* CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, and the fields of its record read
 * here: the same offsets in every CUpti_ActivityKernel from version 4 (CUDA
 * 9) on, as rt/cuda's dgen_cupti.c reads them. */
enum {
	KIND_CONCURRENT_KERNEL = 10,
	OFF_REGS = 6, /* uint16 registersPerThread */
	OFF_START = 16,
	OFF_END = 24,
	OFF_STREAM = 48,
	OFF_DIMS = 52,        /* int32 grid x, y, z, block x, y, z */
	OFF_STATIC_SMEM = 76, /* int32 */
	OFF_DYN_SMEM = 80,    /* int32 */
	OFF_LOCAL = 84,       /* uint32 localMemoryPerThread */
	OFF_NAME = 104,       /* const char * */
	BUFFER_SIZE = 1 << 20,
};

/* rec is what is kept of a kernel record. */
typedef struct {
	uint64_t start, end;
	uint32_t stream;
	int name; /* index in kinds */
} rec;

/* kind is a kernel name with what its records share. */
typedef struct {
	char *name;
	int regs, smem, dyn, local, dims[6];
} kind;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static rec *recs;
static int nrecs, caprecs;
static kind *kinds;
static int nkinds;

static int kind_of(const uint8_t *p) {
	const char *name = *(const char *const *)(p + OFF_NAME);
	if (!name) name = "?";
	for (int i = 0; i < nkinds; i++)
		if (strcmp(kinds[i].name, name) == 0) return i;
	kind *k = realloc(kinds, (size_t)(nkinds + 1) * sizeof *kinds);
	if (!k) return -1;
	kinds = k;
	k = &kinds[nkinds];
	memset(k, 0, sizeof *k);
	k->name = strdup(name);
	uint16_t regs;
	memcpy(&regs, p + OFF_REGS, 2);
	k->regs = regs;
	memcpy(&k->smem, p + OFF_STATIC_SMEM, 4);
	memcpy(&k->dyn, p + OFF_DYN_SMEM, 4);
	memcpy(&k->local, p + OFF_LOCAL, 4);
	memcpy(k->dims, p + OFF_DIMS, sizeof k->dims);
	return nkinds++;
}

static void requested(uint8_t **buf, size_t *size, size_t *max) {
	*buf = aligned_alloc(8, BUFFER_SIZE);
	*size = *buf ? BUFFER_SIZE : 0;
	*max = 0;
}

static void completed(void *ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid) {
	(void)ctx, (void)stream, (void)size;
	void *r = NULL;
	pthread_mutex_lock(&mu);
	while (cupti.ActivityGetNextRecord(buf, valid, &r) == 0) {
		const uint8_t *p = r;
		if (*(const int *)p != KIND_CONCURRENT_KERNEL) continue;
		if (nrecs == caprecs) {
			int c = caprecs ? 2 * caprecs : 4096;
			rec *n = realloc(recs, (size_t)c * sizeof *recs);
			if (!n) break;
			recs = n, caprecs = c;
		}
		rec *k = &recs[nrecs];
		memcpy(&k->start, p + OFF_START, 8);
		memcpy(&k->end, p + OFF_END, 8);
		memcpy(&k->stream, p + OFF_STREAM, 4);
		if ((k->name = kind_of(p)) >= 0) nrecs++;
	}
	pthread_mutex_unlock(&mu);
	free(buf);
}

static int cmp_u64(const void *a, const void *b) {
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int by_stream_start(const void *a, const void *b) {
	const rec *x = a, *y = b;
	if (x->stream != y->stream) return x->stream < y->stream ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* quantile returns the q-quantile of the n sorted values v (0 if none). */
static uint64_t quantile(const uint64_t *v, int n, double q) { return n ? v[(int)(q * (n - 1) + 0.5)] : 0; }

static void print(void);

/* report prints the report once. */
static void report(void) {
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, print);
}

/* destroying reports when a context is about to be destroyed, while its
 * records can still be flushed. */
static void destroying(void *userdata, int domain, uint32_t cbid, const void *data) {
	(void)userdata, (void)data;
	if (domain == DOMAIN_RESOURCE && cbid == CONTEXT_DESTROY_STARTING) report();
}

/* print flushes CUPTI's records and prints the report. */
static void print(void) {
	cupti.ActivityFlushAll(1);
	pthread_mutex_lock(&mu);
	const char *s = getenv("KERNELTIME_SKIP");
	int skip = s ? atoi(s) : 0;
	qsort(recs, (size_t)nrecs, sizeof *recs, by_stream_start);
	uint64_t *dur = malloc((size_t)(nrecs + 1) * sizeof *dur), *gap = malloc((size_t)(nrecs + 1) * sizeof *gap),
		 *per = malloc((size_t)(nrecs + 1) * sizeof *per);
	int *seen = calloc((size_t)nkinds + 1, sizeof *seen);
	for (int k = 0; dur && gap && per && seen && k < nkinds; k++) {
		int nd = 0, ng = 0, skipped = 0;
		for (int i = 0; i < nrecs; i++) {
			if (recs[i].name != k) continue;
			/* the records are sorted by stream, then start: skip the first
			 * on each stream in that order */
			if (seen[k]++ < skip) {
				skipped++;
				continue;
			}
			dur[nd++] = recs[i].end - recs[i].start;
			if (i + 1 < nrecs && recs[i + 1].stream == recs[i].stream && recs[i + 1].start >= recs[i].end) {
				gap[ng] = recs[i + 1].start - recs[i].end;
				per[ng++] = recs[i + 1].start - recs[i].start;
			}
		}
		qsort(dur, (size_t)nd, sizeof *dur, cmp_u64);
		qsort(gap, (size_t)ng, sizeof *gap, cmp_u64);
		qsort(per, (size_t)ng, sizeof *per, cmp_u64);
		kind *x = &kinds[k];
		fprintf(stderr,
			"{\"kerneltime\":\"%s\",\"count\":%d,\"skipped\":%d,\"ns_median\":%llu,\"ns_p10\":%llu,\"ns_p90\":%llu,\"ns_min\":%llu,"
			"\"gap_ns_median\":%llu,\"period_ns_median\":%llu,\"regs\":%d,\"static_smem\":%d,\"dyn_smem\":%d,\"local_per_thread\":%d,"
			"\"grid\":[%d,%d,%d],\"block\":[%d,%d,%d]}\n",
			x->name, nd, skipped, (unsigned long long)quantile(dur, nd, 0.5), (unsigned long long)quantile(dur, nd, 0.1),
			(unsigned long long)quantile(dur, nd, 0.9), (unsigned long long)quantile(dur, nd, 0),
			(unsigned long long)quantile(gap, ng, 0.5), (unsigned long long)quantile(per, ng, 0.5), x->regs, x->smem, x->dyn,
			x->local, x->dims[0], x->dims[1], x->dims[2], x->dims[3], x->dims[4], x->dims[5]);
	}
	pthread_mutex_unlock(&mu);
}

/* InitializeInjection is what the CUDA driver calls, once, when it loads
 * the library that CUDA_INJECTION64_PATH names. It returns 1 on success. */
int InitializeInjection(void) {
	const char *libs[] = {getenv("KERNELTIME_LIBRARY"), "libcupti.so", "/usr/local/cuda/lib64/libcupti.so",
		"/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"};
	void *h = NULL;
	for (size_t i = 0; !h && i < sizeof libs / sizeof libs[0]; i++)
		if (libs[i]) h = dlopen(libs[i], RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "kerneltime: no libcupti: %s\n", dlerror());
		return 0;
	}
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		void *p = dlsym(h, names[i]);
		if (!p) {
			fprintf(stderr, "kerneltime: libcupti lacks %s\n", names[i]);
			return 0;
		}
		((void **)&cupti)[i] = p;
	}
	if (cupti.ActivityRegisterCallbacks(requested, completed) != 0 || cupti.ActivityEnable(KIND_CONCURRENT_KERNEL) != 0) {
		fprintf(stderr, "kerneltime: CUPTI refused the kernel records\n");
		return 0;
	}
	void *sub = NULL;
	if (cupti.Subscribe(&sub, destroying, NULL) != 0 || cupti.EnableCallback(1, sub, DOMAIN_RESOURCE, CONTEXT_DESTROY_STARTING) != 0)
		fprintf(stderr, "kerneltime: no context callback: the report comes at exit only\n");
	atexit(report);
	return 1;
}
