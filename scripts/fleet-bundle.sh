#!/bin/sh
# Builds what `cachebench -fleet` needs on a machine without Go or Redis
# (the GPU machine) into bin/fleet/: cachebench, and redis-server with the
# shared libraries it needs beyond glibc, behind a wrapper that points the
# loader at them (only for redis-server, never for cachebench).
#
#   sh scripts/fleet-bundle.sh
#   # then, there (carry bin/fleet):
#   sh bin/fleet/run.sh -procs 32 -runs 7
set -eu
out=bin/fleet
rm -rf "$out" && mkdir -p "$out/lib"
go build -o "$out/cachebench" ./examples/cachebench
real=$(readlink -f "$(command -v redis-server)")
cp "$real" "$out/lib/redis-server"
ldd "$real" | awk '/=> \// {print $3}' | while read -r lib; do
	case "$(basename "$lib")" in
	libc.so.*|libm.so.*|ld-linux*|libpthread.so.*|libdl.so.*|librt.so.*) ;;
	*) cp "$lib" "$out/lib/" ;;
	esac
done
cat > "$out/redis-server" <<'WRAP'
#!/bin/sh
d=$(cd "$(dirname "$0")" && pwd)
LD_LIBRARY_PATH="$d/lib" exec "$d/lib/redis-server" "$@"
WRAP
cat > "$out/run.sh" <<'RUN'
#!/bin/sh
# Makes NVIDIA's OpenCL visible to the ICD loader, then runs cachebench -fleet.
d=$(cd "$(dirname "$0")" && pwd)
if [ -e /usr/local/nvidia/lib64/libnvidia-opencl.so.1 ] && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
	mkdir -p /etc/OpenCL/vendors
	echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
exec "$d/cachebench" -fleet -redis-server "$d/redis-server" "$@"
RUN
chmod +x "$out/redis-server" "$out/run.sh"
du -sh "$out"
