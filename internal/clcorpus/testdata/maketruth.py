#!/usr/bin/env python3
"""maketruth.py FILE.cl [OPTIONS...] prints clang's view of FILE's kernels
as the corpus's truth files hold it (see README.md): each kernel's
parameters with clang's resolved type, address space and the Go type a
user declares for it. It covers the scalar and vector types, pointers to
them, images and samplers: the constructs of dgen/*.cl (no structs).

clang-15 reads the file as OpenCL C 1.2 for SPIR with every extension
defined, cl_khr_integer_dot_product included, as the rest of the corpus
was read."""
import json, re, subprocess, sys

SCALARS = {"char": "int8", "uchar": "uint8", "short": "int16", "ushort": "uint16",
           "int": "int32", "uint": "uint32", "long": "int64", "ulong": "uint64",
           "float": "float32", "double": "float64", "half": "uint16",
           "unsigned char": "uint8", "unsigned short": "uint16", "unsigned int": "uint32",
           "unsigned long": "uint64"}
QUALS = {"const", "volatile", "restrict", "__private", "__global", "__local",
         "__constant", "__read_only", "__write_only", "__read_write"}


def go_elem(name):
    if name in SCALARS:
        return SCALARS[name]
    m = re.fullmatch(r"([a-z]+)(\d+)?", name)
    if not m or m.group(1) not in SCALARS:
        raise ValueError("no Go type for " + name)
    t, n = SCALARS[m.group(1)], m.group(2)
    if n is None:
        return t
    return "[%d]%s" % (4 if n == "3" else int(n), t)


def param(p):
    qt = p["type"]["qualType"]
    out = {"name": p["name"], "cltype": qt, "go": None, "nomap": None,
           "addr": "__private", "placeholder": False}
    words = qt.replace("*", " * ").split()
    if "*" in words:
        before = words[:words.index("*")]
        space = [w for w in before if w in ("__global", "__local", "__constant")]
        out["addr"] = space[0] if space else "__private"
        elem = " ".join(w for w in before if w not in QUALS)
        wrap = "rt.Local" if out["addr"] == "__local" else "rt.Buffer"
        out["go"] = "%s[%s]" % (wrap, go_elem(elem))
        return out
    base = " ".join(w for w in words if w not in QUALS)
    if base.startswith("image") or base == "sampler_t":
        out["nomap"], out["placeholder"] = base, True
        if base == "sampler_t":
            out["addr"] = None
        return out
    out["go"] = go_elem(base)
    return out


def main():
    path, opts = sys.argv[1], sys.argv[2:]
    cmd = ["clang-15", "-x", "cl", "-cl-std=CL1.2", "-target", "spir64",
           "-Xclang", "-finclude-default-header", "-Xclang", "-cl-ext=+all",
           "-Dcl_khr_integer_dot_product=1", "-fsyntax-only",
           "-Xclang", "-ast-dump=json"] + opts + [path]
    r = subprocess.run(cmd, capture_output=True, text=True)
    errors = r.stderr.count(" error: ")
    ast = json.loads(r.stdout)
    kernels = []
    for d in ast.get("inner", []):
        if d.get("kind") != "FunctionDecl" or "loc" not in d or d["loc"].get("includedFrom"):
            continue
        if not any(a.get("kind") == "OpenCLKernelAttr" for a in d.get("inner", [])):
            continue
        if not any(c.get("kind") == "CompoundStmt" for c in d.get("inner", [])):
            continue
        params = [param(p) for p in d.get("inner", []) if p.get("kind") == "ParmVarDecl"]
        kernels.append({"name": d["name"], "macro": False, "attrs": [], "params": params})
    json.dump({"file": path, "kernels": kernels, "structs": {}, "clang_errors": errors},
              sys.stdout, indent=1, ensure_ascii=False)
    print()


main()
