#!/usr/bin/env bash
# libunwind is loaded at the first driver call, not linked: when it cannot be
# loaded (JITSTALL_UNWIND_LIB names a file that is not there), the program
# runs as without the preload, everything else is traced, and the trace's
# note says why it has no call stacks.
. "$(dirname "$0")/lib.sh"
args=("$BIN/prog_dlsym" "$FIX" 0 module ptx75.fatbin sm90.fatbin)
run_plain plain CUDA_CACHE_PATH="$WORK/pc" "${args[@]}"
run_traced nounw CUDA_CACHE_PATH="$WORK/c" JITSTALL_UNWIND_LIB="$WORK/no/libunwind.so.8" "${args[@]}"
same_behaviour plain nounw
dump_json "$(the_trace nounw)" "$WORK/nounw.json"
check_json "$WORK/nounw.json" <<'PY'
notes = [n["message"] for n in of_type("note")]
expect(any("libunwind.so.8 could not be loaded" in m and "no call stacks" in m for m in notes),
       f"a note says why: {notes}")
expect(not of_type("stack") and not any("stack_id" in c for c in calls()), "no stacks")
expect([l["verdict"] for l in loads()] == ["ptx_jit", "sass"], f"loads still traced: {loads()}")
expect(of_type("end") and of_type("end")[0].get("self_ns", 0) > 0, "END as usual")
PY
# The default libunwind: stacks, and no such note.
run_traced unw CUDA_CACHE_PATH="$WORK/c" "${args[@]}"
dump_json "$(the_trace unw)" "$WORK/unw.json"
check_json "$WORK/unw.json" <<'PY'
expect(of_type("stack"), "stacks with libunwind")
expect(not any("could not be loaded" in n["message"] for n in of_type("note")), "no note")
PY
echo "ok: without libunwind, a note and no stacks; the program unchanged"
