#!/usr/bin/env bash
# JITSTALL_CUPTI=1 is opt-in ground truth. Without libcupti it leaves one note
# in the trace and changes nothing; with it absent from the environment
# nothing about CUPTI is recorded at all.
. "$(dirname "$0")/lib.sh"
args=("$BIN/prog_procaddr" "$FIX" 0 module ptx75.fatbin)
run_plain plain CUDA_CACHE_PATH="$WORK/pc" "${args[@]}"

run_traced missing JITSTALL_CUPTI=1 JITSTALL_CUPTI_PATH="$WORK/no/libcupti.so" "${args[@]}"
same_behaviour plain missing
dump_json "$(the_trace missing)" "$WORK/missing.json"
check_json "$WORK/missing.json" <<'PY'
notes = [n for n in of_type("note") if "libcupti" in n.get("message", "")]
expect(len(notes) == 1, "one note says libcupti was not found")
expect("not found" in notes[0]["message"], notes[0]["message"])
expect(not of_type("cupti_jit"), "no CUPTI records")
expect(loads() and loads()[0]["verdict"] == "ptx_jit", "the load is traced as usual")
PY

run_traced off CUDA_CACHE_PATH="$WORK/c2" "${args[@]}"
same_behaviour plain off
dump_json "$(the_trace off)" "$WORK/off.json"
check_json "$WORK/off.json" <<'PY'
expect(not [n for n in of_type("note") if "CUPTI" in n.get("message", "")], "CUPTI is off by default")
PY

# Whatever libcupti the default search finds here (none, or a real one that
# cannot attach to the simulated driver), the program behaves the same and a
# note says what happened.
run_traced found CUDA_CACHE_PATH="$WORK/c3" JITSTALL_CUPTI=1 "${args[@]}"
same_behaviour plain found
dump_json "$(the_trace found)" "$WORK/found.json"
check_json "$WORK/found.json" <<'PY'
expect([n for n in of_type("note") if "CUPTI" in n.get("message", "")], "a note about CUPTI")
PY
echo "ok: CUPTI opt-in"
