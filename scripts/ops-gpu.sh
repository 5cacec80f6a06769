#!/bin/sh
# Issue 54's checks that need the GPU (what operators see), in a
# gpu-bundle folder (make gpu-bundle puts rt.test and faultloop there):
#
#	sh ops-gpu.sh
#
#  1. rt.test -test.run 'TestMemoryLimitDriver|TestShutdownInFlight' under
#     DGEN_DEVICE=gpu on rt/cuda and on NVIDIA's OpenCL: a 64 MiB budget
#     and 16 goroutines that want 8 MiB each, with the driver's free
#     memory (cuMemGetInfo; OpenCL has no such query, so the test skips
#     there) sampled beside Stats: its log line gives the most the driver
#     counted held and the driver's own allocations; and Shutdown with 16
#     requests in flight, its times logged.
#  2. faultloop -probe -g 1 on each backend, each in a process of its own
#     (a fault takes the device from its backend for the process): the
#     one goroutine launches the faulting kernel and makes no call after
#     it, so only Health's own probe can notice the fault; the JSON lines
#     give launch_to_unhealthy_ms, and the exit status is 0 only where
#     Health reported the fault within a second. fault-gpu.sh runs the
#     loop with 16 goroutines, whose lines give the same figures.
#
# Every output goes to $OUT (default: this folder): ops-rt.*.log,
# ops-probe-*.jsonl.
set -u
cd "$(dirname "$0")"
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
dir=${OUT:-.}
mkdir -p "$dir"
export DGEN_DEVICE=gpu
export DGEN_CACHE_DIR=${DGEN_CACHE_DIR:-$(mktemp -d)}
status=0
for b in cuda opencl; do
	echo "== rt.test on $b: the budget against the driver, Shutdown in flight"
	DGEN_BACKEND=$b ./rt.test -test.run '^(TestMemoryLimitDriver|TestShutdownInFlight)$' -test.v -test.count=1 \
		> "$dir/ops-rt.$b.log" 2>&1 || status=1
	grep -- '^--- \|_test.go:\|^FAIL\|^panic' "$dir/ops-rt.$b.log" | grep -v 'samples of Stats' | head -20
done
for b in cuda opencl; do
	echo "== faultloop -probe -g 1 on $b"
	./faultloop -backend "$b" -g 1 -every 50 -probe -faults 1 > "$dir/ops-probe-$b.jsonl" 2> "$dir/ops-probe-$b.stderr"
	rc=$?
	echo "exit status $rc"
	[ $rc -eq 0 ] || status=1
	cat "$dir/ops-probe-$b.jsonl"
	grep -i 'faultloop:' "$dir/ops-probe-$b.stderr" | head -5
done
exit $status
