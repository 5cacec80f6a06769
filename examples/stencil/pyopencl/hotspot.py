#!/usr/bin/python3
"""Hotspot through PyOpenCL: the same kernel (../hotspot.cl), inputs, constants
and time loop as the Go example, to set dgen's allocator beside PyOpenCL's
MemoryPool on one device.

Modes (-alloc):
  pool     allocate each launch's output from cl.tools.MemoryPool (over an
           ImmediateAllocator, which makes memory resident at allocation),
           release the input to the pool
  buffer   a plain cl.Buffer each launch, released after
  swap     Rodinia's double buffer

Prints one JSON object per run with the Go example's keys (mode is prefixed
"pyopencl-"). Run with Debian's python3 (python3-pyopencl).
"""
import argparse
import json
import os
import time

import numpy as np
import pyopencl as cl
import pyopencl.tools

BLOCK = 16
HERE = os.path.dirname(os.path.abspath(__file__))


def params(rows, cols):
    f = np.float32
    gh, gw = f(0.016 / rows), f(0.016 / cols)
    max_slope = f(3.0e6 / (0.5 * 0.0005 * 1.75e6))
    return dict(cap=f(0.5 * 1.75e6 * 0.0005) * gw * gh,
                rx=gw / (f(2.0 * 100 * 0.0005) * gh),
                ry=gh / (f(2.0 * 100 * 0.0005) * gw),
                rz=f(0.0005) / (f(100) * gh * gw),
                step=f(0.001) / max_slope)


def inputs(n, rng):
    temp = (323 + 21 * rng.random(n * n)).astype(np.float32)
    w = 0.2 * rng.random((n, n))
    yy, xx = np.mgrid[0:n, 0:n]
    for _ in range(8):
        x, y = rng.random() * n, rng.random() * n
        rad = n * (0.05 + 0.1 * rng.random())
        w += (1 + 4 * rng.random()) * (((xx - x) ** 2 + (yy - y) ** 2) < rad * rad)
    power = (w * 40 / w.sum()).astype(np.float32).ravel()
    return temp, power


def reference(temp, power, n, iters, p):
    f = np.float32
    sdc, rx1, ry1, rz1 = p["step"] / p["cap"], f(1) / p["rx"], f(1) / p["ry"], f(1) / p["rz"]
    t, pw = temp.reshape(n, n).copy(), power.reshape(n, n)
    for _ in range(iters):
        pad = np.pad(t, 1, mode="edge")
        nn, ss, ww, ee = pad[:-2, 1:-1], pad[2:, 1:-1], pad[1:-1, :-2], pad[1:-1, 2:]
        t = t + sdc * (pw + (ss + nn - f(2) * t) * ry1 + (ee + ww - f(2) * t) * rx1 + (f(80) - t) * rz1)
    return t.ravel()


def run(ctx, queue, knl, mode, temp, power_buf, n, iters, pyramid, p):
    mf = cl.mem_flags
    nbytes = temp.nbytes
    if mode == "pool":
        pool = cl.tools.MemoryPool(cl.tools.ImmediateAllocator(queue))
        new = lambda: pool.allocate(nbytes)
    else:
        pool = None
        new = lambda: cl.Buffer(ctx, mf.READ_WRITE, nbytes)
    allocs = 0
    inb = new(); allocs += 1
    spare = None
    if mode == "swap":
        spare = new(); allocs += 1
    cl.enqueue_copy(queue, inb, temp, is_blocking=True)
    small = BLOCK - 2 * pyramid
    g = ((n + small - 1) // small * BLOCK,) * 2
    launches = 0
    start = time.perf_counter()
    t = 0
    while t < iters:
        if mode == "swap":
            out = spare
        else:
            out = new()
            if mode == "buffer":
                allocs += 1
        knl.set_args(np.int32(min(pyramid, iters - t)), power_buf, inb, out, np.int32(n), np.int32(n),
                     np.int32(pyramid), np.int32(pyramid), p["cap"], p["rx"], p["ry"], p["rz"], p["step"])
        cl.enqueue_nd_range_kernel(queue, knl, g, (BLOCK, BLOCK))
        if mode == "swap":
            spare = inb
        else:
            inb.release()
        inb = out
        launches += 1
        t += pyramid
    queue.finish()
    elapsed = time.perf_counter() - start
    res = np.empty_like(temp)
    cl.enqueue_copy(queue, res, inb, is_blocking=True)
    if pool is not None:
        allocs = pool.held_blocks + pool.active_blocks  # every block the pool obtained: it gives none back here
    reuses = (launches - 1) if mode == "pool" else 0
    return res, elapsed, launches, allocs, reuses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-size", type=int, default=512)
    ap.add_argument("-iters", type=int, default=360)
    ap.add_argument("-pyramid", type=int, default=1)
    ap.add_argument("-alloc", default="all")
    ap.add_argument("-reps", type=int, default=1)
    a = ap.parse_args()
    modes = ["pool", "buffer", "swap"] if a.alloc == "all" else a.alloc.split(",")
    ctx = cl.Context(dev_type=cl.device_type.CPU) if not os.environ.get("PYOPENCL_CTX") else cl.create_some_context(False)
    dev = ctx.devices[0]
    queue = cl.CommandQueue(ctx)
    with open(os.path.join(HERE, "..", "hotspot.cl")) as f:
        prog = cl.Program(ctx, f.read()).build()
    knl = prog.hotspot
    n = a.size
    temp, power = inputs(n, np.random.default_rng())
    p = params(n, n)
    power_buf = cl.Buffer(ctx, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR, hostbuf=power)
    run(ctx, queue, knl, "swap", temp, power_buf, n, a.pyramid, a.pyramid, p)  # warm-up
    want = reference(temp, power, n, a.iters, p)
    for rep in range(a.reps):
        for m in modes:
            res, el, launches, allocs, reuses = run(ctx, queue, knl, m, temp, power_buf, n, a.iters, a.pyramid, p)
            err = float(np.max(np.abs(res.astype(np.float64) - want)))
            print(json.dumps(dict(device=dev.name, mode="pyopencl-" + m, size=n, iters=a.iters, pyramid=a.pyramid,
                                  rep=rep, launches=launches, seconds=el, us_per_iter=el * 1e6 / a.iters,
                                  driver_allocs=int(allocs), reuses=reuses, max_err=err if np.isfinite(err) else None,
                                  ok=bool(np.isfinite(err) and err <= 1e-2))), flush=True)


if __name__ == "__main__":
    main()
