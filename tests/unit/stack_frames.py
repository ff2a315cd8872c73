#!/usr/bin/env python3
"""No function of the preload has a stack frame over LIMIT bytes.

A program may call exec, posix_spawn or a CUDA load from a thread whose whole
stack is PTHREAD_STACK_MIN (16 KiB, TLS included), so the preload's code on
those paths keeps its buffers on the heap or in pages of its own. Reads the
.su files GCC's -fstack-usage wrote beside the objects (directories given as
arguments); fails on a frame over LIMIT, or a dynamic (unbounded) one, that is
not in ALLOWED with its reason."""
import os
import sys

LIMIT = 2048
ALLOWED = {
    # The constructor, on the thread that loads the library (the main
    # thread at start), which no program starts with a small stack.
    "self_find": "constructor only",
    # Python frame capture: only in a Python interpreter's threads.
    "jst_py_names": "Python only",
    "py_add": "Python only",
    # The argument vector the caller passed one by one, as glibc's own
    # execl builds it: its size is the program's choice.
    "execl": "caller's arguments",
    "execle": "caller's arguments",
    "execlp": "caller's arguments",
}

bad, seen = [], 0
for d in sys.argv[1:]:
    for root, _, files in os.walk(d):
        for f in files:
            if not f.endswith(".su"):
                continue
            for line in open(os.path.join(root, f)):
                seen += 1
                where, size, kind = line.rstrip("\n").split("\t")
                fn = where.rsplit(":", 1)[-1].split(".")[0]
                if fn in ALLOWED:
                    continue
                if int(size) > LIMIT or kind.startswith("dynamic") and "bounded" not in kind:
                    bad.append(f"{where}: {size} bytes ({kind})")
if not seen:
    print("no .su files found: was the preload built with -fstack-usage?")
    sys.exit(1)
for b in bad:
    print("too large a stack frame:", b)
sys.exit(1 if bad else 0)
