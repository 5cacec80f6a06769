#!/bin/sh
# Runs inside a gpu-bundle on a machine with an NVIDIA GPU: every test
# binary of the bundle (or those named after the backend) under
# DGEN_DEVICE=gpu on the backend given (auto, the default backend, which
# is rt/cuda on an NVIDIA GPU, with DGEN_BACKEND unset; cuda; opencl; or
# both by default: auto and opencl), and prints a table of each binary's passed, skipped and failed tests,
# with the names of the failures. Every binary must pass or skip saying
# why (issue 47): the table's last column is then "ok" everywhere.
#
#	sh gpu-tests.sh [auto|cuda|opencl|both] [NAME.test ...]
#
# Each binary runs with -test.timeout=8m, so that one call of a device tool
# with a 10-minute limit runs at least one binary; split the list across
# calls where the whole does not fit.
set -u
here=$(cd "$(dirname "$0")" && pwd)
backends=${1:-both}
[ $# -gt 0 ] && shift
[ "$backends" = both ] && backends="auto opencl"
if [ $# -gt 0 ]; then bins="$*"; else bins=$(cd "$here" && ls *.test); fi
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
out=$(mktemp -d)
status=0
printf '| binary | backend | pass | skip | fail | status |\n|---|---|---|---|---|---|\n' > "$out/table"
for b in $backends; do
	for t in $bins; do
		log="$out/$t.$b.log"
		env=DGEN_BACKEND=$b
		[ "$b" = auto ] && env=DGEN_BACKEND=
		(cd "$here" && env DGEN_DEVICE=gpu "$env" "./$t" -test.v -test.count=1 -test.timeout=8m) > "$log" 2>&1
		rc=$?
		pass=$(grep -c -- '^--- PASS' "$log")
		skip=$(grep -c -- '^--- SKIP' "$log")
		fail=$(grep -c -- '^--- FAIL' "$log")
		state=ok
		if [ $rc -ne 0 ]; then
			state="exit $rc"
			status=1
		fi
		printf '| %s | %s | %s | %s | %s | %s |\n' "$t" "$b" "$pass" "$skip" "$fail" "$state" >> "$out/table"
		if [ $rc -ne 0 ]; then
			echo "== $t on $b: failures"
			grep -- '^--- FAIL\|^panic\|^FAIL' "$log" | head -20
			tail -5 "$log"
		fi
	done
done
cat "$out/table"
echo "logs: $out"
exit $status
