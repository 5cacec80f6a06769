#!/bin/sh
# Issue 45's GPU figures in one run, in a `make gpu-bundle` folder on an
# NVIDIA GPU (CuPy on python3 for steps 4 and 5), in about 4 minutes:
#
#   1. bench/scaling's launch loop on rt/cuda, G = 1, 2, 4, 8, 16: C, the
#      cgo floor, the generated Enqueue and rt/raw's Submit, ROUNDS
#      alternating rounds, ratios to C and to the floor; and Go heap
#      allocations per launch;
#   2. the same on NVIDIA's OpenCL;
#   3. bench/inproc's Hotspot 512² (swap, tagged, graph) against raw CUDA C,
#      P processes;
#   4. Hotspot through a graph (and swapped) against CuPy 14's, PAIRS
#      alternating processes each, time per step;
#   5. the device time of each kernel both ways, from CUPTI's records
#      (libkerneltime.so, loaded through CUDA_INJECTION64_PATH): the
#      kernel's duration, the idle gap to the next kernel, registers;
#   6. NVIDIA OpenCL's compile options for rt/cuda's PTX
#      (DGEN_PROGRAM_COMPILE_OPTIONS): the graph's time per step, the
#      kernel's device time and registers, and whether the result is the
#      baseline's bit for bit (stencil's digest at a fixed seed);
#   7. PoCL's launch loop (scaling -backend cpu), against the same loop
#      before the change (compare with make bench-scaling's figures).
#
#	sh launch-gpu.sh [STEPS...]     # default: 1 2 3 4 5 6 7
#
# Every record is a JSON line under $OUT (default: the folder), the end
# prints the summary. ROUNDS (7), P (4), PAIRS (2), SCALING_G
# ("1,2,4,8,16") and OPTIONS (a list of option sets, separated by ";")
# change the amounts.
set -u
cd "$(dirname "$0")"
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
export DGEN_DEVICE=${DGEN_DEVICE:-gpu}
O=${OUT:-.}
mkdir -p "$O"
ROUNDS=${ROUNDS:-7}
P=${P:-4}
PAIRS=${PAIRS:-2}
G=${SCALING_G:-1,2,4,8,16}
KT=$PWD/libkerneltime.so
OPTIONS=${OPTIONS:-"none;-cl-mad-enable;-cl-denorms-are-zero;-cl-no-signed-zeros;-cl-finite-math-only;-cl-unsafe-math-optimizations;-cl-fast-relaxed-math;-cl-opt-disable;-cl-nv-opt-level=3;-cl-mad-enable -cl-denorms-are-zero"}
[ $# -gt 0 ] || set -- 1 2 3 4 5 6 7
steps=" $* "
t0=$(date +%s)
stamp() { echo "# launch-gpu: $1 at $(($(date +%s) - t0)) s" >&2; }

# scaling BACKEND FILE: the launch loop, JSON lines and the table.
scaling() {
	./scaling -backend "$1" -g "$3" -only launch -rounds "$ROUNDS" > "$O/$2.txt" 2> "$O/$2.err" || echo "scaling $1 failed: $(tail -1 "$O/$2.err")" >&2
}
case $steps in *" 1 "*) stamp "1 scaling cuda"; scaling cuda scaling-cuda "$G" ;; esac
case $steps in *" 2 "*) stamp "2 scaling opencl"; scaling opencl scaling-opencl "$G" ;; esac
case $steps in *" 3 "*)
	stamp "3 inproc"
	: > "$O/inproc.jsonl"
	i=0
	while [ "$i" -lt "$P" ]; do
		i=$((i + 1))
		./inproc cuda hotspot.cl 512 2000 15 2>/dev/null | sed -n "s|^{|{\"process\":$i,|p" >> "$O/inproc.jsonl"
	done ;;
