#!/usr/bin/python3
"""Hotspot through CuPy: the same kernel as ../hotspot.cl, written in CUDA C
(CuPy compiles it with NVRTC), the same inputs, constants and time loop as
the Go example, to set dgen beside the Python peer a CUDA user would pick.

Modes (-alloc):
  pool     each launch's output from CuPy's default memory pool (cp.empty),
           the input given back to it
  swap     Rodinia's double buffer
  graph    two steps (in->out, out->in) captured once into a CUDA graph
           (Stream.begin_capture) and replayed

Prints one JSON object per run with the Go example's keys (mode prefixed
"cupy-"). The graph mode's time per step bounds the kernel's own device
time (NVRTC's compile of it), as the Go example's graph mode bounds NVIDIA
OpenCL's.
"""
import argparse
import json
import time

import cupy as cp
import numpy as np

BLOCK = 16

SRC = r"""
#define BLOCK 16
#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) <= (hi))
extern "C" __global__ void hotspot(int iteration, const float *power, const float *temp_src, float *temp_dst,
		int cols, int rows, int border_cols, int border_rows, float cap, float rx, float ry, float rz, float step)
{
	__shared__ float t[BLOCK][BLOCK];
	__shared__ float p[BLOCK][BLOCK];
	__shared__ float next[BLOCK][BLOCK];
	const float amb = 80.0f;
	const float sdc = step / cap;
	const float rx1 = 1.0f / rx, ry1 = 1.0f / ry, rz1 = 1.0f / rz;
	int tx = threadIdx.x, ty = threadIdx.y;
	int y0 = (BLOCK - 2 * border_rows) * (int)blockIdx.y - border_rows;
	int x0 = (BLOCK - 2 * border_cols) * (int)blockIdx.x - border_cols;
	int y = y0 + ty, x = x0 + tx;
	int idx = cols * y + x;
	if (IN_RANGE(y, 0, rows - 1) && IN_RANGE(x, 0, cols - 1)) {
		t[ty][tx] = temp_src[idx];
		p[ty][tx] = power[idx];
	}
	__syncthreads();
	int vymin = y0 < 0 ? -y0 : 0;
	int vymax = y0 + BLOCK - 1 > rows - 1 ? BLOCK - 1 - (y0 + BLOCK - rows) : BLOCK - 1;
	int vxmin = x0 < 0 ? -x0 : 0;
	int vxmax = x0 + BLOCK - 1 > cols - 1 ? BLOCK - 1 - (x0 + BLOCK - cols) : BLOCK - 1;
	int n = max(ty - 1, vymin), s = min(ty + 1, vymax);
	int w = max(tx - 1, vxmin), e = min(tx + 1, vxmax);
	bool computed = false;
	for (int i = 0; i < iteration; i++) {
		computed = false;
		if (IN_RANGE(tx, i + 1, BLOCK - i - 2) && IN_RANGE(ty, i + 1, BLOCK - i - 2) &&
		    IN_RANGE(tx, vxmin, vxmax) && IN_RANGE(ty, vymin, vymax)) {
			computed = true;
			float c = t[ty][tx];
			next[ty][tx] = c + sdc * (p[ty][tx] +
				(t[s][tx] + t[n][tx] - 2.0f * c) * ry1 +
				(t[ty][e] + t[ty][w] - 2.0f * c) * rx1 +
				(amb - c) * rz1);
		}
		__syncthreads();
		if (i == iteration - 1)
			break;
		if (computed)
			t[ty][tx] = next[ty][tx];
		__syncthreads();
	}
	if (computed && IN_RANGE(tx, border_cols, BLOCK - border_cols - 1) &&
	    IN_RANGE(ty, border_rows, BLOCK - border_rows - 1))
		temp_dst[idx] = next[ty][tx];
}
"""


