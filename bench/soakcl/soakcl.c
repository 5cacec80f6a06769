/*
 * soakcl: bench/soak's cycle in C, on plain OpenCL 1.2 calls and without
 * dgen, so that the growth of a process that opens, uses and closes
 * contexts can be told apart: the driver's (this program grows too) or
 * dgen's (only bench/soak grows).
 *
 *   soakcl [-cpu] [CYCLES [REPORT,REPORT,...]]    defaults: 1000 1,100,500,1000
 *
 * Each cycle creates a context and a queue on the first GPU (the first CPU
 * device with -cpu), builds a small program from source, writes a 4 MiB
 * buffer from pinned memory (CL_MEM_ALLOC_HOST_PTR, mapped), makes 100
 * launches, reads the buffer back into the pinned memory and checks it,
 * then releases everything and the context. At each reporting cycle it
 * prints the resident memory, C malloc's memory in use and free (glibc's
 * mallinfo2), open file descriptors and the GPU memory in use (nvidia-smi),
 * as bench/soak does. Run it with GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072
 * too: see bench/soak.
 */
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ELEMS (1 << 20) /* 4 MiB of float */
#define LAUNCHES 100

static const char *src =
	"__kernel void soak_step(__global float* b, float a) {\n"
	"	size_t i = get_global_id(0);\n"
	"	b[i] = b[i] * 0.5f + a;\n"
	"}\n";

static void check(cl_int err, const char *call, int cycle) {
	if (err != CL_SUCCESS) {
		fprintf(stderr, "soakcl: cycle %d: %s: error %d\n", cycle, call, err);
		exit(1);
	}
}

static cl_device_id pick(cl_device_type type) {
	cl_platform_id plats[16];
	cl_uint np = 0;
	check(clGetPlatformIDs(16, plats, &np), "clGetPlatformIDs", 0);
	for (cl_uint i = 0; i < np; i++) {
		cl_device_id d;
		if (clGetDeviceIDs(plats[i], type, 1, &d, NULL) == CL_SUCCESS)
			return d;
	}
	fprintf(stderr, "soakcl: no %s device\n", type == CL_DEVICE_TYPE_GPU ? "GPU" : "CPU");
	exit(1);
}

static void cycle(cl_device_id dev, int n) {
	cl_int err;
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	check(err, "clCreateContext", n);
	cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
	check(err, "clCreateCommandQueue", n);
	cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	check(err, "clCreateProgramWithSource", n);
	check(clBuildProgram(p, 1, &dev, "", NULL, NULL), "clBuildProgram", n);
	cl_kernel k = clCreateKernel(p, "soak_step", &err);
	check(err, "clCreateKernel", n);
	size_t bytes = ELEMS * sizeof(float);
	cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
	check(err, "clCreateBuffer", n);
	cl_mem pin = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &err);
	check(err, "clCreateBuffer (pinned)", n);
	float *host = clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &err);
	check(err, "clEnqueueMapBuffer", n);
	for (int i = 0; i < ELEMS; i++)
		host[i] = (float)(i % 1024);
	cl_event wev, rev;
	check(clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, bytes, host, 0, NULL, &wev), "clEnqueueWriteBuffer", n);
	float a = 1;
	check(clSetKernelArg(k, 0, sizeof buf, &buf), "clSetKernelArg", n);
	check(clSetKernelArg(k, 1, sizeof a, &a), "clSetKernelArg", n);
	size_t global = ELEMS;
	for (int i = 0; i < LAUNCHES; i++)
		check(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL), "clEnqueueNDRangeKernel", n);
	check(clEnqueueReadBuffer(q, buf, CL_FALSE, 0, bytes, host, 0, NULL, &rev), "clEnqueueReadBuffer", n);
	check(clWaitForEvents(1, &rev), "clWaitForEvents", n);
	float v = host[ELEMS - 1];
	if (v < 1.999f || v > 2.001f) {
		fprintf(stderr, "soakcl: cycle %d: element %d after %d launches: %g, want 2\n", n, ELEMS - 1, LAUNCHES, v);
		exit(1);
	}
	clReleaseEvent(wev);
	clReleaseEvent(rev);
	check(clEnqueueUnmapMemObject(q, pin, host, 0, NULL, NULL), "clEnqueueUnmapMemObject", n);
	check(clFinish(q), "clFinish", n);
	clReleaseMemObject(pin);
	clReleaseMemObject(buf);
	clReleaseKernel(k);
	clReleaseProgram(p);
	clReleaseCommandQueue(q);
	check(clReleaseContext(ctx), "clReleaseContext", n);
}

