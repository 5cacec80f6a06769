/*
 * The C side of bench/scaling: the same two workloads as the Go side, in
 * pthreads, one in-order queue (OpenCL) or stream (CUDA) per thread and one
 * context for all, as a C programmer writes them:
 *
 *   - launch loop: the 64-item kernel touch64, launched back to back with
 *     no event until the window closes, then the queue finished;
 *   - request loop: a blocking write of x, axpb over x and y, a blocking
 *     read of y, on buffers the thread keeps (C allocates nothing per
 *     request), each request timed;
 *   - serve: the same requests served by a pool of g threads that take
 *     them from a shared queue, which the main thread keeps holding g
 *     requests, each timed from when it was queued: a C server's thread
 *     pool, against which the Go side runs a goroutine per request.
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

/* One thread's resources for the request loop or the launch loop (mode),
 * made before its loop: a queue or stream, the kernel, buffers of x and y
 * on the device and on the host. */
struct res {
	int mode;
	size_t bytes;
	/* OpenCL */
	cl_command_queue q;
	cl_kernel k;
	cl_mem x, y;
	/* CUDA */
	CUstream s;
	CUdeviceptr cx, cy;
	float *hx, *hy;
};

static void res_open(struct res *r, int mode) {
	r->mode = mode;
	r->bytes = (size_t)(mode ? sc.n : 64) * 4;
	r->hx = calloc(r->bytes, 1);
	r->hy = calloc(r->bytes, 1);
	if (sc.cuda) {
		check(cu.CtxSetCurrent(sc.cuctx), "cuCtxSetCurrent");
		check(cu.StreamCreate(&r->s, 1), "cuStreamCreate");
		check(cu.MemAlloc(&r->cx, r->bytes), "cuMemAlloc");
		check(cu.MemAlloc(&r->cy, r->bytes), "cuMemAlloc");
		check(cu.MemcpyHtoDAsync(r->cx, r->hx, r->bytes, r->s), "copy");
		check(cu.StreamSynchronize(r->s), "sync");
		return;
	}
	cl_int err;
	r->q = clCreateCommandQueue(sc.ctx, sc.dev, 0, &err);
	clcheck(err, "clCreateCommandQueue");
	r->k = clCreateKernel(sc.prog, mode ? "axpb" : "touch64", &err);
	clcheck(err, "clCreateKernel");
	r->x = clCreateBuffer(sc.ctx, CL_MEM_READ_WRITE, r->bytes, NULL, &err);
	clcheck(err, "clCreateBuffer");
	r->y = clCreateBuffer(sc.ctx, CL_MEM_READ_WRITE, r->bytes, NULL, &err);
	clcheck(err, "clCreateBuffer");
	clcheck(clEnqueueWriteBuffer(r->q, r->x, CL_TRUE, 0, r->bytes, r->hx, 0, NULL, NULL), "write");
}

static void res_close(struct res *r) {
	if (!sc.cuda) {
		clReleaseMemObject(r->x);
		clReleaseMemObject(r->y);
		clReleaseKernel(r->k);
		clReleaseCommandQueue(r->q);
	}
	free(r->hx);
	free(r->hy);
}

/* request runs one request on r: a blocking write of x, axpb over x and y,
 * a blocking read of y. */
static void request(struct res *r) {
	float a = 2.0f;
	if (sc.cuda) {
		unsigned blocks = (unsigned)(sc.n + 255) / 256;
		void *args[] = {&a, &r->cx, &r->cy};
		check(cu.MemcpyHtoDAsync(r->cx, r->hx, r->bytes, r->s), "copy");
		check(cu.StreamSynchronize(r->s), "sync");
		check(cu.LaunchKernel(sc.axpb, blocks, 1, 1, 256, 1, 1, 0, r->s, args, NULL), "launch");
		check(cu.MemcpyDtoHAsync(r->hy, r->cy, r->bytes, r->s), "copy");
		check(cu.StreamSynchronize(r->s), "sync");
		return;
	}
	size_t global = (size_t)sc.n;
	clcheck(clEnqueueWriteBuffer(r->q, r->x, CL_TRUE, 0, r->bytes, r->hx, 0, NULL, NULL), "write");
	clSetKernelArg(r->k, 0, sizeof a, &a);
	clSetKernelArg(r->k, 1, sizeof r->x, &r->x);
	clSetKernelArg(r->k, 2, sizeof r->y, &r->y);
	clcheck(clEnqueueNDRangeKernel(r->q, r->k, 1, NULL, &global, NULL, 0, NULL, NULL), "launch");
	clcheck(clEnqueueReadBuffer(r->q, r->y, CL_TRUE, 0, r->bytes, r->hy, 0, NULL, NULL), "read");
}

