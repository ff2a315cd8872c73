#!/usr/bin/env bash
# fork and exec under the preload: the parent's trace stays whole across a
# fork (the child touches no CUDA) and an exec'd child (prog_direct) writes its
# own trace. Output and exit status are unchanged.
. "$(dirname "$0")/lib.sh"
run_plain plain CUDA_CACHE_PATH="$WORK/cache-plain" "$BIN/prog_forkexec" "$FIX" 3 "$BIN/prog_direct"
run_traced traced "$BIN/prog_forkexec" "$FIX" 3 "$BIN/prog_direct"
expect_rc plain 3
same_behaviour plain traced
grep -q '^exec child status: 5$' "$WORK/plain.out" || fail "the exec'd child did not run"

found_parent=0 found_child=0
for t in $(traces_of traced); do
    dump_json "$t" "$WORK/t.json"
    ! grep -q truncated "$WORK/t.json.err" || fail "$t is truncated"
    kind=$(check_json "$WORK/t.json" <<'PY'
p = of_type("process")
expect(len(p) == 1 and len(of_type("end")) == 1, "process and end records")
exe = p[0]["exe"]
names = [l["call_id"] for l in loads()]
if exe.endswith("/prog_forkexec"):
    if names:
        expect(names == ["cuModuleLoadData", "cuModuleLoadData"], f"parent loads: {names}")
        expect([l["verdict"] for l in loads()] == ["ptx_jit", "ptx_jit"], "parent JITs twice")
        expect(all(l["result"] == 0 for l in loads()), "parent loads succeed")
        print("parent")
    else:
        expect(not calls(), "the plain child made no driver call")
        print("plain-child")
elif exe.endswith("/prog_direct"):
    expect(names == ["cuModuleLoadData"], f"exec'd child loads: {names}")
    expect(loads()[0]["verdict"] == "sass", "child loads SASS")
    expect(p[0]["ppid"] > 0, "child records its parent")
    print("exec-child")
else:
    expect(False, f"unexpected exe {exe}")
PY
)
    case "$kind" in
    parent) found_parent=$((found_parent + 1)) ;;
    exec-child) found_child=$((found_child + 1)) ;;
    plain-child) ;;
    *) fail "unclassified trace $t" ;;
    esac
done
[ "$found_parent" = 1 ] || fail "expected one parent trace, found $found_parent"
[ "$found_child" = 1 ] || fail "expected one exec'd child trace, found $found_child"
echo "ok: fork and exec"
