/*
 * rawcl: the yardstick for dgen's GPU figures. It runs, on plain OpenCL 1.2
 * calls and without dgen, the same kernels with the same arguments and
 * launch geometry as dgen's benchmarks, so that a benchmark script can put
 * dgen's figure and the raw one side by side in one run.
 *
 *   rawcl launch N REPS            one-work-item `touch` launches (rt/bench_test.go)
 *   rawcl hotspot SRC SIZE ITERS PYRAMID REPS
 *                                  Rodinia Hotspot's time loop (examples/stencil)
 *
 * Every figure is printed as one JSON object per repetition:
 *   {"bench":"submit","rep":0,"ns_per_op":4711.2}
 * The device is the first GPU, or the first CPU device where RAWCL_DEVICE=cpu.
 * RAWCL_PROFILE=1 creates the queue with profiling on (what tracing used to
 * force). Launches create no event unless the figure's name says so.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void check(cl_int err, const char *call) {
	if (err != CL_SUCCESS) {
		fprintf(stderr, "rawcl: %s: error %d\n", call, err);
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

struct env {
	cl_context ctx;
	cl_command_queue q;
	cl_device_id dev;
};

static struct env open_env(void) {
	const char *want = getenv("RAWCL_DEVICE");
	cl_device_type type = (want && strcmp(want, "cpu") == 0) ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;
	cl_platform_id plats[16];
	cl_uint np = 0;
	check(clGetPlatformIDs(16, plats, &np), "clGetPlatformIDs");
	struct env e = {0};
	for (cl_uint i = 0; i < np && !e.dev; i++)
		if (clGetDeviceIDs(plats[i], type, 1, &e.dev, NULL) != CL_SUCCESS)
			e.dev = NULL;
	if (!e.dev) {
		fprintf(stderr, "rawcl: no %s device\n", type == CL_DEVICE_TYPE_GPU ? "GPU" : "CPU");
		exit(1);
	}
	char name[256];
	clGetDeviceInfo(e.dev, CL_DEVICE_NAME, sizeof name, name, NULL);
	fprintf(stderr, "rawcl: device %s\n", name);
	cl_int err;
	e.ctx = clCreateContext(NULL, 1, &e.dev, NULL, NULL, &err);
	check(err, "clCreateContext");
	const char *prof = getenv("RAWCL_PROFILE");
	cl_command_queue_properties props = (prof && strcmp(prof, "1") == 0) ? CL_QUEUE_PROFILING_ENABLE : 0;
	e.q = clCreateCommandQueue(e.ctx, e.dev, props, &err);
	check(err, "clCreateCommandQueue");
	return e;
}

static cl_kernel build(struct env *e, const char *src, const char *name) {
	cl_int err;
	cl_program p = clCreateProgramWithSource(e->ctx, 1, &src, NULL, &err);
	check(err, "clCreateProgramWithSource");
	if (clBuildProgram(p, 1, &e->dev, "", NULL, NULL) != CL_SUCCESS) {
		char log[16384];
		clGetProgramBuildInfo(p, e->dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
		fprintf(stderr, "rawcl: build failed:\n%s\n", log);
		exit(1);
	}
	cl_kernel k = clCreateKernel(p, name, &err);
	check(err, "clCreateKernel");
	return k;
}

/* The launch figures of rt/bench_test.go: the same kernel, one work-item,
 * the queue drained every 1024 launches where the benchmark does. */
static void launch(int n, int reps) {
	static const char *src = "__kernel void touch(__global int *p) { if (get_global_id(0) == 0) p[0] += 1; }";
	struct env e = open_env();
	cl_kernel k = build(&e, src, "touch");
	cl_int err;
	cl_mem buf = clCreateBuffer(e.ctx, CL_MEM_READ_WRITE, 4, NULL, &err);
	check(err, "clCreateBuffer");
	check(clSetKernelArg(k, 0, sizeof buf, &buf), "clSetKernelArg");
	size_t one = 1;
	int v = 1;
	for (int rep = -1; rep < reps; rep++) { /* rep -1 warms up */
		double t = now_ns();
		for (int i = 0; i < n; i++) {
			check(clEnqueueNDRangeKernel(e.q, k, 1, NULL, &one, NULL, 0, NULL, NULL), "launch");
			if (i % 1024 == 1023) clFinish(e.q);
		}
		clFinish(e.q);
		if (rep >= 0) emit("submit", rep, (now_ns() - t) / n);

		t = now_ns();
		for (int i = 0; i < n; i++) {
			cl_event ev;
			check(clEnqueueNDRangeKernel(e.q, k, 1, NULL, &one, NULL, 0, NULL, &ev), "launch");
			clReleaseEvent(ev);
			if (i % 1024 == 1023) clFinish(e.q);
		}
		clFinish(e.q);
		if (rep >= 0) emit("launch_event", rep, (now_ns() - t) / n);

		t = now_ns();
		for (int i = 0; i < n; i++) {
			check(clEnqueueNDRangeKernel(e.q, k, 1, NULL, &one, NULL, 0, NULL, NULL), "launch");
			clFinish(e.q);
		}
		if (rep >= 0) emit("submit_finish", rep, (now_ns() - t) / n);

		t = now_ns();
		for (int i = 0; i < n; i++)
			check(clEnqueueReadBuffer(e.q, buf, CL_TRUE, 0, 4, &v, 0, NULL, NULL), "read");
		if (rep >= 0) emit("read4", rep, (now_ns() - t) / n);

		t = now_ns();
		for (int i = 0; i < n; i++)
			check(clEnqueueWriteBuffer(e.q, buf, CL_TRUE, 0, 4, &v, 0, NULL, NULL), "write");
		if (rep >= 0) emit("write4", rep, (now_ns() - t) / n);
	}
}

