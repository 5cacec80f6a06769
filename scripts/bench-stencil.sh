#!/bin/sh
# Runs the Hotspot example (every mode) and its PyOpenCL twin side by side on
# the default device, and prints the median of REPS runs per configuration.
# SIZES, PYRAMIDS, ITERS and REPS override the defaults; OUT names the file
# that keeps every run's JSON line (default: bench-stencil.jsonl).
set -eu
SIZES=${SIZES:-"512 1024"}
PYRAMIDS=${PYRAMIDS:-"1 2"}
ITERS=${ITERS:-360}
REPS=${REPS:-3}
OUT=${OUT:-bench-stencil.jsonl}
GO=${GO:-go}
PY=${PY:-/usr/bin/python3}
bin=$(mktemp -d)/stencil
$GO build -o "$bin" ./examples/stencil
: > "$OUT"
for s in $SIZES; do
	for p in $PYRAMIDS; do
		"$bin" -json -size "$s" -iters "$ITERS" -pyramid "$p" -reps "$REPS" >> "$OUT"
		if $PY -c 'import pyopencl' 2>/dev/null; then
			$PY examples/stencil/pyopencl/hotspot.py -size "$s" -iters "$ITERS" -pyramid "$p" -reps "$REPS" >> "$OUT"
		else
			echo "bench-stencil: no pyopencl for $PY (apt-get install python3-pyopencl): skipping it" >&2
		fi
	done
done
rm -rf "$(dirname "$bin")"
$PY examples/stencil/pyopencl/medians.py "$OUT"
