"""The cold-and-warm table of tests/gpu/part_table.sh, and its checks.

    python3 table.py DIR [--jitstall J] [--md FILE]

DIR holds one folder per case (a mode of fw_first_call.py), each with cold/
and warm/: plain.out, traced.out, prof.out (the programs' own timings and
cProfile's classes), trace/ and report.json. --jitstall J remakes each
report.json from trace/ first (to read old traces with a new analyzer).

Per case and process (cold, then warm on the caches the cold one left):
 - the program's own first call, plain and traced (one interleaved pair);
 - the report's first calls whose launch lies in the program's timing, on
   the program's process, and their blame summed by cause;
 - unexplained: their own "unexplained", as a share of their time in the
   call; beside it, the share of the program's call in no first call (a
   call that compiled fails when that is over 10%; one that compiled
   nothing may have no first call at all);
 - python: the sampled Python remainder, as a share of the program's call;
 - the largest cause beside cProfile's largest class of the same call;
 - the fixes: the largest claim beside the wall time of the run's first
   calls, and for a warm process any fix that keeps a cache.
Targets (issue 31): unexplained <= 5% (or under one sampler period, 10 ms,
which the report cannot split), python <= 1/3, no fix claims more
than the first calls' wall time, a warm process gets no keep-the-cache fix,
the largest cause agrees with cProfile (the same class, one within 20% of it
in cProfile's own figures, or cProfile's "wait" where the report names the
compiles the thread waited for). Own cost is shown, not checked here: the
plain and traced first calls (one pair: no measure of noise; part_pairs.sh
checks that), and with --jitstall the time jitstall's records say it spent
in the call (their self_ns and the sampler's time).
Exit 0 when every case meets the targets, 1 otherwise.
"""
import json
import os
import subprocess
import sys

SAMPLER_PERIOD_NS = 10_000_000
CACHE_FIXES = {"triton_cache", "inductor_cache", "jax_cache", "numba_cache", "cupy_cache",
               "extension_cache", "cache_volume", "cache_enable", "cache_writable",
               "cache_maxsize", "cache_dir", "rtc_cache"}
# cProfile sees a wait, not the work waited for, and a child's time as the
# wait for it: the report's causes that are such work
WAITED = {"framework_compile", "subprocess", "build", "runtime_compiler", "driver_jit"}
SAME = {("subprocess", "build"), ("build", "subprocess")}


def _load_cause_of():
    """fw_first_call.py's cause_of (the marks: a class by file and function),
    taken from its source: the program runs a GPU case when imported."""
    import ast
    src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fw_first_call.py")).read()
    fn = [n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "cause_of"][0]
    ns = {}
    exec(ast.get_source_segment(src, fn), ns)
    return ns["cause_of"]


def classes_of(path):
    """cProfile's time of the call by class, from its saved stats: each
    function's own time goes to its own class when it is marked (a wait, a
    child, the framework's compile code, ...), else to its callers' classes
    in the shares of the time each caller spent in it, up to the program's
    own call: hashing a cache key that Triton's compile code calls is
    Triton's compile, reading a pipe in subprocess.py is the child's time."""
    import pstats
    cause_of = _load_cause_of()
    stats = pstats.Stats(path).stats
    memo = {}

    def dist(key, stack):
        if key in memo:
            return memo[key]
        c = cause_of(key[0], key[2])
        if c != "python":
            r = {c: 1.0}
        else:
            callers = stats.get(key, (0, 0, 0, 0, {}))[4]
            tot = sum(v[3] for v in callers.values())
            r = {}
            if not callers or key in stack or len(stack) > 80:
                r = {"python": 1.0}
            else:
                for ck, v in callers.items():
                    w = v[3] / tot if tot > 0 else 1.0 / len(callers)
                    for k, x in dist(ck, stack | {key}).items():
                        r[k] = r.get(k, 0.0) + w * x
        memo[key] = r
        return r

    by = {}
    for key, (cc, nc, tt, ct, callers) in stats.items():
        for k, x in dist(key, frozenset()).items():
            by[k] = by.get(k, 0.0) + tt * x
    return by


def out_of(path):
    r = {}
    try:
        for line in open(path):
            f = line.split()
            if f and f[0].startswith(("FIRST_CALL", "SECOND_CALL", "CPROFILE_CAUSE")):
                r[f[0]] = f[1:]
            elif f and f[0] == "CPROFILE_CLASS":
                r.setdefault("classes", {})[f[1]] = float(f[2].rstrip("s"))
            elif f and f[0] == "GRAPH_CAPTURE_NS":
                r["capture_s"] = int(f[1]) / 1e9
    except OSError:
        pass
    return r


