# A server on the real GPU: ready, late compiles, `status` while it starts.
# Sourced by tests/gpu/run.sh (bash, set -uo pipefail, no -e): uses ok, fail,
# $J, $PRELOAD, $G, $W. Never exits; every step is guarded. Needs PyTorch with
# CUDA, and the preload's JITSTALL_READY (issue 32).
#
# server_like.py warms up torch.compile(dynamic=False) on two shapes, writes a
# ready file (JITSTALL_READY=file:...), then serves a third shape, which
# recompiles. While it runs, `jitstall status --json` is polled every 0.5 s:
# it must see the process ready, then exited (and says whether a poll caught it
# compiling: a compiler child is only in the trace once reaped, so Inductor's
# compiles show as "compiling" only while a load or runtime compile is open).
# Compile threads 1: Triton's ptxas runs as a child of the traced process.
# Then `report` must list the late compile and `check --max-late-compiles 0`
# must fail.
if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  d="$W/t/server"
  rm -rf "$d"
  mkdir -p "$d/trace"
  TORCHINDUCTOR_COMPILE_THREADS=1 TORCHINDUCTOR_CACHE_DIR="$d/inductor" TRITON_CACHE_DIR="$d/triton" \
    JITSTALL_DIR="$d/trace" JITSTALL_READY="file:$d/ready" LD_PRELOAD="$PRELOAD" \
    python3 "$G/server_like.py" "$d/ready" >"$d/out" 2>"$d/err" &
  spid=$!
  : >"$d/phases"
  while kill -0 "$spid" 2>/dev/null; do
    "$J" status --json --stuck 600 "$d/trace" 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin)["processes"]:
    if p["program"].startswith("python"):
        print(p["phase"], p.get("compiling") or "")' >>"$d/phases"
    sleep 0.5
  done
  wait "$spid"
  rc_srv=$?
  "$J" status --json "$d/trace" 2>/dev/null | python3 -c '
import json, sys
for p in json.load(sys.stdin)["processes"]:
    if p["program"].startswith("python"):
        print(p["phase"])' >>"$d/phases"
  seen=$(awk '{print $1}' "$d/phases" | uniq | tr '\n' ' ')
  echo "== server: status phases seen: $seen"
  echo "== server: a compiling line: $(grep -m1 '^compiling' "$d/phases")"
  [ "$rc_srv" -eq 0 ] || fail "server: server_like.py exited $rc_srv: $(tail -3 "$d/err")"
  grep -q '^ready' "$d/phases" && grep -q '^exited' "$d/phases" &&
    ok "server: status said ready, then exited" ||
    fail "server: status phases were: $seen"
  NO_COLOR=1 "$J" report "$d/trace" >"$d/report.txt" 2>&1
  sed -n '/Time to ready/p; /Late compiles/,/^  [A-Z]/p' "$d/report.txt" | head -20 | sed 's/^/== server: /'
  grep -q 'Late compiles  [1-9]' "$d/report.txt" && ok "server: the report lists late compiles" ||
    fail "server: no late compile in the report"
  "$J" check --max-late-compiles 0 "$d/trace" >"$d/check.txt" 2>&1
  rc_check=$?
  echo "== server: check --max-late-compiles 0: exit $rc_check: $(grep -m1 '^FAIL' "$d/check.txt" | cut -c1-200)"
  [ "$rc_check" -eq 1 ] && ok "server: check fails on the late compile" ||
    fail "server: check exited $rc_check"
else
  echo "== server: skipped (no PyTorch with CUDA)"
fi
