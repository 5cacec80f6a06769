#!/bin/sh
# The device-fault figures of issue 46 on an NVIDIA GPU with both
# backends, from a gpu-bundle folder that holds faultloop (BUNDLE_CMDS) and
# rt.test (BUNDLE_TESTS), and faultloop.test if the bundle was made with
# BUNDLE_TESTS including bench/faultloop:
#
#	cd gpu-bundle && sh fault-gpu.sh
#
# Each step is its own process, since a fault takes the device from its
# backend for the rest of the process:
#
#  1. auto: the service loop under DGEN_BACKEND=auto (rt/cuda first, NVIDIA's
#     OpenCL after the first fault, then Open fails): faults survived, the
#     time from the faulting launch to each goroutine's error and to the
#     first Health that reported it (launch_to_unhealthy_ms, polled every
#     millisecond; the exit status is 1 past a second), Close's time;
#  2. opencl-first: the same, starting on NVIDIA's OpenCL (rt/cuda second,
#     loading the program that the prewarm put in the persistent cache);
#  3. sync: DGEN_SYNC_LAUNCHES=1: the fault names exactly the faulting launch
#     and the line of its Enqueue (names_line);
#  4. cuda-only: DGEN_BACKEND=cuda: no other backend, Open fails after the
#     first fault with the restart message;
#  5. the GPU test of the loop (faultloop.test), where the bundle has it;
#  6. compute-sanitizer on the synchronised loop on rt/cuda: its report
#     should name faultloop.cl:14 (built with -nv-line-info);
#  7. what DGEN_SYNC_LAUNCHES costs: rt.test's BenchmarkSubmit (a 1-item
#     launch back to back) with and without it, and BenchmarkSubmitFinish
#     (a launch and a Finish) beside them, on both backends, ROUNDS rounds
#     alternated.
#
# Every output goes to $OUT (default .); the JSON lines of faultloop are
# fault-*.jsonl, the sanitizer's report sanitizer.txt.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
ROUNDS=${ROUNDS:-3}
N=${N:-20000}
dir=${OUT:-.}
mkdir -p "$dir"
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
export DGEN_DEVICE=gpu
export DGEN_CACHE_DIR=${DGEN_CACHE_DIR:-$(mktemp -d)}

# loop NAME [ENV...] -- [FLAGS...]: one run of faultloop, its lines kept.
loop() {
	name=$1
	shift
	echo "== faultloop $name"
	env "$@" > "$dir/fault-$name.jsonl" 2> "$dir/fault-$name.stderr"
	echo "exit status $?"
	cat "$dir/fault-$name.jsonl"
	grep -i 'warn\|restart' "$dir/fault-$name.stderr" | head -5
}
loop auto ./faultloop
loop opencl-first ./faultloop -first opencl
loop sync DGEN_SYNC_LAUNCHES=1 ./faultloop
loop cuda-only DGEN_BACKEND=cuda ./faultloop

if [ -x ./faultloop.test ]; then
	echo "== faultloop.test -test.run TestFaultLoop"
	./faultloop.test -test.run TestFaultLoop -test.v 2>&1 | tail -20
fi

san=/usr/local/cuda/bin/compute-sanitizer
if [ -x "$san" ]; then
	echo "== compute-sanitizer (rt/cuda, DGEN_SYNC_LAUNCHES=1)"
	DGEN_BACKEND=cuda DGEN_SYNC_LAUNCHES=1 "$san" --tool memcheck --print-limit 4 \
		./faultloop -g 2 -every 50 -faults 1 -prewarm=false > "$dir/sanitizer.txt" 2>&1
	echo "exit status $?"
	grep -n 'Invalid\|faultloop.cl\|at 0x\|by thread\|main.go' "$dir/sanitizer.txt" | head -20
fi

echo "== DGEN_SYNC_LAUNCHES cost (ns/op of a 1-item launch; SubmitFinish: launch and Finish)"
r=0
while [ "$r" -lt "$ROUNDS" ]; do
	for b in cuda opencl; do
		for s in 0 1; do
			DGEN_BACKEND=$b DGEN_SYNC_LAUNCHES=$s ./rt.test -test.run '^$' -test.bench '^BenchmarkSubmit(Finish)?$' \
				-test.benchtime "${N}x" -test.count 1 2>/dev/null |
				awk -v r="$r" -v b="$b" -v s="$s" '/^Benchmark/ { printf "round %d %s sync=%s %s %s ns/op\n", r, b, s, $1, $3 }'
		done
	done
	r=$((r + 1))
done | tee "$dir/sync-cost.txt"
