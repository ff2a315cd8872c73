# What tracing costs, on the real GPU. Sourced by tests/gpu/run.sh
# (bash, set -uo pipefail, no -e): uses ok, fail, $J, $PRELOAD, $P, $W, $G,
# $C, $cc. Never exits; every step is guarded. About 1 minute.
#
# (a) warm start, plain vs JITSTALL_DISABLE=1 vs traced: a cudart program
#     with SASS (no JIT), 45 interleaved pairs, wall and CPU time;
#     target: traced adds at most max(1 ms, 1% of plain), judged by the 95%
#     interval of the paired differences (tests/gpu/cost_start.py), and
#     the traced runs' own accounted time (END's self_ns), their median;
# (b) where a traced start's own time goes: JITSTALL_DEBUG=1 phase lines,
#     and the report's self_ns;
# (c) launch cost after the first launch, plain vs traced (100k empty launches
#     timed in-program, 3 interleaved pairs);
# (d) first-load overhead against CUPTI: the cold JIT of heavy_ptx75.ptx with
#     JITSTALL_CUPTI=1: jitstall's dur_ns of the load vs CUPTI's compile +
#     cache store, and the load's own self_ns.
K="$W/cost"
mkdir -p "$K"
if ! nvcc -gencode "arch=compute_${cc},code=sm_${cc}" "$G/cost_prog.cu" -o "$P/cost_prog" \
    >"$K/nvcc.log" 2>&1; then
  fail "cost: cost_prog did not build: $(tail -3 "$K/nvcc.log")"
