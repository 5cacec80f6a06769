/*
 * rawcu: the CUDA yardstick for dgen's figures on rt/cuda, as rawcl is for
 * rt/opencl. It builds the same kernels with NVIDIA's OpenCL, rewrites the
 * PTX as rt/cuda does (visible entries, no texmode_independent, no .ptr
 * parameter attributes, environment registers 0-5 to 0 and 6-8 to
 * %nctaid), loads it with cuModuleLoadDataEx and times plain
 * cuLaunchKernel loops with the same arguments and geometry as dgen's
 * benchmarks. libcuda.so.1 is opened with dlopen, so it builds with no
 * CUDA header or toolkit:
 *
 *   cc -O2 -Wall -o rawcu bench/rawcu/rawcu.c -lOpenCL -ldl
 *
 *   rawcu launch N REPS            one-work-item `touch` launches (rawcl launch)
 *   rawcu hotspot SRC SIZE ITERS PYRAMID REPS
 *                                  Rodinia Hotspot's time loop (rawcl hotspot),
 *                                  and again with every launch's device times
 *                                  read back (hotspot_traced_...)
 *   rawcu traced N REPS            every launch's device times read back, three
 *                                  ways (see traced)
 *   rawcu costs N REPS             what single driver calls cost, alone: the
 *                                  calls rt/cuda makes around a launch
 *
 * Every figure is one JSON object per repetition, as rawcl prints them.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
typedef int CUdevice;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUstream, *CUevent;
typedef unsigned long long CUdeviceptr;

static struct {
	CUresult (*Init)(unsigned);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
	CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
	CUresult (*StreamCreate)(CUstream *, unsigned);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*EventCreate)(CUevent *, unsigned);
	CUresult (*EventRecord)(CUevent, CUstream);
	CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*EventQuery)(CUevent);
	CUresult (*EventSynchronize)(CUevent);
} cu;
static const char *names[] = {"cuInit", "cuDeviceGet", "cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuModuleLoadDataEx",
	"cuModuleGetFunction", "cuLaunchKernel", "cuMemAlloc_v2", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuStreamCreate",
	"cuStreamSynchronize", "cuEventCreate", "cuEventRecord", "cuEventElapsedTime", "cuEventQuery", "cuEventSynchronize"};

static void check(CUresult r, const char *call) {
	if (r != 0) {
		fprintf(stderr, "rawcu: %s: CUresult %d\n", call, r);
		exit(1);
	}
}

static double now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void emit(const char *bench, int rep, double ns) {
	printf("{\"bench\":\"%s\",\"rep\":%d,\"ns_per_op\":%.1f}\n", bench, rep, ns);
	fflush(stdout);
}

/* replace returns s with every a replaced by b. */
static char *replace(const char *s, const char *a, const char *b) {
	size_t la = strlen(a), lb = strlen(b), n = 0;
	for (const char *p = s; (p = strstr(p, a)); p += la) n++;
	char *o = malloc(strlen(s) + n * (lb > la ? lb - la : 0) + 1), *w = o;
	for (const char *p = s;;) {
		const char *h = strstr(p, a);
		if (!h) { strcpy(w, p); break; }
		memcpy(w, p, h - p); w += h - p; memcpy(w, b, lb); w += lb; p = h + la;
	}
	return o;
}

/* ptx builds src with the first NVIDIA GPU of OpenCL and rewrites its PTX. */
static char *ptx(const char *src) {
	cl_platform_id ps[16];
	cl_uint np = 0;
	clGetPlatformIDs(16, ps, &np);
	cl_device_id dev = NULL;
	for (cl_uint i = 0; i < np && !dev; i++)
		if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS) dev = NULL;
	if (!dev) { fprintf(stderr, "rawcu: no OpenCL GPU\n"); exit(1); }
	cl_int err;
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	if (clBuildProgram(p, 1, &dev, "", NULL, NULL) != CL_SUCCESS) { fprintf(stderr, "rawcu: build failed\n"); exit(1); }
	size_t n;
	clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof n, &n, NULL);
	char *bin = calloc(1, n + 1);
	clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL);
	char *s = replace(bin, "\n.entry ", "\n.visible .entry ");
	s = replace(s, ", texmode_independent", "");
	char from[32];
	for (int i = 0; i < 9; i++) {
		static const char *to[] = {"0;", "0;", "0;", "0;", "0;", "0;", "%nctaid.x;", "%nctaid.y;", "%nctaid.z;"};
		snprintf(from, sizeof from, "%%envreg%d;", i);
		s = replace(s, from, to[i]);
	}
	static const char *space[] = {"global", "shared", "const", "local"};
	for (int i = 0; i < 4; i++) {
		char a[64];
		for (int al = 1; al <= 256; al *= 2) { snprintf(a, sizeof a, " .ptr .%s .align %d", space[i], al); s = replace(s, a, ""); }
		snprintf(a, sizeof a, " .ptr .%s", space[i]); s = replace(s, a, "");
	}
	return s;
}

