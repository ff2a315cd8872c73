#!/usr/bin/env bash
# Build trees (interpose/spawn.c "Build tools and descendants"): a Python
# program on the simulated driver whose first call waits for a build script
# whose name is no compiler (mybuild), which runs stand-in nvcc and ptxas in
# parallel and then c++ (fake_cc, 300 ms each):
#  - the parent's trace has a compile record of compiler "build" for mybuild
#    (program, argv, cwd), the script's own trace (a descendant: followed by
#    its marker) the three compiles, c++ run through `sh -c` with a command
#    longer than a slot (as ninja runs a step) recorded as that compiler;
#  - the report names `build` as the first call's largest cause, with the
#    compiles under it as a tree (targets, outputs), little unexplained; JSON
#    has cause `build`, the children's `parent` and `parent_pid`;
#  - the build directory under TORCH_EXTENSIONS_DIR: fix `extension_cache`
#    naming it; elsewhere "build it when the package is installed";
#  - a short child (uname) is no build and no culprit;
#  - run under a static launcher the preload cannot enter, the build still
#    counts, by the launcher's program name;
#  - output and exit status are unchanged.
. "$(dirname "$0")/lib.sh"
PY=$JST_E2E_SRC/py_compilers
mkdir -p "$WORK/bin" "$WORK/ext/myop" "$WORK/plain" "$WORK/elsewhere"
for n in nvcc ptxas c++; do ln -s "$BIN/fake_cc" "$WORK/bin/$n"; done
cat >"$WORK/bin/mybuild" <<'SH'
#!/bin/sh
cd "$1" || exit 9
nvcc -arch=sm_90 -c -o op.cuda.o op.cu &
ptxas --gpu-name sm_90 -o op.cubin op.ptx &
wait
# as ninja runs a step: sh -c with a command longer than a slot holds
inc=""
for i in $(seq 40); do inc="$inc -isystem /opt/some/long/include/directory/number/$i"; done
sh -c "c++ -shared $inc -o myop.so op.cuda.o"
echo built
SH
chmod +x "$WORK/bin/mybuild"
export FAKE_CC_MS=300
P="$WORK/bin:$PATH"

run_plain plain PATH="$P" python3 "$PY/py_build.py" "$FIX" "$WORK/bin/mybuild" "$WORK/plain"
run_traced ext PATH="$P" TORCH_EXTENSIONS_DIR="$WORK/ext" \
    python3 "$PY/py_build.py" "$FIX" "$WORK/bin/mybuild" "$WORK/ext/myop"
expect_rc plain 0
same_behaviour plain ext
grep -q '^build: built$' "$WORK/plain.out" || fail "the build did not run"

report_json() { "$JST_CLI" report --json "$WORK/$1.traces" >"$WORK/$1.json" 2>"$WORK/$1.json.err" ||
    fail "report --json $1: $(cat "$WORK/$1.json.err")"; }
report_json ext
NO_COLOR=1 "$JST_CLI" report "$WORK/ext.traces" >"$WORK/ext.txt" 2>&1 || fail "report ext"
python3 - "$WORK/ext.json" "$WORK/ext/myop" "$WORK/ext" <<'PYC' || fail "ext: $(cat "$WORK/ext.txt")"
import json, sys
rep = json.load(open(sys.argv[1])); bdir, ext = sys.argv[2], sys.argv[3]
def expect(c, m):
    if not c:
        print("FAIL:", m); sys.exit(1)
procs = rep["processes"]
root = [p for p in procs if any(c["compiler"] == "build" for c in p["compiles"])]
expect(len(root) == 1, f"one process with a build row: {[p['pid'] for p in procs]}")
root = root[0]
builds = [c for c in root["compiles"] if c["compiler"] == "build"]
expect(len(builds) == 1, f"one build row (uname is none): {[b['what'] for b in builds]}")
b = builds[0]; bi = root["compiles"].index(b)
expect(b["what"].endswith("mybuild") and b["dir"] == bdir, f"the build: {b['what']} in {b['dir']}")
expect(b["culprit"], "the build is a culprit")
fc = max(root["first_calls"], key=lambda f: f["dur_ns"])
blame = {x["cause"]: x["dur_ns"] for x in fc["blame"]}
top = max(blame, key=blame.get)
expect(top == "build", f"build is the largest cause: {blame}")
expect(blame["build"] >= 600_000_000, f"the build's wall time (300 ms parallel, then 300 ms): {blame}")
expect(blame.get("unexplained", 0) <= 0.05 * fc["dur_ns"], f"unexplained is small: {blame}")
kids = [(p["pid"], c) for p in procs for c in p["compiles"]
        if c.get("parent_pid") == root["pid"] and c.get("parent") == bi]
names = sorted(c["compiler"] for _, c in kids)
expect(names == ["host_cc", "nvcc", "ptxas"], f"the compilers under the build: {names}")
expect(all(not c["culprit"] for _, c in kids), "the build ranks for its compilers")
t = {c["compiler"]: c for _, c in kids}
expect(t["nvcc"]["target"] == "sm_90" and t["nvcc"]["what"] == "op.cuda.o", f"nvcc: {t['nvcc']}")
expect(t["ptxas"]["target"] == "sm_90", f"ptxas: {t['ptxas']}")
fixes = [f for f in rep["fixes"] if f["kind"] == "extension_cache"]
expect(len(fixes) == 1 and ext in fixes[0]["text"] and "TORCH_EXTENSIONS_DIR" in fixes[0]["text"],
       f"extension_cache fix naming {ext}: {rep['fixes']}")