def one(d, when, jitstall):
    w = os.path.join(d, when)
    if jitstall:
        with open(os.path.join(w, "report.json"), "w") as f:
            subprocess.run([jitstall, "report", "--json", os.path.join(w, "trace")], stdout=f,
                           stderr=subprocess.DEVNULL)
    tr, pl, pr = (out_of(os.path.join(w, n)) for n in ("traced.out", "plain.out", "prof.out"))
    res = {"when": when, "errs": []}
    if "FIRST_CALL_NS" not in tr:
        res["errs"].append("the traced program printed no first call")
        return res
    meas = int(tr["FIRST_CALL_NS"][0])
    t0, t1 = (int(x) for x in tr["FIRST_CALL_MONO"])
    res["measured"] = meas
    res["plain"] = int(pl["FIRST_CALL_NS"][0]) if "FIRST_CALL_NS" in pl else None
    try:
        rep = json.load(open(os.path.join(w, "report.json")))
    except (OSError, ValueError) as e:
        res["errs"].append(f"no report: {e}")
        return res
    # the program's process: the one whose first calls fall in its timing;
    # its first calls launched inside [t0, t1]
    fcs, fcwall = [], 0
    for p in rep.get("processes", []):
        for fc in p.get("first_calls") or []:
            fcwall += fc["dur_ns"]
            end = fc["start_ns"] + fc["dur_ns"]
            if t0 <= end <= t1 + 1000000:
                fcs.append(fc)
    blame, covered, iv = {}, 0, []
    for fc in fcs:
        lo, hi = max(fc["start_ns"], t0), min(fc["start_ns"] + fc["dur_ns"], t1)
        share = (hi - lo) / fc["dur_ns"] if fc["dur_ns"] and hi > lo else 0.0
        for b in fc["blame"]:
            blame[b["cause"]] = blame.get(b["cause"], 0) + b["dur_ns"] * share
        if hi > lo:
            iv.append((lo, hi))
    iv.sort()
    last = 0
    for lo, hi in iv:
        lo = max(lo, last)
        if hi > lo:
            covered += hi - lo
            last = hi
    unexpl = blame.get("unexplained", 0)
    fc_in = sum(blame.values())
    # compiles of the run that started in the program's call (any process):
    # with none, a call may have no first call at all (nothing to explain)
    compiled = [c for p in rep.get("processes", []) for c in p.get("compiles", [])
                if t0 <= c["start_ns"] <= t1 and not (
                    c["compiler"] == "framework" and (c.get("cache") == "hit" or c.get("stage") in (
                        "trace", "lower", "cache_lookup", "cache_load", "cache_store")))]
    res.update(n_fc=len(fcs), blame=blame, unexpl=unexpl, python=blame.get("python", 0),
               outside=max(0, meas - covered), n_compiled=len(compiled), fc_in=fc_in,
               fc_ns=sum(fc["dur_ns"] for fc in fcs), fcwall=fcwall,
               names=sorted({(fc.get("function") or fc.get("kernel") or "?")[:40] for fc in fcs}),
               cache=sorted({fc.get("cache") for fc in fcs if fc.get("cache")}),
               call_site=[fc.get("call_site") for fc in fcs if fc.get("call_site")][:1])
    # jitstall's own time in the call, as its records count it: the self_ns
    # of the program's records that started in it, and the sampler's time
    # in its windows there
    res["own"] = own_in_call(os.path.join(w, "trace"), t0, t1, jitstall) if jitstall else None
    named = {c: v for c, v in blame.items() if c != "unexplained" and v > 0}
    res["largest"] = max(named, key=named.get) if named else "none"
    res["cprofile"] = (pr.get("CPROFILE_CAUSE") or ["?"])[0]
    res["classes"] = pr.get("classes", {})
    ps = os.path.join(w, "prof.pstats")
    if os.path.exists(ps):  # the classes by caller, not by own time alone
        by = classes_of(ps)
        if pr.get("capture_s"):  # the program's clock around its captures
            cap = min(pr["capture_s"], sum(by.values()))
            by = {k: v * (1 - cap / sum(by.values())) for k, v in by.items()}
            by["graph_capture"] = by.get("graph_capture", 0.0) + cap
        res["classes"] = by
        res["cprofile"] = max(by, key=by.get) if by else "?"
    fixes = rep.get("fixes", [])
    res["fixes"] = [(x["kind"], x.get("saves_ns", 0)) for x in fixes]
    # checks
    e = res["errs"]
    # below one period of the sampler (10 ms: its sample records' period_ns)
    # the report cannot split a first call's Python from the rest
    if fc_in and unexpl > max(0.05 * fc_in, SAMPLER_PERIOD_NS):
        e.append(f"unexplained {100 * unexpl / fc_in:.1f}% of the report's first calls")
    if res["n_compiled"] and res["outside"] > 0.10 * meas:
        e.append(f"{100 * res['outside'] / meas:.0f}% of a call that compiled is in no first call")
    if res["python"] > meas / 3:
        e.append(f"sampled Python {100 * res['python'] / meas:.1f}% of the call")
    for k, s in res["fixes"]:
        if s > max(fcwall, 0):
            e.append(f"fix {k} claims {s / 1e6:.0f} ms, the first calls are {fcwall / 1e6:.0f} ms")
    if when == "warm":
        kept = [k for k, _ in res["fixes"] if k in CACHE_FIXES]
        if kept:
            e.append("a keep-the-cache fix in the warm process: " + ", ".join(kept))
    if not fcs and not res["n_compiled"]:
        res["largest"] = "nothing compiled"
        return res  # no first call: nothing to explain, nothing to compare
    lg, cp = res["largest"], res["cprofile"]
    by = res["classes"]
    agree = (lg == cp or (lg, cp) in SAME or (cp == "wait" and lg in WAITED) or
             (by.get(cp, 0) > 0 and by.get(lg, 0) >= 0.8 * by[cp]))
    if not agree:
        e.append(f"largest cause {lg}, cProfile's {cp}")
    return res


