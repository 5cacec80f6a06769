#!/usr/bin/env python3
"""Sorts the cache lines that one launch touches by the memory they lie in.

    launch_lines.py LACKEY_LOG N

LACKEY_LOG is valgrind --tool=lackey --trace-mem=yes's log of
BenchmarkHostPathCold (rt/hostpath_test.go) run for N iterations: each
iteration walks a 256 KiB array (pollute), then launches once. The walk's
lines are those touched at least N times in one 256 KiB stretch; the
accesses between two walks are one launch. For the median launch of the
later half it prints the distinct 64-byte lines touched, split into the
goroutine's stack (within 4 KiB of the most used line whose first access
is a store), the heap, and the binary's data (below 256 MiB), and the
number of data accesses. The launches of one run agree; runs differ by a
line or two, as objects fall differently on lines."""
import collections, sys


def accesses(path):
    """The data accesses of the log, as (kind, line) with kind L, S or M."""
    out = []
    with open(path) as f:
        for text in f:
            if len(text) > 3 and text[0] == " " and text[1] in "LSM":
                out.append((text[1], int(text[3:].split(",")[0], 16) >> 6))
    return out


def walk_lines(acc, n):
    """The lines of the 256 KiB array that every iteration walks."""
    count = collections.Counter(line for _, line in acc)
    hot = [line for line, c in count.items() if c >= n]
    by_window = collections.Counter(line >> 12 for line in hot)
    window = by_window.most_common(1)[0][0]
    return {line for line in hot if abs((line >> 12) - window) <= 1}


def launches(acc, walk):
    """The accesses between walks: a walk is 1000 or more accesses to its
    lines with fewer than 16 others between two of them."""
    segs, cur, last, run = [], [], -(10**9), 0
    for i, (kind, line) in enumerate(acc):
        if line in walk:
            run = run + 1 if i - last <= 16 else 1
            last = i
            if run == 1000 and cur:
                segs.append(cur)
                cur = []
        elif i - last > 16:
            cur.append((kind, line))
    return segs


def classify(seg):
    first, count = {}, collections.Counter()
    for kind, line in seg:
        first.setdefault(line, kind)
        count[line] += 1
    stack = max((l for l in first if first[l] == "S"), key=lambda l: count[l])
    kinds = collections.Counter()
    for line in first:
        if abs(line - stack) <= 64:
            kinds["stack"] += 1
        elif line << 6 < 256 << 20:
            kinds["data"] += 1
        else:
            kinds["heap"] += 1
    return len(first), kinds, len(seg)


def main():
    acc = accesses(sys.argv[1])
    segs = launches(acc, walk_lines(acc, int(sys.argv[2])))
    if len(segs) < 10:
        sys.exit("launch_lines: found %d launches; want the log of at least 10" % len(segs))
    # The steady state: the later half, less the last launch; the median
    # by line count, since a launch that a GC cycle or the benchmark's
    # end interrupts differs.
    got = sorted((classify(seg) for seg in segs[len(segs) // 2:-1]), key=lambda c: c[0])
    lines, kinds, n = got[len(got) // 2]
    print("%3d lines (stack %d, heap %d, data %d), %d data accesses; %d launches, %d-%d lines" % (
        lines, kinds["stack"], kinds["heap"], kinds["data"], n, len(got), got[0][0], got[-1][0]))


if __name__ == "__main__":
    main()
