#!/bin/sh
# Issue 27 on a machine with two NVIDIA GPUs or more: dgen's multi-device
# guarantees on both NVIDIA backends (DGEN_BACKEND=cuda and opencl), and on
# PoCL's two devices beside them. Run it inside a gpu-bundle folder built
# with what it needs (33 MB):
#
#	make gpu-bundle BUNDLE_TESTS='rt rt/opencl rt/cuda' BUNDLE_CMDS='cmd/dgen examples/devglobal'
#	cd gpu-bundle && sh gpu-multi.sh
#
# It registers NVIDIA's OpenCL with the ICD loader if no ICD file names it,
# lists the devices, then runs, printing each run's output:
#
#	rt        rt.test's TestMultiDevice (rt/multidevice_test.go) on every GPU
#	          (DGEN_TEST_DEVICES='gpu:*': a program built for every GPU, device
#	          globals per GPU, a tagged block freed after a kernel on GPU 0 and
#	          reused on GPU 1 without a host wait, Close racing launches on
#	          every GPU), and without DGEN_TEST_DEVICES on PoCL's two devices
#	driver    rt/cuda's TestConformanceSeveralDevices (the driver suite's
#	          multi-device part on PoCL's two devices, on GPU 0 twice and on
#	          every CUDA GPU) and rt/opencl's TestConformanceSeveralGPUs (the same
#	          part on every GPU of NVIDIA's OpenCL platform)
#	example   examples/devglobal on a context of every GPU (DGEN_DEVICE='gpu:*';
#	          no example uses more than the first device of its context, so
#	          this checks that an example's programs build and run there)
#
# and prints a table of what passed. The exit status is 0 when every run
# passed. Outputs go to $OUT/gpu-multi/ too when OUT is set.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
logs=${OUT:+$OUT/gpu-multi}
logs=${logs:-$(mktemp -d)}
mkdir -p "$logs"
table="$logs/table.txt"
: > "$table"
status=0

# run NAME BACKEND WHAT COMMAND...: runs COMMAND with DGEN_BACKEND=BACKEND,
# keeps its output in $logs/NAME.txt, prints it, and adds a row to the table.
run() {
	name=$1 backend=$2 what=$3
	shift 3
	echo "== $name: DGEN_BACKEND=$backend $*"
	start=$(date +%s)
	DGEN_BACKEND=$backend "$@" > "$logs/$name.txt" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	cat "$logs/$name.txt"
	result=pass
	if [ $rc -ne 0 ]; then
		result="FAIL ($rc)"
		status=1
	elif grep -q -- '--- SKIP' "$logs/$name.txt"; then
		result="pass, some skipped"
	fi
	printf '%-22s %-7s %-52s %-18s %4ss\n' "$name" "$backend" "$what" "$result" "$secs" >> "$table"
}

for t in rt.test rt_cuda.test rt_opencl.test devglobal dgen; do
	[ -x "$t" ] || { echo "gpu-multi: $here/$t is missing: build the bundle as the top of this script says" >&2; exit 2; }
done
DGEN_DEVICE='gpu:*' ./dgen devices

tests='-test.count=1 -test.v -test.timeout=5m'
for b in cuda opencl; do
	run "rt-multi-$b" $b "TestMultiDevice on every GPU" env DGEN_TEST_DEVICES='gpu:*' ./rt.test -test.run '^TestMultiDevice$' $tests
done
run rt-multi-pocl opencl "TestMultiDevice on PoCL's two devices" ./rt.test -test.run '^TestMultiDevice$' $tests
run conformance-cuda cuda "TestConformanceSeveralDevices (PoCL, CUDA)" ./rt_cuda.test -test.run '^TestConformanceSeveralDevices$' $tests
run conformance-opencl opencl "TestConformanceSeveralGPUs (NVIDIA OpenCL)" ./rt_opencl.test -test.run '^TestConformanceSeveralGPUs$' $tests
for b in cuda opencl; do
	run "devglobal-$b" $b "examples/devglobal on a context of every GPU" env DGEN_DEVICE='gpu:*' ./devglobal -json
done

echo
printf '%-22s %-7s %-52s %-18s %5s\n' run backend what result time
cat "$table"
# The tests and subtests of each test run, one line each.
echo
for f in "$logs"/rt-multi-*.txt "$logs"/conformance-*.txt; do
	grep -- '--- \(PASS\|FAIL\|SKIP\)' "$f" | sed "s|^ *|$(basename "$f" .txt): |"
done
echo "gpu-multi: outputs in $logs"
exit $status
