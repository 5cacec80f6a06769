#!/bin/sh
# Launch, transfer and Hotspot figures of dgen against the raw C yardstick
# rawcl, on the GPU: run it inside a `make gpu-bundle` folder (no Go
# needed; python3 prints the summary):
#
#	cd gpu-bundle && sh bench-gpu.sh
#
# ROUNDS rounds (default 15) alternate, within each round,
#  (a) `rawcl launch` against rt's BenchmarkSubmit, BenchmarkLaunch,
#      BenchmarkRead4 and BenchmarkWrite4 (rt.test) and examples/devglobal's
#      BenchmarkLaunch (the generated Enqueue without an event, the same
#      launch on rt's lowest calls, and both with an event), and
#  (b) `rawcl hotspot` against `stencil -alloc tagged,raw` at every SIZES
#      edge (default 512 1024 4096) with pyramid 1,
# so that drift and a noisy neighbour hit both sides alike. Every figure is
# a JSON line in $OUT/bench-gpu.jsonl ($OUT if set, else .); at the end it
# prints the median (min–max) of each and the ratios of dgen to raw, both
# of the medians and as the median of the per-round ratios. N launches per
# figure (default 20000) and ITERS_<size> steps per Hotspot run keep a
# round under ~25 s on an H100.
#
# Each figure comes from a process of its own, and on NVIDIA's drivers a
# process runs fast or slow as a whole (docs/BENCHMARKS.md, "Reading it"):
# its ratios can be off by more than rt's overhead.
# bench-inproc.sh times rt against the same C loops in one process.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
ROUNDS=${ROUNDS:-15}
N=${N:-20000}
SIZES=${SIZES:-"512 1024 4096"}
ITERS_512=${ITERS_512:-4000}
ITERS_1024=${ITERS_1024:-2000}
ITERS_4096=${ITERS_4096:-300}
dir=${OUT:-.}
mkdir -p "$dir"
out="$dir/bench-gpu.jsonl"
: > "$out"

# Make NVIDIA's OpenCL visible to the ICD loader, as run.sh does.
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
export DGEN_DEVICE=${DGEN_DEVICE:-gpu}
case $DGEN_DEVICE in cpu) export RAWCL_DEVICE=cpu ;; esac

# gobench ROUND PREFIX: Go benchmark lines on stdin as JSON lines.
gobench() {
	awk -v round="$1" -v prefix="$2" '/^Benchmark/ && $4 == "ns/op" {
		name = $1; sub(/^Benchmark/, "", name); sub(/-[0-9]+$/, "", name)
		printf "{\"bench\":\"%s%s\",\"round\":%d,\"ns_per_op\":%s}\n", prefix, name, round, $3 }'
}

# tagged ROUND: stdin's JSON lines with the round added.
tagged() { sed "s/^{/{\"round\":$1,/"; }

iters() { eval "echo \${ITERS_$1:-1000}"; }

r=0
while [ "$r" -lt "$ROUNDS" ]; do
	./rawcl launch "$N" 1 | sed 's/"bench":"/"bench":"rawcl /' | tagged "$r" >> "$out"
	./rt.test -test.run '^$' -test.bench '^Benchmark(Submit|Launch|Read4|Write4)$' -test.benchtime "${N}x" -test.count 1 |
		gobench "$r" "rt " >> "$out"
	./examples_devglobal.test -test.run '^$' -test.bench '^BenchmarkLaunch$' -test.benchtime "${N}x" -test.count 1 |
		gobench "$r" "devglobal " >> "$out"
	for s in $SIZES; do
		it=$(iters "$s")
		./rawcl hotspot hotspot.cl "$s" "$it" 1 1 | sed 's/"bench":"/"bench":"rawcl /' | tagged "$r" >> "$out"
		./stencil -json -alloc tagged,raw -verify=false -size "$s" -iters "$it" -pyramid 1 | tagged "$r" >> "$out"
	done
	r=$((r + 1))
	echo "bench-gpu: round $r of $ROUNDS done" >&2
done

python3 - "$out" <<'EOF'
import json, statistics, sys
from collections import defaultdict

# figure name -> {round: ns}
fig = defaultdict(dict)
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if "mode" in r:  # a stencil record: µs per step
        name = "stencil %s %d/%d" % (r["mode"], r["size"], r["pyramid"])
        fig[name][r["round"]] = r["us_per_iter"] * 1000
    elif r["bench"].startswith("rawcl hotspot_"):
        _, size, pyr = r["bench"].split("_")
        fig["rawcl hotspot %s/%s" % (size, pyr)][r["round"]] = r["ns_per_op"]
    else:
        fig[r["bench"]][r["round"]] = r["ns_per_op"]

def span(v):
    return "%10.0f (%.0f–%.0f)" % (statistics.median(v), min(v), max(v))

print("%-36s %3s %28s" % ("figure (ns per op or per step)", "n", "median (min–max)"))
for name in sorted(fig):
    v = list(fig[name].values())
    print("%-36s %3d %28s" % (name, len(v), span(v)))

pairs = [
    ("rt Submit", "rawcl submit"),
    ("rt Launch", "rawcl launch_event"),
    ("rt Read4", "rawcl read4"),
    ("rt Write4", "rawcl write4"),
    ("devglobal Launch/enqueue", "devglobal Launch/submit"),
    ("devglobal Launch/enqueue", "rawcl submit"),
    ("devglobal Launch/enqueue-event", "devglobal Launch/launch"),
]
for name in sorted(fig):
    if name.startswith("rawcl hotspot "):
        cfg = name.split()[-1]
        for mode in ("tagged", "raw"):
            pairs.append(("stencil %s %s" % (mode, cfg), name))
print()
print("%-32s %-26s %8s %8s  %s" % ("dgen", "against", "ratio", "paired", "paired min–max"))
for a, b in pairs:
    if a not in fig or b not in fig:
        continue
    ratio = statistics.median(fig[a].values()) / statistics.median(fig[b].values())
    per = [fig[a][k] / fig[b][k] for k in fig[a] if k in fig[b]]
    print("%-32s %-26s %8.3f %8.3f  %.3f–%.3f" % (a, b, ratio, statistics.median(per), min(per), max(per)))
EOF
