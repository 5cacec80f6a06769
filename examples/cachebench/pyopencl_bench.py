"""Times a program build through PyOpenCL: program ready (Program.build,
which uses PyOpenCL's own binary cache, here in the directory that
PYOPENCL_CACHE_DIR names) and first kernel done. Prints one JSON object.
Usage: pyopencl_bench.py SOURCE.cl

PyOpenCL turns its cache off when PYOPENCL_NO_CACHE is present, whatever its
value, so the caller must leave it unset. PyOpenCL 2022.3 does not read
PYOPENCL_CACHE_DIR itself (its default is under the user's cache directory),
so the script passes it to build."""
import json
import os
import sys
import time

import numpy as np
import pyopencl as cl

src = open(sys.argv[1]).read()
plats = cl.get_platforms()
dev = None
for want in (cl.device_type.GPU, cl.device_type.CPU):
    for p in plats:
        ds = [d for d in p.get_devices() if d.type & want]
        if ds:
            dev = ds[0]
            break
    if dev:
        break
ctx = cl.Context([dev])
q = cl.CommandQueue(ctx)
x = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, 4 * 1024)
t0 = time.perf_counter()
if "PYOPENCL_NO_CACHE" in os.environ:
    sys.exit("pyopencl_bench.py: PYOPENCL_NO_CACHE is set: PyOpenCL's cache would be off")
prg = cl.Program(ctx, src).build(cache_dir=os.environ.get("PYOPENCL_CACHE_DIR"))
ready = time.perf_counter() - t0
k = prg.scale
k(q, (1024,), None, x, np.float32(1.5), np.int32(1024))
q.finish()
done = time.perf_counter() - t0
print(json.dumps({"device": dev.name, "program_ready_ms": ready * 1e3, "first_kernel_done_ms": done * 1e3}))