esac
case $steps in *" 4 "*)
	stamp "4 stencil against CuPy"
	: > "$O/cupy.jsonl"
	i=0
	while [ "$i" -lt "$PAIRS" ]; do
		i=$((i + 1))
		DGEN_BACKEND=cuda ./stencil -json -graph -alloc swap,tagged -size 512 -iters 2000 -reps 3 -verify=false -seed 1 |
			sed "s/^{/{\"src\":\"rt\",\"process\":$i,/" >> "$O/cupy.jsonl"
		python3 hotspot.py -alloc graph,swap -size 512 -iters 2000 -reps 3 -verify 0 |
			sed "s/^{/{\"src\":\"cupy\",\"process\":$i,/" >> "$O/cupy.jsonl"
		DGEN_BACKEND=cuda ./stencil -json -alloc swap,tagged -size 512 -iters 2000 -reps 3 -verify=false -seed 1 |
			sed "s/^{/{\"src\":\"rt\",\"process\":$i,/" >> "$O/cupy.jsonl"
	done ;;
esac
# kerneltime SRC MODE CMD...: CMD under libkerneltime, its records tagged.
kerneltime() {
	src=$1 mode=$2
	shift 2
	CUDA_INJECTION64_PATH=$KT KERNELTIME_SKIP=200 "$@" 2>&1 >/dev/null | sed -n "s/^{\"kerneltime\"/{\"src\":\"$src\",\"mode\":\"$mode\",\"kerneltime\"/p" >> "$O/kerneltime.jsonl"
}
case $steps in *" 5 "*)
	stamp "5 device time per kernel"
	: > "$O/kerneltime.jsonl"
	kerneltime rt graph env DGEN_BACKEND=cuda ./stencil -json -graph -alloc swap -size 512 -iters 2000 -reps 2 -verify=false -seed 1
	kerneltime cupy graph python3 hotspot.py -alloc graph -size 512 -iters 2000 -reps 2 -verify 0
	kerneltime rt swap env DGEN_BACKEND=cuda ./stencil -json -alloc swap -size 512 -iters 2000 -reps 2 -verify=false -seed 1
	kerneltime cupy swap python3 hotspot.py -alloc swap -size 512 -iters 2000 -reps 2 -verify 0 ;;
esac
case $steps in *" 6 "*)
	stamp "6 compile options"
	: > "$O/options.jsonl"
	echo "$OPTIONS" | tr ';' '\n' | while read -r opt; do
		o=$opt
		[ "$o" = none ] && o=
		line=$(CUDA_INJECTION64_PATH=$KT KERNELTIME_SKIP=200 DGEN_PROGRAM_COMPILE_OPTIONS="$o" DGEN_BACKEND=cuda \
			./stencil -json -graph -alloc swap -size 512 -iters 2000 -reps 2 -verify=false -seed 1 2>"$O/options.err" | tail -1)
		kt=$(grep '^{"kerneltime":"hotspot"' "$O/options.err" | tail -1)
		[ -n "$line" ] || line='{"failed":true}'
		[ -n "$kt" ] || kt='{}'
		printf '{"options":"%s","run":%s,"kernel":%s}\n' "$opt" "$line" "$kt" >> "$O/options.jsonl"
	done ;;
esac
case $steps in *" 7 "*) stamp "7 scaling PoCL"; scaling cpu scaling-pocl 1,2,4 ;; esac
stamp "summary"

python3 - "$O" "$steps" <<'PY'
import json, os, statistics as st, sys
from collections import defaultdict
o, steps = sys.argv[1], sys.argv[2].split()
def lines(name):
    p = os.path.join(o, name)
    if not os.path.exists(p):
        return []
    out = []
    for l in open(p):
        l = l.strip()
        if l.startswith("{"):
            try:
                out.append(json.loads(l))
            except ValueError:
                pass
    return out
def mm(v):
    return "%.3f (%.3f-%.3f)" % (st.median(v), min(v), max(v)) if v else "-"
