/*
 * The C side of bench/scaling: the same two workloads as the Go side, in
 * pthreads, one in-order queue (OpenCL) or stream (CUDA) per thread and one
 * context for all, as a C programmer writes them:
 *
 *   - launch loop: the 64-item kernel touch64, launched back to back with
 *     no event until the window closes, then the queue finished;
 *   - request loop: a blocking write of x, axpb over x and y, a blocking
 *     read of y, on buffers the thread keeps (C allocates nothing per
 *     request), each request timed.
 *
 * CUDA goes through bench/rawcu's loader: the kernels are built by NVIDIA's
 * OpenCL and their PTX rewritten and loaded with cuModuleLoadDataEx, as
 * rt/cuda does.
 */
#define main rawcu_main
#include "../rawcu/rawcu.c"
#undef main
#include <pthread.h>
#include "cside.h"

static struct {
	int cuda;
	/* OpenCL */
	cl_context ctx;
	cl_device_id dev;
	cl_program prog;
	/* CUDA */
	CUcontext cuctx;
	CUfunction touch, axpb;
	int n; /* request elements */
} sc;

static void clcheck(cl_int e, const char *what) {
	if (e != CL_SUCCESS) {
		fprintf(stderr, "scaling: %s: %d\n", what, e);
		exit(1);
	}
}

/* sc_open opens the C side on CUDA (cuda != 0) or on the first OpenCL
 * device of type gpu or cpu, and builds src. n is the request size in
 * floats. */
int sc_open(int cuda, int cpu, const char *src, int n) {
	sc.cuda = cuda;
	sc.n = n;
	if (cuda) {
		sc.touch = load(src, "touch64");
		sc.axpb = load(src, "axpb");
		CUdevice d;
		check(cu.DeviceGet(&d, 0), "cuDeviceGet");
		check(cu.DevicePrimaryCtxRetain(&sc.cuctx, d), "cuDevicePrimaryCtxRetain");
		return 0;
	}
	cl_platform_id ps[16];
	cl_uint np = 0;
	clGetPlatformIDs(16, ps, &np);
	cl_device_type want = cpu ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;
	for (cl_uint i = 0; i < np && !sc.dev; i++)
		if (clGetDeviceIDs(ps[i], want, 1, &sc.dev, NULL) != CL_SUCCESS) sc.dev = NULL;
	if (!sc.dev) return -1;
	cl_int err;
	sc.ctx = clCreateContext(NULL, 1, &sc.dev, NULL, NULL, &err);
	clcheck(err, "clCreateContext");
	sc.prog = clCreateProgramWithSource(sc.ctx, 1, &src, NULL, &err);
	clcheck(err, "clCreateProgramWithSource");
	clcheck(clBuildProgram(sc.prog, 1, &sc.dev, "", NULL, NULL), "clBuildProgram");
	return 0;
}

struct worker {
	int mode; /* 0 launch loop, 1 request loop */
	double deadline;
	long count;
	float *lat; /* request latencies in µs, up to cap */
	int cap;
	pthread_barrier_t *ready, *start;
};

