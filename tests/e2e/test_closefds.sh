#!/usr/bin/env bash
# A daemon that closes all its descriptors after its first load and opens its
# own file, which gets the old numbers (the trace's among them): the trace is
# never written into the program's file, the program behaves the same with
# and without the preload, and the loads after the close are traced, in the
# same trace file, with a note saying what happened (and, with
# JITSTALL_DEBUG=1, one line on stderr).
. "$(dirname "$0")/lib.sh"
want="the program's own data"
run_plain plain "$BIN/prog_closefds" "$FIX" "$WORK/plain.own"
run_traced traced "$BIN/prog_closefds" "$FIX" "$WORK/traced.own"
expect_rc plain 0
# Same output, apart from the name of the own file.
sed -i "s|$WORK/traced.own|OWN|" "$WORK/traced.out" "$WORK/traced.err"
sed -i "s|$WORK/plain.own|OWN|" "$WORK/plain.out" "$WORK/plain.err"
same_behaviour plain traced
for f in plain traced; do
    [ "$(cat "$WORK/$f.own")" = "$want" ] ||
        fail "$f: the program's own file was changed: $(od -c "$WORK/$f.own" | head -5)"
done

trace=$(the_trace traced)
dump_json "$trace" "$WORK/traced.json"
check_json "$WORK/traced.json" <<'PY'
ld = loads()
expect([l["call_id"] for l in ld] == ["cuModuleLoadData", "cuModuleLoadData"],
       "both loads traced, the one after the close too")
expect(len(calls("cuLaunchKernel")) == 2, "both first launches traced")
expect(len(of_type("end")) == 1, "the trace ends with END")
notes = [r.get("message", "") for r in of_type("note")]
expect(sum("file descriptor" in m for m in notes) == 1, "one note says the descriptor was taken")
PY

# JITSTALL_DEBUG=1: the same said once on stderr.
run_traced debug JITSTALL_DEBUG=1 "$BIN/prog_closefds" "$FIX" "$WORK/debug.own"
[ "$(cat "$WORK/debug.own")" = "$want" ] || fail "debug run: the program's own file was changed"
n=$(grep -c "file descriptor" "$WORK/debug.err" || true)
[ "$n" = 1 ] || fail "JITSTALL_DEBUG=1: expected one line about the descriptor, got $n: $(cat "$WORK/debug.err")"
echo "ok: a program that closes and reuses the trace's descriptor gets its file untouched, and the trace goes on"
