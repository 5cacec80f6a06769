// cuptiprobe measures what device times from CUPTI's activity API would
// cost a host-bound loop of short kernels on an NVIDIA GPU, beside the two
// timed CUDA events per command that dgen's CUDA backend records today. It
// is a probe for a design, not part of dgen; docs/BENCHMARKS.md ("Device
// times from CUPTI") says what it found. On the GPU machine:
//
//	sh bench/cuptiprobe/run.sh
//
// Each round launches a Hotspot-like 5-point stencil at 512² (16x16
// groups) n times on one stream and waits, once per mode, the modes
// alternating:
//   - bare: the launch alone;
//   - ev2: a timed event before and after each launch;
//   - ev1: one event with timing disabled after each launch;
//   - cupti: CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL enabled;
//   - cupti1: cupti and an untimed event after each launch;
//   - flush64: cupti and a forced flush every 64 launches;
//   - flush0: cupti and a flush that is not forced every 64 launches;
//   - toggle: the kernel activity enabled and disabled around each launch,
//     as a runtime sampling some commands would;
//   - cuptix: cupti, and an external correlation id pushed and popped
//     around each launch, as a runtime would to find its command's record
//     (CUPTI 13.0 delivered no correlation records without the API
//     activity kinds, so that round prints MISMATCH and times only the
//     push and pop).
// Launches go through cuLaunchKernel, as dgen's CUDA backend makes them.
// It prints the median host time per launch of each mode (min-max over
// the rounds), checks that every CUPTI round delivered one kernel record
// per launch, on the stream, in order and with the launch's dimensions
// (and for cuptix one correlation record per launch), compares
// CUPTI's kernel durations with the events', and prints what a flush
// costs and which host clock CUPTI's timestamps follow.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA ERR %s at %d: %s\n", cudaGetErrorString(e_), __LINE__, #x); exit(1); } } while (0)
#define CU(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { printf("CU ERR %d at %d: %s\n", (int)r_, __LINE__, #x); exit(1); } } while (0)
#define CP(x) do { CUptiResult r_ = (x); if (r_ != CUPTI_SUCCESS) { const char *s_ = "?"; cuptiGetResultString(r_, &s_); printf("CUPTI ERR %s at %d: %s\n", s_, __LINE__, #x); exit(1); } } while (0)

static long long nowns(clockid_t c) { timespec t; clock_gettime(c, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }

__global__ void hot(float *out, const float *in, const float *pw, int cols, int rows, float cap) {
	int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
	if (c >= cols || r >= rows) return;
	int i = r * cols + c;
	float n = in[r > 0 ? i - cols : i], s = in[r < rows - 1 ? i + cols : i];
	float w = in[c > 0 ? i - 1 : i], e = in[c < cols - 1 ? i + 1 : i];
	out[i] = in[i] + cap * (pw[i] + (n + s + w + e - 4.0f * in[i]) * 0.1f + (80.0f - in[i]) * 0.01f);
}

__global__ void gtimer(unsigned long long *o) { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(o[0])); }

// Records delivered by CUPTI, read by offset so that the probe does not
// depend on which version of the kernel record the header names: kind at
// 0, start 16, end 24, streamId 48, correlationId 92 in every
// CUpti_ActivityKernel4..9; checked below against the correlation records.
struct krec { unsigned long long start, end; unsigned corr, stream; int dims[6]; };
static std::vector<krec> kernels;
static std::vector<std::pair<unsigned long long, unsigned>> externals; // external id, correlation id
static int dropped;
static size_t bufsize = 8 << 20;

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max) {
	*size = bufsize;
	*buf = (uint8_t *)aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI completed(CUcontext, uint32_t, uint8_t *buf, size_t, size_t valid) {
	CUpti_Activity *r = nullptr;
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS) {
		const uint8_t *p = (const uint8_t *)r;
		if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			krec k;
			memcpy(&k.start, p + 16, 8), memcpy(&k.end, p + 24, 8), memcpy(&k.corr, p + 92, 4);
			memcpy(k.dims, p + 52, sizeof k.dims), memcpy(&k.stream, p + 48, 4);
			kernels.push_back(k);
		} else if (r->kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) {
			unsigned long long id;
			unsigned corr;
			memcpy(&id, p + 8, 8), memcpy(&corr, p + 16, 4);
			externals.push_back({id, corr});
		}
	}
	size_t d = 0;
	cuptiActivityGetNumDroppedRecords(nullptr, 0, &d);
	dropped += (int)d;
	free(buf);
}

