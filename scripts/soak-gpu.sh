#!/bin/sh
# Open/use/close soak on an NVIDIA GPU (issue 48): bench/soak on rt/cuda
# and on NVIDIA's OpenCL, beside bench/soakcl, the same cycle in C on
# NVIDIA's OpenCL, each with glibc's default malloc and with its mmap
# threshold fixed at 128 KiB (which keeps glibc from holding freed
# multi-MiB blocks in its heap). Each cycle builds a program from source,
# writes a 4 MiB buffer from pinned memory, makes 100 launches, reads it
# back, checks it, frees everything and closes the context. Run it in a
# folder that holds soak and soakcl (make gpu-bundle puts them there):
#
#	sh soak-gpu.sh
#
# The processes run at once (one GPU context each at a time); each prints
# its resident memory, C malloc's memory in use and free, file descriptors
# and GPU memory at cycles 1, 100, 500 and 1,000 (REPORT). CYCLES (1000),
# WAYS (default "cuda opencl c"; "cpu" and "c-cpu" are the two on PoCL)
# and MALLOC (default "default fixed") choose the runs; every line is kept
# under $OUT (default: this folder).
set -u
cd "$(dirname "$0")"
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
O=${OUT:-.}
mkdir -p "$O"
cycles=${CYCLES:-1000}
report=${REPORT:-1,100,500,1000}
for m in ${MALLOC:-default fixed}; do
	for w in ${WAYS:-cuda opencl c}; do
		(
			[ "$m" = fixed ] && export GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072
			if [ "$w" = c ]; then
				./soakcl "$cycles" "$report"
			elif [ "$w" = c-cpu ]; then
				./soakcl -cpu "$cycles" "$report"
			else
				./soak -backend "$w" -cycles "$cycles" -report "$report"
			fi
		) > "$O/soak-$w-$m.txt" 2>&1 &
	done
done
wait
for m in ${MALLOC:-default fixed}; do
	for w in ${WAYS:-cuda opencl c}; do
		echo "== $w, malloc $m"
		cat "$O/soak-$w-$m.txt"
	done
done
