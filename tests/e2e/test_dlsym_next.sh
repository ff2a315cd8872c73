#!/usr/bin/env bash
# dlsym(RTLD_NEXT, ...) called by the executable: the objects after it were
# loaded at start, so their link-map entries are no dlsym handles. The program
# must find the same functions with the preload as without, and not crash; a
# driver function found that way is wrapped (its call is in the trace, by the
# dlsym route).
. "$(dirname "$0")/lib.sh"
run_plain plain "$BIN/prog_next"
run_traced pre "$BIN/prog_next"
expect_rc plain 0
expect_rc pre 0
cmp -s "$WORK/plain.out" "$WORK/pre.out" || fail "output changed: $(cat "$WORK/pre.out")"
grep -q '^puts found after the program$' "$WORK/pre.out" || fail "puts not found"
grep -q '^missing symbol: NULL, dlerror set$' "$WORK/pre.out" || fail "a missing symbol: $(cat "$WORK/pre.out")"
grep -q '^cuInit after the program: found, result 0$' "$WORK/pre.out" ||
    fail "cuInit by dlsym(RTLD_NEXT): $(cat "$WORK/pre.out")"
dump_json "$(the_trace pre)" "$WORK/pre.json"
check_json "$WORK/pre.json" <<'PY'
c = one("cuInit")
expect(c["route"] == "dlsym" and c["result"] == 0, "cuInit by the dlsym route, succeeded")
PY
echo "ok: dlsym(RTLD_NEXT) from the executable"
