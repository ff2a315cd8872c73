#!/usr/bin/env python3
"""Benchmark: the analyzer on small hostile traces, the shapes that once took
minutes: overlapping module maps under a 6,400-frame stack (report), and many
loads with many kernel lookups (export --format otlp, report --json). Prints
the CPU time of each size and the growth from one size to the next; linear
work grows about 2x when the input doubles. The traces are built with
tests/cli/gen_trace through the generators of tests/cli/test_scale.py.

usage: bench_hostile.py BUILD_DIR [--full]   (--full adds 1,000,000 lookups)
Exit: 0 every growth within 2.5x, 1 one beyond, 2 error.
"""
import os
import resource
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
import test_scale  # noqa: E402


def cpu(argv):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode not in (0, 1):
        sys.exit(f"bench_hostile: {' '.join(argv)}: exit {r.returncode}: {r.stderr[:300]}")
    return after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: bench_hostile.py BUILD_DIR [--full]")
    b = os.path.abspath(sys.argv[1])
    cli, gen = os.path.join(b, "jitstall"), os.path.join(b, "tests", "cli", "gen_trace")
    tmp = tempfile.mkdtemp(prefix="jst-bench-hostile-")
    shapes = [("overlapping maps, 6,400-frame stack: report", ["report"],
               [(f"{n:,} maps", test_scale.hostile_maps_spec, (n,)) for n in (20000, 40000, 80000)]),
              ("20,000 loads + kernel lookups: export --format otlp",
               ["export", "--format", "otlp", "-o", os.path.join(tmp, "o.json")],
               [(f"{n:,} lookups", test_scale.hostile_lookups_spec, (20000, n))
                for n in ((100000, 200000, 1000000) if "--full" in sys.argv else
                          (100000, 200000, 400000))])]
    bad = 0
    for title, cmd, sizes in shapes:
        print(title)
        prev = None
        for label, fn, args in sizes:
            t = os.path.join(tmp, "t.jst")
            r = subprocess.run([gen, t], input=fn(*args).encode(), capture_output=True)
            if r.returncode != 0:
                sys.exit(f"bench_hostile: gen_trace: {r.stderr[:300]}")
            s = min(cpu([cli] + cmd + [t]) for _ in range(3))
            size = os.path.getsize(t)
            line = f"  {label:>18}  {size / 1e6:7.1f} MB  {s:7.3f} s CPU"
            if prev:
                grow = max(s, 0.05) / max(prev[0], 0.05)
                per = size / prev[1]
                line += f"  x{grow:.2f} for x{per:.2f} the bytes"
                bad |= grow > 2.5 * per / 2
            print(line)
            prev = (s, size)
    subprocess.run(["rm", "-rf", tmp])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
