#!/usr/bin/env python3
"""Counts the instructions jitstall adds to a launch after a function's first
launch: from the entry of each launch stub of libjitstall.so to its jump into
the driver (the first indirect jump, in address order), which is the path of
a function found at the first probe of the seen set. Deterministic, unlike a
time. Usage: launch_insns.py [--max N] [--objdump PROG] LIB [LIB...]
Prints one line per library; with --max, exits 1 if any stub of the first
library takes more than N instructions."""
import argparse, re, shutil, subprocess, sys

STUBS = ["cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz"]
for v in list(STUBS):
    STUBS += ["jst_l_" + v, "jst_p_" + v]
LINE = re.compile(r"^\s*[0-9a-f]+:\s+(\S+)\s*(.*)$")


def is_tail_jump(op, args):
    # x86-64: jmp *%reg; aarch64: br xN (not a return, not a call)
    return (op == "jmp" and args.startswith("*")) or op == "br"


def count(objdump, lib, sym):
    out = subprocess.run([objdump, "-d", "--no-show-raw-insn", "--disassemble=" + sym, lib],
                         capture_output=True, text=True, check=True).stdout
    body = out.split("<%s>:" % sym, 1)
    if len(body) < 2:
        return None
    n = 0
    for line in body[1].splitlines():
        if not line.strip():
            if n:
                break
            continue
        m = LINE.match(line)
        if not m:
            continue
        op, args = m.group(1), m.group(2)
        if op in ("bti", "endbr64"):
            continue  # landing pads: no work, and absent from most builds
        n += 1
        if is_tail_jump(op, args):
            return n
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int)
    ap.add_argument("--objdump", default=None)
    ap.add_argument("libs", nargs="+")
    a = ap.parse_args()
    objdump = a.objdump or shutil.which("objdump")
    if not objdump:
        print("skip: no objdump")
        return 77
    status = 0
    for i, lib in enumerate(a.libs):
        counts = {s: count(objdump, lib, s) for s in STUBS}
        missing = [s for s, c in counts.items() if c is None]
        if missing:
            print("%s: no tail jump found in %s" % (lib, ", ".join(missing)))
            if i == 0:
                status = 1
            continue
        hi, lo = max(counts.values()), min(counts.values())
        print("%s: launch path after the first launch: %d-%d instructions (cuLaunchKernel %d)"
              % (lib, lo, hi, counts["cuLaunchKernel"]))
        if i == 0 and a.max is not None and hi > a.max:
            print("FAIL: %d instructions, more than %d" % (hi, a.max))
            status = 1
    return status


sys.exit(main())
