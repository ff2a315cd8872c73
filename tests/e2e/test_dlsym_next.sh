#!/usr/bin/env bash
# dlsym(RTLD_NEXT, ...) called by the executable: the objects after it were
# loaded at start, so their link-map entries are no dlsym handles. The program
# must find the same functions with the preload as without, and not crash.
. "$(dirname "$0")/lib.sh"
run_plain plain "$BIN/prog_next"
rc=0
env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK" "$BIN/prog_next" >"$WORK/pre.out" 2>"$WORK/pre.err" || rc=$?
echo "$rc" >"$WORK/pre.rc"
expect_rc plain 0
expect_rc pre 0
cmp -s "$WORK/plain.out" "$WORK/pre.out" || fail "output changed: $(cat "$WORK/pre.out")"
grep -q '^puts found after the program$' "$WORK/pre.out" || fail "puts not found"
grep -q '^missing symbol: NULL, dlerror set$' "$WORK/pre.out" || fail "a missing symbol: $(cat "$WORK/pre.out")"
echo "ok: dlsym(RTLD_NEXT) from the executable"
