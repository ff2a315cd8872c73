#!/usr/bin/env bash
# exit() while 8 threads load, launch and unload: the same output and exit
# status with and without the preload, and one whole trace that ends with the
# exit. In a ThreadSanitizer build (cmake -DJITSTALL_TSAN=ON, see README.md)
# any race TSan reports in the preload makes the traced run exit 66.
. "$(dirname "$0")/lib.sh"
if [ "${JST_TSAN:-0}" = 1 ]; then
    export TSAN_OPTIONS="halt_on_error=1:exitcode=66:report_signal_unsafe=0"
fi
for i in 1 2 3; do
    run_plain "plain$i" CUDA_CACHE_PATH="$WORK/cache-plain" "$BIN/prog_threads" "$FIX" 4 8
    run_traced "traced$i" "$BIN/prog_threads" "$FIX" 4 8
    expect_rc "plain$i" 4
    same_behaviour "plain$i" "traced$i"
    dump_json "$(the_trace "traced$i")" "$WORK/t$i.json"
    ! grep -q truncated "$WORK/t$i.json.err" || fail "trace $i is truncated"
    check_json "$WORK/t$i.json" <<'PY'
e = of_type("end")
expect(len(e) == 1 and e[0]["end_reason"] == "exit", f"one end record at exit: {e}")
expect(e[0].get("exit_status") == 4, "the exit status")
expect(len(loads()) >= 8, f"every thread's first load: {len(loads())}")
PY
done
echo "ok: exit while threads load"