/* launches runs the launch loop on r until deadline and returns the count. */
static long launches(struct res *r, double deadline) {
	long c = 0;
	if (sc.cuda) {
		void *args[] = {&r->cx};
		while (now_ns() < deadline) {
			for (int i = 0; i < 64; i++) check(cu.LaunchKernel(sc.touch, 1, 1, 1, 64, 1, 1, 0, r->s, args, NULL), "launch");
			c += 64;
		}
		check(cu.StreamSynchronize(r->s), "sync");
		return c;
	}
	size_t global = 64;
	clSetKernelArg(r->k, 0, sizeof r->x, &r->x);
	while (now_ns() < deadline) {
		for (int i = 0; i < 64; i++) clcheck(clEnqueueNDRangeKernel(r->q, r->k, 1, NULL, &global, NULL, 0, NULL, NULL), "launch");
		c += 64;
	}
	clFinish(r->q);
	return c;
}

/* The serve pool's shared queue: the main thread queues requests (their
 * queue times, in a ring), the threads take them; done counts the requests
 * finished, which the main thread waits on to queue the next. */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t more, done;
	double ring[64];
	int head, queued; /* the oldest queued request, and how many are queued */
	long finished;
	int stop;
} pool;

struct worker {
	int mode; /* 0 launch loop, 1 request loop, 2 serve */
	double deadline;
	long count;
	float *lat; /* request latencies in µs, up to cap */
	int cap;
	pthread_barrier_t *ready, *start;
};

/* serve is a pool thread's loop: take a queued request, run it, time it
 * from its queue time, until the pool stops. */
static long serve(struct res *r, struct worker *w) {
	long c = 0;
	for (;;) {
		pthread_mutex_lock(&pool.mu);
		while (pool.queued == 0 && !pool.stop) pthread_cond_wait(&pool.more, &pool.mu);
		if (pool.queued == 0) {
			pthread_mutex_unlock(&pool.mu);
			return c;
		}
		double t0 = pool.ring[pool.head];
		pool.head = (pool.head + 1) % 64;
		pool.queued--;
		pthread_mutex_unlock(&pool.mu);
		request(r);
		if (c < w->cap) w->lat[c] = (float)((now_ns() - t0) / 1e3);
		c++;
		pthread_mutex_lock(&pool.mu);
		pool.finished++;
		pthread_cond_signal(&pool.done);
		pthread_mutex_unlock(&pool.mu);
	}
}

/* enqueue queues one request, with the pool's mutex held. */
static void enqueue(void) {
	pool.ring[(pool.head + pool.queued) % 64] = now_ns();
	pool.queued++;
	pthread_cond_signal(&pool.more);
}

static void *worker(void *arg) {
	struct worker *w = arg;
	struct res r;
	res_open(&r, w->mode != 0);
	pthread_barrier_wait(w->ready);
	pthread_barrier_wait(w->start);
	long c = 0;
	switch (w->mode) {
	case 0:
		c = launches(&r, w->deadline);
		break;
	case 1:
		while (now_ns() < w->deadline) {
			double t0 = now_ns();
			request(&r);
			if (c < w->cap) w->lat[c] = (float)((now_ns() - t0) / 1e3);
			c++;
		}
		break;
	case 2:
		c = serve(&r, w);
		break;
	}
	w->count = c;
	res_close(&r);
	return NULL;
}

/* dispatch is the serve pool's main thread: it keeps g requests queued or
 * running until the deadline, then stops the pool. */
static void dispatch(int g, double deadline) {
	pthread_mutex_lock(&pool.mu);
	long started = 0;
	for (; started < g; started++) enqueue();
	while (now_ns() < deadline) {
		while (started - pool.finished >= g) pthread_cond_wait(&pool.done, &pool.mu);
		if (now_ns() >= deadline) break;
		enqueue();
		started++;
	}
	pool.stop = 1;
	pthread_cond_broadcast(&pool.more);
	pthread_mutex_unlock(&pool.mu);
}

/* sc_run runs the workload mode (0 launch loop, 1 request loop, 2 serve)
 * on g threads for window_ns and returns the nanoseconds from the start
 * until the last thread finished; counts[i] is thread i's launches or
 * requests, lat[i*cap ...] its first request latencies in µs. */
