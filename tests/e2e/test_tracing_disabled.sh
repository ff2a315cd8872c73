#!/usr/bin/env bash
# When jitstall cannot trace (JITSTALL_DIR cannot hold a file), it says so in
# one stderr line and the program runs exactly as without the preload.
. "$(dirname "$0")/lib.sh"
: >"$WORK/notadir"
args=("$BIN/prog_dlsym" "$FIX" 6 module ptx75.fatbin sm90.fatbin)
run_plain plain CUDA_CACHE_PATH="$WORK/pc" "${args[@]}"
rc=0
env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/notadir/sub" CUDA_CACHE_PATH="$WORK/c" "${args[@]}" \
    >"$WORK/off.out" 2>"$WORK/off.err" || rc=$?
echo "$rc" >"$WORK/off.rc"
expect_rc plain 6
expect_rc off 6
cmp -s "$WORK/plain.out" "$WORK/off.out" || fail "stdout changed with tracing off"
[ "$(grep -c '^jitstall' "$WORK/off.err")" = 1 ] || fail "expected one jitstall line: $(cat "$WORK/off.err")"
grep -v '^jitstall' "$WORK/off.err" | cmp -s - "$WORK/plain.err" || fail "stderr changed beyond one line"
[ -z "$(find "$WORK" -name 'jitstall-*.jst')" ] || fail "a trace file appeared somewhere"
echo "ok: tracing off is one line and no change"
