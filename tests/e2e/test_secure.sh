#!/usr/bin/env bash
# A setgid program run by another user (AT_SECURE): the JITSTALL_* variables of
# that user are not obeyed. No library from JITSTALL_REAL_LIBCUDA, no trace in
# JITSTALL_DIR (a directory only the program's group may write), no exit
# status from JITSTALL_FAIL_EXIT_CODE, no debug lines: output and status are
# those of the same run without the variables. A control run of the same
# program without the setgid bit shows that the variables do act otherwise.
# Needs root (to make the setgid copy) and setpriv; skipped (77) otherwise.
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! getent passwd nobody >/dev/null; then
    echo "skip: needs root, setpriv and the user nobody"
    exit 77
fi
S=$WORK/sec
mkdir -p "$S/traces" "$S/cache"
chmod 755 "$WORK" "$S"
chmod 777 "$S/cache"
chmod 770 "$S/traces" # root's group only: what the setgid program may write
cp "$BIN/prog_secure" "$S/prog"
chown root:root "$S/prog"
chmod 2755 "$S/prog"
export CUDA_CACHE_PATH="$S/cache"
nobody_group=$(id -gn nobody)
nobody=(setpriv --reuid=nobody --regid="$nobody_group" --clear-groups)
attack=(JITSTALL_DIR="$S/traces" JITSTALL_REAL_LIBCUDA="$BIN/libevil.so" JITSTALL_BUDGET_MS=0
    JITSTALL_FAIL_EXIT_CODE=42 JITSTALL_DEBUG=1)

run_plain plain "${nobody[@]}" "$S/prog" "$FIX" 3 module ptx75.fatbin
expect_rc plain 3
run_plain attack "${attack[@]}" "${nobody[@]}" "$S/prog" "$FIX" 3 module ptx75.fatbin
same_behaviour plain attack
[ -z "$(ls -A "$S/traces")" ] || fail "a trace in JITSTALL_DIR: $(ls "$S/traces")"

# Control: not setgid, so not secure: the same variables act.
cp "$BIN/prog_secure" "$S/prog_plain"
run_plain control "${attack[@]}" "$S/prog_plain" "$FIX" 3 module ptx75.fatbin
grep -q '^evil library loaded$' "$WORK/control.err" ||
    fail "control: JITSTALL_REAL_LIBCUDA not used: $(cat "$WORK/control.err")"
echo "ok: a setgid program ignores JITSTALL_*"
