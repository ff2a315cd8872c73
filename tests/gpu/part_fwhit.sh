# tests/gpu/part_fwhit.sh: a framework's warm second process and a first
# call's window, on the real GPU. Sourced by tests/gpu/run.sh
# (JITSTALL_GPU_PARTS=fwhit runs only this part), with its helpers (ok, fail,
# $J, $W, $G, $PRELOAD); never exits, guards every step.
# Through tests/gpu/fw_first_call.py (it times its own first call):
#  - triton, compile (torch.compile) and jax: a first untraced process fills
#    fresh TRITON_CACHE_DIR / TORCHINDUCTOR_CACHE_DIR / JAX_COMPILATION_CACHE_DIR
#    caches, then a second, traced process runs on them. Its report must give
#    no "keep the cache" fix (triton_cache, inductor_cache, jax_cache), the
#    measured call's first call must say cache "hit" with where its time went
#    (a named phase of its Python, or the framework's own compile events in
#    it), and a framework_aot fix must name where the time went;
#  - numba, cold: the report's first call must not start before the program's
#    call by more than 5% of it (driver start-up in set-up is not the call).
# Prints one "FIG" line per case and the first call's report lines.
FH="$W/fwhit"
mkdir -p "$FH"
fh_check() { # fh_check MODE DIR: the checks on DIR/report.json and DIR/traced.out
  python3 - "$1" "$2" <<'PY'
import json, sys
mode, d = sys.argv[1], sys.argv[2]
out = dict(l.split(None, 1) for l in open(d + "/traced.out").read().split("\n")
           if l.startswith("FIRST_CALL"))
measured = int(out["FIRST_CALL_NS"])
t0, t1 = (int(x) for x in out["FIRST_CALL_MONO"].split())
rep = json.load(open(d + "/report.json"))
best = None
for p in rep.get("processes", []):
    for fc in p.get("first_calls", []) or []:
        end = fc["start_ns"] + fc["dur_ns"]
        if t0 <= end <= t1 + 1000000 and (best is None or fc["dur_ns"] > best["dur_ns"]):
            best = fc
errs = []
kinds = {x["kind"]: x["text"] for x in rep.get("fixes", [])}
if not best:
    errs.append("no first call inside the program's timing")
elif mode == "numba":
    early = t0 - best["start_ns"]
    if early > 0.05 * measured:
        errs.append(f"first call starts {early / 1e6:.0f} ms before the program's call")
else:
    if best.get("cache") != "hit":
        errs.append(f"first call cache {best.get('cache')}, not hit")
    if {"triton_cache", "inductor_cache", "jax_cache"} & set(kinds):
        errs.append("a keep-the-cache fix for a cache that hit: " + ", ".join(sorted(kinds)))
    named = [x for x in best.get("phases", []) if x["phase"] != "other"]
    # or the framework said where the time went: its own compile rows
    # (docs/framework-events.md) in the first call
    own = [c for p in rep.get("processes", []) for c in p.get("compiles", [])
           if c["compiler"] == "framework" and c["tid"] == best["tid"] and
           best["start_ns"] <= c["start_ns"] < best["start_ns"] + best["dur_ns"]]
    if not named and not own:
        errs.append("no named phase in the first call's Python, no framework event in it")
    if "framework_aot" not in kinds and "framework_cost" not in kinds:
        errs.append("no framework_aot / framework_cost fix")
ph = ",".join(f"{x['phase']}({x['func']})={x['dur_ns'] / 1e6:.0f}ms"
              for x in (best or {}).get("phases", []))
bl = ",".join(f"{b['cause']}={b['dur_ns'] / 1e6:.0f}ms" for b in (best or {}).get("blame", []))
ph = ph + " blame=" + bl
print(("ok" if not errs else "fail") + f" measured={measured / 1e6:.0f}ms " +
      (f"report={best['dur_ns'] / 1e6:.0f}ms start_early={(t0 - best['start_ns']) / 1e6:.0f}ms "
       f"cache={best.get('cache')} phases={ph} " if best else "") + "; ".join(errs))
PY
}
for mode in triton compile jax numba; do
  envs=()
  if [ "$mode" = numba ]; then
    np23=${JITSTALL_GPU_NP23:-/tmp/np23}
    if ! PYTHONPATH="$np23" python3 -c "import numba.cuda" 2>/dev/null; then
      fail "fwhit/numba: numba.cuda cannot be imported (JITSTALL_GPU_NP23=$np23)"
      continue
    fi
    envs=(PYTHONPATH="$np23")
  fi
  d="$FH/$mode"
  rm -rf "$d"
  mkdir -p "$d/trace"
  caches=(TRITON_CACHE_DIR="$d/c/triton" TORCHINDUCTOR_CACHE_DIR="$d/c/inductor" CUDA_CACHE_PATH="$d/c/nv"
    JAX_COMPILATION_CACHE_DIR="$d/c/jax" JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0
    JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=-1)
  if [ "$mode" != numba ]; then # the first process fills the caches
    env "${envs[@]}" "${caches[@]}" python3 "$G/fw_first_call.py" "$mode" >"$d/first.out" 2>&1
  fi
  env "${envs[@]}" "${caches[@]}" JITSTALL_DIR="$d/trace" LD_PRELOAD="$PRELOAD" PYTHONUNBUFFERED=1 \
    python3 "$G/fw_first_call.py" "$mode" >"$d/traced.out" 2>"$d/traced.err"
  if [ $? != 0 ]; then
    fail "fwhit/$mode: the program failed"
    tail -5 "$d/traced.err" | sed "s/^/== fwhit $mode: /"
    continue
  fi
  NO_COLOR=1 "$J" report "$d/trace" >"$d/report.txt" 2>"$d/report.err"
  "$J" report --json "$d/trace" >"$d/report.json" 2>>"$d/report.err"
  line=$(fh_check "$mode" "$d" 2>&1 | tail -1)
  echo "FIG fwhit/$mode $line"
  case "$line" in
    ok*) ok "fwhit/$mode: ${line#ok }" ;;
    *) fail "fwhit/$mode: ${line#fail }" ;;
  esac
  sed -n '/First calls/,+12p' "$d/report.txt" | sed "s/^/== fwhit $mode report: /"
  grep -E '^  [0-9]+\. saves' "$d/report.txt" | head -3 | sed "s/^/== fwhit $mode fix: /"
done
