# Pool workers on the real GPU; sourced by tests/gpu/run.sh
# (JITSTALL_GPU_PARTS=workers runs only this part), with its helpers (ok,
# fail, $J, $W, $G, $PRELOAD).
# torch.compile of a small multi-layer model (tests/gpu/workers_model.py),
# cold (fresh Triton, Inductor and CUDA caches), with Inductor's compile
# workers (TORCHINDUCTOR_COMPILE_THREADS=4). Inductor's compile-worker
# process forks a pool; each worker runs Triton's compile and its ptxas, and
# the pool is ended by its parent. Checks:
#  - `report` prints no per-file warning and is not partial;
#  - the traces without END of workers their parent ended are said once per
#    parent ("N workers ended by their parent (pid P)"), and no trace is
#    partial (report --json: partial false);
#  - every ptxas run in any trace (jitstall dump) is in the report, in a
#    process that descends from the program (joined by parent pid);
#  - the program's slowest first call has a pool whose runs include ptxas.
# Prints the report's first screen (its first 40 lines) for the record.
WK="$W/workers"
rm -rf "$WK"
mkdir -p "$WK/trace"
env TRITON_CACHE_DIR="$WK/c/triton" TORCHINDUCTOR_CACHE_DIR="$WK/c/inductor" \
  CUDA_CACHE_PATH="$WK/c/nv" TORCHINDUCTOR_COMPILE_THREADS=4 \
  JITSTALL_DIR="$WK/trace" LD_PRELOAD="$PRELOAD" PYTHONUNBUFFERED=1 \
  python3 "$G/workers_model.py" >"$WK/traced.out" 2>"$WK/traced.err"
rc=$?
if [ $rc != 0 ]; then
  fail "workers: the program failed ($rc)"
  tail -5 "$WK/traced.err" | sed 's/^/== workers: /'
else
  NO_COLOR=1 "$J" report "$WK/trace" >"$WK/report.txt" 2>"$WK/report.err"
  "$J" report --json "$WK/trace" >"$WK/report.json" 2>>"$WK/report.err"
  for t in "$WK"/trace/*.jst; do "$J" dump --json "$t"; done >"$WK/dump.jsonl" 2>/dev/null
  echo "== workers: $(ls "$WK"/trace/*.jst | wc -l) traces; the report's first screen:"
  head -40 "$WK/report.txt" | sed 's/^/   | /'
  if grep -q 'partial trace\|warning' "$WK/report.err"; then
    fail "workers: report warns: $(grep -c 'warning' "$WK/report.err") line(s)"
    head -3 "$WK/report.err" | sed 's/^/== workers: /'
  else
    ok "workers: no per-file warning"
  fi
  if out=$(python3 - "$WK" <<'PY'
import collections, json, sys
d = sys.argv[1]
rep = json.load(open(d + "/report.json"))
errs = []
if rep.get("partial"):
    errs.append("the report is partial")
procs = {p["pid"]: p for p in rep["processes"]}
# every ptxas compile record of every trace, by process
ptxas = collections.Counter()
pid = None
for l in open(d + "/dump.jsonl"):
    r = json.loads(l)
    if r["type"] == "process":
        pid = r["pid"]
    elif r["type"] == "compile" and r.get("compiler") == "ptxas":
        # `ptxas --version` (Triton and Inductor ask it in each process) is
        # a probe, no compile: the report leaves it out
        if not {"--version", "-V"} & set(r.get("argv", [])):
            ptxas[pid] += 1
if not ptxas:
    errs.append("no ptxas compile (other than --version probes) in any trace")
main = [p for p in procs.values() if p["ppid"] not in procs]
def descends(p, anc):
    for _ in range(32):
        if p["ppid"] == anc:
            return True
        if p["ppid"] not in procs:
            return False
        p = procs[p["ppid"]]
    return False
roots = [m["pid"] for m in main if m.get("first_calls")]
for w, n in ptxas.items():
    got = sum(1 for c in procs[w]["compiles"] if c["compiler"] == "ptxas") if w in procs else 0
    if got != n:
        errs.append(f"pid {w}: {n} ptxas in its trace, {got} in the report")
    if not any(w == r or descends(procs[w], r) for r in roots):
        errs.append(f"pid {w}: its ptxas does not join the program's run")
ended = collections.Counter(p["ended_by_parent"] for p in procs.values() if p.get("ended_by_parent"))
txt = open(d + "/report.txt").read()
import re
for w, n in ptxas.items():
    # under its parent ("pid W  ptxas N (...)") or in a block of its own
    if not re.search(rf"\n    pid {w} +ptxas {n} \(", txt) and f"\nProcess {w} " not in txt:
        errs.append(f"pid {w}: its {n} ptxas are not in the text report")
for parent, n in ended.items():
    line = f"{n} {'worker' if n == 1 else 'workers'} ended by {'its' if n == 1 else 'their'} parent (pid {parent})"
    if txt.count(line) != 1:
        errs.append(f"'{line}' appears {txt.count(line)} times")
pools = [pl for r in roots for f in procs[r]["first_calls"] for pl in f["pools"]]
if not any(pl["runs"].get("ptxas") for pl in pools):
    errs.append(f"no pool with ptxas in the program's first calls: {pools}")
workers = sum(1 for p in procs.values() if p["pid"] not in roots)
print(f"{len(procs)} traces, {workers} not the program's; {sum(ptxas.values())} ptxas in "
      f"{len(ptxas)} processes; ended by their parent: {dict(ended)}; pools: "
      + "; ".join(f"{pl['workers']} workers {pl['runs']} {pl['dur_ns'] / 1e6:.1f} ms" for pl in pools))
for e in errs:
    print("ERR " + e)
PY
  ); then
    echo "== workers: $(grep -v '^ERR' <<<"$out")"
    if grep -q '^ERR' <<<"$out"; then
      grep '^ERR' <<<"$out" | sed 's/^ERR /FAIL: workers: /'
      fail "workers: $(grep -c '^ERR' <<<"$out") check(s) failed"
    else
      ok "workers: every worker's ptxas in the run, the workers said once, their compiles in the first call's pool"
    fi
  else
    fail "workers: the check script failed"
  fi
  grep -E '^(FIRST_CALL_NS|POOL)' "$WK/traced.out" | sed 's/^/== workers: /'
fi