expect(fixes[0]["saves_ns"] <= fc["dur_ns"], "the fix saves no more than the first call took")
expect(not any(f["kind"] == "compile_ahead" for f in rep["fixes"]), "no compile_ahead fix for its compilers")
PYC
grep -q 'Build tree' "$WORK/ext.txt" || fail "no build tree in the report: $(cat "$WORK/ext.txt")"
grep -qE '`- nvcc .*sm_90.*-> op.cuda.o' "$WORK/ext.txt" || fail "the tree names nvcc: $(cat "$WORK/ext.txt")"
# every marker (a followed child's) was removed when its parent reaped it
markers() { find "$WORK/$1.traces" -maxdepth 1 -name '.jst-follow-*' | wc -l; }
[ "$(markers ext)" = 0 ] || fail "markers left behind: $(ls -a "$WORK/ext.traces")"
# c++ through `sh -c` is one row, not the shell's step and its child
[ "$(grep -cE '`- host_cc ' "$WORK/ext.txt")" = 1 ] || fail "one c++ row: $(cat "$WORK/ext.txt")"

# A real ninja, run as torch runs it (`ninja -v`, verbose, from Python,
# its steps through `sh -c`): the build is a row (its -v is no version
# probe), its steps' compilers are under it, and its own processes are in its
# tree, not answer lines of their own.
if command -v ninja >/dev/null; then
    mkdir -p "$WORK/nj"
    printf 'rule cuda\n  command = nvcc -arch=sm_90 -c -o $out $in\nrule so\n  command = c++ -shared -o $out $in\nbuild op.cuda.o: cuda op.cu\nbuild op.so: so op.cuda.o\n' >"$WORK/nj/build.ninja"
    : >"$WORK/nj/op.cu"
    cat >"$WORK/nj.py" <<PYN
import subprocess, sys
sys.path.insert(0, "$PY")
import cudasim
cudasim.setup()
cudasim.load_and_launch("fill", "$FIX/sm90.cubin")
subprocess.run(["ninja", "-v"], cwd="$WORK/nj", stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=True)
cudasim.load_and_launch("kernel", "$FIX/sm90.cubin")
PYN
    run_traced nj PATH="$P" python3 "$WORK/nj.py"
    expect_rc nj 0
    report_json nj
    NO_COLOR=1 "$JST_CLI" report "$WORK/nj.traces" >"$WORK/nj.txt" 2>&1 || fail "report nj"
    python3 - "$WORK/nj.json" <<'PYC' || fail "ninja -v: $(cat "$WORK/nj.txt")"
import json, sys
rep = json.load(open(sys.argv[1]))
def expect(c, m):
    if not c:
        print("FAIL:", m); sys.exit(1)
root = [p for p in rep["processes"] if p["first_calls"]][0]
b = [c for c in root["compiles"] if c["compiler"] == "build"]
expect(len(b) == 1 and b[0]["what"].endswith("/ninja"), f"ninja -v is a build row: {root['compiles']}")
fc = max(root["first_calls"], key=lambda f: f["dur_ns"])
blame = {x["cause"]: x["dur_ns"] for x in fc["blame"]}
expect(max(blame, key=blame.get) == "build" and blame["build"] >= 600_000_000, f"blame: {blame}")
under = [c["compiler"] for p in rep["processes"] for c in p["compiles"] if c.get("in_build", True) and c.get("parent_pid")]
expect("nvcc" in under and "host_cc" in under, f"the steps' compilers under it: {under}")
expect(not [c for p in rep["processes"] if p is not root for c in p["compiles"] if c["culprit"]],
       "no compile under the build is a culprit")
PYC
    [ "$(markers nj)" = 0 ] || fail "markers left behind by ninja's steps: $(ls -a "$WORK/nj.traces")"
    tree=$(sed -n '/Build tree/,/^$/p' "$WORK/nj.txt")
    [ "$(grep -cE '`- nvcc ' <<<"$tree")" = 1 ] && [ "$(grep -cE '`- host_cc ' <<<"$tree")" = 1 ] ||
        fail "ninja's steps, each one row (not sh -c's and its child's): $tree"
    head=$(sed '/^jitstall report:/,$d' "$WORK/nj.txt")
    [ "$(grep -c '^pid ' <<<"$head")" = 1 ] || fail "one answer line, the program's: $head"
else
    echo "note: no ninja here; the real ninja case is not run"
fi

# Elsewhere, under a static launcher: counted by its name; the fix builds at
# install time.
[ -x "$BIN/static_run" ] || { echo "ok: (no static launcher: static linking unavailable)"; exit 0; }
run_traced envi PATH="$P" python3 "$PY/py_build.py" "$FIX" "$WORK/bin/mybuild" "$WORK/elsewhere" "$BIN/static_run"
expect_rc envi 0
report_json envi
python3 - "$WORK/envi.json" <<'PYC' || fail "static launcher"
import json, sys
rep = json.load(open(sys.argv[1]))
def expect(c, m):
    if not c:
        print("FAIL:", m); sys.exit(1)
bs = [c for p in rep["processes"] for c in p["compiles"] if c["compiler"] == "build" and not c.get("parent_pid")]
expect(len(bs) == 1 and bs[0]["what"].endswith("/static_run"), f"the static launcher counts as a build: {bs}")
fc = [f for p in rep["processes"] for f in p["first_calls"]]
expect(fc and any(max(f["blame"], key=lambda x: x["dur_ns"])["cause"] == "build" for f in fc),
       f"build is the largest cause: {fc}")
fx = [f for f in rep["fixes"] if f["kind"] == "extension_cache"]
expect(len(fx) == 1 and "when the package is installed" in fx[0]["text"], f"fix: {fx}")
expect(not any("uname" in (c.get("what") or "") for p in rep["processes"] for c in p["compiles"]),
       "uname is no compile")
PYC
echo "ok: a build tool's tree, its blame and its fix"
