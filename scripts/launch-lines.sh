#!/bin/sh
# The cache lines one launch touches, by the memory they lie in: the
# goroutine's stack, the heap and the binary's data. BenchmarkHostPathCold
# (rt/hostpath_test.go) runs under valgrind's lackey, which logs every
# load and store; scripts/launch_lines.py splits the log into launches and
# counts the distinct lines of one. Complements cold-lines.sh, which counts
# the misses but not where they are. Runs differ by a line or two, as
# objects fall differently on lines. Needs valgrind and python3.
#
#	sh scripts/launch-lines.sh [enqueue|tagged ...]
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test -c -o "$tmp/rt.test" ./rt
n=60
for sub in ${@:-enqueue tagged}; do
	GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOMAXPROCS=1 valgrind --tool=lackey --trace-mem=yes --log-file="$tmp/log" \
		"$tmp/rt.test" -test.run '^$' -test.bench "^BenchmarkHostPathCold\$/^$sub\$" -test.benchtime "${n}x" >/dev/null 2>&1
	printf '%-8s ' "$sub"
	python3 scripts/launch_lines.py "$tmp/log" "$n"
done
