#!/usr/bin/env python3
"""Assertions over `jitstall dump --json` output for tests/gpu/run.sh.

usage: check.py DUMP.jsonl CASE [--call NAME] [--verdict V] [--cache C]
                [--cache-reason R] [--min-ms X] [--max-ms X] [--result N]
                [--cupti OPS] [--row FILE]
Finds the load event (the call named, else the longest load) and checks it.
Appends one table row "case|call|verdict|cache|reason|ms|cupti|result" to --row.
Exit 1 with one line per failed expectation.
"""
import argparse, json, sys

LOADS = {"cuModuleLoad", "cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary",
         "cuLibraryLoadData", "cuLibraryLoadFromFile", "cuLinkAddData", "cuLinkAddFile"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump")
    ap.add_argument("case")
    ap.add_argument("--call")
    ap.add_argument("--verdict")
    ap.add_argument("--cache")
    ap.add_argument("--cache-reason")
    ap.add_argument("--min-ms", type=float)
    ap.add_argument("--max-ms", type=float)
    ap.add_argument("--result", type=int)
    ap.add_argument("--cupti", help="comma list of CUPTI ops that must appear, or 'none'")
    ap.add_argument("--row")
    a = ap.parse_args()

    recs = []
    with open(a.dump) as f:
        for line in f:
            line = line.strip()
            if line:
                recs.append(json.loads(line))
    calls = [r for r in recs if r.get("type") == "call"]
    loads = [r for r in calls if str(r.get("call", "")).rstrip("_v2") in LOADS
             or r.get("call") in LOADS]
    fails = []
    if a.call:
        cand = [r for r in loads if r.get("call", "").startswith(a.call)]
    else:
        cand = loads
    if not cand:
        print(f"{a.case}: no load event{' ' + a.call if a.call else ''} in the trace "
              f"(calls seen: {sorted(set(r.get('call') for r in calls))})")
        return 1
    ev = max(cand, key=lambda r: r.get("dur_ns", 0))
    ms = ev.get("dur_ns", 0) / 1e6
    cupti = [r.get("cupti_op") for r in recs if r.get("type") == "cupti_jit"]

    def want(field, expected):
        if expected is not None and str(ev.get(field)) != str(expected):
            fails.append(f"{a.case}: {field} is {ev.get(field)!r}, expected {expected!r}")

    want("verdict", a.verdict)
    want("cache", a.cache)
    want("cache_reason", a.cache_reason)
    if a.result is not None and ev.get("result") != a.result:
        fails.append(f"{a.case}: result {ev.get('result')}, expected {a.result}")
    if a.min_ms is not None and ms < a.min_ms:
        fails.append(f"{a.case}: {ev.get('call')} took {ms:.1f} ms, expected >= {a.min_ms}")
    if a.max_ms is not None and ms > a.max_ms:
        fails.append(f"{a.case}: {ev.get('call')} took {ms:.1f} ms, expected <= {a.max_ms}")
    if a.cupti:
        if a.cupti == "none":
            if cupti:
                fails.append(f"{a.case}: CUPTI reported {cupti}, expected none")
        else:
            for op in a.cupti.split(","):
                neg = op.startswith("!")
                op = op.lstrip("!")
                if neg and op in cupti:
                    fails.append(f"{a.case}: CUPTI reported {op}, expected it absent ({cupti})")
                if not neg and op not in cupti:
                    fails.append(f"{a.case}: CUPTI did not report {op} ({cupti})")
    if a.row:
        with open(a.row, "a") as f:
            f.write("|".join([a.case, str(ev.get("call")), str(ev.get("verdict")),
                              str(ev.get("cache")), str(ev.get("cache_reason", "")),
                              f"{ms:.1f}", ",".join(c for c in cupti if c) or "-",
                              str(ev.get("result"))]) + "\n")
    for m in fails:
        print(m)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
