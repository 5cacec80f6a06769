#!/bin/sh
# Runs inside a gpu-bundle on a machine with an NVIDIA GPU: makes NVIDIA's
# OpenCL visible to the ICD loader if no ICD file names it, then runs the
# command given, or by default `dgen devices` and every test binary.
set -u
here=$(cd "$(dirname "$0")" && pwd)
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
if [ $# -gt 0 ]; then exec "$@"; fi
"$here/dgen" devices
status=0
for t in "$here"/*.test; do
	echo "== $(basename "$t")"
	(cd "$here" && "$t" -test.count=1) || status=1
done
exit $status
