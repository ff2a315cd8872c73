# Compilers other than the driver's, on the real GPU; sourced by
# tests/gpu/run.sh (JITSTALL_GPU_PARTS=compilers runs only this part), with
# its helpers (ok, fail, $J, $W, $G, $PRELOAD).
# Four programs, each cold (fresh Triton, Inductor and CUDA caches), through
# tests/gpu/fw_first_call.py: a Triton kernel, torch.compile of a small
# function, jax.jit, and a Numba @cuda.jit kernel. Each measures its own
# first call. Checks, per program:
#  - the report's first call of the measured call (the slowest one whose
#    launch lies inside the program's timing) attributes >= 90% of the
#    measured time to named causes (blame other than "unexplained"; when the
#    report's call is longer than the measured one, its named share counts);
#  - its largest cause is the class of function with the most own time in a
#    cProfile of the same call (a separate cold run), or one within 20% of it
#    in cProfile's own figures;
#  - jitstall's own cost in the call (the self_ns of the program's records
#    inside it, plus the sampler's time in its window, sampler_ns) is <= 2%
#    of the measured first call; END's self_ns (the whole process: start-up,
#    imports' loads, exit) is shown beside it as a share of the same call.
# Each program runs three times, each with fresh framework caches: once
# untraced to warm the page cache, once traced, once under cProfile.
# Numba needs a NumPy it supports: JITSTALL_GPU_NP23 names a directory with
# NumPy 2.3 installed (pip --target), put first on PYTHONPATH for it only.
# Prints one "FIG" line per program and the table in $W/compilers_figures.md.
FW="$W/fw"
mkdir -p "$FW"
FIGS="$W/compilers_figures.md"
printf '| program | first call measured | attributed %% | largest cause | cProfile'"'"'s largest | own cost %% |\n|---|---|---|---|---|---|\n' >"$FIGS"
np23=${JITSTALL_GPU_NP23:-/tmp/np23}
for mode in triton compile jax numba; do
  envs=()
  if [ "$mode" = numba ]; then
    if ! PYTHONPATH="$np23" python3 -c "import numba.cuda" 2>/dev/null; then
      fail "compilers/numba: numba.cuda cannot be imported (JITSTALL_GPU_NP23=$np23)"
      continue
    fi
    envs=(PYTHONPATH="$np23")
  fi
  d="$FW/$mode"
  mkdir -p "$d/trace" "$d/c1" "$d/c2"
  cold0=(TRITON_CACHE_DIR="$d/c0/triton" TORCHINDUCTOR_CACHE_DIR="$d/c0/inductor" CUDA_CACHE_PATH="$d/c0/nv")
  cold1=(TRITON_CACHE_DIR="$d/c1/triton" TORCHINDUCTOR_CACHE_DIR="$d/c1/inductor" CUDA_CACHE_PATH="$d/c1/nv")
  cold2=(TRITON_CACHE_DIR="$d/c2/triton" TORCHINDUCTOR_CACHE_DIR="$d/c2/inductor" CUDA_CACHE_PATH="$d/c2/nv")
  # A first untraced run warms what is not the frameworks' caches (the page
  # cache, Python's bytecode), so that the traced and the profiled runs, cold
  # for the frameworks, are alike.
  env "${envs[@]}" "${cold0[@]}" python3 "$G/fw_first_call.py" "$mode" >"$d/warmup.out" 2>&1
  env "${envs[@]}" "${cold1[@]}" JITSTALL_DIR="$d/trace" LD_PRELOAD="$PRELOAD" PYTHONUNBUFFERED=1 \
    python3 "$G/fw_first_call.py" "$mode" >"$d/traced.out" 2>"$d/traced.err"
  rc=$?
  env "${envs[@]}" "${cold2[@]}" python3 "$G/fw_first_call.py" "$mode" --cprofile >"$d/prof.out" 2>"$d/prof.err"
  rc2=$?
  if [ $rc != 0 ] || [ $rc2 != 0 ]; then
    fail "compilers/$mode: the program failed (traced $rc, cProfile $rc2)"
    tail -5 "$d/traced.err" "$d/prof.err" | sed "s/^/== $mode: /"
    continue
  fi
  NO_COLOR=1 "$J" report "$d/trace" >"$d/report.txt" 2>"$d/report.err"
  "$J" report --json "$d/trace" >"$d/report.json" 2>>"$d/report.err"
  for t in "$d"/trace/*.jst; do "$J" dump --json "$t"; done >"$d/dump.jsonl" 2>/dev/null
  # The measured call's first call: the slowest one whose launch lies inside
  # the program's own timing. Own cost in the call: the self_ns of the
  # program's records in the call plus the sampler's time in its window;
  # END's self_ns (the whole process, start-up and exit included) is shown too.
  line=$(python3 - "$mode" "$d" <<'PY'
import json, sys
mode, d = sys.argv[1], sys.argv[2]
out = {}
for l in open(d + "/traced.out").read().split("\n"):
    if l.startswith("FIRST_CALL"):
        k, v = l.split(None, 1)
        out[k] = v
measured = int(out["FIRST_CALL_NS"])
t0, t1 = (int(x) for x in out["FIRST_CALL_MONO"].split())
prof = open(d + "/prof.out").read().split("\n")
pc = [l.split()[1] for l in prof if l.startswith("CPROFILE_CAUSE")]
pc = pc[0] if pc else "?"
try:
    rep = json.load(open(d + "/report.json"))
except Exception as e:
    print(f"{measured} 0 none {pc} -1 -1 no-report"); sys.exit()
best, bpid = None, None
for p in rep.get("processes", []):
    for fc in p.get("first_calls", []) or []:
        end = fc["start_ns"] + fc["dur_ns"]
        if t0 <= end <= t1 + 1000000 and (best is None or fc["dur_ns"] > best["dur_ns"]):
            best, bpid = fc, p.get("pid")
recs = [json.loads(l) for l in open(d + "/dump.jsonl") if l.strip()]
end_self, cur, incall, smp = 0, False, 0, {}
lo = best["start_ns"] if best else t0
hi = lo + best["dur_ns"] if best else t1
for r in recs:
    if r.get("type") == "process":
        cur = any("fw_first_call.py" in a for a in r.get("argv", []))
    if not cur:
        continue
    if r.get("type") == "end":
        end_self = max(end_self, r.get("self_ns", 0))
    elif r.get("type") in ("call", "compile") and lo <= r.get("start_ns", 0) <= hi:
        incall += r.get("self_ns", 0)
    elif r.get("type") == "sample" and lo <= r["start_ns"] <= hi:
        smp[r["before_seq"]] = max(smp.get(r["before_seq"], 0), r.get("sampler_ns", 0))
incall += sum(smp.values())
own = 100.0 * incall / measured
own_end = 100.0 * end_self / measured
if not best:
    print(f"{measured} 0 none {pc} {own:.2f} {own_end:.2f} no-first-call"); sys.exit()
named = {b["cause"]: b["dur_ns"] for b in best["blame"] if b["cause"] != "unexplained"}
# Attributed: the named part of the report's first call, as a share of the
# measured call; when the report's first call starts earlier than the
# program's timer (set-up on the same thread before the call), only the
# share of the report's own call is counted, so it never exceeds what the
# report explained.
rd = best["dur_ns"]
att = 100.0 * min(sum(named.values()) * min(1.0, measured / rd), measured) / measured
largest = max(named, key=named.get) if named else "none"
print(f"{measured} {att:.1f} {largest} {pc} {own:.2f} {own_end:.2f} kernel={best['kernel'][:40]} "
      f"report_dur={best['dur_ns']/1e6:.0f}ms sampler={sum(smp.values())/1e6:.1f}ms " +
      ",".join(f"{b['cause']}={b['dur_ns']/1e6:.0f}ms" for b in best["blame"]))
PY
)
  read -r meas att largest pc own own_end rest <<<"$line"
  echo "FIG $mode measured_ns=$meas attributed=$att% largest=$largest cprofile=$pc own_in_call=$own% own_end_self=$own_end% $rest"
  printf '| %s | %s ms | %s%% | %s | %s | %s%% (END self_ns: %s%%) |\n' "$mode" "$((meas / 1000000))" \
    "$att" "$largest" "$pc" "$own" "$own_end" >>"$FIGS"
  python3 -c "import sys; sys.exit(0 if float('$att') >= 90 else 1)" &&
    ok "compilers/$mode: $att% of the first call attributed" ||
    fail "compilers/$mode: only $att% of the first call attributed to named causes"
  # The two are separate cold runs: when the top two classes are within 20%
  # of each other in cProfile's own figures, either is the largest.
  near=$(python3 - "$d/prof.out" "$largest" "$pc" <<'PY'
import sys
by = {}
for l in open(sys.argv[1]):
    f = l.split()
    if len(f) >= 3 and f[0] == "CPROFILE_CLASS":
        by[f[1]] = float(f[2].rstrip("s"))
a, b = by.get(sys.argv[2], 0.0), by.get(sys.argv[3], 0.0)
print("near" if b > 0 and a >= 0.8 * b else "far", f"{a:.3f}s", f"{b:.3f}s")
PY
)
  if [ "$largest" = "$pc" ]; then
    ok "compilers/$mode: largest cause $largest agrees with cProfile"
  elif [ "${near%% *}" = near ]; then
    ok "compilers/$mode: largest cause $largest, cProfile's $pc, within 20% in cProfile's figures (${near#* })"
  else
    fail "compilers/$mode: largest cause $largest, cProfile's $pc (cProfile: ${near#* })"
  fi
  python3 -c "import sys; sys.exit(0 if 0 <= float('$own') <= 2 else 1)" &&
    ok "compilers/$mode: own cost $own% of the first call" ||
    fail "compilers/$mode: own cost $own% of the first call (limit 2%)"
  grep -E '^CPROFILE_(CLASS|TOP)' "$d/prof.out" | sed "s/^/== $mode cprofile: /"
  # The framework's own compile events (docs/framework-events.md): each
  # framework here publishes them, so a trace without them is a failure.
  want=$(case $mode in triton) echo triton ;; compile) echo inductor ;; *) echo "$mode" ;; esac)
  nfe=$(grep '"type":"fw_event"' "$d/dump.jsonl" | grep -c "\"framework\":\"$want\"")
  grep '"type":"note"' "$d/dump.jsonl" | grep 'framework events' | sort | uniq -c | sed "s/^/== $mode note: /"
  grep '"type":"fw_event"' "$d/dump.jsonl" | python3 -c '
import json, sys, collections
c = collections.Counter()
for l in sys.stdin:
    r = json.loads(l)
    c[(r["framework"], r["fw_stage"], r.get("fw_cache_outcome"))] += 1
for k, v in sorted(c.items()):
    print(*k, v)' | sed "s/^/== $mode fw_event: /"
  [ "$nfe" -gt 0 ] && ok "compilers/$mode: $nfe fw_event records of $want" ||
    fail "compilers/$mode: no fw_event record of $want"
  grep -c '"type":"compile"' "$d/dump.jsonl" | sed "s/^/== $mode compile records: /"
  grep -c '"type":"sample"' "$d/dump.jsonl" | sed "s/^/== $mode sample records: /"
  sed -n '/[Ff]irst call/,+14p' "$d/report.txt" | head -30 | sed "s/^/== $mode report: /"
done
cat "$FIGS"
