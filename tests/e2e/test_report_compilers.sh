#!/usr/bin/env bash
# What `jitstall report` makes of real traces of compilers other than the
# driver's, taken on the simulated driver with the stand-in programs of
# test_compilers.sh, test_nvvm.sh and test_spawn.sh:
#  - Triton-like: one first call (the kernel after the fill), framework triton,
#    its blame summing to its time, ptxas as a subprocess, the sampled lowering
#    as Python and as the top sampled function, less than 10% unexplained, and
#    the Triton cache fix saying the cache did not exist at start;
#  - XLA-like: an xla compile, never a query, the largest cause of its first call;
#  - Inductor-like: the worker's ptxas (a child process with its own trace)
#    counts in the parent's first call;
#  - NVVM: an nvvm compile, the largest cause of the kernel's first call;
#  - compiler children: one compile row each, with pid and exit status.
. "$(dirname "$0")/lib.sh"
PY=$JST_E2E_SRC/py_compilers
mkdir -p "$WORK/bin" "$WORK/o1" "$WORK/o2" "$WORK/o3"
ln -s "$BIN/fake_cc" "$WORK/bin/ptxas"
ln -s "$BIN/fake_cc" "$WORK/bin/nvcc"

report() { # report NAME: report --json of NAME's traces into $WORK/NAME.report.json
    "$JST_CLI" report --json "$WORK/$1.traces" >"$WORK/$1.report.json" 2>"$WORK/$1.report.err" ||
        fail "jitstall report --json of $1 failed: $(cat "$WORK/$1.report.err")"
}

check_report() { # check_report NAME <<'PY' ... PY: assertions over r (the report) and fcs()
    python3 - "$WORK/$1.report.json" "$1" <<EOP
import json, sys
r = json.load(open(sys.argv[1]))
name = sys.argv[2]
def expect(c, m):
    if not c:
        print(f"FAIL: {name}: {m}", file=sys.stderr)
        sys.exit(1)
def blame(f):
    return {b["cause"]: b["dur_ns"] for b in f["blame"]}
def sums(f):
    expect(sum(b["dur_ns"] for b in f["blame"]) == f["dur_ns"], f"blame sums to dur_ns: {f}")
def largest(f):
    b = blame(f)
    return max((v, k) for k, v in b.items() if k != "unexplained")[1]
$(cat)
EOP
}

run_traced triton TRITON_CACHE_DIR="$WORK/tcache" python3 "$PY/py_triton.py" "$FIX" "$WORK/bin/ptxas" "$WORK/o1" 4000000
expect_rc triton 0
report triton
check_report triton <<'PY'
p = r["processes"][0]
fcs = p["first_calls"]
expect(len(fcs) == 1, f"one first call (the fill has none): {fcs}")
f = fcs[0]
sums(f)
b = blame(f)
expect(f["framework"] == "triton", f"framework {f['framework']}")
expect(b.get("subprocess", 0) >= 25_000_000, f"ptxas (sleeps 30 ms) as a subprocess: {b}")
expect(largest(f) == "python", f"the lowering is the largest cause: {b}")
expect(b.get("unexplained", 0) < 0.10 * f["dur_ns"], f"under 10% unexplained: {b}")
expect(f["samples"] and f["samples"][0]["func"] == "lower", f"top sampled function: {f['samples']}")
cs = [c for c in p["compiles"] if c["compiler"] == "ptxas"]
expect(len(cs) == 1 and cs[0]["framework"] == "triton" and cs[0]["exit_status"] == 0, f"{cs}")
fx = [x for x in r["fixes"] if x["kind"] == "triton_cache"]
expect(len(fx) == 1 and "did not exist" in fx[0]["text"] and "TRITON_CACHE_DIR" in fx[0]["text"],
       f"the Triton cache fix: {r['fixes']}")
