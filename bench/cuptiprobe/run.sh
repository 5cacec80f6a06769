#!/bin/sh
# run.sh finds CUPTI on the GPU machine, builds cuptiprobe and runs it.
set -e
for d in /usr/local/cuda /usr/local/cuda-*; do
	for inc in "$d/include" "$d/extras/CUPTI/include" "$d/targets/x86_64-linux/include"; do
		[ -f "$inc/cupti.h" ] && INC=${INC:-$inc}
	done
	for lib in "$d/lib64" "$d/extras/CUPTI/lib64" "$d/targets/x86_64-linux/lib"; do
		[ -e "$lib/libcupti.so" ] && LIB=${LIB:-$lib}
	done
done
echo "cupti.h: ${INC:-none}; libcupti.so: ${LIB:-none}"
ls -l "$LIB"/libcupti* 2>/dev/null | head -5 || true
[ -n "$INC" ] && [ -n "$LIB" ] || { find / -name 'libcupti*' -o -name cupti.h 2>/dev/null | head; exit 1; }
dir=$(dirname "$0")
nvcc -O2 -arch=sm_90 -I"$INC" -o /tmp/cuptiprobe "$dir/cuptiprobe.cu" -L"$LIB" -lcupti -lcuda -ldl -Xlinker -rpath -Xlinker "$LIB"
/tmp/cuptiprobe "$@"
