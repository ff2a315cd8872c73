# Calls cut short and link steps, on the real GPU. Sourced by tests/gpu/run.sh (bash,
# set -uo pipefail, no -e): uses run_case, check, fresh, ok, fail, $J, $P, $C,
# $W, $G, $ROWS. Never exits; every step is guarded.
#
# (a) Loads cut short: the cudart PTX-only program with a cold JIT of several
#     seconds, killed by `timeout 3`: the report must show its
#     cuLibraryLoadData in flight for about 3 s and `check` (no budget) exit 1.
# (b) Link steps and the JIT cache: a cuLink program (gpu_link.c) cold then
#     warm on one cache with CUPTI on: the link step's cache outcome must match
#     CUPTI (compile + cache_store -> miss_stored; cache_load -> hit).

# ---- (a) a cold JIT killed by timeout ----
if [ -x "$P/gpu_cudart_big" ]; then
  c=$(fresh "$C/if_big")
  # timeout's SIGTERM ends both runs the same way: exit 124, same stdout.
  # Progress every 250 ms (default 1000): the in-flight time is then short of
  # the truth by at most 0.25 s.
  run_case inflight_big "$c" JITSTALL_PROGRESS_MS=250 -- timeout 3 "$P/gpu_cudart_big"
  d="$W/t/inflight_big"
  NO_COLOR=1 "$J" report "$d/trace" >"$d/report.txt" 2>&1 || fail "inflight_big: report failed"
  "$J" report --json "$d/trace" >"$d/report.json" 2>/dev/null || fail "inflight_big: report --json failed"
  "$J" check "$d/trace" >"$d/check.txt" 2>"$d/check.err"
  rc_check=$?
  python3 - "$d/report.json" >"$d/inflight.txt" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
fl = [m for m in p["modules"] if m.get("in_flight")]
if not fl:
    print("no module in flight (did the JIT end before the 3 s timeout?)")
    sys.exit(1)
m = fl[0]
d = m["dur_ns"] / 1e9
t = (p["ttfk_ns"] or 0) / 1e9
print(f"{m['call']} in flight {d:.2f} s, time to first kernel > {t:.2f} s, "
      f"verdict {m['verdict']}, culprit {m['culprit']}")
# Killed 3 s after start; the load began after cuInit and context creation
# (a few hundred ms), and the last progress record is at most 0.25 s old.
sys.exit(0 if m["call"].startswith("cuLibraryLoadData") and 1.8 <= d <= 3.05
         and 2.5 <= t <= 3.1 and m["culprit"] and p["ttfk_in_flight"] else 1)
PY
  if [ $? -eq 0 ]; then ok "inflight_big: $(cat "$d/inflight.txt")"
  else fail "inflight_big: $(cat "$d/inflight.txt")"; fi
  line=$(grep -m1 'in flight  ' "$d/report.txt" | sed 's/^ *//')
  fl=$(grep -m1 '^FAIL .*in-flight' "$d/check.txt" | cut -c1-160)
  echo "== in flight (timeout 3, cold JIT): report: ${line:-none}"
  # timeout sends SIGTERM: the preload records it, so the time is exact.
  case "$line" in
    *"when SIGTERM ended the process, after "*) ok "inflight_big: the report names SIGTERM" ;;
    *) fail "inflight_big: no SIGTERM in the in-flight line: ${line:-none}" ;;
  esac
  echo "== in flight (timeout 3, cold JIT): check exit $rc_check: ${fl:-no FAIL line}"
  if [ "$rc_check" -eq 1 ] && [ -n "$fl" ]; then ok "inflight_big: check fails on the load in flight"
  else fail "inflight_big: check exited $rc_check: $(head -3 "$d/check.txt" "$d/check.err")"; fi
else
  fail "inflight_big: $P/gpu_cudart_big was not built"
fi

# ---- (b) a link step, cold then warm, against CUPTI ----
if nvcc "$G/gpu_link.c" -o "$P/gpu_link" -lcuda >"$W/gpu_link.build" 2>&1; then
  c=$(fresh "$C/link")
  run_case link_cold "$c" JITSTALL_CUPTI=1 -- "$P/gpu_link" "$P/heavy_ptx75.ptx"
  check link_cold --call cuLinkAddData --verdict ptx_jit --cache miss_stored --cupti compile,cache_store --result 0
  run_case link_warm "$c" JITSTALL_CUPTI=1 -- "$P/gpu_link" "$P/heavy_ptx75.ptx"
  check link_warm --call cuLinkAddData --verdict ptx_jit --cache hit --cupti cache_load,!compile --result 0
  echo "== link steps vs CUPTI: case|call|verdict|cache|reason|ms|cupti|result"
  grep '^link_' "$ROWS" | sed 's/^/== /'
  for k in cold warm; do
    NO_COLOR=1 "$J" report "$W/t/link_$k/trace" >"$W/t/link_$k/report.txt" 2>&1
    echo "== link $k: report cache line: $(grep -m1 '^     cache ' "$W/t/link_$k/report.txt" | sed 's/^ *//'); $(grep -m1 'JIT in the whole run' "$W/t/link_$k/report.txt" | sed 's/^ *//')"
  done
  if grep -q '^     cache      miss_stored' "$W/t/link_cold/report.txt" &&
     grep -q '^     cache      hit' "$W/t/link_warm/report.txt"; then
    ok "link steps: the report shows miss_stored cold and hit warm"
  else
    fail "link steps: the report's cache lines are not miss_stored cold, hit warm"
  fi
else
  fail "gpu_link: nvcc failed: $(head -3 "$W/gpu_link.build")"
fi