else
  # (a) warm start: 45 interleaved pairs, wall and CPU (tests/gpu/cost_start.py)
  mkdir -p "$K/tr"
  python3 "$G/cost_start.py" --cli "$J" 45 "$PRELOAD" "$K/tr" "$P/cost_prog" start >"$K/start.out" 2>&1
  rc=$?
  sed 's/^/== cost: /' "$K/start.out"
  case $rc in
    0) ok "cost: warm start: added time within the target (95% interval)" ;;
    3) ok "cost: warm start: added time not shown above the target (the interval holds it)" ;;
    *) fail "cost: warm start: $(tail -2 "$K/start.out")" ;;
  esac

  # (b) where the time goes, and what the trace says about it
  rm -rf "$K/dbg"; mkdir -p "$K/dbg"
  JITSTALL_DEBUG=1 JITSTALL_DIR="$K/dbg" LD_PRELOAD="$PRELOAD" "$P/cost_prog" start \
    >/dev/null 2>"$K/dbg.err"
  sed -n 's/^jitstall\[[0-9]*\]: cost: /== cost phase: /p' "$K/dbg.err"
  sed -n 's/^jitstall\[[0-9]*\]: \(cache at exit: .*\)/== cost: \1/p' "$K/dbg.err"
  own=$("$J" report --json "$K/dbg" 2>/dev/null | python3 -c \
    'import json,sys; print(json.load(sys.stdin)["processes"][0]["self_ns"])' 2>/dev/null)
  if [ -n "$own" ] && [ "$own" != "None" ] && [ "$own" -gt 0 ] 2>/dev/null; then
    ok "cost: report shows self_ns $own"
    echo "== cost: report: $("$J" report "$K/dbg" 2>/dev/null | grep -m1 "jitstall's own cost")"
  else
    fail "cost: no self_ns in the report of a traced start ($own)"
  fi
  grep -q "cost: own total" "$K/dbg.err" && ok "cost: JITSTALL_DEBUG=1 prints the phases" ||
    fail "cost: no phase lines with JITSTALL_DEBUG=1: $(head -3 "$K/dbg.err")"

  # (c) launch cost after the first launch
  : >"$K/launch.txt"
  for i in 1 2 3; do
    a=$("$P/cost_prog" launch 100000 2>&1 >/dev/null | sed -n 's/^launch_ns //p')
    b=$(JITSTALL_DIR="$K/tr" LD_PRELOAD="$PRELOAD" "$P/cost_prog" launch 100000 2>&1 >/dev/null |
      sed -n 's/^launch_ns //p')
    echo "${a:--1} ${b:--1}" >>"$K/launch.txt"
    rm -f "$K"/tr/*.jst
  done
  line=$(python3 - "$K/launch.txt" <<'PY'
import statistics as st, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
p = [r[0] for r in rows]; t = [r[1] for r in rows]
print(f"launch after the first (100k empty kernels, 3 runs each): plain median {st.median(p):.0f} ns, "
      f"traced median {st.median(t):.0f} ns, added {st.median(t) - st.median(p):+.0f} ns")
sys.exit(0 if min(p + t) > 0 and st.median(t) - st.median(p) < 500 else 1)
PY
  )
  rc=$?
  echo "== cost: $line"
  [ $rc -eq 0 ] && ok "cost: launch cost within noise" || fail "cost: launch: $line"
fi

# (d) first load against CUPTI: reuse the cold CUPTI run of the matrix
# (m_cold: gpu_driver heavy_ptx75.ptx, JITSTALL_CUPTI=1), else run one.
d="$W/t/m_cold/dump.jsonl"
if [ ! -s "$d" ]; then
  rm -rf "$K/cupti" "$K/cupti_cache"; mkdir -p "$K/cupti"
  CUDA_CACHE_PATH="$K/cupti_cache" JITSTALL_CUPTI=1 JITSTALL_DIR="$K/cupti" LD_PRELOAD="$PRELOAD" \
    "$P/gpu_driver" "$P/heavy_ptx75.ptx" >/dev/null 2>&1
  "$J" dump --json "$K"/cupti/*.jst >"$K/cupti.jsonl" 2>/dev/null
  d="$K/cupti.jsonl"
fi
line=$(python3 - "$d" <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
loads = [r for r in recs if r.get("type") == "call" and r.get("verdict") in ("ptx_jit", 2)]
cu = [r for r in recs if r.get("type") == "cupti_jit"]
if not loads or not cu:
    print(f"no JIT load ({len(loads)}) or no CUPTI record ({len(cu)})"); sys.exit(1)
ld = loads[0]
t0, t1 = ld["start_ns"], ld["start_ns"] + ld["dur_ns"]
mine = [c for c in cu if c["cupti_start_ns"] < t1 and c["cupti_end_ns"] > t0]
cupti_ns = sum(c["cupti_end_ns"] - c["cupti_start_ns"] for c in mine)
ops = ",".join(str(c.get("cupti_op")) for c in mine)
own = ld.get("self_ns")
print(f"first load (cold JIT, CUPTI on): jitstall dur {ld['dur_ns'] / 1e6:.1f} ms, CUPTI {ops} "
      f"{cupti_ns / 1e6:.1f} ms, driver time outside CUPTI's records "
      f"{(ld['dur_ns'] - cupti_ns) / 1e6:+.1f} ms, jitstall's own work in the call "
      f"{(own or 0) / 1e6:.2f} ms")
# dur_ns and CUPTI's records time the same driver work from two clocks: they
# are printed side by side; the check is only that both are there.
sys.exit(0 if mine and own is not None else 1)
PY
)
rc=$?
echo "== cost: $line"
[ $rc -eq 0 ] && ok "cost: first-load overhead measured against CUPTI" || fail "cost: first load vs CUPTI: $line"

# (e) The benchmark's idle and simulated-start figures, on this machine (many
# idle cores: steadier than a shared development VM).
X="$B/tests/bench"
if [ -x "$X/bench_cost" ]; then
  "$X/bench_cost" idle "$B/libjitstall.so" 400 /bin/true >"$K/idle.out" 2>&1
  echo "== cost: idle /bin/true: $(tail -1 "$K/idle.out")"
  if [ -e "$X/libjst_bench_empty.so" ]; then
    "$X/bench_cost" idle "$X/libjst_bench_empty.so" 400 /bin/true >"$K/idle0.out" 2>&1
    echo "== cost: idle /bin/true, an empty .so preloaded (the toolchain's floor): $(tail -1 "$K/idle0.out")"
  fi
  if [ -e "$X/libjst_bench_bare.so" ]; then
    "$X/bench_cost" idle "$X/libjst_bench_bare.so" 400 /bin/true >"$K/idle00.out" 2>&1
    echo "== cost: idle /bin/true, the barest .so preloaded (any preload's floor): $(tail -1 "$K/idle00.out")"
  fi
  if [ -x "$X/bench_procaddr" ]; then
    echo "== cost: cuGetProcAddress, plain: $("$X/bench_procaddr" 2>&1)"
    echo "== cost: cuGetProcAddress, preloaded: $(JITSTALL_DIR="$K/tr" LD_PRELOAD="$PRELOAD" "$X/bench_procaddr" 2>&1)"
    rm -f "$K"/tr/*.jst
  fi
  "$X/bench_cost" idle "$B/libjitstall.so" 200 /bin/sh -c 'true; true' >"$K/idle_sh.out" 2>&1
  echo "== cost: idle sh -c: $(tail -1 "$K/idle_sh.out")"
  if grep -q "CPU" "$K/idle.out"; then ok "cost: idle figures printed"; else fail "cost: idle: $(tail -2 "$K/idle.out")"; fi
  if [ -e "$B/simdriver/libcuda.so.1" ] && [ -x "$B/tests/e2e/prog_direct" ]; then
    sc=$(mktemp -d)
    (export LD_LIBRARY_PATH="$B/simdriver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
     CUDA_CACHE_PATH="$sc" "$X/bench_cost" start "$B/libjitstall.so" 40 "$B/tests/e2e/prog_direct" \
       "$top/tests/fixtures" 0 module sm90.fatbin) >"$K/simstart.out" 2>&1
    rm -rf "$sc"
    sed -n 's/^  \(plain\|traced\|preload\)/== cost: simulated start, \1/p; s/^  added/== cost: simulated start, added/p' "$K/simstart.out"
  fi
else
  echo "== cost: no bench_cost in $B (a build without tests): idle figures skipped"
fi
