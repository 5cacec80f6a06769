// faultlat: how long after a kernel faults does each of G host threads,
// each serving requests on a stream of its own (write 16 KiB, launch a
// small kernel, read back, synchronise), see the error? Mode "sync" also
// synchronises after every launch, as DGEN_SYNC_LAUNCHES does. The C
// yardstick of faultloop (docs/BENCHMARKS.md, "Device faults"):
//
//	nvcc -O2 -o faultlat faultlat.cu -lpthread && ./faultlat 16 async
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__global__ void inc(int *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1; }
__global__ void bad(int *x) { x[(size_t)1 << 38] = 1; }

static int G, syncMode, every = 200;
static long reqs, seen; static double badAt;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static double t0, errAt[64], createMS, launchMS;
static long served[64];

static void *worker(void *arg) {
	int id = (int)(long)arg, n = 4096;
	cudaStream_t s; int *d; int *h = (int *)malloc(n * 4);
	cudaSetDevice(0);
	if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) || cudaMalloc(&d, n * 4)) { errAt[id] = now(); return 0; }
	for (;;) {
		long r = __atomic_add_fetch(&reqs, 1, __ATOMIC_SEQ_CST);
		cudaError_t e;
		if (r == every) {
			double a = now();
			cudaStream_t s2;
			cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking); /* as rt's NewQueue under load */
			double b = now();
			bad<<<1, 1, 0, s>>>(d); /* its first launch: the function is loaded now (lazy loading) */
			double t = now(); badAt = t;
			createMS = (b - a) * 1e3; launchMS = (t - b) * 1e3;
			if (syncMode && (e = cudaStreamSynchronize(s))) break;
		}
		if ((e = cudaMemcpyAsync(d, h, n * 4, cudaMemcpyHostToDevice, s)) || (e = cudaStreamSynchronize(s))) break;
		inc<<<n / 256, 256, 0, s>>>(d, n);
		if (syncMode && (e = cudaStreamSynchronize(s))) break;
		if ((e = cudaMemcpyAsync(h, d, n * 4, cudaMemcpyDeviceToHost, s)) || (e = cudaStreamSynchronize(s))) break;
		served[id]++;
	}
	errAt[id] = now();
	__atomic_add_fetch(&seen, 1, __ATOMIC_SEQ_CST);
	return 0;
}

int main(int argc, char **argv) {
	G = argc > 1 ? atoi(argv[1]) : 16;
	syncMode = argc > 2 && !strcmp(argv[2], "sync");
	cudaSetDevice(0); cudaFree(0);
	pthread_t th[64];
	t0 = now();
	for (int i = 0; i < G; i++) pthread_create(&th[i], 0, worker, (void *)(long)i);
	while (__atomic_load_n(&seen, __ATOMIC_SEQ_CST) < G && now() - t0 < 40) { struct timespec ts = {0, 10000000}; nanosleep(&ts, 0); }
	double b = badAt;
	double lo = 1e9, hi = 0; long total = 0; int got = 0;
	for (int i = 0; i < G; i++) {
		total += served[i];
		if (errAt[i] > 0) { got++; double d = (errAt[i] - b) * 1e3; if (d < lo) lo = d; if (d > hi) hi = d; }
	}
	printf("{\"probe\":\"faultlat\",\"threads\":%d,\"mode\":\"%s\",\"requests\":%ld,\"errors_seen\":%d,\"fault_to_error_ms_min\":%.1f,\"fault_to_error_ms_max\":%.1f,\"stream_create_ms\":%.1f,\"first_launch_ms\":%.1f,\"error\":\"%s\"}\n",
		G, syncMode ? "sync" : "async", total, got, lo, hi, createMS, launchMS, cudaGetErrorString(cudaGetLastError()));
	fflush(stdout);
	_exit(0);
}