static CUstream stream;

static CUfunction load(const char *src, const char *name) {
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) { fprintf(stderr, "rawcu: %s\n", dlerror()); exit(1); }
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (!(((void **)&cu)[i] = dlsym(h, names[i]))) { fprintf(stderr, "rawcu: no %s\n", names[i]); exit(1); }
	char *code = ptx(src);
	check(cu.Init(0), "cuInit");
	CUdevice d;
	CUcontext c;
	check(cu.DeviceGet(&d, 0), "cuDeviceGet");
	check(cu.DevicePrimaryCtxRetain(&c, d), "cuDevicePrimaryCtxRetain");
	check(cu.CtxSetCurrent(c), "cuCtxSetCurrent");
	CUmodule m;
	CUfunction f;
	check(cu.ModuleLoadDataEx(&m, code, 0, NULL, NULL), "cuModuleLoadDataEx");
	check(cu.ModuleGetFunction(&f, m, name), "cuModuleGetFunction");
	check(cu.StreamCreate(&stream, 1), "cuStreamCreate");
	return f;
}

/* The launch figures: rawcl's, through cuLaunchKernel, and launch_timed,
 * a launch between two timed events with the elapsed time read back (what
 * tracing every command costs). */
static void launch(int n, int reps) {
	static const char *src = "__kernel void touch(__global int *p) { if (get_global_id(0) == 0) p[0] += 1; }";
	CUfunction f = load(src, "touch");
	CUdeviceptr buf;
	check(cu.MemAlloc(&buf, 4), "cuMemAlloc");
	void *args[] = {&buf};
	CUevent ev, *tev = malloc(2 * 1024 * sizeof(CUevent));
	check(cu.EventCreate(&ev, 2), "cuEventCreate");
	for (int i = 0; i < 2 * 1024; i++) check(cu.EventCreate(&tev[i], 0), "cuEventCreate");
	int v = 1;
	float ms, sum = 0;
	for (int rep = -1; rep < reps; rep++) {
		double t = now_ns();
		for (int i = 0; i < n; i++) {
			check(cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL), "launch");
			if (i % 1024 == 1023) cu.StreamSynchronize(stream);
		}
		cu.StreamSynchronize(stream);
		if (rep >= 0) emit("submit", rep, (now_ns() - t) / n);

		t = now_ns();
		for (int i = 0; i < n; i++) {
			check(cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL), "launch");
			check(cu.EventRecord(ev, stream), "cuEventRecord");
			if (i % 1024 == 1023) cu.StreamSynchronize(stream);
		}
		cu.StreamSynchronize(stream);
		if (rep >= 0) emit("launch_event", rep, (now_ns() - t) / n);

		t = now_ns();
		for (int i = 0; i < n; i++) {
			int j = i % 1024;
			check(cu.EventRecord(tev[2 * j], stream), "cuEventRecord");
			check(cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL), "launch");
			check(cu.EventRecord(tev[2 * j + 1], stream), "cuEventRecord");
			if (j == 1023) {
				cu.StreamSynchronize(stream);
				for (int k = 0; k < 1024; k++) { cu.EventElapsedTime(&ms, tev[2 * k], tev[2 * k + 1]); sum += ms; }
			}
		}
		cu.StreamSynchronize(stream);
		if (rep >= 0) emit("launch_timed", rep, (now_ns() - t) / n);

		t = now_ns();
		for (int i = 0; i < n; i++) {
			check(cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL), "launch");
			cu.StreamSynchronize(stream);
		}
		if (rep >= 0) emit("submit_finish", rep, (now_ns() - t) / n);

		t = now_ns();
		for (int i = 0; i < n; i++) {
			check(cu.MemcpyDtoHAsync(&v, buf, 4, stream), "read");
			cu.StreamSynchronize(stream);
		}
		if (rep >= 0) emit("read4", rep, (now_ns() - t) / n);

		t = now_ns();
		for (int i = 0; i < n; i++) {
			check(cu.MemcpyHtoDAsync(buf, &v, 4, stream), "write");
			cu.StreamSynchronize(stream);
		}
		if (rep >= 0) emit("write4", rep, (now_ns() - t) / n);
	}
	if (sum < 0) printf("%f\n", sum);
}

