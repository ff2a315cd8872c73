#!/usr/bin/env bash
# A setgid program run by another user (AT_SECURE): the JITSTALL_* variables of
# that user are not obeyed. No library from JITSTALL_REAL_LIBCUDA, no trace in
# JITSTALL_DIR (a directory only the program's group may write), no exit
# status from JITSTALL_FAIL_EXIT_CODE, no debug lines: output and status are
# those of the same run without the variables. A control run of the same
# program without the setgid bit shows that each variable does act otherwise.
# Needs root (to make the setgid copy) and setpriv; skipped (77) otherwise.
# nobody must reach every file the program opens, but the build tree may lie
# under a directory only root can enter (a checkout in /root): the program, the
# two libraries it links and the fixture are copied into the work directory
# (world-readable), and the copy's DT_RPATH is pointed there.
. "$(dirname "$0")/lib.sh"
skip_emulated "binfmt_misc without the C flag drops setgid"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || ! getent passwd nobody >/dev/null; then
    echo "skip: needs root, setpriv and the user nobody"
    exit 77
fi
S=$WORK/sec
mkdir -p "$S/traces" "$S/cache"
chmod 755 "$WORK" "$S"
chmod 777 "$S/cache"
chmod 770 "$S/traces" # root's group only: what the setgid program may write
mkdir -p "$S/lib" "$S/fix"
cp "$JST_PRELOAD" "$S/lib/libjitstall.so"
cp "$JST_SIMDIR/libcuda.so.1" "$S/lib/libcuda.so.1"
cp "$FIX/ptx75.fatbin" "$S/fix/"
chmod -R a+rX "$S/lib" "$S/fix"
FIX=$S/fix
# set_rpath FILE DIR: rewrites FILE's DT_RPATH string in place to DIR (padded
# with NULs; DIR must not be longer than the string the linker wrote).
set_rpath() {
    python3 - "$1" "$2" <<'PY' || { echo "skip: $3"; exit 77; }
import subprocess, sys
path, new = sys.argv[1], sys.argv[2].encode()
dyn = subprocess.run(["readelf", "-d", path], capture_output=True, text=True).stdout
old = [l.split("[", 1)[1].rsplit("]", 1)[0] for l in dyn.splitlines() if "(RPATH)" in l]
if len(old) != 1 or len(new) > len(old[0]):
    sys.exit(1)
data = open(path, "rb").read()
o = old[0].encode() + b"\0"
if data.count(o) != 1:
    sys.exit(1)
open(path, "wb").write(data.replace(o, new + b"\0" * (len(o) - len(new))))
PY
}
cp "$BIN/prog_secure" "$S/prog"
set_rpath "$S/prog" "$S/lib" "the work directory's path is longer than the build's RPATH"
chown root:root "$S/prog"
chmod 2755 "$S/prog"
export CUDA_CACHE_PATH="$S/cache"
nobody_group=$(id -gn nobody)
nobody=(setpriv --reuid=nobody --regid="$nobody_group" --clear-groups)
# Each variable alone, as nobody on the setgid copy: the output and status of
# the plain run. The control (same program, not setgid, so not secure) shows
# that the variable does act.
run_plain plain "${nobody[@]}" "$S/prog" "$FIX" 0 module ptx75.fatbin
expect_rc plain 0
cp "$S/prog" "$S/prog_plain"
chmod 755 "$S/prog_plain"
n=0
check_var() { # check_var CONTROL_CHECK VAR=VALUE...
    local check=$1
    shift
    n=$((n + 1))
    rm -rf "${S:?}/traces/"*
    run_plain "attack$n" "$@" "${nobody[@]}" "$S/prog" "$FIX" 0 module ptx75.fatbin
    same_behaviour plain "attack$n"
    [ -z "$(ls -A "$S/traces")" ] || fail "$*: a trace in JITSTALL_DIR: $(ls "$S/traces")"
    run_plain "control$n" "$@" "$S/prog_plain" "$FIX" 0 module ptx75.fatbin
    eval "$check" || fail "control for $*: the variable had no effect"
}
check_var 'grep -q "^evil library loaded$" "$WORK/control$n.err"' \
    JITSTALL_REAL_LIBCUDA="$BIN/libevil.so"
check_var '[ -n "$(ls -A "$S/traces")" ]' JITSTALL_DIR="$S/traces"
check_var '[ "$(rc_of control$n)" = 42 ]' JITSTALL_DIR="$S/traces" JITSTALL_BUDGET_MS=0 \
    JITSTALL_FAIL_EXIT_CODE=42
check_var 'grep -q "^jitstall\[" "$WORK/control$n.err"' JITSTALL_DIR="$S/traces" JITSTALL_DEBUG=1
echo "ok: a setgid program ignores JITSTALL_*"