def own_in_call(tdir, t0, t1, jitstall):
    own, smp = 0, {}
    for t in sorted(os.listdir(tdir)):
        if not t.endswith(".jst"):
            continue
        out = subprocess.run([jitstall, "dump", "--json", os.path.join(tdir, t)],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            r = json.loads(line)
            if r.get("type") in ("call", "compile", "fw_event") and t0 <= r.get("start_ns", 0) <= t1:
                own += r.get("self_ns", 0)
            elif r.get("type") == "sample" and t0 <= r.get("start_ns", 0) <= t1:
                k = (t, r["before_seq"])
                smp[k] = max(smp.get(k, 0), r.get("sampler_ns", 0))
    return own + sum(smp.values())


def ms(ns):
    return "-" if ns is None else f"{ns / 1e6:.0f}"


def main():
    a = sys.argv[1:]
    d = a[0]
    jitstall = a[a.index("--jitstall") + 1] if "--jitstall" in a else None
    md = a[a.index("--md") + 1] if "--md" in a else os.path.join(d, "table.md")
    cases = [c for c in ("triton", "compile", "mlp", "autotune", "reduceoh", "jax", "numbac",
                         "cupy", "nvcc", "graphs", "ext") if os.path.isdir(os.path.join(d, c))]
    rows = ["| case | process | program's first call, plain / traced (ms) | report's first calls "
            "| blame of the call | unexplained | sampled Python | largest / cProfile's | "
            "largest fix claim / first calls' wall | jitstall's own time in the call | verdict |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    bad = 0
    for c in cases:
        for when in ("cold", "warm"):
            r = one(os.path.join(d, c), when, jitstall)
            if "measured" not in r or "blame" not in r:
                rows.append(f"| {c} | {when} | | | | | | | | | FAIL: {'; '.join(r['errs'])} |")
                bad += 1
                continue
            m = r["measured"]
            bl = ", ".join(f"{k} {100 * v / m:.0f}%" for k, v in
                           sorted(r["blame"].items(), key=lambda kv: -kv[1]) if v >= 0.005 * m)
            top = max(r["fixes"], key=lambda x: x[1]) if r["fixes"] else None
            fx = f"{top[0]} {ms(top[1])} / {ms(r['fcwall'])}" if top else f"none / {ms(r['fcwall'])}"
            verdict = "ok" if not r["errs"] else "FAIL: " + "; ".join(r["errs"])
            own = "-" if r.get("own") is None else f"{r['own'] / 1e6:.1f} ms ({100 * r['own'] / m:.2f}%)"
            bad += bool(r["errs"])
            rows.append(f"| {c} | {when} | {ms(r['plain'])} / {ms(m)} | {r['n_fc']}: {ms(r['fc_ns'])} ms"
                        f" ({', '.join(r['names'])}{'; cache ' + '/'.join(r['cache']) if r['cache'] else ''})"
                        f" | {bl} | {100 * r['unexpl'] / max(r['fc_in'], 1):.1f}% (+{100 * r['outside'] / m:.0f}% of the call outside) | {100 * r['python'] / m:.1f}% "
                        f"| {r['largest']} / {r['cprofile']} | {fx} | {own} | {verdict} |")
    text = "\n".join(rows) + "\n"
    open(md, "w").write(text)
    sys.stdout.write(text)
    print(f"== table: {bad} row(s) miss a target")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
