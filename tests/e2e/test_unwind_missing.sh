#!/usr/bin/env bash
# Stack capture needs no library loaded up front: a process's first captures
# use glibc's backtrace(), and libunwind is dlopen'ed only after
# JITSTALL_UNWIND_AFTER of them (default 128; 0: from the first). When
# libunwind cannot be loaded (JITSTALL_UNWIND_LIB names a file that is not
# there), the program runs as without the preload, stacks go on coming from
# glibc's backtrace(), and a note says so.
. "$(dirname "$0")/lib.sh"
args=("$BIN/prog_dlsym" "$FIX" 0 module ptx75.fatbin sm90.fatbin)
run_plain plain CUDA_CACHE_PATH="$WORK/pc" "${args[@]}"
missing="$WORK/no/libunwind.so.8"

# libunwind wanted from the first capture, and missing.
run_traced nounw CUDA_CACHE_PATH="$WORK/c" JITSTALL_UNWIND_AFTER=0 JITSTALL_UNWIND_LIB="$missing" \
    "${args[@]}"
same_behaviour plain nounw
dump_json "$(the_trace nounw)" "$WORK/nounw.json"
check_json "$WORK/nounw.json" <<'PY'
notes = [n["message"] for n in of_type("note")]
expect(any("libunwind.so.8 could not be loaded" in m and "glibc's backtrace()" in m for m in notes),
       f"a note says why: {notes}")
expect(of_type("stack") and all(c.get("stack_id") for c in loads()), "stacks all the same")
expect([l["verdict"] for l in loads()] == ["ptx_jit", "sass"], f"loads still traced: {loads()}")
expect(of_type("end") and of_type("end")[0].get("self_ns", 0) > 0, "END as usual")
PY

# The default: a program with a few loads never needs libunwind, so a
# missing one changes nothing and no note is written.
run_traced few CUDA_CACHE_PATH="$WORK/c" JITSTALL_DEBUG=1 JITSTALL_UNWIND_LIB="$missing" "${args[@]}"
expect_rc few 0
dump_json "$(the_trace few)" "$WORK/few.json"
check_json "$WORK/few.json" <<'PY'
expect(of_type("stack") and all(c.get("stack_id") for c in loads()), "stacks from glibc's backtrace()")
expect(not any("could not be loaded" in n["message"] for n in of_type("note")), "no note")
PY
grep -q "cost: load unwinder .* in 1$" "$WORK/few.err" ||
    fail "the unwinder was loaded more than once: $(grep unwinder "$WORK/few.err")"

# Past JITSTALL_UNWIND_AFTER captures, libunwind is loaded and used.
run_traced many CUDA_CACHE_PATH="$WORK/c" JITSTALL_DEBUG=1 JITSTALL_UNWIND_AFTER=1 "${args[@]}"
expect_rc many 0
dump_json "$(the_trace many)" "$WORK/many.json"
check_json "$WORK/many.json" <<'PY'
expect(of_type("stack") and all(c.get("stack_id") for c in loads()), "stacks with libunwind")
expect(not any("could not be loaded" in n["message"] for n in of_type("note")), "no note")
PY
grep -q "cost: load unwinder .* in 2$" "$WORK/many.err" ||
    fail "libunwind was not loaded after the first capture: $(grep unwinder "$WORK/many.err")"
echo "ok: glibc's backtrace() first, libunwind later; without libunwind, a note and glibc's stacks"