PY
"$JST_CLI" report "$WORK/triton.traces" >"$WORK/triton.txt"
grep -q "First calls" "$WORK/triton.txt" || fail "text report: no First calls section"
# The headline says so exactly when the first call took longer than the time
# to first kernel (here the interpreter's start-up, which varies with load).
slower=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["processes"][0]; print(int(max(f["dur_ns"] for f in p["first_calls"]) > p["ttfk_ns"]))' "$WORK/triton.report.json")
if [ "$slower" = 1 ]; then
    grep -qE "Slowest first call  add_one from <module> \(.*py_triton.py:[0-9]+\) took" "$WORK/triton.txt" || fail "text report: no Slowest first call headline"
else
    ! grep -q "Slowest first call" "$WORK/triton.txt" || fail "text report: Slowest first call headline for a faster first call"
fi

run_traced xla python3 "$PY/py_xla.py" "$FIX" "$BIN/libpy_xla.so" 300
expect_rc xla 0
report xla
check_report xla <<'PY'
p = r["processes"][0]
xs = [c for c in p["compiles"] if c["compiler"] == "xla"]
expect(len(xs) == 1 and xs[0]["framework"] == "xla" and xs[0]["what"] == "jit_foo", f"{xs}")
expect(not any(q["name"].startswith("XlaCompile") for q in p.get("queries", [])),
       f"XLA's range is not a query: {p.get('queries')}")
f = max(p["first_calls"], key=lambda f: f["dur_ns"])
sums(f)
expect(largest(f) == "framework_compile", f"the XLA compile is the largest cause: {f['blame']}")
expect(blame(f)["framework_compile"] >= 250_000_000, f"{f['blame']}")
PY

# Skipped under qemu-user, which runs vfork as fork (test_compilers.sh says why).
if [ "$JST_EMULATED" = 1 ]; then
    echo "skip (the Inductor-like part): qemu-user runs vfork as fork"
else
run_traced inductor python3 "$PY/py_inductor.py" "$FIX" "$WORK/bin/ptxas" "$WORK/o2"
expect_rc inductor 0
report inductor
check_report inductor <<'PY'
ps = r["processes"]
parent = [p for p in ps if p["first_calls"]]
expect(len(parent) == 1, f"the parent has the first call: {[p['pid'] for p in ps]}")
workers = [p for p in ps if p["ppid"] == parent[0]["pid"]]
expect(workers, "the worker's trace is in the run, a child of the parent")
wc = [c for w in workers for c in w["compiles"] if c["compiler"] == "ptxas"]
expect(wc, "the worker's ptxas")
f = parent[0]["first_calls"][0]
sums(f)
# the parent waited for the worker (subprocess.run): a build row whose
# compiles (the worker's ptxas, tied to it by parent_pid) count as build
expect(blame(f).get("build", 0) >= 25_000_000, f"the worker's ptxas counts: {f['blame']}")
expect(any(c.get("parent_pid") == parent[0]["pid"] for c in wc), f"the ptxas is under the worker's row: {wc}")
PY
fi

run_traced nvvm JST_FAKE_NVVM_MS=40 "$BIN/prog_nvvm" "$BIN/fakenvvm/libnvvm.so.4" "$FIX"
expect_rc nvvm 0
report nvvm
check_report nvvm <<'PY'
p = r["processes"][0]
expect([c["compiler"] for c in p["compiles"]] == ["nvvm"], f"{p['compiles']}")
f = p["first_calls"][0]
sums(f)
expect(largest(f) == "runtime_compiler", f"{f['blame']}")
expect(any(m["call"] == "nvvmCompileProgram" and m["culprit"] for m in p["modules"]),
       "the NVVM compile is a culprit, like NVRTC's")
PY

run_traced spawn PATH="$WORK/bin:$PATH" "$BIN/prog_spawn" "$WORK/bin" "$WORK/o3"
report spawn
check_report spawn <<'PY'
cs = r["processes"][0]["compiles"]
got = sorted((c["compiler"], c["exit_status"]) for c in cs)
expect(got == [("nvcc", 0), ("nvcc", 3)] + [("ptxas", 0)] * 5, f"{got}")
expect(all(c["pid"] and c["dur_ns"] >= 25_000_000 for c in cs), f"{cs}")
PY
echo "ok: the report's compiles, first calls, blame and fixes on the stand-in programs"