static void *cl_worker(void *arg) {
	struct worker *w = arg;
	cl_int err;
	cl_command_queue q = clCreateCommandQueue(sc.ctx, sc.dev, 0, &err);
	clcheck(err, "clCreateCommandQueue");
	cl_kernel k = clCreateKernel(sc.prog, w->mode ? "axpb" : "touch64", &err);
	clcheck(err, "clCreateKernel");
	size_t bytes = (size_t)(w->mode ? sc.n : 64) * 4;
	cl_mem x = clCreateBuffer(sc.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
	cl_mem y = clCreateBuffer(sc.ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
	float *hx = calloc(bytes, 1), *hy = calloc(bytes, 1);
	float a = 2.0f;
	size_t global = w->mode ? (size_t)sc.n : 64;
	clcheck(clEnqueueWriteBuffer(q, x, CL_TRUE, 0, bytes, hx, 0, NULL, NULL), "write");
	pthread_barrier_wait(w->ready);
	pthread_barrier_wait(w->start);
	long c = 0;
	if (w->mode == 0) {
		clSetKernelArg(k, 0, sizeof x, &x);
		while (now_ns() < w->deadline) {
			for (int i = 0; i < 64; i++) clcheck(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL), "launch");
			c += 64;
		}
		clFinish(q);
	} else {
		while (now_ns() < w->deadline) {
			double t0 = now_ns();
			clcheck(clEnqueueWriteBuffer(q, x, CL_TRUE, 0, bytes, hx, 0, NULL, NULL), "write");
			clSetKernelArg(k, 0, sizeof a, &a);
			clSetKernelArg(k, 1, sizeof x, &x);
			clSetKernelArg(k, 2, sizeof y, &y);
			clcheck(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL), "launch");
			clcheck(clEnqueueReadBuffer(q, y, CL_TRUE, 0, bytes, hy, 0, NULL, NULL), "read");
			if (c < w->cap) w->lat[c] = (float)((now_ns() - t0) / 1e3);
			c++;
		}
	}
	w->count = c;
	clReleaseMemObject(x);
	clReleaseMemObject(y);
	clReleaseKernel(k);
	clReleaseCommandQueue(q);
	free(hx);
	free(hy);
	return NULL;
}

static void *cu_worker(void *arg) {
	struct worker *w = arg;
	check(cu.CtxSetCurrent(sc.cuctx), "cuCtxSetCurrent");
	CUstream s;
	check(cu.StreamCreate(&s, 1), "cuStreamCreate");
	size_t bytes = (size_t)(w->mode ? sc.n : 64) * 4;
	CUdeviceptr x, y;
	check(cu.MemAlloc(&x, bytes), "cuMemAlloc");
	check(cu.MemAlloc(&y, bytes), "cuMemAlloc");
	float *hx = calloc(bytes, 1), *hy = calloc(bytes, 1);
	float a = 2.0f;
	check(cu.MemcpyHtoDAsync(x, hx, bytes, s), "copy");
	check(cu.StreamSynchronize(s), "sync");
	pthread_barrier_wait(w->ready);
	pthread_barrier_wait(w->start);
	long c = 0;
	if (w->mode == 0) {
		void *args[] = {&x};
		while (now_ns() < w->deadline) {
			for (int i = 0; i < 64; i++) check(cu.LaunchKernel(sc.touch, 1, 1, 1, 64, 1, 1, 0, s, args, NULL), "launch");
			c += 64;
		}
		check(cu.StreamSynchronize(s), "sync");
	} else {
		unsigned blocks = (unsigned)(sc.n + 255) / 256;
		while (now_ns() < w->deadline) {
			double t0 = now_ns();
			void *args[] = {&a, &x, &y};
			check(cu.MemcpyHtoDAsync(x, hx, bytes, s), "copy");
			check(cu.StreamSynchronize(s), "sync");
			check(cu.LaunchKernel(sc.axpb, blocks, 1, 1, 256, 1, 1, 0, s, args, NULL), "launch");
			check(cu.MemcpyDtoHAsync(hy, y, bytes, s), "copy");
			check(cu.StreamSynchronize(s), "sync");
			if (c < w->cap) w->lat[c] = (float)((now_ns() - t0) / 1e3);
			c++;
		}
	}
	w->count = c;
	free(hx);
	free(hy);
	return NULL;
}

/* sc_run runs the workload mode on g threads for window_ns and returns the
 * nanoseconds from the start until the last thread finished; counts[i] is
 * thread i's launches or requests, lat[i*cap ...] its first request
 * latencies in µs. */
