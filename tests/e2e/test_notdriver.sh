#!/usr/bin/env bash
# JITSTALL_REAL_LIBCUDA naming a library that is not a CUDA driver (no cuInit,
# no cuGetProcAddress), or one that cannot be loaded: the program's calls do
# what they always did (fail; or reach the driver the program links), and
# jitstall says why once, on stderr and in the trace.
. "$(dirname "$0")/lib.sh"
run_plain plain "$BIN/prog_direct" "$FIX" 0 module ptx75.fatbin
for lib in libm.so.6 /nonexistent/libcuda.so.1; do
    name=$(basename "$lib")
    run_traced "$name" JITSTALL_REAL_LIBCUDA="$lib" "$BIN/prog_direct" "$FIX" 0 module ptx75.fatbin
    expect_rc "$name" 0
    if [ "$name" = libm.so.6 ]; then # no driver at all: cuInit fails, as it always did
        [ "$(cat "$WORK/$name.out")" = "cuInit: CUDA_ERROR_NOT_INITIALIZED" ] ||
            fail "$lib: cuInit did not fail as before: $(cat "$WORK/$name.out")"
    else # the driver the program links, as without jitstall
        cmp -s "$WORK/plain.out" "$WORK/$name.out" || fail "$lib: the output changed"
    fi
    n=$(grep -c "^jitstall: JITSTALL_REAL_LIBCUDA=$lib" "$WORK/$name.err" || true)
    [ "$n" = 1 ] || fail "$lib: expected one line on stderr: $(cat "$WORK/$name.err")"
    dump_json "$(the_trace "$name")" "$WORK/$name.json"
    check_json "$WORK/$name.json" <<'PY'
notes = [n for n in of_type("note") if "JITSTALL_REAL_LIBCUDA" in n.get("message", "")]
expect(len(notes) == 1, f"one note: {notes}")
PY
done
grep -q 'is not a CUDA driver' "$WORK/libm.so.6.err" || fail "libm.so.6 not called what it is"
grep -q 'cannot be loaded' "$WORK/libcuda.so.1.err" || fail "a missing library not called so"
echo "ok: not a driver"
