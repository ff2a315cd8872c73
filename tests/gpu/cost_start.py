"""Warm start of a program, plain against preloaded (tests/gpu/part_cost.sh).

usage: cost_start.py [--seconds S] [--cli JITSTALL] [--raw FILE] RUNS PRELOAD TRACEDIR PROGRAM ARGS...

--seconds S stops starting pairs after S seconds (a long run under a time
limit still prints its figures, for the pairs it made); --cli names the
jitstall command, which then reads the traced runs' traces and prints
jitstall's own accounted time per run (END's self_ns), the steady part of
the added time; --raw writes every pair (plain and traced wall, then CPU,
in ms) to FILE, one line each, for pooling runs.

Runs PROGRAM RUNS times plain and RUNS times traced, interleaved, and every
third time also with the preload and JITSTALL_DISABLE=1 (for comparison
only), after one warm-up run of each; takes wall time and CPU time (user +
system, from wait4) of every run. Prints
one line per figure and checks the target: tracing adds at most
max(1 ms, 1% of the plain median). The added time is the paired difference
(traced run i against plain run i); its 95% interval comes from the t
distribution of the mean, and for the median (the verdict's statistic: a
slow driver start now and then inflates the mean's spread) from a
percentile bootstrap. Exit 0 when the median's interval lies within the
target (met), 1 when it lies above it (missed), 3 when the runs cannot tell
(the interval holds the target), 2 when a run failed.
"""
import json
import os
import random
import statistics as st
import subprocess
import sys
import time

# Two-sided 95% t quantiles by degrees of freedom (n-1), enough for the run counts used here.
T95 = {4: 2.776, 9: 2.262, 14: 2.145, 19: 2.093, 24: 2.064, 29: 2.045, 30: 2.042, 39: 2.023,
       49: 2.010, 59: 2.001}


def t95(df):
    best = min(T95, key=lambda k: abs(k - df))
    return T95[best]


def run_once(argv, env):
    t0 = time.monotonic_ns()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.monotonic_ns() - t0) / 1e6
    p.returncode = os.waitstatus_to_exitcode(status)
    cpu = (ru.ru_utime + ru.ru_stime) * 1e3
    return (wall, cpu) if p.returncode == 0 else None


def median_interval(d, rounds=4000):
    """Percentile bootstrap 95% interval of the median (robust to the driver's
    occasional slow start, which inflates the mean's interval)."""
    rng = random.Random(14)
    meds = sorted(st.median(rng.choices(d, k=len(d))) for _ in range(rounds))
    return meds[int(0.025 * rounds)], meds[int(0.975 * rounds) - 1]


def interval(d):
    m = st.mean(d)
    half = t95(len(d) - 1) * st.stdev(d) / len(d) ** 0.5
    return m, m - half, m + half


def own_times(cli, keep):
    """self_ns of every traced run, from jitstall report --json over the kept traces."""
    out = subprocess.run([cli, "report", "--json", keep], capture_output=True, text=True)
    try:
        procs = json.loads(out.stdout)["processes"]
    except (ValueError, KeyError):
        return []
    return [p["self_ns"] / 1e6 for p in procs if p.get("self_ns")]


def main():
    args, seconds, cli, raw = sys.argv[1:], None, None, None
    while args and args[0].startswith("--"):
        if args[0] == "--seconds":
            seconds = float(args[1])
        elif args[0] == "--cli":
            cli = args[1]
        elif args[0] == "--raw":
            raw = args[1]
        else:
            print(__doc__)
            return 2
        args = args[2:]
    runs, preload, tdir, argv = int(args[0]), args[1], args[2], args[3:]
    keep = os.path.join(tdir, "keep")
    os.makedirs(keep, exist_ok=True)
    t_end = time.monotonic() + seconds if seconds else None
    base = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith("JITSTALL_")}
    envs = {
        "plain": base,
        "off": dict(base, LD_PRELOAD=preload, JITSTALL_DISABLE="1"),
        "traced": dict(base, LD_PRELOAD=preload, JITSTALL_DIR=tdir),
    }
    res = {m: [] for m in envs}
    for m in envs:
        run_once(argv, envs[m])
    for f in os.listdir(tdir):
        if f.endswith(".jst"):
            os.unlink(os.path.join(tdir, f))
    for i in range(runs):
        if t_end and time.monotonic() > t_end:
            break
        for m in envs:
            if m == "off" and i % 3:
                continue
            r = run_once(argv, envs[m])
            if r is None:
                print(f"a {m} run failed")
                return 2
            res[m].append(r)
        for f in os.listdir(tdir):
            if f.endswith(".jst"):
                os.replace(os.path.join(tdir, f), os.path.join(keep, f"{i}-{f}"))
    wall = {m: [r[0] for r in res[m]] for m in res}
    cpu = {m: [r[1] for r in res[m]] for m in res}
    limit = max(1.0, st.median(wall["plain"]) / 100)
    runs = len(res["plain"])
    if raw:
        with open(raw, "w") as f:
            for p, t in zip(res["plain"], res["traced"]):
                f.write(f"{p[0]:.3f} {t[0]:.3f} {p[1]:.3f} {t[1]:.3f}\n")
    print(f"warm start, {runs} interleaved pairs, medians: plain {st.median(wall['plain']):.1f} ms "
          f"(CPU {st.median(cpu['plain']):.1f} ms), preload+JITSTALL_DISABLE=1 "
          f"{st.median(wall['off']):.1f} ms ({len(wall['off'])} runs), traced {st.median(wall['traced']):.1f} ms "
          f"(CPU {st.median(cpu['traced']):.1f} ms); plain runs spread (stdev) "
          f"{st.stdev(wall['plain']):.1f} ms")
    verdict = 0
    for what, xs in (("wall", wall), ("CPU", cpu)):
        d = [t - p for t, p in zip(xs["traced"], xs["plain"])]
        m, lo, hi = interval(d)
        mlo, mhi = median_interval(d)
        print(f"added by tracing ({what}): median of paired differences {st.median(d):+.2f} ms "
              f"(95% interval {mlo:+.2f} .. {mhi:+.2f}), mean {m:+.2f} ms (95% interval "
              f"{lo:+.2f} .. {hi:+.2f}); target <= {limit:.2f} ms")
        if what == "wall":
            verdict = 0 if mhi <= limit else (1 if mlo > limit else 3)
    own = own_times(cli, keep) if cli else []
    if own:
        own.sort()
        print(f"jitstall's own accounted time (END self_ns) of the {len(own)} traced runs: median "
              f"{st.median(own):.3f} ms, 10th-90th percentile {own[len(own) // 10]:.3f} .. "
              f"{own[len(own) * 9 // 10]:.3f} ms")
    print({0: "target met: the whole interval is within it",
           1: "target missed: the whole interval is above it",
           3: "not shown either way: the interval holds the target"}[verdict])
    return verdict


if __name__ == "__main__":
    sys.exit(main())