double sc_run(int mode, int g, double window_ns, long *counts, float *lat, int cap) {
	pthread_t th[64];
	struct worker ws[64];
	pthread_barrier_t ready, start;
	pthread_barrier_init(&ready, NULL, (unsigned)g + 1);
	pthread_barrier_init(&start, NULL, (unsigned)g + 1);
	for (int i = 0; i < g; i++) {
		ws[i] = (struct worker){.mode = mode, .lat = lat + (size_t)i * cap, .cap = cap, .ready = &ready, .start = &start};
		pthread_create(&th[i], NULL, sc.cuda ? cu_worker : cl_worker, &ws[i]);
	}
	pthread_barrier_wait(&ready); /* every thread has set up */
	double t0 = now_ns();
	for (int i = 0; i < g; i++) ws[i].deadline = t0 + window_ns;
	pthread_barrier_wait(&start); /* the barrier orders the deadline before the loops */
	for (int i = 0; i < g; i++) pthread_join(th[i], NULL);
	double t1 = now_ns();
	for (int i = 0; i < g; i++) counts[i] = ws[i].count;
	pthread_barrier_destroy(&ready);
	pthread_barrier_destroy(&start);
	return t1 - t0;
}

/*
 * The cgo floor of the launch loop (floor.go): what a Go binding that
 * crosses into C once per launch can reach at best. Each goroutine opens
 * a floor of its own, a stream (queue) and a buffer with the launch's
 * arguments prepared, and calls sc_floor_launch once per launch:
 * cuCtxSetCurrent and cuLaunchKernel on CUDA (a goroutine may run on any
 * thread, so the context is made current at every call, as rt/cuda does),
 * clEnqueueNDRangeKernel on OpenCL. A floor is a C pointer passed as an
 * integer, which cgo does not check.
 */
struct floor {
	CUstream s;
	CUdeviceptr p;
	void *args[1];
	cl_command_queue q;
	cl_kernel k;
	cl_mem m;
	size_t global;
};

uintptr_t sc_floor_open(void) {
	struct floor *f = calloc(1, sizeof *f);
	f->global = 64;
	if (sc.cuda) {
		check(cu.CtxSetCurrent(sc.cuctx), "cuCtxSetCurrent");
		check(cu.StreamCreate(&f->s, 1), "cuStreamCreate");
		check(cu.MemAlloc(&f->p, 64 * 4), "cuMemAlloc");
		int zero[64] = {0};
		check(cu.MemcpyHtoDAsync(f->p, zero, sizeof zero, f->s), "copy");
		check(cu.StreamSynchronize(f->s), "sync");
		f->args[0] = &f->p;
		return (uintptr_t)f;
	}
	cl_int err;
	f->q = clCreateCommandQueue(sc.ctx, sc.dev, 0, &err);
	clcheck(err, "clCreateCommandQueue");
	f->k = clCreateKernel(sc.prog, "touch64", &err);
	clcheck(err, "clCreateKernel");
	int zero[64] = {0};
	f->m = clCreateBuffer(sc.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &err);
	clcheck(err, "clCreateBuffer");
	clcheck(clSetKernelArg(f->k, 0, sizeof f->m, &f->m), "clSetKernelArg");
	return (uintptr_t)f;
}

/* sc_floor_launch launches touch64 on the floor h; it returns the
 * driver's error code. */
int sc_floor_launch(uintptr_t h) {
	struct floor *f = (struct floor *)h;
	if (sc.cuda) {
		CUresult r = cu.CtxSetCurrent(sc.cuctx);
		return r ? r : cu.LaunchKernel(sc.touch, 1, 1, 1, 64, 1, 1, 0, f->s, f->args, NULL);
	}
	return clEnqueueNDRangeKernel(f->q, f->k, 1, NULL, &f->global, NULL, 0, NULL, NULL);
}

/* sc_noop returns at once: what a call from Go costs by itself
 * (BenchmarkCgoCall, floor_test.go). */
int sc_noop(uintptr_t f) { return (int)(f & 0); }

/* sc_floor_sync waits for the floor's stream (queue); it returns the
 * driver's error code. Floors live as long as the process, as the Go side's
 * queues do. */
int sc_floor_sync(uintptr_t h) {
	struct floor *f = (struct floor *)h;
	if (sc.cuda) {
		CUresult r = cu.CtxSetCurrent(sc.cuctx);
		return r ? r : cu.StreamSynchronize(f->s);
	}
	return clFinish(f->q);
}
