# tests/gpu/part_harden.sh: the preload's hardening checked on the real driver (sourced
# by tests/gpu/run.sh; uses run_case, check, fresh, ok, fail, $J, $PRELOAD, $P,
# $C, $W, $G, $cc). Never exits; each step is guarded.
#  1. A cudart program that launches a kernel and then execs /bin/echo: the
#     trace ends with END "exec" (exec_path /bin/echo), is complete, and the
#     report does not call the process killed.
#  2. The driver test program built with -fsanitize=thread, on the real
#     libcuda: same output and exit code with and without the preload, and its
#     load in the trace.

# ---- 1. exec after the first kernel (cudart) ----
if nvcc -gencode "arch=compute_${cc},code=sm_${cc}" "$G/harden_exec.cu" -o "$P/harden_exec" 2>"$W/harden_exec.build"; then
  c=$(fresh "$C/harden_exec")
  run_case harden_exec "$c" -- "$P/harden_exec" /bin/echo "exec'd echo"
  d="$W/t/harden_exec"
  if grep -qx "exec'd echo" "$d/pre.out"; then ok "harden_exec: the exec happened under the preload"
  else fail "harden_exec: no output from the exec'd program"; fi
  if [ -s "$d/dump.err" ] && grep -q truncated "$d/dump.err"; then
    fail "harden_exec: trace truncated: $(cat "$d/dump.err")"
  else ok "harden_exec: trace complete"; fi
  endrec=$(python3 -c 'import json,sys
e=[json.loads(l) for l in open(sys.argv[1]) if l.strip()]
e=[r for r in e if r.get("type")=="end"]
print("%s|%s|%d" % (e[-1].get("end_reason"), e[-1].get("exec_path"), len(e)) if e else "none")' "$d/dump.jsonl" 2>/dev/null)
  echo "== harden_exec end record (reason|exec_path|count): $endrec"
  if [ "$endrec" = "exec|/bin/echo|1" ]; then ok "harden_exec: END exec /bin/echo"
  else fail "harden_exec: END record: $endrec"; fi
  if "$J" report "$d"/trace/*.jst >"$d/report.txt" 2>&1 && ! grep -q killed "$d/report.txt"; then
    ok "harden_exec: report does not call the process killed"
  else fail "harden_exec: report: $(grep -m1 killed "$d/report.txt")"; fi
else
  fail "harden_exec: nvcc failed: $(head -3 "$W/harden_exec.build")"
fi

# ---- 2. a ThreadSanitizer-built driver program on the real driver ----
cuinc=$(dirname "$(command -v nvcc)")/../include
if gcc -fsanitize=thread -g -I"$cuinc" "$G/gpu_driver.c" -o "$P/gpu_driver_tsan" \
    -L"$cuinc/../lib64" -L"$cuinc/../lib64/stubs" -lcuda 2>"$W/tsan.build"; then
  c=$(fresh "$C/harden_tsan")
  run_case harden_tsan "$c" TSAN_OPTIONS=report_signal_unsafe=0 -- "$P/gpu_driver_tsan" "$P/heavy_sass.fatbin"
  n=$(grep -c '"call_id":"cuModuleLoadData"' "$W/t/harden_tsan/dump.jsonl" 2>/dev/null)
  echo "== harden_tsan: loads traced ${n:-0}; TSan warnings without/with the preload: $(grep -c 'WARNING: ThreadSanitizer' "$W/t/harden_tsan/ref.err")/$(grep -c 'WARNING: ThreadSanitizer' "$W/t/harden_tsan/pre.err")"
  if [ "${n:-0}" -ge 1 ]; then ok "harden_tsan: the load is traced"; else fail "harden_tsan: no load in the trace"; fi
else
  fail "harden_tsan: gcc -fsanitize=thread failed: $(head -3 "$W/tsan.build")"
fi
