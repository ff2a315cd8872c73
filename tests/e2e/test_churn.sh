#!/usr/bin/env bash
# First launches stay recorded when modules are loaded and unloaded for a
# long time: the seen set gives back the slots of unloaded functions. Its
# capacity is made small for the test (JITSTALL_SEEN_LIMIT=64, default
# 196,608): 1000 load / launch / unload rounds must give 1000 first-launch
# records. With every module kept loaded, the set does fill up: then the END
# record counts the launches not checked (dropped) and a note says so.
. "$(dirname "$0")/lib.sh"
run_plain plain "$BIN/prog_churn" "$FIX" 1000 unload
run_traced unload JITSTALL_SEEN_LIMIT=64 "$BIN/prog_churn" "$FIX" 1000 unload
expect_rc plain 0
same_behaviour plain unload
dump_json "$(the_trace unload)" "$WORK/unload.json"
check_json "$WORK/unload.json" <<'PY'
launches = calls("cuLaunchKernel")
expect(len(launches) == 1000, f"one first launch per round: {len(launches)}")
e = of_type("end")
expect(len(e) == 1 and "dropped" not in e[0], f"nothing dropped: {e}")
PY

run_traced keep JITSTALL_SEEN_LIMIT=64 "$BIN/prog_churn" "$FIX" 100 keep
expect_rc keep 0
dump_json "$(the_trace keep)" "$WORK/keep.json"
check_json "$WORK/keep.json" <<'PY'
launches = calls("cuLaunchKernel")
expect(len(launches) == 64, f"first launches up to the capacity: {len(launches)}")
e = of_type("end")
expect(len(e) == 1 and e[0].get("dropped") == 72, f"36 functions x 2 launches dropped: {e}")
notes = [n["message"] for n in of_type("note")]
expect(any("72 launches of functions not checked" in n for n in notes), f"a note: {notes}")
PY
echo "ok: first launches across load/unload churn"
