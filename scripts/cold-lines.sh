#!/bin/sh
# Cache lines that rt's launch path touches, per launch, after L1 was
# evicted (BenchmarkHostPathCold, rt/hostpath_test.go), counted by
# callgrind's cache simulation: a 32 KiB 8-way L1 data cache with 64-byte
# lines. Also instructions per launch. Deterministic for a build, where
# timings on a shared machine are not. Needs valgrind.
#
#	sh scripts/cold-lines.sh [enqueue|tagged ...]
set -eu
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go test -c -o "$bin/rt.test" ./rt
# run N SUB: callgrind's totals outside the walk and the benchmark's loop.
run() {
	GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOMAXPROCS=1 valgrind --tool=callgrind --cache-sim=yes \
		--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64 --callgrind-out-file="$bin/cg" \
		"$bin/rt.test" -test.run '^$' -test.bench "^BenchmarkHostPathCold\$/^$2\$" -test.benchtime "$1x" >/dev/null 2>&1
	callgrind_annotate --auto=no --threshold=100 --show-percs=no --show=Ir,D1mr,D1mw "$bin/cg" |
		awk '/file:function/ {f=1; next} f && NF>=4 && !/pollute|BenchmarkHostPathCold/ {
			for (i=1; i<=3; i++) { x=$i; gsub(",", "", x); if (x==".") x=0; s[i]+=x } }
			END { printf "%d %d\n", s[1], s[2]+s[3] }'
}
for sub in ${@:-enqueue tagged}; do
	a=$(run 1000 "$sub"); z=$(run 21000 "$sub")
	echo "$a $z" | awk -v s="$sub" '{ printf "%-8s %6.0f instructions  %5.1f L1 data lines per launch\n", s, ($3-$1)/20000, ($4-$2)/20000 }'
done
