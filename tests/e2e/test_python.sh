#!/usr/bin/env bash
# Python call sites: py_loads.py loads PTX on the simulated driver through
# ctypes.CDLL (the GIL released), ctypes.PyDLL (the GIL held), from a thread
# while the main thread holds the GIL, and through a stand-in library in
# site-packages. For every CPython 3.10-3.13 found here (3.11 must be one),
# under the preload: the program's output and exit status must not change;
# the report's call site of each load must be the user's Python function and
# file:line (the caller's line for the library's load); a first launch must
# carry its Python frames too; two loads with the
# same native stack from different Python lines must get different stacks;
# JITSTALL_PYTHON=0 must record no Python frames; and a CPython whose layout
# jitstall does not know (3.9, if here) gets a note and no frames.
. "$(dirname "$0")/lib.sh"
SRC=$JST_E2E_SRC/py_loads.py
SITE=$JST_E2E_SRC/py_site/site-packages

# The interpreters to try: pyenv's and the system's, one per real file.
pythons=()
root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
for minor in 10 11 12 13; do
    for exe in "$root"/versions/3."$minor".*/bin/python3."$minor" /usr/bin/python3."$minor" \
        /usr/local/bin/python3."$minor"; do
        [ -x "$exe" ] || continue
        real=$(readlink -f "$exe")
        case " ${pythons[*]:-} " in *" $real "*) continue ;; esac
        pythons+=("$real")
    done
done
printf '%s\n' "${pythons[@]:-}" | grep -q 'python3\.11$' || fail "no CPython 3.11 found (required)"

line_of() { grep -n "# $1\$" "$SRC" | cut -d: -f1; }

for py in "${pythons[@]}"; do
    n=py$("$py" -c 'import sys; print("%d%d%d" % sys.version_info[:3])')
    run_plain "$n.plain" "$py" "$SRC" "$FIX" "$SITE" "$BIN/libpy_delay.so"
    run_traced "$n" "$py" "$SRC" "$FIX" "$SITE" "$BIN/libpy_delay.so"
    expect_rc "$n.plain" 0
    same_behaviour "$n.plain" "$n"
    trace=$(the_trace "$n")
    "$JST_CLI" report --json "$trace" >"$WORK/$n.report.json" || fail "$n: report --json failed"
    python3 - "$WORK/$n.report.json" "$SRC" "$n" "$(line_of 'load: cdll')" \
        "$(line_of 'load: pydll')" "$(line_of 'load: thread')" "$(line_of 'load: library')" \
        <<'PY' || fail "$n ($py): call sites"
import json, sys
rep, src, ver = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
cdll, pydll, thread, library = sys.argv[4:8]
# 3.10 code objects have no qualified name.
# The thread's load is called by py_delay_load, a C function: its call site.
sites = sorted(m["call_site"] for m in rep["processes"][0]["modules"]
               if m["call"] == "cuModuleLoadData" and "py_delay_load" not in m["call_site"]
               and "launch_first" not in m["call_site"])
want = sorted([f"load_released ({src}:{cdll}) in Python"] * 3 + [
    f"load_held ({src}:{pydll}) in Python", f"main ({src}:{library}) in Python"])
assert sites == want, f"call sites\n  got  {sites}\n  want {want}"
PY
    dump_json "$trace" "$WORK/$n.json"
    check_json "$WORK/$n.json" src="$SRC" thread="$(line_of 'load: thread')" ver="$n" \
        launch="$(line_of 'launch: first')" <<'PY'
stacks = {r["stack_id"]: r for r in of_type("stack")}
def listed(v):
    return v if isinstance(v, list) else [v]
