#!/bin/sh
# Command graphs on the GPU against the raw C yardsticks (issue 28): run it
# in a folder holding rt.test (go test -c -o rt.test ./rt), stencil (go build
# ./examples/stencil), rawcl (bench/rawcl), rawcu (bench/rawcu) and
# hotspot.cl. ROUNDS rounds (default 7) alternate rawcl's and rawcu's
# launch figures, rt's BenchmarkGraph (a kernel in a replayed graph of 100,
# the same in the prepared C loop, and Submit) on each backend of BACKENDS
# (default "cuda opencl": a CUDA graph, and NVIDIA OpenCL's C loop),
# rawcl's Hotspot 512²/1 and stencil tagged and raw without, and tagged
# with -graph, on each backend. JSON lines go to $OUT/graph-gpu.jsonl ($OUT
# if set, else .); records of rt.test and stencil carry the backend.
# PLAIN=0 leaves out the stencil runs without -graph (bench-cuda.sh has
# them), to keep a round short.
set -u
mkdir -p /etc/OpenCL/vendors && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
cd "$(dirname "$0")"
export DGEN_DEVICE=${DGEN_DEVICE:-gpu}
ROUNDS=${ROUNDS:-7}
BACKENDS=${BACKENDS:-"cuda opencl"}
PLAIN=${PLAIN:-1}
o=${OUT:-.}/graph-gpu.jsonl
: > "$o"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	./rawcl launch 20000 1 | sed "s/^{/{\"round\":$r,\"src\":\"rawcl\",/" >> "$o"
	[ -x ./rawcu ] && ./rawcu launch 20000 1 | sed "s/^{/{\"round\":$r,\"src\":\"rawcu\",/" >> "$o"
	./rawcl hotspot hotspot.cl 512 4000 1 1 | sed "s/^{/{\"round\":$r,\"src\":\"rawcl\",/" >> "$o"
	for b in $BACKENDS; do
		DGEN_BACKEND=$b ./rt.test -test.run '^$' -test.bench 'BenchmarkGraph$' -test.benchtime 20000x -test.count 1 |
			awk -v r=$r -v b=$b '/^Benchmark/ {printf "{\"round\":%d,\"src\":\"go\",\"backend\":\"%s\",\"bench\":\"%s\",\"ns_per_op\":%s}\n", r, b, $1, $3}' >> "$o"
		[ "$PLAIN" = 0 ] || DGEN_BACKEND=$b ./stencil -json -alloc tagged,raw -verify=false -size 512 -iters 4000 -pyramid 1 | sed "s/^{/{\"round\":$r,\"src\":\"stencil\",\"backend\":\"$b\",/" >> "$o"
		DGEN_BACKEND=$b ./stencil -json -graph -alloc tagged -verify=false -size 512 -iters 4000 -pyramid 1 | sed "s/^{/{\"round\":$r,\"src\":\"stencil\",\"backend\":\"$b\",/" >> "$o"
	done
	r=$((r + 1))
done
