#!/bin/sh
# The figures of rt/cuda (issue 26) against the raw C yardsticks of both
# APIs, on an NVIDIA GPU: run it inside a gpu-bundle folder that also holds
# rawcu (cc -O2 -o rawcu bench/rawcu/rawcu.c -lOpenCL -ldl):
#
#	cd gpu-bundle && sh bench-cuda.sh
#
# ROUNDS rounds (default 15) alternate, within each round: rawcl and rawcu
# launch loops; rt's Submit/Launch/Read4/Write4 benchmarks and
# examples/devglobal's BenchmarkLaunch (the generated Enqueue) on
# DGEN_BACKEND=cuda and opencl; rawcl and rawcu Hotspot at 512² with
# pyramid 1; `stencil -alloc swap,tagged,raw` at the same size on both
# backends (swap: the generated Enqueue with the same kernel and arguments
# as the raw C Hotspot loops, two buffers swapped),
# and on CUDA once more with every command traced with device times
# (DGEN_TRACE=perfetto:…,device=all). Every figure is a JSON line in
# $OUT/bench-cuda.jsonl; at the end it prints the median (min–max) of each
# and the ratios the issue asks for, of the medians and as the median of the
# per-round ratios.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
ROUNDS=${ROUNDS:-15}
N=${N:-20000}
SIZE=${SIZE:-512}
ITERS=${ITERS:-4000}
dir=${OUT:-.}
mkdir -p "$dir"
out="$dir/bench-cuda.jsonl"
: > "$out"
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
export DGEN_DEVICE=gpu
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# gobench ROUND PREFIX: Go benchmark lines on stdin as JSON lines.
gobench() {
	awk -v round="$1" -v prefix="$2" '/^Benchmark/ && $4 == "ns/op" {
		name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
		printf "{\"bench\":\"%s%s\",\"round\":%d,\"ns_per_op\":%s}\n", prefix, name, round, $3 }'
}
# raw ROUND PREFIX: rawcl/rawcu lines with the round and a prefix.
raw() { sed "s/^{\"bench\":\"/{\"round\":$1,\"bench\":\"$2 /"; }
# sten ROUND TAG: stencil lines with the round and a tag.
sten() { sed "s/^{/{\"round\":$1,\"tag\":\"$2\",/"; }

r=0
while [ "$r" -lt "$ROUNDS" ]; do
	./rawcl launch "$N" 1 2>/dev/null | raw "$r" rawcl >> "$out"
	./rawcu launch "$N" 1 | raw "$r" rawcu >> "$out"
	for b in cuda opencl; do
		DGEN_BACKEND=$b ./rt.test -test.run '^$' -test.bench '^Benchmark(Submit|Launch|Read4|Write4)$' -test.benchtime "${N}x" -test.count 1 |
			gobench "$r" "rt-$b " >> "$out"
		DGEN_BACKEND=$b ./devglobal.test -test.run '^$' -test.bench '^BenchmarkLaunch$' -test.benchtime "${N}x" -test.count 1 |
			gobench "$r" "devglobal-$b " >> "$out"
	done
	./rawcl hotspot hotspot.cl "$SIZE" "$ITERS" 1 1 2>/dev/null | raw "$r" rawcl >> "$out"
	./rawcu hotspot hotspot.cl "$SIZE" "$ITERS" 1 1 | raw "$r" rawcu >> "$out"
	for b in cuda opencl; do
		DGEN_BACKEND=$b ./stencil -json -alloc swap,tagged,raw -verify=false -size "$SIZE" -iters "$ITERS" -pyramid 1 | sten "$r" "$b" >> "$out"
	done
	DGEN_BACKEND=cuda DGEN_TRACE="perfetto:$tmp/t.json,device=all" ./stencil -json -alloc tagged -verify=false -size "$SIZE" -iters "$ITERS" -pyramid 1 |
		sten "$r" cuda-traced >> "$out"
	r=$((r + 1))
	echo "bench-cuda: round $r of $ROUNDS done" >&2
done

python3 - "$out" <<'PY'
import json, statistics, sys
from collections import defaultdict

fig = defaultdict(dict)  # figure -> {round: ns}
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if "mode" in r:  # a stencil record: µs per step
        fig["stencil-%s %s %d/%d" % (r["tag"], r["mode"], r["size"], r["pyramid"])][r["round"]] = r["us_per_iter"] * 1000
    else:
        fig[r["bench"]][r["round"]] = r["ns_per_op"]

print("%-44s %3s %28s" % ("figure (ns per op or per step)", "n", "median (min–max)"))
for name in sorted(fig):
    v = list(fig[name].values())
    print("%-44s %3d %10.0f (%.0f–%.0f)" % (name, len(v), statistics.median(v), min(v), max(v)))

pairs = [
    ("devglobal-cuda Launch/enqueue", "rawcu submit", "≤ 1.05"),
    ("devglobal-cuda Launch/enqueue", "rawcl submit", "≤ 0.7"),
    ("devglobal-cuda Launch/enqueue", "devglobal-opencl Launch/enqueue", ""),
    ("rt-cuda Submit", "rawcu submit", ""),
    ("rt-cuda Launch", "rawcu launch_event", ""),
    ("rt-cuda Read4", "rawcu read4", ""),
    ("rt-cuda Write4", "rawcu write4", ""),
    ("rt-opencl Submit", "rawcl submit", ""),
    ("stencil-opencl swap %s/1", "rawcl hotspot_%s_1", "≤ 1.03 (generated Enqueue, same kernel and arguments)"),
    ("stencil-cuda swap %s/1", "rawcu hotspot_%s_1", "≤ 1.05 (generated Enqueue, same kernel and arguments)"),
    ("stencil-opencl tagged %s/1", "rawcl hotspot_%s_1", "≤ 1.05"),
    ("stencil-cuda tagged %s/1", "rawcl hotspot_%s_1", "≤ 0.65"),
    ("stencil-cuda tagged %s/1", "rawcu hotspot_%s_1", ""),
    ("stencil-cuda raw %s/1", "rawcu hotspot_%s_1", ""),
    ("stencil-cuda-traced tagged %s/1", "stencil-cuda tagged %s/1", "≤ 1.60"),
    ("rawcu launch_timed", "rawcu submit", ""),
    ("rawcu hotspot_traced_%s_1", "rawcu hotspot_%s_1", "floor of ≤ 1.60"),
    ("stencil-cuda-traced tagged %s/1", "rawcu hotspot_traced_%s_1", ""),
]
size = next((n.split()[-1].split("/")[0] for n in fig if n.startswith("stencil-cuda tagged")), "512")
print()
print("%-34s %-32s %7s %7s  %-13s %s" % ("dgen", "against", "ratio", "paired", "paired range", "goal"))
for a, b, goal in pairs:
    a, b = a.replace("%s", size), b.replace("%s", size)
    if a not in fig or b not in fig:
        continue
    ratio = statistics.median(fig[a].values()) / statistics.median(fig[b].values())
    per = [fig[a][k] / fig[b][k] for k in fig[a] if k in fig[b]]
    print("%-34s %-32s %7.3f %7.3f  %.3f–%.3f  %s" % (a, b, ratio, statistics.median(per), min(per), max(per), goal))
PY
