// gtprobe measures what timing kernels from the inside would cost on an
// NVIDIA GPU: each launch writing its own start and end from %globaltimer
// into a slot, instead of CUDA recording two events around it (1.6 µs of
// host time each on the H100 host). It is a probe for a design, not part of
// dgen; docs/BENCHMARKS.md ("Device times from inside the kernel") says
// what it found. On the GPU machine:
//
//	nvcc -O2 -arch=sm_90 -o gtprobe bench/gtprobe/gtprobe.cu && ./gtprobe
//
// It prints, one line each:
//   - the timer's step, read back to back by one thread;
//   - how far the timer drifts from CUDA's event clock: a one-thread kernel
//     writes the timer, an event is recorded after it, 64 times with idle
//     gaps, and the spread of (timer - event time) is printed;
//   - a Hotspot-like 5-point stencil's event-timed duration at 512², 1024²
//     and 4096² (16x16 groups): plain; "warp" (every exiting warp piece
//     takes the max of the timer into one of 32 slots, the first thread of
//     each group the min); "group32" and "group256" (one atomic per group
//     and edge: the last warp piece of a group, found with a shared
//     counter, takes the max, over 32 or 256 slots);
//   - the host cost of recording an event, timed and with timing disabled;
//   - the host-bound loop's time per launch for each variant at 512².
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

__device__ __forceinline__ unsigned long long timer() {
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void step(unsigned long long *out, int n) {
	unsigned long long prev = timer(), first = prev, t, least = ~0ull;
	int changes = 0;
	for (int i = 0; i < n; i++) {
		t = timer();
		if (t != prev) {
			least = min(least, t - prev);
			changes++;
			prev = t;
		}
	}
	out[0] = least, out[1] = changes, out[2] = prev - first;
}

__global__ void clock1(unsigned long long *out) { out[0] = timer(); }

enum { PLAIN, WARP, GROUP32, GROUP256, VARIANTS };
static const char *names[] = {"plain", "warp", "group32", "group256"};

template <int V>
__global__ void stencil(const float *in, float *out, int n, unsigned long long *slot) {
	constexpr int S = V == GROUP256 ? 256 : 32;
	__shared__ unsigned done;
	unsigned g = blockIdx.x + blockIdx.y * gridDim.x;
	if (V != PLAIN && threadIdx.x == 0 && threadIdx.y == 0) {
		done = 0;
		atomicMax(slot + g % S, ~timer()); // the min of the starts
	}
	if (V == GROUP32 || V == GROUP256) __syncthreads();
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x > 0 && y > 0 && x < n - 1 && y < n - 1)
		out[y * n + x] = 0.2f * (in[y * n + x] + in[y * n + x - 1] + in[y * n + x + 1] + in[(y - 1) * n + x] + in[(y + 1) * n + x]);
	if (V == PLAIN) return;
	unsigned active = __activemask(), lower;
	asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lower));
	if ((active & lower) != 0) return; // not the lowest active lane
	if (V == WARP) {
		atomicMax(slot + S + g % S, timer());
		return;
	}
	unsigned k = __popc(active);
	if (atomicAdd(&done, k) + k == blockDim.x * blockDim.y) atomicMax(slot + S + g % S, timer());
}

static void launch(int v, dim3 g, dim3 b, const float *in, float *out, int n, unsigned long long *slot) {
	switch (v) {
	case PLAIN: stencil<PLAIN><<<g, b>>>(in, out, n, slot); break;
	case WARP: stencil<WARP><<<g, b>>>(in, out, n, slot); break;
	case GROUP32: stencil<GROUP32><<<g, b>>>(in, out, n, slot); break;
	default: stencil<GROUP256><<<g, b>>>(in, out, n, slot);
	}
}

int main() {
	unsigned long long *d, h[64];
	cudaMalloc(&d, 64 * 8);
	step<<<1, 1>>>(d, 100000);
	cudaMemcpy(h, d, 24, cudaMemcpyDeviceToHost);
	printf("timer step %llu ns (%llu changes over %llu ns)\n", h[0], h[1], h[2]);

	cudaEvent_t e0, e[64];
	cudaEventCreate(&e0);
	for (auto &x : e) cudaEventCreate(&x);
	cudaEventRecord(e0);
	for (int i = 0; i < 64; i++) {
		clock1<<<1, 1>>>(d + i);
		cudaEventRecord(e[i]);
		if (i % 8 == 0) {
			auto t = std::chrono::steady_clock::now();
			while (std::chrono::steady_clock::now() - t < std::chrono::microseconds(200)) {
			}
		}
	}
	cudaDeviceSynchronize();
	cudaMemcpy(h, d, 64 * 8, cudaMemcpyDeviceToHost);
	double lo = 1e18, hi = -1e18, base = 0;
	for (int i = 0; i < 64; i++) {
		float ms;
		cudaEventElapsedTime(&ms, e0, e[i]);
		double off = double(h[i] - h[0]) - ms * 1e6;
		if (i == 0) base = off;
		lo = std::min(lo, off - base), hi = std::max(hi, off - base);
	}
	printf("timer against event clock: spread %.0f ns over 64 samples\n", hi - lo);

	for (unsigned flags : {cudaEventDefault, cudaEventDisableTiming}) {
		cudaEvent_t ev;
		cudaEventCreateWithFlags(&ev, flags);
		cudaDeviceSynchronize();
		auto t0 = std::chrono::steady_clock::now();
		for (int i = 0; i < 20000; i++) cudaEventRecord(ev);
		cudaDeviceSynchronize();
		double per = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 20000;
		printf("cudaEventRecord (%s) %.2f µs\n", flags ? "timing disabled" : "timed", per);
		cudaEventDestroy(ev);
	}

	unsigned long long *slot;
	cudaMalloc(&slot, 512 * 8);
	cudaEvent_t s, t;
	cudaEventCreate(&s);
	cudaEventCreate(&t);
	for (int n : {512, 1024, 4096}) {
		float *a, *b;
		cudaMalloc(&a, size_t(n) * n * 4);
		cudaMalloc(&b, size_t(n) * n * 4);
		cudaMemset(a, 0, size_t(n) * n * 4);
		dim3 g(n / 16, n / 16), bl(16, 16);
		for (int v = 0; v < VARIANTS; v++) {
			std::vector<float> us;
			for (int r = 0; r < 201; r++) {
				cudaMemsetAsync(slot, 0, 512 * 8);
				cudaEventRecord(s);
				launch(v, g, bl, a, b, n, slot);
				cudaEventRecord(t);
				cudaEventSynchronize(t);
				float ms;
				cudaEventElapsedTime(&ms, s, t);
				us.push_back(ms * 1000);
			}
			std::sort(us.begin(), us.end());
			printf("%d² %-8s event-timed %.2f µs (median of 201, min %.2f)\n", n, names[v], us[100], us[0]);
		}
		if (n == 512) {
			for (int rep = 0; rep < 3; rep++)
				for (int v = 0; v < VARIANTS; v++) {
					cudaDeviceSynchronize();
					auto t0 = std::chrono::steady_clock::now();
					for (int i = 0; i < 20000; i++) launch(v, g, bl, a, b, n, slot);
					cudaDeviceSynchronize();
					double per = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / 20000;
					printf("512² %-8s host loop %.2f µs per launch\n", names[v], per);
				}
		}
		cudaFree(a);
		cudaFree(b);
	}
	return 0;
}
