#!/bin/sh
# Installs what dgen needs to build and run, where it is missing: a C
# compiler for cgo, the OpenCL headers, the ICD loader and PoCL (a CPU
# OpenCL device), and for the tests of the shared cache tier (rt/fleetcache)
# redis-server and nginx, which the tests start on loopback ports. On
# Debian/Ubuntu as root it installs them with apt-get; otherwise it says
# what to install and fails.
set -e
missing=""
command -v cc >/dev/null 2>&1 || missing="$missing gcc libc6-dev"
[ -f /usr/include/CL/cl.h ] || missing="$missing opencl-headers"
have() { for f in "$@"; do [ -e "$f" ] && return 0; done; return 1; }
have /usr/lib/*/libOpenCL.so /usr/lib/libOpenCL.so || missing="$missing ocl-icd-opencl-dev"
have /etc/OpenCL/vendors/pocl*.icd || missing="$missing pocl-opencl-icd"
have /usr/bin/redis-server /usr/sbin/redis-server /usr/local/bin/redis-server || missing="$missing redis-server"
have /usr/sbin/nginx /usr/bin/nginx /usr/local/sbin/nginx || missing="$missing nginx-light"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq $missing >/dev/null
	exit 0
fi
echo "deps: missing$missing; install them, e.g. as root: apt-get install -y$missing" >&2
exit 1