/* costs times driver calls one at a time, as rt/cuda makes them around a
 * launch: setting the current context, recording an event, querying,
 * waiting for and reading the elapsed time of completed events. */
static void costs(int n, int reps) {
	CUfunction f = load("__kernel void touch(__global int *p) { if (get_global_id(0) == 0) p[0] += 1; }", "touch");
	(void)f;
	CUcontext c;
	CUresult (*get)(CUcontext *) = dlsym(dlopen("libcuda.so.1", RTLD_NOW), "cuCtxGetCurrent");
	check(get(&c), "cuCtxGetCurrent");
	CUevent a, b;
	check(cu.EventCreate(&a, 0), "cuEventCreate");
	check(cu.EventCreate(&b, 0), "cuEventCreate");
	check(cu.EventRecord(a, stream), "cuEventRecord");
	check(cu.EventRecord(b, stream), "cuEventRecord");
	check(cu.StreamSynchronize(stream), "cuStreamSynchronize");
	float ms;
	for (int rep = -1; rep < reps; rep++) {
		double t = now_ns();
		for (int i = 0; i < n; i++) cu.CtxSetCurrent(c);
		if (rep >= 0) emit("cost_ctx_set_current", rep, (now_ns() - t) / n);
		t = now_ns();
		for (int i = 0; i < n; i++) get(&c);
		if (rep >= 0) emit("cost_ctx_get_current", rep, (now_ns() - t) / n);
		t = now_ns();
		for (int i = 0; i < n; i++) cu.EventQuery(b);
		if (rep >= 0) emit("cost_event_query_done", rep, (now_ns() - t) / n);
		t = now_ns();
		for (int i = 0; i < n; i++) cu.EventSynchronize(b);
		if (rep >= 0) emit("cost_event_sync_done", rep, (now_ns() - t) / n);
		t = now_ns();
		for (int i = 0; i < n; i++) cu.EventElapsedTime(&ms, a, b);
		if (rep >= 0) emit("cost_elapsed_time", rep, (now_ns() - t) / n);
		t = now_ns();
		for (int i = 0; i < n; i++) {
			cu.EventRecord(b, stream);
			if (i % 1024 == 1023) cu.StreamSynchronize(stream);
		}
		cu.StreamSynchronize(stream);
		if (rep >= 0) emit("cost_event_record", rep, (now_ns() - t) / n);
	}
}

/* since returns the milliseconds from anchor to the start and to the end
 * event of a launch (ev[0], ev[1]), summed: rt/cuda's read of a command's
 * device times. */
static float since(CUevent anchor, const CUevent *ev) {
	float a, b;
	cu.EventElapsedTime(&b, anchor, ev[1]);
	cu.EventElapsedTime(&a, anchor, ev[0]);
	return a + b;
}

/* traced times ways of reading every launch's device times, as tracing
 * does: each launch between two events, read in batches of 256 once the
 * last one of the batch has completed. "pair" reads the time between the
 * two (launch_timed); "anchor" reads both from one event recorded at the
 * start, as rt/cuda places commands on the device's clock, with a query
 * and a wait per launch first; "anchor_noquery" leaves those out. */
