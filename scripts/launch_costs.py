#!/usr/bin/env python3
"""Splits what one launch costs into the parts of rt's launch path.

    launch_costs.py SUB CG_SHORT N_SHORT CG_LONG N_LONG

CG_SHORT and CG_LONG are callgrind outputs (with --cache-sim=yes) of
BenchmarkHostPathCold/SUB (rt/hostpath_test.go) run for
N_SHORT and N_LONG iterations: each iteration evicts L1 (pollute) and
launches once. The difference of the two runs, function by function
(exclusive costs), over N_LONG - N_SHORT, is one launch: its instructions
and the L1 data lines it missed (reads and writes), which on a GPU host,
where the driver's work evicts rt's data between launches, are what a
launch waits for; and, from the instruction addresses (--dump-instr=yes),
the 64-byte lines of code that every launch executes, which the driver's
own code evicts from the instruction cache between launches as its data
evicts rt's. Functions are grouped into the parts that docs/BENCHMARKS.md
accounts for; "other" lists what no part claims."""
import collections, re, subprocess, sys

# (part, regular expression on callgrind's "file:function"), first match wins.
PARTS = [
    ("eviction walk (not a launch)", r"pollute|BenchmarkHostPathCold"),
    ("defer records", r"runtime\.(deferreturn|deferprocStack|popDefer|\(\*_panic\))|deferwrap|\(\*launching\)\.end"),
    ("instance slot (Acquire, park)", r"core\.(Acquire|\(\*Kernel\)\.park|\(\*Queue\)\.(specSlot|acquire))|progcache.*Current|SubmitSpec|LaunchSpec"),
    ("argument setters and record", r"SetScalar|SetBuffer|SpecBuffer|SpecBytes|setScalar|setBuffer|recordBuffer|\.bind\b|\(\*(Kernel|kernelObject)\)\.(bind|mark|holds)|BufferMem|\.mem\b|\(\*Mem\)\.usable|driverBuffer"),
    ("context enter and exit", r"\(\*Context\)\.(enter|exit)|\(\*Queue\)\.(enter|exit)"),
    ("checks (range, context, wait list, spec)", r"checkLaunch|checkRange|\(\*Range\)\.same|driverEvents|\(\*Kernel\)\.prepare|checkBufs|recordable|sameContext"),
    ("buffer uses against a racing Free", r"useArgs|doneArgs|useAll|doneAll|\(\*Mem\)\.(use|done)\b"),
    ("trace check", r"beginTask|trace\.\(\*Queue\)\.Begin|\(\*Task\)\.End|EndRelease|wantsEvent|IsEnabled|goTrace"),
    ("fault log", r"beginLaunch|endLaunch|launchLog|\(\*Context\)\.failed"),
    ("stream-order recording", r"recordArgs|\(\*Queue\)\.record\b|queuePoints"),
    ("driver call (null backend)", r"\(\*(Kernel|kernelObject)\)\.enqueue|LaunchArgs|ndrange|nullQueue"),
    ("launch body", r"\(\*Queue\)\.(launch|launchChecked|submit)\b|launchOp"),
    ("rt/raw and generated wrappers", r"raw\.|enqueueTouch64|enqueueBenchStep|codegen\.(Acquire|Submit)|core\.(Submit|Launch)\b"),
    ("Go runtime: atomics", r"sync/atomic"),
]


def costs(path):
    """Exclusive Ir and L1 data misses by function."""
    out = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", "--show-percs=no",
                          "--show=Ir,D1mr,D1mw", path], capture_output=True, text=True, check=True).stdout
    res, on = collections.defaultdict(lambda: [0, 0]), False
    for line in out.splitlines():
        if "file:function" in line:
            on = True
            continue
        f = line.split()
        if not on or len(f) < 4:
            continue
        nums = [0 if x == "." else int(x.replace(",", "")) for x in f[:3]]
        name = " ".join(f[3:])
        res[name][0] += nums[0]
        res[name][1] += nums[1] + nums[2]
    return res


def addresses(path):
    """Ir by instruction address, and each address's function, read from
    a callgrind file written with --dump-instr=yes; the cost lines after a
    calls= line are the call's inclusive cost, which are skipped."""
    ir, fn_of, names, fn, call = collections.Counter(), {}, {}, None, False
    for line in open(path):
        if line.startswith(("fn=", "cfn=")):
            # A compressed name is given once, as "(id) name", then "(id)".
            m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line.strip())
            name = names.setdefault(m.group(1), m.group(2)) if m else line.split("=", 1)[1].strip()
            if line[0] == "f":
                fn = name
        elif line.startswith("calls="):
            call = True
        elif line[:2] == "0x" or line[:1] in "+-*" and line[1:2].isdigit():
            if call:
                call = False
                continue
            f = line.split()
            if line[:2] == "0x":
                addr = int(f[0], 16)
            elif f[0][0] == "*":
                pass  # the same address as the line before
            else:
                addr += int(f[0])
            ir[addr] += int(f[2]) if len(f) > 2 else 0
            fn_of[addr] = fn
    return ir, fn_of


def code_lines(a, na, z, nz):
    """The 64-byte lines of code that every launch executes, by part."""
    ia, _ = addresses(a)
    iz, fn_of = addresses(z)
    n = nz - na
    lines = collections.defaultdict(set)
    for addr, v in iz.items():
        if (v - ia.get(addr, 0)) / n >= 0.5:
            lines[part(fn_of[addr] or "")].add(addr >> 6)
    return lines


def part(name):
    for p, rx in PARTS:
        if re.search(rx, name):
            return p
    return "other"


def main():
    sub, a, na, z, nz = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    ca, cz, n = costs(a), costs(z), nz - na
    parts = collections.defaultdict(lambda: [0.0, 0.0])
    other = collections.defaultdict(lambda: [0.0, 0.0])
    for name in set(ca) | set(cz):
        d = [(cz[name][i] - ca[name][i]) / n for i in range(2)]
        if abs(d[0]) < 0.5 and abs(d[1]) < 0.05:
            continue
        p = part(name)
        for i in range(2):
            parts[p][i] += d[i]
            if p == "other":
                other[name][i] += d[i]
    total = [sum(v[i] for p, v in parts.items() if not p.startswith("eviction")) for i in range(2)]
    code = code_lines(a, na, z, nz)
    all_code = set().union(*(v for p, v in code.items() if not p.startswith("eviction")))
    print(f"{sub}: {total[0]:.0f} instructions, {total[1]:.1f} L1 data lines missed, {len(all_code)} lines of code per launch")
    print(f"  {'part':42s} {'instr':>6s} {'data':>5s} {'code':>5s}")
    for p, _ in PARTS + [("other", "")]:
        if p in parts and not p.startswith("eviction"):
            print(f"  {p:42s} {parts[p][0]:6.0f} {parts[p][1]:5.1f} {len(code.get(p, ())):5d}")
    for name, v in sorted(other.items(), key=lambda kv: -kv[1][0])[:8]:
        print(f"    other: {name[:90]} {v[0]:.0f} {v[1]:.1f}")


main()
