#!/bin/sh
# What each part of rt's launch path costs per launch, on the null backend
# with L1 evicted before each launch (BenchmarkHostPathCold,
# rt/hostpath_test.go), as the driver's work evicts it on a
# GPU host: instructions and L1 data lines missed, from callgrind's cache
# simulation (a 32 KiB 8-way L1 with 64-byte lines), and the lines of code
# executed, which the driver's code evicts as its data evicts rt's, by part
# (scripts/launch_costs.py names the functions of each). Per launch: the
# difference of runs of 1,000 and 11,000 launches. Deterministic for a
# build, where timings on a shared machine are not. Needs valgrind and
# python3.
#
#	sh scripts/launch-costs.sh [touch|raw|enqueue|swap|tagged ...] [TREE]
#
# touch: the generated Enqueue of a one-buffer kernel (bench/scaling's
# launch loop); raw: rt/raw's Submit of it; enqueue: the generated Enqueue
# of a 13-argument kernel; swap: the same with its two temperature
# buffers swapped at every step (bench/inproc's swap way); tagged: a
# Hotspot step with its output from an allocation site. TREE (a directory) measures another checkout with this
# checkout's scripts, for a before and after.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
tree=$here
subs=
for a in "$@"; do
	if [ -d "$a" ]; then tree=$(cd "$a" && pwd); else subs="$subs $a"; fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tree" && go test -c -o "$tmp/rt.test" ./rt)
run() { # N SUB
	(cd "$tmp" && GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off GOMAXPROCS=1 valgrind --tool=callgrind --cache-sim=yes --dump-instr=yes \
		--I1=32768,8,64 --D1=32768,8,64 --LL=1048576,16,64 --callgrind-out-file="$tmp/cg.$1" \
		./rt.test -test.run '^$' -test.bench "^BenchmarkHostPathCold\$/^$2\$" -test.benchtime "$1x" >/dev/null 2>&1)
}
for sub in ${subs:-touch raw enqueue}; do
	run 1000 "$sub"
	run 11000 "$sub"
	python3 "$here/scripts/launch_costs.py" "$sub" "$tmp/cg.1000" 1000 "$tmp/cg.11000" 11000
done
