#!/usr/bin/env bash
# Completed rare records reach the file at once: a failed call (a kernel
# lookup that fails, a record that is otherwise batched) made just before the
# process calls _exit is in its trace, which has no END record.
. "$(dirname "$0")/lib.sh"
run_plain plain "$BIN/prog_workers" lookup_exit "$WORK" "$WORK" "$FIX" sm90.cubin
run_traced traced "$BIN/prog_workers" lookup_exit "$WORK" "$WORK" "$FIX" sm90.cubin
expect_rc plain 0
same_behaviour plain traced
grep -q '^lookup: [1-9]' "$WORK/plain.out" || fail "the lookup did not fail: $(cat "$WORK/plain.out")"
dump_json "$(the_trace traced)" "$WORK/t.json"
check_json "$WORK/t.json" <<'PY'
expect(not of_type("end"), "_exit wrote no END record")
fails = [c for c in calls() if c["call_id"] == "cuModuleGetFunction"]
expect(len(fails) == 1 and fails[0]["result"] != 0, f"the failed lookup is in the trace: {fails}")
PY
echo "ok: a failed call just before _exit is in the trace"