static void traced(int n, int reps) {
	CUfunction f = load("__kernel void touch(__global int *p) { if (get_global_id(0) == 0) p[0] += 1; }", "touch");
	CUdeviceptr buf;
	check(cu.MemAlloc(&buf, 4), "cuMemAlloc");
	void *args[] = {&buf};
	enum { B = 256 };
	CUevent anchor, ev[2 * B], lev[4 * B];
	check(cu.EventCreate(&anchor, 0), "cuEventCreate");
	for (int i = 0; i < 2 * B; i++) check(cu.EventCreate(&ev[i], 0), "cuEventCreate");
	for (int i = 0; i < 4 * B; i++) check(cu.EventCreate(&lev[i], 0), "cuEventCreate");
	check(cu.EventRecord(anchor, stream), "cuEventRecord");
	check(cu.StreamSynchronize(NULL), "cuStreamSynchronize");
	float ms, sum = 0;
	static const char *names[] = {"traced_pair", "traced_anchor", "traced_anchor_noquery", "traced_anchor_nosync", "traced_anchor_lagged"};
	for (int rep = -1; rep < reps; rep++) {
		for (int mode = 0; mode < 5; mode++) {
			if (mode == 4) {
				/* Reads lag a batch behind: once launch i of a batch is
				 * enqueued, the previous batch's launch i is waited for
				 * and read, while the device runs this batch. */
				double t = now_ns();
				for (int i = 0; i < n; i++) {
					int slot = i % (2 * B);
					check(cu.EventRecord(lev[2 * slot], stream), "cuEventRecord");
					check(cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL), "launch");
					check(cu.EventRecord(lev[2 * slot + 1], stream), "cuEventRecord");
					if (i < B) continue;
					int old = (i - B) % (2 * B);
					cu.EventSynchronize(lev[2 * old + 1]);
					sum += since(anchor, &lev[2 * old]);
				}
				cu.StreamSynchronize(stream);
				if (rep >= 0) emit(names[mode], rep, (now_ns() - t) / n);
				continue;
			}
			double t = now_ns();
			for (int i = 0; i < n; i++) {
				int j = i % B;
				check(cu.EventRecord(ev[2 * j], stream), "cuEventRecord");
				check(cu.LaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL), "launch");
				check(cu.EventRecord(ev[2 * j + 1], stream), "cuEventRecord");
				if (j < B - 1) continue;
				if (mode == 3) {
					/* No wait for the batch: each launch's times are read
					 * as soon as a query says it has completed. */
					for (int k = 0; k < B; k++) {
						while (cu.EventQuery(ev[2 * k + 1]) != 0) {}
						cu.EventSynchronize(ev[2 * k + 1]);
						sum += since(anchor, &ev[2 * k]);
					}
					continue;
				}
				cu.EventSynchronize(ev[2 * j + 1]);
				for (int k = 0; k < B; k++) {
					if (mode == 0) { cu.EventElapsedTime(&ms, ev[2 * k], ev[2 * k + 1]); sum += ms; continue; }
					if (mode == 1) { cu.EventQuery(ev[2 * k + 1]); cu.EventSynchronize(ev[2 * k + 1]); }
					sum += since(anchor, &ev[2 * k]);
				}
			}
			cu.StreamSynchronize(stream);
			if (rep >= 0) emit(names[mode], rep, (now_ns() - t) / n);
		}
	}
	if (sum < 0) printf("%f\n", sum);
}

static char *slurp(const char *path) {
	FILE *f = fopen(path, "rb");
	if (!f) { perror(path); exit(1); }
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc(n + 1);
	if (fread(s, 1, n, f) != (size_t)n) { perror(path); exit(1); }
	s[n] = 0;
	fclose(f);
	return s;
}

/* Hotspot's time loop as rawcl runs it: the same geometry and arguments. */
/* Hotspot's time loop, as rawcl's: hotspot_open sets it up, hotspot_steps
 * runs ITERS time steps and returns the nanoseconds per step; bench/inproc
 * calls them from Go, to run this loop in the process it measures, and
 * hotspot_step and hotspot_finish, to run it with one call from Go per
 * launch. */
struct hotspot_loop {
	CUfunction f;
	CUdeviceptr power, buf[2];
	CUdeviceptr word; /* 4 bytes, for hotspot_rw4 */
	unsigned groups;
	int size, pyramid;
	float consts[5];
};

static struct hotspot_loop *hotspot_open(const char *src, int size, int pyramid) {
	enum { BLOCK = 16 };
	struct hotspot_loop *h = calloc(1, sizeof *h);
	h->f = load(src, "hotspot");
	h->size = size;
	h->pyramid = pyramid;
	size_t n = (size_t)size * size;
	float *host = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++) host[i] = 323.0f + (float)(i % 21);
	check(cu.MemAlloc(&h->power, n * 4), "cuMemAlloc");
	check(cu.MemcpyHtoDAsync(h->power, host, n * 4, stream), "copy");
	for (int i = 0; i < 2; i++) {
		check(cu.MemAlloc(&h->buf[i], n * 4), "cuMemAlloc");
		check(cu.MemcpyHtoDAsync(h->buf[i], host, n * 4, stream), "copy");
	}
	check(cu.MemAlloc(&h->word, 4), "cuMemAlloc");
	cu.StreamSynchronize(stream);
	free(host);
	int small = BLOCK - 2 * pyramid;
	h->groups = (size + small - 1) / small;
	float consts[5] = {1.0f, 1.0f, 1.0f, 1.0f, 0.001f};
	memcpy(h->consts, consts, sizeof consts);
	return h;
}

