#!/usr/bin/python3
"""Aggregates the JSON lines of stencil -json and hotspot.py (files given, or
stdin): the median of each (device, size, pyramid, mode) as a Markdown table."""
import fileinput
import json
import statistics
from collections import defaultdict

runs = defaultdict(list)
order = []
for line in fileinput.input():
    line = line.strip()
    if not line.startswith("{"):
        continue
    r = json.loads(line)
    if r.get("max_err") is None:
        r["max_err"] = float("inf")
    k = (r["device"], r["size"], r["iters"], r.get("pyramid", 1), r["mode"])
    if k not in runs:
        order.append(k)
    runs[k].append(r)

print("| device | size | iters | pyramid | mode | runs | median s | median µs/step | driver allocs | reuses | max err K | ok |")
print("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for k in order:
    rs = runs[k]
    dev, size, iters, pyr, mode = k
    print(f"| {dev} | {size} | {iters} | {pyr} | {mode} | {len(rs)} | {statistics.median(r['seconds'] for r in rs):.4f} | "
          f"{statistics.median(r['us_per_iter'] for r in rs):.1f} | {max(r['driver_allocs'] for r in rs)} | "
          f"{max(r['reuses'] for r in rs)} | {max(r['max_err'] for r in rs):.2g} | {all(r['ok'] for r in rs)} |")
