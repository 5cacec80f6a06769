#!/bin/sh
# rt against raw C in one process (bench/inproc), on an NVIDIA GPU: P
# processes of `inproc both` (C, floor and rt on OpenCL, rt on CUDA too)
# and of `inproc cuda`, Hotspot 512²/1 and 4-byte device-global writes and
# reads, each in ROUNDS alternating blocks of STEPS. Run it in a folder
# that holds inproc and hotspot.cl (make gpu-bundle puts both there):
#
#	P=5 sh bench-inproc.sh
#
# With folders as arguments, each holding an inproc of its own build, it
# runs them in turn (ABBA), and the end also prints, per build, the median
# over its processes: two builds compared by their ratios to the same C
# loops, each ratio taken inside one process.
#
#	P=4 sh bench-inproc.sh old new
#
# BACKENDS (default "both cuda") picks the processes' kinds,
# INPROC_FAMILIES (inproc's own variable) its families, and TASKSET a CPU
# list (taskset -c) to pin every process to. Every block is a
# JSON line in $OUT/inproc.jsonl; the end prints, per process, the median
# of the per-round ratios of every way to C (to plain in the spec
# families, which have no C way).
set -u
cd "$(dirname "$0")"
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
export DGEN_DEVICE=${DGEN_DEVICE:-gpu}
O=${OUT:-.}
mkdir -p "$O"
j=$O/inproc.jsonl
: > "$j"
[ $# -gt 0 ] || set -- .
rev=
for d in "$@"; do rev="$d $rev"; done
i=0
while [ "$i" -lt "${P:-5}" ]; do
	i=$((i + 1))
	order=$*
	[ $((i % 2)) = 0 ] && order=$rev
	for d in $order; do
		for b in ${BACKENDS:-both cuda}; do
			${TASKSET:+taskset -c "$TASKSET"} "$d"/inproc $b hotspot.cl "${SIZE:-512}" "${STEPS:-2000}" "${ROUNDS:-30}" 2>/dev/null |
				sed -n "s|^{|{\"build\":\"$d\",\"process\":\"$b $i\",|p" >> "$j"
		done
	done
done
python3 - "$j" <<'PY'
import json, statistics as st, sys
from collections import defaultdict
t = defaultdict(dict)  # (build, process, family, way) -> round -> ns
for line in open(sys.argv[1]):
    r = json.loads(line)
    t[(r["build"], r["process"], r["family"], r["way"])][r["round"]] = r["ns_per_step"]
per = defaultdict(list)  # (build, kind, family, way) -> per-process medians
for (d, p, f, w), v in sorted(t.items()):
    ref = "C" if (d, p, f, "C") in t else "plain"
    if w == ref:
        continue
    c = t[(d, p, f, ref)]
    ratio = [v[k] / c[k] for k in v if k in c]
    per[(d, p.split()[0], f, w, ref)].append(st.median(ratio))
    print("%-6s %-8s %-9s %-12s / %s: %.3f (%.3f-%.3f)  %s %.0f ns" % (d, p, f, w, ref, st.median(ratio), min(ratio), max(ratio), ref, st.median(c.values())))
print()
for (d, k, f, w, ref), m in sorted(per.items()):
    print("%-6s %-5s %-9s %-12s / %s: median %.3f over %d processes (%.3f-%.3f)" % (d, k, f, w, ref, st.median(m), len(m), min(m), max(m)))
PY
