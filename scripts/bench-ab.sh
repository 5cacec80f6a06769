#!/bin/sh
# Two builds of dgen side by side on an NVIDIA GPU, against the raw C
# yardsticks rawcu and rawcl: for each build DIR (a folder holding its
# stencil, rt.test and devglobal.test), on both backends, Hotspot 512²/1
# through the generated Enqueue (stencil -alloc swap), rt/raw's calls (raw)
# and the tagged allocation site (tagged), rt's Submit/Read4/Write4 and
# devglobal's GlobalRW. Rounds alternate the builds' order (ABBA) so that
# drift hits both alike. Run it in a folder that also holds rawcu, rawcl
# and hotspot.cl (make gpu-bundle builds them):
#
#	ROUNDS=15 sh bench-ab.sh old new
#
# Each figure here comes from a process of its own, and on NVIDIA's drivers
# a process runs fast or slow as a whole (docs/BENCHMARKS.md, "Reading it"):
# ratios to rawcu and rawcl vary more between hosts and runs than rt's
# overhead. bench-inproc.sh times rt against C in one process; use it for
# the ratios, and this script for old against new.
#
# Every figure is a JSON line in $OUT/ab.jsonl; the end prints medians
# (min–max) and the ratios, of the medians and as the median of the
# per-round ratios.
set -u
cd "$(dirname "$0")"
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
export DGEN_DEVICE=gpu
O=${OUT:-.}
mkdir -p "$O"
IT=${IT:-20000}
R=${ROUNDS:-15}
j=$O/ab.jsonl
: > "$j"
tag() { sed "s/^{/{\"round\":$1,\"tag\":\"$2\",/"; }
gob() {
	awk -v r="$1" -v t="$2" '/^Benchmark/ && $4 == "ns/op" { n = $1; sub(/^Benchmark/, "", n); sub(/-[0-9]+$/, "", n)
		printf "{\"round\":%d,\"tag\":\"%s\",\"bench\":\"%s\",\"ns_per_op\":%s}\n", r, t, n, $3 }'
}
one() {
	for b in cuda opencl; do
		DGEN_BACKEND=$b ./"$1"/stencil -json -alloc swap,raw,tagged -verify=false -size 512 -iters "$IT" -pyramid 1 | tag "$2" "$1-$b" >> "$j"
		DGEN_BACKEND=$b ./"$1"/rt.test -test.run '^$' -test.bench '^Benchmark(Submit|Read4|Write4)$' -test.benchtime 20000x | gob "$2" "$1-$b" >> "$j"
		DGEN_BACKEND=$b ./"$1"/devglobal.test -test.run '^$' -test.bench '^BenchmarkGlobalRW$' -test.benchtime 20000x | gob "$2" "$1-$b" >> "$j"
	done
}
rev=
for v in "$@"; do rev="$v $rev"; done
r=0
while [ "$r" -lt "$R" ]; do
	./rawcu hotspot hotspot.cl 512 "$IT" 1 1 | tag $r rawcu >> "$j"
	./rawcl hotspot hotspot.cl 512 "$IT" 1 1 2>/dev/null | tag $r rawcl >> "$j"
	./rawcu launch 20000 1 | tag $r rawcu >> "$j"
	./rawcl launch 20000 1 2>/dev/null | tag $r rawcl >> "$j"
	order=$*
	[ $((r % 2)) = 1 ] && order=$rev
	for v in $order; do one "$v" $r; done
	r=$((r + 1))
	echo "bench-ab: round $r of $R" >&2
done
python3 - "$j" "$@" <<'PY'
import json, statistics as st, sys
from collections import defaultdict
fig = defaultdict(dict)
for line in open(sys.argv[1]):
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if "mode" in r:
        name, v = "%s %s" % (r["tag"], r["mode"]), r["us_per_iter"] * 1000
    else:
        name, v = "%s %s" % (r["tag"], r["bench"]), r["ns_per_op"]
    fig[name][r["round"]] = v
def med(n):
    return st.median(fig[n].values())
for n in sorted(fig):
    v = list(fig[n].values())
    print("%-46s %7.0f (%5.0f–%5.0f) n=%d" % (n, med(n), min(v), max(v), len(v)))
def pair(a, b):
    if a in fig and b in fig:
        per = [fig[a][k] / fig[b][k] for k in fig[a] if k in fig[b]]
        print("%-36s / %-30s %6.3f  paired %6.3f (%.3f–%.3f)" % (a, b, med(a) / med(b), st.median(per), min(per), max(per)))
def pairsum(a, b, c):  # a / (b + c), per round
    if a in fig and b in fig and c in fig:
        per = [fig[a][k] / (fig[b][k] + fig[c][k]) for k in fig[a] if k in fig[b] and k in fig[c]]
        print("%-36s / %-30s %6.3f  paired %6.3f (%.3f–%.3f)" % (a, b + " + write4", med(a) / (med(b) + med(c)), st.median(per), min(per), max(per)))
print()
for v in sys.argv[2:]:
    for m in ("swap", "raw", "tagged"):
        pair("%s-cuda %s" % (v, m), "rawcu hotspot_512_1")
        pair("%s-cuda %s" % (v, m), "rawcl hotspot_512_1")
        pair("%s-opencl %s" % (v, m), "rawcl hotspot_512_1")
    for b, raw in (("cuda", "rawcu"), ("opencl", "rawcl")):
        pair("%s-%s Submit" % (v, b), "%s submit" % raw)
        pair("%s-%s Read4" % (v, b), "%s read4" % raw)
        pair("%s-%s Write4" % (v, b), "%s write4" % raw)
        pairsum("%s-%s GlobalRW/global" % (v, b), "%s read4" % raw, "%s write4" % raw)
if len(sys.argv) > 3:
    a, b = sys.argv[3], sys.argv[2]
    for m in ("swap", "raw", "tagged"):
        for be in ("cuda", "opencl"):
            pair("%s-%s %s" % (a, be, m), "%s-%s %s" % (b, be, m))
PY
