#!/usr/bin/env bash
# A process killed with SIGKILL right after its loads leaves a trace that
# `jitstall dump` reads up to the last event: it says "truncated" on stderr,
# exits 0, and every load made before the kill is there.
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/killed.traces"
LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/killed.traces" \
    "$BIN/prog_direct" "$FIX" 0 module ptx75.fatbin sm90.fatbin --hold >"$WORK/killed.out" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
    grep -q '^holding$' "$WORK/killed.out" && break
    kill -0 "$pid" 2>/dev/null || fail "the program ended before holding: $(cat "$WORK/killed.out")"
    sleep 0.1
done
grep -q '^holding$' "$WORK/killed.out" || fail "the program never reached its hold"
kill -9 "$pid"
wait "$pid" 2>/dev/null || true

trace=$(the_trace killed)
rc=0
"$JST_CLI" dump --json "$trace" >"$WORK/killed.json" 2>"$WORK/killed.err" || rc=$?
[ "$rc" = 0 ] || fail "dump of a killed process's trace exited $rc: $(cat "$WORK/killed.err")"
grep -q truncated "$WORK/killed.err" || fail "dump did not say truncated: $(cat "$WORK/killed.err")"
check_json "$WORK/killed.json" <<'PY'
expect(not of_type("end"), "no end record after SIGKILL")
ld = loads()
expect([l["call_id"] for l in ld] == ["cuModuleLoadData", "cuModuleLoadData"], "both loads on disk")
expect([l["verdict"] for l in ld] == ["ptx_jit", "sass"], "with their verdicts")
expect(all(l["result"] == 0 and l["dur_ns"] > 0 for l in ld), "results and durations")
expect(len(calls("cuLaunchKernel")) == 2, "the first launches are on disk too")
PY
# The text form reads it too.
"$JST_CLI" dump "$trace" >/dev/null 2>&1 || fail "text dump of the truncated trace failed"
echo "ok: SIGKILL leaves a readable trace"