static char *slurp(const char *path) {
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		exit(1);
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc(n + 1);
	if (fread(s, 1, n, f) != (size_t)n) {
		perror(path);
		exit(1);
	}
	s[n] = 0;
	fclose(f);
	return s;
}

/* Hotspot's time loop as examples/stencil runs it, with Rodinia's double
 * buffer and no event per launch: the loop dgen's modes are held against.
 * The physical constants only scale the result; the cost does not depend on
 * them, so plain values stand in for Rodinia's. hotspot_open sets up the
 * loop, hotspot_steps runs ITERS time steps of it and returns the
 * nanoseconds per step; bench/inproc calls them from Go, to run this loop
 * in the process it measures, and hotspot_step and hotspot_finish, to run
 * it with one call from Go per launch. */
struct hotspot_loop {
	struct env e;
	cl_kernel k;
	cl_mem buf[2];
	cl_mem word; /* 4 bytes, for hotspot_rw4 */
	size_t global[2];
	int pyramid;
};

static struct hotspot_loop *hotspot_open(const char *src, int size, int pyramid) {
	enum { BLOCK = 16 };
	struct hotspot_loop *h = calloc(1, sizeof *h);
	h->e = open_env();
	h->k = build(&h->e, src, "hotspot");
	h->pyramid = pyramid;
	size_t n = (size_t)size * size;
	cl_int err;
	float *host = malloc(n * sizeof(float));
	for (size_t i = 0; i < n; i++) host[i] = 323.0f + (float)(i % 21);
	cl_mem power = clCreateBuffer(h->e.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, host, &err);
	check(err, "clCreateBuffer");
	for (int i = 0; i < 2; i++) {
		h->buf[i] = clCreateBuffer(h->e.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, host, &err);
		check(err, "clCreateBuffer");
	}
	free(host);
	h->word = clCreateBuffer(h->e.ctx, CL_MEM_READ_WRITE, 4, NULL, &err);
	check(err, "clCreateBuffer");
	int small = BLOCK - 2 * pyramid;
	h->global[0] = h->global[1] = (size_t)((size + small - 1) / small * BLOCK);
	float consts[5] = {1.0f, 1.0f, 1.0f, 1.0f, 0.001f};
	check(clSetKernelArg(h->k, 1, sizeof power, &power), "arg 1");
	check(clSetKernelArg(h->k, 4, 4, &size), "arg 4");
	check(clSetKernelArg(h->k, 5, 4, &size), "arg 5");
	check(clSetKernelArg(h->k, 6, 4, &pyramid), "arg 6");
	check(clSetKernelArg(h->k, 7, 4, &pyramid), "arg 7");
	for (int i = 0; i < 5; i++) check(clSetKernelArg(h->k, 8 + i, 4, &consts[i]), "arg 8+");
	return h;
}

/* hotspot_step enqueues one launch of pyramid time steps from buf[src]. */
static void hotspot_step(struct hotspot_loop *h, int src, int steps) {
	static const size_t local[2] = {16, 16};
	check(clSetKernelArg(h->k, 0, 4, &steps), "arg 0");
	check(clSetKernelArg(h->k, 2, sizeof(cl_mem), &h->buf[src]), "arg 2");
	check(clSetKernelArg(h->k, 3, sizeof(cl_mem), &h->buf[1 - src]), "arg 3");
	check(clEnqueueNDRangeKernel(h->e.q, h->k, 2, NULL, h->global, local, 0, NULL, NULL), "launch");
}

static void hotspot_finish(struct hotspot_loop *h) { check(clFinish(h->e.q), "clFinish"); }

static double hotspot_steps(struct hotspot_loop *h, int iters) {
	int src = 0, pyramid = h->pyramid;
	double t = now_ns();
	for (int s = 0; s < iters; s += pyramid) {
		hotspot_step(h, src, pyramid < iters - s ? pyramid : iters - s);
		src = 1 - src;
	}
	hotspot_finish(h);
	/* per time step, as examples/stencil reports us_per_iter */
	return (now_ns() - t) / iters;
}

/* hotspot_rw4 writes *v to a 4-byte buffer and reads it back, both
 * blocking: what a 4-byte device global's Write and Read do. */
static void hotspot_rw4(struct hotspot_loop *h, unsigned *v) {
	check(clEnqueueWriteBuffer(h->e.q, h->word, CL_TRUE, 0, 4, v, 0, NULL, NULL), "write");
	check(clEnqueueReadBuffer(h->e.q, h->word, CL_TRUE, 0, 4, v, 0, NULL, NULL), "read");
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
	char name[64];
	snprintf(name, sizeof name, "hotspot_%d_%d", size, pyramid);
	for (int rep = -1; rep < reps; rep++) {
		double ns = hotspot_steps(h, iters);
		if (rep >= 0) emit(name, rep, ns);
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
	fprintf(stderr, "usage: rawcl launch N REPS | rawcl hotspot SRC SIZE ITERS PYRAMID REPS\n");
	return 2;
}
