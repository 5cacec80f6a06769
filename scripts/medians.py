#!/usr/bin/env python3
"""Summarizes benchmark JSON lines: the median, min and max of one figure per
group, and where a group named by --base exists, each group's ratio to it.

    medians.py FILE... [--key bench] [--value ns_per_op] [--base raw]

Every line is a JSON object; lines that are not are skipped. --key names the
fields whose values form a group (comma-separated); --value the figure."""
import argparse, json, statistics, sys

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+")
    ap.add_argument("--key", default="bench")
    ap.add_argument("--value", default="ns_per_op")
    ap.add_argument("--base", default=None, help="group name whose median the ratios divide by")
    a = ap.parse_args()
    keys = a.key.split(",")
    groups = {}
    for f in a.files:
        for line in open(f):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if a.value not in r or not all(k in r for k in keys):
                continue
            g = " ".join(str(r[k]) for k in keys)
            groups.setdefault(g, []).append(float(r[a.value]))
    base = statistics.median(groups[a.base]) if a.base in groups else None
    print(f"{'group':40} {'n':>3} {'median':>12} {'min':>12} {'max':>12}" + ("  ratio" if base else ""))
    for g, v in groups.items():
        m = statistics.median(v)
        line = f"{g:40} {len(v):3d} {m:12.2f} {min(v):12.2f} {max(v):12.2f}"
        if base:
            line += f"  {m / base:.3f}"
        print(line)

if __name__ == "__main__":
    main()