enum { BARE, EV2, EV1, CUPTI, CUPTI1, FLUSH64, FLUSH0, TOGGLE, CUPTIX, MODES };
static const char *names[] = {"bare", "ev2", "ev1", "cupti", "cupti1", "flush64", "flush0", "toggle", "cuptix"};

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 5000, rounds = argc > 2 ? atoi(argv[2]) : 9, side = 512;
	CK(cudaSetDevice(0));
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	float *a, *b, *pw;
	size_t bytes = sizeof(float) * side * side;
	CK(cudaMalloc(&a, bytes));
	CK(cudaMalloc(&b, bytes));
	CK(cudaMalloc(&pw, bytes));
	CK(cudaMemset(a, 0, bytes));
	CK(cudaMemset(b, 0, bytes));
	CK(cudaMemset(pw, 0, bytes));
	dim3 grid(side / 16, side / 16), block(16, 16);
	std::vector<cudaEvent_t> timed(2 * n), plain(n);
	for (auto &e : timed) CK(cudaEventCreate(&e));
	for (auto &e : plain) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	cudaFunction_t rf;
	CK(cudaGetFuncBySymbol(&rf, (const void *)hot));
	CUfunction f = (CUfunction)rf;
	float cap = 0.5f;
	CUcontext cx;
	CU(cuCtxGetCurrent(&cx));
	auto bare = [&](int rounds) {
		std::vector<double> v;
		for (int r = 0; r < rounds; r++) {
			CK(cudaStreamSynchronize(s));
			long long t0 = nowns(CLOCK_MONOTONIC);
			for (int i = 0; i < n; i++) {
				void *args[] = {&b, &a, &pw, &side, &side, &cap};
				CU(cuLaunchKernel(f, grid.x, grid.y, 1, block.x, block.y, 1, 0, s, args, nullptr));
			}
			CK(cudaStreamSynchronize(s));
			v.push_back((nowns(CLOCK_MONOTONIC) - t0) / 1e3 / n);
		}
		std::sort(v.begin(), v.end());
		return v;
	};
	auto show = [](const char *what, std::vector<double> v) {
		printf("%s: %.2f (%.2f-%.2f) µs per launch\n", what, v[v.size() / 2], v.front(), v.back());
	};
	bare(1);
	// The host cost of two cheap driver calls, which CUPTI may hook.
	auto ctxcalls = [&](const char *when) {
		const int m = 200000;
		CUcontext cur;
		long long t0 = nowns(CLOCK_MONOTONIC);
		for (int i = 0; i < m; i++) cuCtxSetCurrent(cx);
		long long t1 = nowns(CLOCK_MONOTONIC);
		for (int i = 0; i < m; i++) cuCtxGetCurrent(&cur);
		long long t2 = nowns(CLOCK_MONOTONIC);
		printf("%s: cuCtxSetCurrent %.1f ns, cuCtxGetCurrent %.1f ns\n", when, (t1 - t0) / (double)m, (t2 - t1) / (double)m);
	};
	ctxcalls("before CUPTI");
	show("bare, before CUPTI is enabled", bare(rounds));
	CP(cuptiActivityRegisterCallbacks(requested, completed));
	uint32_t sid = 0;
	CP(cuptiGetStreamIdEx(cx, (CUstream)s, 0, &sid));
	typedef CUptiResult (*hwfn)(uint8_t);
	if (hwfn hw = (hwfn)dlsym(RTLD_DEFAULT, "cuptiActivityEnableHWTrace")) {
		const char *str = "ok";
		CUptiResult r = hw(0);
		if (r) cuptiGetResultString(r, &str);
		printf("cuptiActivityEnableHWTrace present (left off: %s)\n", str);
	}
	uint32_t ver = 0;
	cuptiGetVersion(&ver);
	printf("CUPTI API version %u\n", ver);

	std::vector<double> per[MODES];
	std::vector<float> evdur;
	double flushns = 0;
	int flushes = 0;
	unsigned long long ext = 1;
	for (int round = 0; round < rounds + 1; round++) { // round 0 warms up
		for (int m = 0; m < MODES; m++) {
			bool cupti = m >= CUPTI;
			if (cupti && m != TOGGLE) {
				CP(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
				if (m == CUPTIX) CP(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
			}
			kernels.clear(), externals.clear();
			CK(cudaStreamSynchronize(s));
			unsigned long long first = ext;
			long long t0 = nowns(CLOCK_MONOTONIC);
			for (int i = 0; i < n; i++) {
				if (m == EV2) CK(cudaEventRecord(timed[2 * i], s));
				if (m == CUPTIX) cuptiActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, ext++);
				if (m == TOGGLE) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
				void *args[] = {&b, &a, &pw, &side, &side, &cap};
				CU(cuLaunchKernel(f, grid.x, grid.y, 1, block.x, block.y, 1, 0, s, args, nullptr));
				if (m == TOGGLE) cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
				if (m == CUPTIX) {
					uint64_t id;
					cuptiActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, &id);
				}
				if (m == EV2) CK(cudaEventRecord(timed[2 * i + 1], s));
				if (m == EV1 || m == CUPTI1) CK(cudaEventRecord(plain[i], s));
				if (m == FLUSH64 && i % 64 == 63) CP(cuptiActivityFlushAll(1));
				if (m == FLUSH0 && i % 64 == 63) CP(cuptiActivityFlushAll(0));
				std::swap(a, b);
			}
			CK(cudaStreamSynchronize(s));
			long long t1 = nowns(CLOCK_MONOTONIC);
			if (round > 0) per[m].push_back((t1 - t0) / 1e3 / n);
			if (m == EV2 && round == rounds)
				for (int i = 0; i < n; i++) {
					float ms;
					CK(cudaEventElapsedTime(&ms, timed[2 * i], timed[2 * i + 1]));
					evdur.push_back(ms * 1e6f);
				}
			if (!cupti) continue;
			size_t before = kernels.size();
			long long f0 = nowns(CLOCK_MONOTONIC);
			CP(cuptiActivityFlushAll(1));
			flushns += nowns(CLOCK_MONOTONIC) - f0, flushes++;
			if (m != TOGGLE) CP(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
			if (m == CUPTIX) CP(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION));
			int bad = (int)kernels.size() != n;
			if (m == CUPTIX) {
				bad |= (int)externals.size() != n;
				for (size_t i = 0; !bad && i < externals.size(); i++)
					bad |= externals[i].first != first + i || externals[i].second != kernels[i].corr;
			}
			for (auto &k : kernels) bad |= k.end <= k.start || k.dims[0] != side / 16 || k.dims[1] != side / 16 || k.dims[2] != 1 || k.dims[3] != 16 || k.dims[4] != 16 || k.dims[5] != 1 || k.stream != sid;
			for (size_t i = 1; i < kernels.size(); i++) bad |= kernels[i].start < kernels[i - 1].end || kernels[i].corr <= kernels[i - 1].corr;
			if (bad || round == rounds)
				printf("round %d %s: %zu kernel records (%zu before the last flush), %zu correlation records, dropped %d%s\n", round, names[m],
				       kernels.size(), before, externals.size(), dropped, bad ? " MISMATCH" : ", dims, stream and order match");
			if (round == rounds && m == CUPTI) {
				std::vector<float> d;
				for (size_t i = 1; i < kernels.size(); i++) d.push_back(kernels[i].end - kernels[i].start);
				std::sort(d.begin(), d.end()), std::sort(evdur.begin(), evdur.end());
				printf("kernel duration ns, median (p10-p90): cupti %.0f (%.0f-%.0f), events %.0f (%.0f-%.0f)\n",
				       d[d.size() / 2], d[d.size() / 10], d[d.size() * 9 / 10], evdur[n / 2], evdur[n / 10], evdur[n * 9 / 10]);
			}
		}
	}
	printf("per launch, µs, median (min-max) of %d rounds of %d:\n", rounds, n);
	double base = 0;
	for (int m = 0; m < MODES; m++) {
		auto v = per[m];
		std::sort(v.begin(), v.end());
		if (m == BARE) base = v[v.size() / 2];
		printf("  %-8s %.2f (%.2f-%.2f)  %+.0f%%\n", names[m], v[v.size() / 2], v.front(), v.back(), (v[v.size() / 2] / base - 1) * 100);
	}
	printf("flush of a round's records: %.0f µs mean\n", flushns / 1e3 / flushes);

	CP(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	ctxcalls("CUPTI kernel records on");
	CP(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	ctxcalls("CUPTI attached, records off");
	show("bare, after CUPTI was enabled and disabled", bare(rounds));
	typedef CUptiResult (*finfn)(void);
	if (finfn fin = (finfn)dlsym(RTLD_DEFAULT, "cuptiFinalize")) {
		CUptiResult r = fin();
		printf("cuptiFinalize: %d\n", (int)r);
		show("bare, after cuptiFinalize", bare(rounds));
		ctxcalls("after cuptiFinalize");
		CP(cuptiActivityRegisterCallbacks(requested, completed));
	}

	// Records delivered without a flush: small buffers, a flush period.
	bufsize = 64 << 10;
	CP(cuptiActivityFlushPeriod(2));
	CP(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	kernels.clear();
	for (int i = 0; i < n; i++) {
		void *args[] = {&b, &a, &pw, &side, &side, &cap};
		CU(cuLaunchKernel(f, grid.x, grid.y, 1, block.x, block.y, 1, 0, s, args, nullptr));
	}
	CK(cudaStreamSynchronize(s));
	for (int ms = 0; ms <= 16; ms += 2) {
		printf("64 KiB buffers, flush period 2 ms: %d ms after the sync, %zu of %d records delivered\n", ms, kernels.size(), n);
		timespec ts = {0, 2000000};
		nanosleep(&ts, nullptr);
	}
	long long f0 = nowns(CLOCK_MONOTONIC);
	CP(cuptiActivityFlushAll(0));
	long long f1 = nowns(CLOCK_MONOTONIC);
	printf("then flush(0) %.0f µs: %zu records\n", (f1 - f0) / 1e3, kernels.size());
	CP(cuptiActivityFlushAll(1));
	printf("then flush(1) %.0f µs: %zu records\n", (nowns(CLOCK_MONOTONIC) - f1) / 1e3, kernels.size());
	CP(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));

	// Which host clock CUPTI's timestamps follow.
	unsigned long long *g;
	CK(cudaMalloc(&g, 8));
	uint64_t ct;
	long long mono = nowns(CLOCK_MONOTONIC), real = nowns(CLOCK_REALTIME), raw = nowns(CLOCK_MONOTONIC_RAW);
	cuptiGetTimestamp(&ct);
	gtimer<<<1, 1, 0, s>>>(g);
	unsigned long long gt;
	CK(cudaMemcpy(&gt, g, 8, cudaMemcpyDeviceToHost));
	printf("cuptiGetTimestamp - CLOCK_MONOTONIC %lld ns, - CLOCK_MONOTONIC_RAW %lld, - CLOCK_REALTIME %lld; %%globaltimer - cupti %lld\n",
	       (long long)ct - mono, (long long)ct - raw, (long long)ct - real, (long long)gt - (long long)ct);
	return 0;
}
