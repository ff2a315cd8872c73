#!/usr/bin/env bash
# exec ends a trace: END with end_reason "exec" and exec_path, written before
# the real exec, so the trace is complete and the report does not call the
# process killed. A failed exec goes on in a second file whose first note names
# the first; a vfork child's exec leaves the parent's trace alone. Output and
# exit status never change.
. "$(dirname "$0")/lib.sh"

# 1. A successful exec (of a program that touches no CUDA: no trace of its own).
run_plain plain_ok "$BIN/prog_exec" "$FIX" exec /bin/echo "echo ran"
run_traced ok "$BIN/prog_exec" "$FIX" exec /bin/echo "echo ran"
expect_rc plain_ok 0
same_behaviour plain_ok ok
grep -qx 'echo ran' "$WORK/ok.out" || fail "the exec did not happen"
t=$(the_trace ok)
dump_json "$t" "$WORK/ok.json"
! grep -q truncated "$WORK/ok.json.err" || fail "the trace of an exec'd process is truncated"
check_json "$WORK/ok.json" <<'PY'
e = of_type("end")
expect(len(e) == 1 and e[0]["end_reason"] == "exec" and e[0]["exec_path"] == "/bin/echo", f"END: {e}")
expect(len(loads()) == 1 and len(calls("cuLaunchKernel")) == 1, "the load and launch before exec")
PY
"$JST_CLI" report "$t" >"$WORK/ok.report" 2>&1 || fail "report failed"
! grep -q 'killed' "$WORK/ok.report" || fail "the report calls an exec'd process killed"

# 2. A failed exec: the process goes on, into a second file.
run_plain plain_fail "$BIN/prog_exec" "$FIX" fail
run_traced fail "$BIN/prog_exec" "$FIX" fail
expect_rc plain_fail 5
same_behaviour plain_fail fail
traces=$(traces_of fail)
[ "$(echo "$traces" | wc -l)" = 2 ] || fail "a failed exec: expected 2 trace files: $traces"
first="" second=""
for f in $traces; do
    dump_json "$f" "$WORK/f.json"
    ! grep -q truncated "$WORK/f.json.err" || fail "$f is truncated"
    reason=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["type"] == "end": print(r["end_reason"])' "$WORK/f.json")
    case "$reason" in
    exec) first=$f; cp "$WORK/f.json" "$WORK/first.json" ;;
    exit) second=$f; cp "$WORK/f.json" "$WORK/second.json" ;;
    *) fail "unexpected end_reason '$reason' in $f" ;;
    esac
done
[ -n "$first" ] && [ -n "$second" ] || fail "one trace must end with exec, one with exit"
check_json "$WORK/second.json" first="$(basename "$first")" <<'PY'
first = arg["first"]
notes = [n["message"] for n in of_type("note")]
expect(any(m.startswith("exec of /nonexistent/jst-no-such-program failed (No such file or directory)")
           and m.endswith("continues from " + first) for m in notes), f"the link to the first file: {notes}")
e = of_type("end")
expect(len(e) == 1 and e[0].get("exit_status") == 5, f"END: {e}")
expect([l["call_id"] for l in loads()] == ["cuModuleLoadData"], "the load after the failed exec")
PY

# 3. exec in a vfork child: the parent's single trace goes on to its exit.
run_plain plain_vfork "$BIN/prog_exec" "$FIX" vfork
run_traced vfork "$BIN/prog_exec" "$FIX" vfork
expect_rc plain_vfork 0
same_behaviour plain_vfork vfork
dump_json "$(the_trace vfork)" "$WORK/vfork.json"
check_json "$WORK/vfork.json" <<'PY'
e = of_type("end")
expect(len(e) == 1 and e[0]["end_reason"] == "exit", f"the parent's END: {e}")
expect(len(loads()) == 2, f"both loads of the parent: {len(loads())}")
PY
echo "ok: exec ends the trace"