static double mib(long long b) { return b / 1048576.0; }

static long long rss(void) {
	FILE *f = fopen("/proc/self/statm", "r");
	long long size = 0, res = -1;
	if (f) {
		if (fscanf(f, "%lld %lld", &size, &res) != 2)
			res = -1;
		fclose(f);
	}
	return res < 0 ? -1 : res * sysconf(_SC_PAGESIZE);
}

static int fds(void) {
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n - 3; /* ".", ".." and the directory itself */
}

struct mallinfo2_fields {
	size_t arena, ordblks, smblks, hblks, hblkhd, usmblks, fsmblks, uordblks, fordblks, keepcost;
};

static int malloc_stats(long long *inuse, long long *freeb, long long *mapped) {
	struct mallinfo2_fields (*f)(void) = (struct mallinfo2_fields (*)(void))dlsym(RTLD_DEFAULT, "mallinfo2");
	if (!f) {
		*inuse = *freeb = *mapped = -1;
		return -1;
	}
	struct mallinfo2_fields m = f();
	*inuse = m.uordblks, *freeb = m.fordblks, *mapped = m.hblkhd;
	return 0;
}

/* gpu_memory fills in the GPU memory this process holds and in use on the
 * first GPU, in MiB, from nvidia-smi; -1 where it cannot tell. */
static void gpu_memory(long long *proc, long long *used, long long *total) {
	*proc = *used = *total = -1;
	FILE *f = popen("nvidia-smi --query-gpu=memory.used,memory.total --format=csv,noheader,nounits 2>/dev/null", "r");
	if (!f)
		return;
	if (fscanf(f, "%lld, %lld", used, total) != 2)
		*used = *total = -1;
	pclose(f);
	if (*used < 0)
		return;
	f = popen("nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null", "r");
	if (!f)
		return;
	long long pid, m;
	*proc = 0;
	while (fscanf(f, "%lld, %lld", &pid, &m) == 2)
		if (pid == getpid())
			*proc += m;
	pclose(f);
}

int main(int argc, char **argv) {
	cl_device_type type = CL_DEVICE_TYPE_GPU;
	int a = 1;
	if (a < argc && strcmp(argv[a], "-cpu") == 0) {
		type = CL_DEVICE_TYPE_CPU;
		a++;
	}
	int cycles = a < argc ? atoi(argv[a++]) : 1000;
	const char *report = a < argc ? argv[a++] : "1,100,500,1000";
	cl_device_id dev = pick(type);
	char name[256];
	clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
	fprintf(stderr, "soakcl: device %s\n", name);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	long long rss0 = -1, used0 = 0;
	int fds0 = 0;
	for (int n = 1; n <= cycles; n++) {
		cycle(dev, n);
		char at[32];
		snprintf(at, sizeof at, "%d", n);
		int report_here = n == cycles;
		for (const char *s = report; *s && !report_here;) {
			size_t len = strcspn(s, ",");
			report_here = len == strlen(at) && strncmp(s, at, len) == 0;
			s += len + (s[len] == ',');
		}
		if (!report_here)
			continue;
		long long r = rss(), inuse, freeb, mapped, gproc, gused, gtotal;
		int f = fds();
		malloc_stats(&inuse, &freeb, &mapped);
		gpu_memory(&gproc, &gused, &gtotal);
		if (rss0 < 0)
			rss0 = r, used0 = inuse, fds0 = f;
		clock_gettime(CLOCK_MONOTONIC, &t);
		printf("C cycle %4d: RSS %7.1f MiB (%+.1f), C malloc %6.1f MiB in use (%+.1f), %6.1f free, %6.1f mapped, fds %3d (%+d), GPU memory ",
			n, mib(r), mib(r - rss0), mib(inuse), mib(inuse - used0), mib(freeb), mib(mapped), f, f - fds0);
		if (gused < 0)
			printf("n/a (no nvidia-smi)");
		else
			printf("%lld MiB this process, %lld of %lld MiB in use", gproc, gused, gtotal);
		printf(", %.0f s\n", (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9);
		fflush(stdout);
	}
	return 0;
}
