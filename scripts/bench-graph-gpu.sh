#!/bin/sh
# Command graphs on the GPU against the raw C yardstick (issue 28): run it
# in a folder holding rt.test (go test -c ./rt), stencil (go build
# ./examples/stencil), rawcl (bench/rawcl) and hotspot.cl. ROUNDS rounds
# (default 7) alternate rawcl's launch figures, rt's BenchmarkGraph (a
# kernel in a replayed graph of 100, and Submit), rawcl's Hotspot 512²/1
# and stencil tagged and raw without and tagged with -graph. JSON lines go
# to $OUT/graph-gpu.jsonl ($OUT if set, else .).
set -u
mkdir -p /etc/OpenCL/vendors && echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
cd "$(dirname "$0")"
export DGEN_DEVICE=${DGEN_DEVICE:-gpu}
ROUNDS=${ROUNDS:-7}
o=${OUT:-.}/graph-gpu.jsonl
: > "$o"
r=1
while [ "$r" -le "$ROUNDS" ]; do
	./rawcl launch 20000 1 | sed "s/^{/{\"round\":$r,\"src\":\"rawcl\",/" >> "$o"
	./rt.test -test.run '^$' -test.bench 'BenchmarkGraph$' -test.benchtime 20000x -test.count 1 |
		awk -v r=$r '/^Benchmark/ {printf "{\"round\":%d,\"src\":\"go\",\"bench\":\"%s\",\"ns_per_op\":%s}\n", r, $1, $3}' >> "$o"
	./rawcl hotspot hotspot.cl 512 4000 1 1 | sed "s/^{/{\"round\":$r,\"src\":\"rawcl\",/" >> "$o"
	./stencil -json -alloc tagged,raw -verify=false -size 512 -iters 4000 -pyramid 1 | sed "s/^{/{\"round\":$r,\"src\":\"stencil\",/" >> "$o"
	./stencil -json -graph -alloc tagged -verify=false -size 512 -iters 4000 -pyramid 1 | sed "s/^{/{\"round\":$r,\"src\":\"stencil\",/" >> "$o"
	r=$((r + 1))
done
