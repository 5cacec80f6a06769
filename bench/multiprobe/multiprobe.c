/*
 * multiprobe: does NVIDIA's OpenCL block the host when a queue on one GPU
 * is made to wait for an event of a queue on another GPU of the same
 * context, or when a kernel there uses a buffer that the other GPU's
 * kernel uses? (rt's stream-ordered reuse across devices makes the wait:
 * a marker on the using queue, a flush, a marker on the reusing queue that
 * waits for it; the reusing kernel then uses the block.) It launches a
 * kernel of about 40 ms on GPU 0, then times each call of the cross-device
 * wait and of a kernel on the other queue over the same buffer, and asks
 * whether GPU 0's kernel had completed when each returned; the same with
 * both queues on GPU 0 beside it.
 *
 *	cc -O2 -o multiprobe multiprobe.c -lOpenCL && ./multiprobe
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void check(cl_int e, const char *what) {
	if (e != CL_SUCCESS) {
		fprintf(stderr, "%s: %d\n", what, e);
		exit(1);
	}
}

static const char *src =
	"__kernel void spin(__global float *a, int n) {\n"
	"  float s = 0; int g = get_global_id(0);\n"
	"  for (int i = 0; i < n; i++) s = s * 0.999f + a[(g + i) & 1023];\n"
	"  a[g & 1023] = s;\n"
	"}\n";

static const char *status(cl_event e) {
	cl_int s;
	check(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL), "status");
	return s == CL_COMPLETE ? "complete" : s == CL_RUNNING ? "running" : s == CL_SUBMITTED ? "submitted" : "queued";
}

/* trial runs the kernel on q0, then makes q1 wait for it. */
static void trial(const char *name, cl_command_queue q0, cl_command_queue q1, cl_kernel k, cl_kernel k1, cl_mem a, int migrate) {
	size_t g = 1024 * 132, l = 256;
	double t0 = now_ms();
	check(clEnqueueNDRangeKernel(q0, k, 1, NULL, &g, &l, 0, NULL, NULL), "launch");
	cl_event e0, e1;
	check(clEnqueueMarkerWithWaitList(q0, 0, NULL, &e0), "marker on q0");
	check(clFlush(q0), "flush q0");
	double t1 = now_ms();
	const char *s1 = status(e0);
	check(clEnqueueMarkerWithWaitList(q1, 1, &e0, &e1), "marker on q1 waiting for q0");
	double t2 = now_ms();
	const char *s2 = status(e0);
	check(clFlush(q1), "flush q1");
	double t3 = now_ms();
	const char *s3 = status(e0);
	double tm = now_ms();
	if (migrate)
		check(clEnqueueMigrateMemObjects(q1, 1, &a, 0, 0, NULL, NULL), "migrate");
	double tm2 = now_ms();
	const char *sm = status(e0);
	t3 += tm2 - tm;
	size_t one = 1;
	check(clEnqueueNDRangeKernel(q1, k1, 1, NULL, &one, NULL, 0, NULL, NULL), "launch on q1 over the same buffer");
	double t4 = now_ms();
	const char *s4 = status(e0);
	check(clFinish(q0), "finish q0");
	double t5 = now_ms();
	check(clFinish(q1), "finish q1");
	printf("%-12s%s launch+marker+flush %.3f ms (kernel %s); cross wait %.3f ms (%s); flush %.3f ms (%s); migrate %.3f ms (%s); kernel on the same buffer %.3f ms (%s); GPU 0's kernel done %.1f ms after launch\n",
		name, migrate ? " migrated" : "", t1 - t0, s1, t2 - t1, s2, t3 - t2 - (tm2 - tm), s3, tm2 - tm, sm, t4 - t3, s4, t5 - t0);
	clReleaseEvent(e0);
	clReleaseEvent(e1);
}

int main(void) {
	cl_platform_id ps[8];
	cl_uint np;
	check(clGetPlatformIDs(8, ps, &np), "platforms");
	for (cl_uint p = 0; p < np; p++) {
		cl_device_id d[8];
		cl_uint nd = 0;
		if (clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_GPU, 8, d, &nd) != CL_SUCCESS || nd < 2)
			continue;
		char name[256];
		clGetPlatformInfo(ps[p], CL_PLATFORM_NAME, sizeof name, name, NULL);
		printf("platform %s, %u GPUs\n", name, nd);
		cl_int e;
		cl_context c = clCreateContext(NULL, 2, d, NULL, NULL, &e);
		check(e, "context");
		cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
		check(e, "program");
		check(clBuildProgram(pr, 2, d, "", NULL, NULL), "build");
		cl_kernel k = clCreateKernel(pr, "spin", &e);
		check(e, "kernel");
		cl_kernel k1 = clCreateKernel(pr, "spin", &e);
		check(e, "kernel");
		cl_mem a = clCreateBuffer(c, CL_MEM_READ_WRITE, 4096, NULL, &e);
		check(e, "buffer");
		int n = 1 << 20;
		check(clSetKernelArg(k, 0, sizeof a, &a), "arg 0");
		check(clSetKernelArg(k, 1, sizeof n, &n), "arg 1");
		int n1 = 1;
		check(clSetKernelArg(k1, 0, sizeof a, &a), "arg 0");
		check(clSetKernelArg(k1, 1, sizeof n1, &n1), "arg 1");
		cl_command_queue q0 = clCreateCommandQueue(c, d[0], 0, &e);
		check(e, "queue 0");
		cl_command_queue q0b = clCreateCommandQueue(c, d[0], 0, &e);
		check(e, "queue 0b");
		cl_command_queue q1 = clCreateCommandQueue(c, d[1], 0, &e);
		check(e, "queue 1");
		trial("warm-up", q0, q1, k, k1, a, 0);
		for (int i = 0; i < 3; i++) {
			trial("GPU 0 -> 1", q0, q1, k, k1, a, 0);
			trial("GPU 0 -> 1", q0, q1, k, k1, a, 1);
			trial("GPU 0 -> 0", q0, q0b, k, k1, a, 0);
		}
		return 0;
	}
	fprintf(stderr, "no OpenCL platform with two GPUs\n");
	return 1;
}