/* hotspot_step launches pyramid time steps from buf[src]. */
static void hotspot_step(struct hotspot_loop *h, int src, int steps) {
	enum { BLOCK = 16 };
	void *args[] = {&steps, &h->power, &h->buf[src], &h->buf[1 - src], &h->size, &h->size, &h->pyramid, &h->pyramid,
		&h->consts[0], &h->consts[1], &h->consts[2], &h->consts[3], &h->consts[4]};
	check(cu.LaunchKernel(h->f, h->groups, h->groups, 1, BLOCK, BLOCK, 1, 0, stream, args, NULL), "launch");
}

static void hotspot_finish(struct hotspot_loop *h) { check(cu.StreamSynchronize(stream), "cuStreamSynchronize"); }

static double hotspot_steps(struct hotspot_loop *h, int iters) {
	int src = 0, pyramid = h->pyramid;
	double t = now_ns();
	for (int s = 0; s < iters; s += pyramid) {
		hotspot_step(h, src, pyramid < iters - s ? pyramid : iters - s);
		src = 1 - src;
	}
	hotspot_finish(h);
	return (now_ns() - t) / iters;
}

/* hotspot_rw4 writes *v to 4 bytes of device memory and reads it back,
 * each copy waited for: what a 4-byte device global's Write and Read do. */
static void hotspot_rw4(struct hotspot_loop *h, unsigned *v) {
	check(cu.MemcpyHtoDAsync(h->word, v, 4, stream), "write");
	check(cu.StreamSynchronize(stream), "cuStreamSynchronize");
	check(cu.MemcpyDtoHAsync(v, h->word, 4, stream), "read");
	check(cu.StreamSynchronize(stream), "cuStreamSynchronize");
}

/* hotspot_rw4s runs n hotspot_rw4 and returns the nanoseconds per pair. */
static inline double hotspot_rw4s(struct hotspot_loop *h, int n) {
	unsigned v = 1;
	double t = now_ns();
	for (int i = 0; i < n; i++) hotspot_rw4(h, &v);
	return (now_ns() - t) / n;
}

static void hotspot(const char *path, int size, int iters, int pyramid, int reps) {
	struct hotspot_loop *h = hotspot_open(slurp(path), size, pyramid);
	char name[64], tname[64];
	snprintf(name, sizeof name, "hotspot_%d_%d", size, pyramid);
	snprintf(tname, sizeof tname, "hotspot_traced_%d_%d", size, pyramid);
	enum { TB = 256 };
	CUevent anchor, tev[2 * TB];
	check(cu.EventCreate(&anchor, 0), "cuEventCreate");
	for (int i = 0; i < 2 * TB; i++) check(cu.EventCreate(&tev[i], 0), "cuEventCreate");
	check(cu.EventRecord(anchor, stream), "cuEventRecord");
	for (int rep = -1; rep < reps; rep++) {
		double ns = hotspot_steps(h, iters);
		if (rep >= 0) emit(name, rep, ns);

		/* The same loop with every launch's device times read back, as
		 * tracing every command does (traced's "anchor" way). */
		int src = 0;
		float sum = 0;
		double t = now_ns();
		for (int s = 0, i = 0; s < iters; s += pyramid, i++) {
			int j = i % TB;
			check(cu.EventRecord(tev[2 * j], stream), "cuEventRecord");
			hotspot_step(h, src, pyramid < iters - s ? pyramid : iters - s);
			check(cu.EventRecord(tev[2 * j + 1], stream), "cuEventRecord");
			src = 1 - src;
			if (j < TB - 1 && s + pyramid < iters) continue;
			cu.EventSynchronize(tev[2 * j + 1]);
			for (int k = 0; k <= j; k++) {
				sum += since(anchor, &tev[2 * k]);
			}
		}
		check(cu.StreamSynchronize(stream), "cuStreamSynchronize");
		if (rep >= 0) emit(tname, rep, (now_ns() - t) / iters);
		if (sum < 0) printf("%f\n", sum);
	}
}

int main(int argc, char **argv) {
	if (argc == 4 && strcmp(argv[1], "launch") == 0) {
		launch(atoi(argv[2]), atoi(argv[3]));
		return 0;
	}
	if (argc == 7 && strcmp(argv[1], "hotspot") == 0) {
		hotspot(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "traced") == 0) {
		traced(atoi(argv[2]), atoi(argv[3]));
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "costs") == 0) {
		costs(atoi(argv[2]), atoi(argv[3]));
		return 0;
	}
	fprintf(stderr, "usage: rawcu launch N REPS | rawcu hotspot SRC SIZE ITERS PYRAMID REPS | rawcu traced N REPS | rawcu costs N REPS\n");
	return 2;
}
