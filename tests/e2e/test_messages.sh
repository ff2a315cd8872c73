#!/usr/bin/env bash
# What the preload says when it cannot trace, and that the program is
# unchanged all the same:
# - a trace that cannot be written (here: a file size limit, with SIGXFSZ
#   ignored, so write(2) fails with EFBIG) names the real reason, not
#   "Success";
# - a JITSTALL_DIR longer than PATH_MAX is refused, with one line, and no trace
#   is written to the current directory instead.
. "$(dirname "$0")/lib.sh"
skip_emulated "the file size limit also hits qemu's own writes (exit 153, SIGXFSZ)"
imgs="ptx75.fatbin k75.ptx sm90.fatbin ptx75.fatbin k75.ptx sm90.fatbin"
run_plain plain "$BIN/prog_direct" "$FIX" 3 module $imgs
expect_rc plain 3

# 1. Full: 1 KiB of trace at most.
mkdir -p "$WORK/full.traces"
# stdout goes through a pipe: the limit is for files the program writes.
set +e
(
    trap '' XFSZ
    ulimit -f 1
    exec env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/full.traces" \
        "$BIN/prog_direct" "$FIX" 3 module $imgs
) 2>"$WORK/full.err" | cat >"$WORK/full.out"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" = 3 ] || fail "exit status $rc under a file size limit"
cmp -s "$WORK/plain.out" "$WORK/full.out" || fail "output changed under a file size limit"
grep -qx 'jitstall: tracing disabled: cannot write the trace: File too large (the file-size limit, ulimit -f): the trace stops here' "$WORK/full.err" ||
    fail "no reason for the failed write: $(cat "$WORK/full.err")"
! grep -q Success "$WORK/full.err" || fail "a failed write reported as Success"
[ "$(grep -c jitstall "$WORK/full.err")" = 1 ] || fail "more than one line: $(cat "$WORK/full.err")"

# 2. A JITSTALL_DIR of 4200 bytes.
long=$WORK/$(head -c 4200 /dev/zero | tr '\0' 'd')
mkdir -p "$WORK/cwd"
rc=0
(cd "$WORK/cwd" && env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$long" \
    "$BIN/prog_direct" "$FIX" 3 module $imgs) >"$WORK/long.out" 2>"$WORK/long.err" || rc=$?
[ "$rc" = 3 ] || fail "exit status $rc with a long JITSTALL_DIR"
cmp -s "$WORK/plain.out" "$WORK/long.out" || fail "output changed with a long JITSTALL_DIR"
grep -Eqx 'jitstall: tracing disabled: JITSTALL_DIR is [0-9]+ bytes long, more than PATH_MAX \([0-9]+\)' \
    "$WORK/long.err" || fail "a long JITSTALL_DIR not refused: $(cat "$WORK/long.err")"
[ -z "$(ls "$WORK/cwd")" ] || fail "a trace went to the current directory: $(ls "$WORK/cwd")"
echo "ok: messages"