def params(rows, cols):
    f = np.float32
    gh, gw = f(0.016 / rows), f(0.016 / cols)
    max_slope = f(3.0e6 / (0.5 * 0.0005 * 1.75e6))
    return dict(cap=f(0.5 * 1.75e6 * 0.0005) * gw * gh,
                rx=gw / (f(2.0 * 100 * 0.0005) * gh),
                ry=gh / (f(2.0 * 100 * 0.0005) * gw),
                rz=f(0.0005) / (f(100) * gh * gw),
                step=f(0.001) / max_slope)


def reference(temp, power, n, iters, p):
    f = np.float32
    sdc, rx1, ry1, rz1 = p["step"] / p["cap"], f(1) / p["rx"], f(1) / p["ry"], f(1) / p["rz"]
    t, pw = temp.reshape(n, n).copy(), power.reshape(n, n)
    for _ in range(iters):
        pad = np.pad(t, 1, mode="edge")
        nn, ss, ww, ee = pad[:-2, 1:-1], pad[2:, 1:-1], pad[1:-1, :-2], pad[1:-1, 2:]
        t = t + sdc * (pw + (ss + nn - f(2) * t) * ry1 + (ee + ww - f(2) * t) * rx1 + (f(80) - t) * rz1)
    return t.ravel()


def run(knl, mode, temp, power, n, iters, pyramid, p):
    small = BLOCK - 2 * pyramid
    grid = ((n + small - 1) // small,) * 2
    args = lambda steps, src, dst: (np.int32(steps), power, src, dst, np.int32(n), np.int32(n), np.int32(pyramid),
                                    np.int32(pyramid), p["cap"], p["rx"], p["ry"], p["rz"], p["step"])
    inb = cp.asarray(temp)
    spare = cp.empty_like(inb)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        if mode == "graph":
            stream.begin_capture()
            knl(grid, (BLOCK, BLOCK), args(pyramid, inb, spare))
            knl(grid, (BLOCK, BLOCK), args(pyramid, spare, inb))
            graph = stream.end_capture()
            graph.launch(stream)  # first launch uploads the graph
            stream.synchronize()
            inb[...] = cp.asarray(temp)
            stream.synchronize()
        start = time.perf_counter()
        t = 0
        while t < iters:
            if mode == "graph":
                graph.launch(stream)
                t += 2 * pyramid
                continue
            out = spare if mode == "swap" else cp.empty_like(inb)
            knl(grid, (BLOCK, BLOCK), args(min(pyramid, iters - t), inb, out))
            if mode == "swap":
                spare = inb
            inb = out
            t += pyramid
        stream.synchronize()
        elapsed = time.perf_counter() - start
    return cp.asnumpy(inb), elapsed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-size", type=int, default=512)
    ap.add_argument("-iters", type=int, default=2000)
    ap.add_argument("-pyramid", type=int, default=1)
    ap.add_argument("-alloc", default="pool,swap,graph")
    ap.add_argument("-reps", type=int, default=3)
    ap.add_argument("-verify", type=int, default=1, help="0: skip the NumPy reference (max_err and ok null)")
    a = ap.parse_args()
    knl = cp.RawKernel(SRC, "hotspot")
    n = a.size
    rng = np.random.default_rng(1)
    temp = (323 + 21 * rng.random(n * n)).astype(np.float32)
    powerh = (rng.random(n * n) * 40 / (n * n)).astype(np.float32)
    power = cp.asarray(powerh)
    p = params(n, n)
    run(knl, "swap", temp, power, n, 4, a.pyramid, p)  # warm-up: compiles
    want = reference(temp, powerh, n, a.iters, p) if a.verify else None
    for rep in range(a.reps):
        for m in a.alloc.split(","):
            res, el = run(knl, m, temp, power, n, a.iters, a.pyramid, p)
            err = float(np.max(np.abs(res.astype(np.float64) - want))) if want is not None else None
            print(json.dumps(dict(device=cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), mode="cupy-" + m,
                                  size=n, iters=a.iters, pyramid=a.pyramid, rep=rep, us_per_iter=el * 1e6 / a.iters,
                                  max_err=err, ok=None if err is None else bool(np.isfinite(err) and err <= 1e-2))), flush=True)


if __name__ == "__main__":
    main()