# A first launch carries its Python frames too.
got = listed(stacks[one("cuLaunchKernel")["stack_id"]]["py_frame"])[0]
expect(got == f"launch_first\t{arg['src']}\t{arg['launch']}", f"the first launch's frame: {got!r}")
# The thread's frames, not those of the main thread that held the GIL.
worker = "run" if arg["ver"].startswith("py310") else "Worker.run"  # 3.10: no qualname
th = [c for c in calls("cuModuleLoadData") if c["tid"] != calls("cuInit")[0]["tid"]]
expect(len(th) == 1, "one load from the thread")
got = listed(stacks[th[0]["stack_id"]]["py_frame"])[0]
expect(got == f"{worker}\t{arg['src']}\t{arg['thread']}", f"the thread's own frame: {got!r}")
# The load_released calls come from three lines of main(); those whose native
# stacks are the same (CPython may specialize the call after the first) must
# still be different stacks, told apart by their callers' lines.
rel = [stacks[c["stack_id"]] for c in calls("cuModuleLoadData")][:3]
pairs = [(a, b) for i, a in enumerate(rel) for b in rel[i + 1:] if a["ips"] == b["ips"]]
expect(pairs, "two load_released calls with the same native stack")
for a, b in pairs:
    expect(a["stack_id"] != b["stack_id"], "same native stack, other Python line: other stack")
    expect(listed(a["py_frame"])[1] != listed(b["py_frame"])[1], "callers' lines differ")
for s in rel:
    nat, fr = listed(s["py_native"]), listed(s["py_frame"])
    expect(len(nat) == len(fr) and all(0 <= v <= len(s["ips"]) for v in nat),
           f"one native index per Python frame, within the stack: {nat}")
PY
    # Off switch: no Python frames, and the call site is no Python line.
    run_traced "$n.off" JITSTALL_PYTHON=0 "$py" "$SRC" "$FIX" "$SITE" "$BIN/libpy_delay.so"
    same_behaviour "$n.plain" "$n.off"
    dump_json "$(the_trace "$n.off")" "$WORK/$n.off.json"
    ! grep -q '"py_frame"' "$WORK/$n.off.json" || fail "$n: JITSTALL_PYTHON=0 recorded Python frames"
    echo "ok: $n ($py)"
done
# A version whose layout jitstall does not know: same behaviour, no frames,
# and one note that says why.
old=$(ls "$root"/versions/3.9.*/bin/python3.9 2>/dev/null | head -n 1 || true)
if [ -n "$old" ]; then
    run_plain py39.plain "$old" "$SRC" "$FIX" "$SITE" "$BIN/libpy_delay.so"
    run_traced py39 "$old" "$SRC" "$FIX" "$SITE" "$BIN/libpy_delay.so"
    same_behaviour py39.plain py39
    dump_json "$(the_trace py39)" "$WORK/py39.json"
    ! grep -q '"py_frame"' "$WORK/py39.json" || fail "3.9: Python frames recorded"
    [ "$(grep -c "CPython 3\.9\.[0-9]*'s frame layout is unknown" "$WORK/py39.json")" = 1 ] ||
        fail "3.9: no single note about the unknown layout"
    echo "ok: CPython 3.9 ($old): a note, no frames"
fi
# A sandbox that kills the process for process_vm_readv (systemd's
# SystemCallFilter does that): Python frames are still read (/proc/self/mem),
# and the program runs as it does without the preload.
py=$(printf '%s\n' "${pythons[@]}" | grep 'python3\.11$' | head -n 1)
run_plain sandbox.plain "$BIN/seccomp_deny" "$py" "$SRC" "$FIX" "$SITE" "$BIN/libpy_delay.so"
# 77: seccomp_deny cannot install its filter here (qemu-user answers
# PR_SET_SECCOMP with EINVAL): that part is skipped, and so is the test.
if [ "$(cat "$WORK/sandbox.plain.rc")" = 77 ]; then
    echo "ok: python call sites"
    echo "skip: the sandbox part: a seccomp filter cannot be installed here ($(tail -1 "$WORK/sandbox.plain.err"))"
    exit 77
fi
expect_rc sandbox.plain 0
run_traced sandbox "$BIN/seccomp_deny" "$py" "$SRC" "$FIX" "$SITE" "$BIN/libpy_delay.so"
same_behaviour sandbox.plain sandbox
dump_json "$(the_trace sandbox)" "$WORK/sandbox.json"
grep -q '"py_frame"' "$WORK/sandbox.json" || fail "sandbox: no Python frames recorded"
echo "ok: a sandbox that forbids process_vm_readv"
echo "ok: python call sites"
