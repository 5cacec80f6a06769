#!/bin/sh
# Measures what tracing costs on Hotspot (examples/stencil, -alloc tagged):
# untraced, the host task graph only (DGEN_TRACE=perfetto:…), device times
# sampled one command in 16 per node (…,device=16) and device times for
# every command (…,device=all). The four settings alternate within each
# repetition, so that drift hits them alike; it prints the median and the
# range of µs per step of each, and the overhead against untraced.
#
# BenchmarkTraceCost (examples/stencil) measures the same settings side by side in one
# process, which drifts less than separate runs do:
#   DGEN_DEVICE=gpu ./stencil.test -test.run "^$" -test.bench TraceCost -test.benchtime 30x
#
# Run it where a stencil binary is: STENCIL names it (default ./stencil, as
# in a gpu-bundle, where run.sh makes NVIDIA's OpenCL visible first:
# `./run.sh ./bench-trace.sh`). SIZES, PYRAMID, ITERS and REPS override the
# defaults; OUT keeps every run's JSON line (default bench-trace.jsonl).
set -eu
STENCIL=${STENCIL:-./stencil}
SIZES=${SIZES:-"512 1024"}
PYRAMID=${PYRAMID:-1}
ITERS=${ITERS:-2000}
REPS=${REPS:-15}
OUT=${OUT:-bench-trace.jsonl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$OUT"
for s in $SIZES; do
	i=0
	while [ "$i" -lt "$REPS" ]; do
		for t in off host device=16 device=all; do
			case $t in
			off) spec= ;;
			host) spec="perfetto:$tmp/t.json" ;;
			*) spec="perfetto:$tmp/t.json,$t" ;;
			esac
			DGEN_TRACE=$spec "$STENCIL" -json -alloc tagged -verify=false -size "$s" -iters "$ITERS" -pyramid "$PYRAMID" |
				sed "s/^{/{\"trace\":\"$t\",/" >> "$OUT"
		done
		i=$((i + 1))
	done
done
# Median and range per (size, trace), and the overhead of the medians.
sed 's/.*"trace":"\([^"]*\)".*"size":\([0-9]*\).*"us_per_iter":\([0-9.e+-]*\).*/\2 \1 \3/' "$OUT" |
	sort -k1,1n -k2,2 -k3,3g |
	awk '
	function flush() {
		if (n == 0) return
		med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		if (key2 == "off") base[key1] = med
		line[++nl] = sprintf("%s %s %.3f %.3f %.3f %d", key1, key2, med, v[1], v[n], n)
		n = 0
	}
	{ if ($1 != key1 || $2 != key2) { flush(); key1 = $1; key2 = $2 } v[++n] = $3 }
	END {
		flush()
		printf "%-6s %-11s %12s %21s %5s %9s\n", "size", "trace", "median µs", "min–max", "runs", "overhead"
		for (i = 1; i <= nl; i++) {
			split(line[i], f, " ")
			ov = (f[1] in base && base[f[1]] > 0) ? sprintf("%+.1f%%", 100 * (f[3] / base[f[1]] - 1)) : "-"
			printf "%-6s %-11s %12s %10s–%-10s %5s %9s\n", f[1], f[2], f[3], f[4], f[5], f[6], ov
		}
	}'
