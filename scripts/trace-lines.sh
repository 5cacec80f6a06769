#!/bin/sh
# Instructions and L1 data cache lines per Hotspot tagged step (allocate
# from a tagged site, generated Enqueue of a 13-argument kernel, free) on
# rt's null backend, untraced and traced to a perfetto file, counted by
# callgrind: without eviction, and with L1 evicted before each step (a 32
# KiB 8-way L1 with 64-byte lines), as the driver's work evicts it on a
# GPU. Deterministic for a build, where timings on a shared machine are
# not. Per step: the difference of runs of 5,000 and 25,000 steps. Needs
# valgrind. The harness (scripts/tracelines/steps_test.go.txt) and a 4 GiB
# perfetto mapping (valgrind refuses the 64 GiB one) are laid over the tree
# with go test -overlay; the tree is not changed.
#
#	sh scripts/trace-lines.sh [TREE]   # TREE: another checkout, default this one
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
tree=$(cd "${1:-$here}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/appendMap = 64 << 30/appendMap = 4 << 30/' "$tree/rt/trace/binlog_unix.go" >"$tmp/binlog_unix.go"
grep -q 'appendMap = 4 << 30' "$tmp/binlog_unix.go"
cp "$here/scripts/tracelines/steps_test.go.txt" "$tmp/steps_test.go"
printf '{"Replace":{"%s":"%s","%s":"%s"}}\n' \
	"$tree/rt/trace/binlog_unix.go" "$tmp/binlog_unix.go" \
	"$tree/rt/zz_trace_lines_test.go" "$tmp/steps_test.go" >"$tmp/overlay.json"
(cd "$tree" && go test -c -overlay "$tmp/overlay.json" -o "$tmp/rt.test" ./rt)
# run N TRACE POLLUTE: instructions and L1 data misses outside the eviction.
run() {
	(cd "$tmp" && GOGC=off GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off \
		TRACE_LINES_N=$1 TRACE_LINES_TRACE=$2 TRACE_LINES_POLLUTE=$3 \
		valgrind --tool=callgrind --cache-sim=yes --I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64 \
		--callgrind-out-file="$tmp/cg" ./rt.test -test.run '^TestTraceLinesSteps$' >/dev/null 2>&1)
	callgrind_annotate --auto=no --threshold=100 --show-percs=no --show=Ir,D1mr,D1mw "$tmp/cg" |
		awk '/file:function/ {f=1; next} f && NF>=4 && !/traceLinesPollute/ {
			for (i=1; i<=3; i++) { x=$i; gsub(",", "", x); if (x==".") x=0; s[i]+=x } }
			END { printf "%d %d\n", s[1], s[2]+s[3] }'
}
for pol in "" 1; do
	for tr in "" 1; do
		a=$(run 5000 "$tr" "$pol"); z=$(run 25000 "$tr" "$pol")
		echo "$a $z" | awk -v t="${tr:+traced}" -v p="${pol:+L1 evicted}" '{
			printf "%-8s %-11s %6.0f instructions  %6.1f L1 data lines per step\n", (t==""?"untraced":t), (p==""?"warm":p), ($3-$1)/20000, ($4-$2)/20000 }'
	done
done
