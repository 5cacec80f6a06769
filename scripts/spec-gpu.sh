#!/bin/sh
# Issue 44's checks on an NVIDIA GPU (specialization-constant values per
# launch), in a gpu-bundle folder (make gpu-bundle puts specmix, search,
# rt.test, inproc, bench-inproc.sh and hotspot.cl there):
#
#	sh spec-gpu.sh
#
#  1. specmix: 16 goroutines on one context, each launching with 4 values
#     of one constant in turn and with none, every result read back and
#     verified, for DURATION (10s) on rt/cuda and on NVIDIA's OpenCL,
#     without and with Tune re-tuning the constant beside them. Each line
#     must show "wrong":0,"errors":0,"tune_wrong":0,"default_k":1.
#  2. search: two indexes of different vector lengths on one context (the
#     newcomer's case): vector 100 of each finds itself, score 1.
#  3. rt.test -test.run TestSpec on both backends: per-launch values,
#     Set in flight, Tune beside, graphs, globals, traces, allocations.
#  4. P (5) processes each of `inproc cuda` and `inproc both` with
#     INPROC_FAMILIES: a 256-item kernel launched back to back with its own
#     value (spec) and alternating two (spec-alt), against a plain launch
#     of the same kernel, in alternating blocks; the end prints the median
#     ratio / plain over the processes (issue 44's bound: 1.05).
#
# BACKENDS=cpu runs the same on PoCL, a dry run of the script. Every JSON
# line goes to $OUT (default: this folder): specmix.jsonl, inproc.jsonl.
set -u
cd "$(dirname "$0")"
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
O=${OUT:-.}
mkdir -p "$O"
BACKENDS=${BACKENDS:-cuda opencl}
status=0
: > "$O/specmix.jsonl"
for b in $BACKENDS; do
	for t in "" -tune; do
		echo "== specmix -backend $b -duration ${DURATION:-10s} $t"
		./specmix -backend "$b" -duration "${DURATION:-10s}" $t | tee -a "$O/specmix.jsonl" || status=1
	done
done
for b in $BACKENDS; do
	dev=gpu be=$b
	[ "$b" = cpu ] && dev=cpu be=opencl
	echo "== search, DGEN_DEVICE=$dev DGEN_BACKEND=$be"
	DGEN_DEVICE=$dev DGEN_BACKEND=$be ./search || status=1
	echo "== rt.test -test.run TestSpec, DGEN_DEVICE=$dev DGEN_BACKEND=$be"
	DGEN_DEVICE=$dev DGEN_BACKEND=$be ./rt.test -test.run 'TestSpec' -test.count=1 -test.v >"$O/spec-rt-$b.log" 2>&1 || status=1
	grep -E '^(--- FAIL|FAIL|PASS|ok)|launches' "$O/spec-rt-$b.log"
done
kinds="cuda both" fams=spec,spec-cuda
case $BACKENDS in cpu) kinds=opencl fams=spec; export RAWCL_DEVICE=cpu DGEN_DEVICE=cpu ;; esac
echo "== inproc spec families, ${P:-5} processes of each of: $kinds"
OUT=$O P=${P:-5} BACKENDS=$kinds INPROC_FAMILIES=$fams sh bench-inproc.sh | grep -E 'median' || status=1
exit $status