double sc_run(int mode, int g, double window_ns, long *counts, float *lat, int cap) {
	pthread_t th[64];
	struct worker ws[64];
	pthread_barrier_t ready, start;
	pthread_barrier_init(&ready, NULL, (unsigned)g + 1);
	pthread_barrier_init(&start, NULL, (unsigned)g + 1);
	pthread_mutex_init(&pool.mu, NULL);
	pthread_cond_init(&pool.more, NULL);
	pthread_cond_init(&pool.done, NULL);
	pool.head = pool.queued = pool.stop = 0;
	pool.finished = 0;
	for (int i = 0; i < g; i++) {
		ws[i] = (struct worker){.mode = mode, .lat = lat + (size_t)i * cap, .cap = cap, .ready = &ready, .start = &start};
		pthread_create(&th[i], NULL, worker, &ws[i]);
	}
	pthread_barrier_wait(&ready); /* every thread has set up */
	double t0 = now_ns();
	for (int i = 0; i < g; i++) ws[i].deadline = t0 + window_ns;
	pthread_barrier_wait(&start); /* the barrier orders the deadline before the loops */
	if (mode == 2) dispatch(g, t0 + window_ns);
	for (int i = 0; i < g; i++) pthread_join(th[i], NULL);
	double t1 = now_ns();
	for (int i = 0; i < g; i++) counts[i] = ws[i].count;
	pthread_barrier_destroy(&ready);
	pthread_barrier_destroy(&start);
	pthread_mutex_destroy(&pool.mu);
	pthread_cond_destroy(&pool.more);
	pthread_cond_destroy(&pool.done);
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

/* sc_floor_count returns how many launches of touch64 the floor h has
 * run, which its buffer's first element counts, or -1 on a driver error.
 * It waits for the floor's stream (queue). */
long sc_floor_count(uintptr_t h) {
	struct floor *f = (struct floor *)h;
	int v;
	if (sc.cuda) {
		if (cu.CtxSetCurrent(sc.cuctx) || cu.MemcpyDtoHAsync(&v, f->p, sizeof v, f->s) || cu.StreamSynchronize(f->s)) return -1;
		return v;
	}
	if (clEnqueueReadBuffer(f->q, f->m, CL_TRUE, 0, sizeof v, &v, 0, NULL, NULL)) return -1;
	return v;
}

/*
 * The launch loop's submission ring (ring.go): a goroutine writes launch
 * records into a ring in C memory, with no cgo call, and a thread of the
 * ring's own makes the driver calls, as a binding whose submissions leave
 * the goroutine's core would. The record carries the launch's argument,
 * which the thread copies into the launch.
 */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

static long futex(uint32_t *w, int op, uint32_t v) { return syscall(SYS_futex, w, op, v, NULL, NULL, 0); }

/* ring_main is a ring's thread: it makes its context current once, then
 * launches the records as they are published, spins a while when the ring
 * is empty, then sleeps on tail until the goroutine wakes it. It stores
 * the first driver error it meets. The rings live as long as the process,
 * as the floors do. */
static void *ring_main(void *p) {
	struct sc_ring *r = p;
	if (sc.cuda) cu.CtxSetCurrent(sc.cuctx);
	uint32_t h = 0;
	for (;;) {
		uint32_t t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		for (int i = 0; t == h && i < 20000; i++) {
			__builtin_ia32_pause();
			t = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		}
		if (t == h) {
			__atomic_store_n(&r->sleeping, 1, __ATOMIC_SEQ_CST);
			if (__atomic_load_n(&r->tail, __ATOMIC_SEQ_CST) == h) futex(&r->tail, FUTEX_WAIT_PRIVATE, h);
			__atomic_store_n(&r->sleeping, 0, __ATOMIC_SEQ_CST);
			continue;
		}
		for (; h != t; h++) {
			struct sc_rec *rec = &r->recs[h % SC_RING];
			CUresult e;
			if (sc.cuda) {
				CUdeviceptr a = rec->arg;
				void *args[1] = {&a};
				e = cu.LaunchKernel(sc.touch, rec->gx, 1, 1, rec->bx, 1, 1, 0, ((struct floor *)r->f)->s, args, NULL);
			} else {
				e = clEnqueueNDRangeKernel(((struct floor *)r->f)->q, ((struct floor *)r->f)->k, 1, NULL, &((struct floor *)r->f)->global, NULL, 0, NULL, NULL);
			}
			if (e && !r->err) r->err = e;
			__atomic_store_n(&r->head, h + 1, __ATOMIC_SEQ_CST);
			uint32_t w = __atomic_load_n(&r->want, __ATOMIC_SEQ_CST);
			if (w && (int32_t)(h + 1 - w) >= 0) {
				__atomic_store_n(&r->want, 0, __ATOMIC_SEQ_CST);
				futex(&r->head, FUTEX_WAKE_PRIVATE, 1);
			}
		}
	}
}

struct sc_ring *sc_ring_open(uintptr_t f) {
	struct sc_ring *r = aligned_alloc(64, (sizeof *r + 63) / 64 * 64);
	memset(r, 0, sizeof *r);
	r->f = f;
	pthread_t th;
	int e = pthread_create(&th, NULL, ring_main, r);
	if (e) {
		fprintf(stderr, "scaling: pthread_create: %s\n", strerror(e));
		exit(1);
	}
	pthread_detach(th);
	return r;
}

unsigned long long sc_ring_arg(struct sc_ring *r) { return ((struct floor *)r->f)->p; }

/* sc_ring_wait blocks while head is v, until the thread has launched the
 * records the goroutine wants (want). */
void sc_ring_wait(struct sc_ring *r, uint32_t v) { futex(&r->head, FUTEX_WAIT_PRIVATE, v); }

/* sc_ring_wake wakes the ring's thread. */
void sc_ring_wake(struct sc_ring *r) { futex(&r->tail, FUTEX_WAKE_PRIVATE, 1); }