for name, title in [("scaling-cuda", "1. launch loop, rt/cuda"), ("scaling-opencl", "2. launch loop, NVIDIA OpenCL"), ("scaling-pocl", "7. launch loop, PoCL")]:
    p = os.path.join(o, name + ".txt")
    if not os.path.exists(p):
        continue
    print("\n## " + title + " (goal: rt and raw >= 0.95 of floor on the GPU)\n")
    blocks = [b for b in lines(name + ".txt") if b.get("workload") == "launch"]
    for l in open(p):
        if l.startswith("# Go heap"):
            print(l.strip())
    by = defaultdict(dict)
    for b in blocks:
        by[(b["g"], b["way"])][b["round"]] = b["per_sec"]
    print("| G | C per s | floor / C | rt / C | raw / C | rt / floor | raw / floor |")
    print("|---|---|---|---|---|---|---|")
    for g in sorted({k[0] for k in by}):
        c, f = by.get((g, "C"), {}), by.get((g, "floor"), {})
        def ratio(a, b):
            return [a[r] / b[r] for r in a if r in b]
        print("| %d | %.0f | %s | %s | %s | %s | %s |" % (g, st.median(c.values()) if c else 0, mm(ratio(f, c)),
              mm(ratio(by.get((g, "rt"), {}), c)), mm(ratio(by.get((g, "raw"), {}), c)),
              mm(ratio(by.get((g, "rt"), {}), f)), mm(ratio(by.get((g, "raw"), {}), f))))
ip = lines("inproc.jsonl")
if ip:
    print("\n## 3. Hotspot 512² against raw CUDA C, in one process (goal: swap, tagged <= 1.02; graph <= 0.93)\n")
    t = defaultdict(dict)
    for r in ip:
        t[(r["process"], r["family"], r["way"])][r["round"]] = r["ns_per_step"]
    per = defaultdict(list)
    for (p, f, w), v in t.items():
        c = t.get((p, f, "C"), {})
        if w != "C" and c:
            per[(f, w)].append(st.median([v[k] / c[k] for k in v if k in c]))
    for (f, w), m in sorted(per.items()):
        print("%-8s %-12s / C: median over %d processes %s" % (f, w, len(m), mm(m)))
cu = lines("cupy.jsonl")
if cu:
    print("\n## 4. Hotspot 512², 2000 steps, µs a step (goal: rt's graph <= CuPy's graph)\n")
    by = defaultdict(list)
    rec = []
    for r in cu:
        key = ("rt " if r["src"] == "rt" else "") + r["mode"] + (" graph" if r.get("graph") else "")
        by[key].append(r["us_per_iter"])
        if r.get("record_us"):
            rec.append(r["record_us"])
    for k, v in sorted(by.items()):
        print("%-22s %s over %d runs" % (k, mm(v), len(v)))
    if rec:
        print("rt's graph recorded and launched once before the timer: %s µs" % mm(rec))
kt = lines("kerneltime.jsonl")
if kt:
    print("\n## 5. device time per kernel (CUPTI), ns (median; p10-p90), gap to the next kernel, period\n")
    for r in kt:
        print("%-5s %-6s %-14s n=%-5d %6d (%d-%d)  gap %5d  period %6d  regs %d smem %d local %d grid %s block %s" % (
            r["src"], r["mode"], r["kerneltime"][:14], r["count"], r["ns_median"], r["ns_p10"], r["ns_p90"], r["gap_ns_median"],
            r["period_ns_median"], r["regs"], r["static_smem"], r["local_per_thread"], r["grid"], r["block"]))
op = lines("options.jsonl")
if op:
    print("\n## 6. NVIDIA OpenCL's options for rt/cuda's PTX (graph, swap): µs a step, kernel ns, regs, same bits as none\n")
    base = next((r["run"].get("digest") for r in op if r["options"] == "none"), None)
    for r in op:
        run, k = r["run"], r["kernel"]
        if run.get("failed"):
            print("%-40s refused or failed" % r["options"])
            continue
        print("%-40s %6.3f µs  kernel %6s ns  regs %3s  %s" % (r["options"], run["us_per_iter"], k.get("ns_median", "-"), k.get("regs", "-"),
              "bit-identical" if run.get("digest") == base else "DIFFERENT (digest %s)" % run.get("digest")))
PY
