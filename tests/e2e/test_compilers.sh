#!/usr/bin/env bash
# Compiles of Python frameworks, on the simulated driver:
#  - Triton-like (py_compilers/py_triton.py): the ptxas child is a compile
#    record whose stack has the Python frames of triton/backends/nvidia/
#    compiler.py; the frameworks' caches are recorded once (TRITON_CACHE_DIR
#    set, missing); the CPU-bound lowering before it is sampled and written as
#    sample records before the kernel's first launch; JITSTALL_SAMPLE=0 writes
#    none.
#  - XLA-like (py_xla.py): the XlaCompile NVTX range is recorded and the work
#    inside it sampled under backend_compile_and_load.
#  - Inductor-like (py_inductor.py): the compile worker child has its own
#    trace, with the ptxas compile and the parent's pid as its ppid.
# Output and exit status are unchanged.
. "$(dirname "$0")/lib.sh"
PY=$JST_E2E_SRC/py_compilers
mkdir -p "$WORK/bin" "$WORK/o1" "$WORK/o2" "$WORK/o3" "$WORK/o4"
ln -s "$BIN/fake_cc" "$WORK/bin/ptxas"
N=4000000

run_plain tplain python3 "$PY/py_triton.py" "$FIX" "$WORK/bin/ptxas" "$WORK/o1" $N
run_traced triton TRITON_CACHE_DIR="$WORK/tcache" python3 "$PY/py_triton.py" "$FIX" "$WORK/bin/ptxas" "$WORK/o2" $N
expect_rc tplain 0
same_behaviour tplain triton
dump_json "$(the_trace triton)" "$WORK/triton.json"
check_json "$WORK/triton.json" tcache="$WORK/tcache" <<'PY'
cs = of_type("compile")
expect(len(cs) == 1 and cs[0]["compiler"] == "ptxas", f"one ptxas compile: {cs}")
c = cs[0]
expect(c["spawn_how"] == "exec" and c["target"] == "sm_90a", "subprocess's exec, --gpu-name")
st = [s for s in of_type("stack") if s["stack_id"] == c.get("stack_id")]
expect(len(st) == 1, "the compile's stack is written")
frames = st[0].get("py_frame", [])
expect(any(f.split("\t")[0] == "make_cubin" and
           f.split("\t")[1].endswith("triton/backends/nvidia/compiler.py") for f in frames),
       f"the stack is in Triton's compiler: {frames}")
fw = {r["framework"]: r for r in of_type("fw_cache")}
expect(sorted(fw) == ["cupy", "inductor", "jax", "numba", "torch_extensions", "triton"], f"frameworks {sorted(fw)}")
t = fw["triton"]
expect(t["cache_path"] == arg["tcache"] and t["cache_path_env"] == 1 and t["exists"] == 0,
       f"triton cache as set and missing: {t}")
expect(t["writable"] == 1 and "fs_type" in t and "ephemeral" in t, f"triton cache storage: {t}")
expect(fw["jax"]["cache_path_env"] == 0 and "cache_path" not in fw["jax"], "JAX: no cache")
launches = calls("cuLaunchKernel")
expect(len(launches) == 2, "two first launches")
second = launches[1]["seq"]
sm = [s for s in of_type("sample") if s["before_seq"] == second]
expect(sm, "samples before the kernel's first launch")
lower = sum(s["sample_ns"] for s in sm if s["py_frame"][0].split("\t")[0] == "lower")
win = sm[0]["window_ns"]
expect(all(s["window_ns"] == win and s["period_ns"] == 10_000_000 for s in sm), "one window")
expect(lower >= 0.5 * win, f"the lowering has most of the window: {lower} of {win}")
expect(lower < c["start_ns"] - launches[0]["start_ns"] + 50_000_000,
       "sampled time fits in the time between the launches")
expect(all(s["tid"] == launches[1]["tid"] for s in sm), "samples of the launching thread")
PY

run_traced dbg JITSTALL_DEBUG=1 python3 "$PY/py_triton.py" "$FIX" "$WORK/bin/ptxas" "$WORK/o3" 1000
grep -q 'sampler thread started' "$WORK/dbg.err" || fail "no sampler thread in a Python process"
run_traced nosample JITSTALL_SAMPLE=0 python3 "$PY/py_triton.py" "$FIX" "$WORK/bin/ptxas" "$WORK/o3" $N
expect_rc nosample 0
dump_json "$(the_trace nosample)" "$WORK/nosample.json"
check_json "$WORK/nosample.json" <<'PY'
expect(not of_type("sample"), "JITSTALL_SAMPLE=0: no samples")
expect(len(of_type("compile")) == 1, "the compile is still recorded")
PY

run_plain xplain python3 "$PY/py_xla.py" "$FIX" "$BIN/libpy_xla.so" 300
run_traced xla python3 "$PY/py_xla.py" "$FIX" "$BIN/libpy_xla.so" 300
expect_rc xplain 0
same_behaviour xplain xla
dump_json "$(the_trace xla)" "$WORK/xla.json"
check_json "$WORK/xla.json" <<'PY'
rg = [r for r in of_type("range") if r.get("name") == "XlaCompile:#module=jit_foo#"]
expect(len(rg) == 1 and "domain" not in rg[0], "the XLA range in the default domain")
second = calls("cuLaunchKernel")[1]["seq"]
sm = [s for s in of_type("sample") if s["before_seq"] == second]
inside = sum(s["sample_ns"] for s in sm
             if any(f.split("\t")[0] == "backend_compile_and_load" for f in s["py_frame"]))
expect(inside >= 150_000_000, f"the 300 ms compile is sampled under backend_compile_and_load: {inside}")
PY

# qemu-user runs vfork as a fork: the worker's exec note, made in a table
# that exists only after the fork in a process with no trace yet, stays in
# its child (docs/DRIVER.md, "Compiler child processes").
if [ "$JST_EMULATED" = 1 ]; then
echo "skip (the Inductor-like part): qemu-user runs vfork as fork"
else
run_plain iplain python3 "$PY/py_inductor.py" "$FIX" "$WORK/bin/ptxas" "$WORK/o1"
run_traced inductor python3 "$PY/py_inductor.py" "$FIX" "$WORK/bin/ptxas" "$WORK/o4"
expect_rc iplain 0
same_behaviour iplain inductor
parent="" worker=""
for t in $(traces_of inductor); do
    dump_json "$t" "$WORK/i.json"
    if grep -q compile_worker.py "$WORK/i.json" && grep -q '"compiler":"ptxas"' "$WORK/i.json"; then
        worker=$WORK/i.json.w
        cp "$WORK/i.json" "$worker"
    elif grep -q '"cuLaunchKernel"' "$WORK/i.json"; then
        parent=$WORK/i.json.p
        cp "$WORK/i.json" "$parent"
    fi
done
[ -n "$parent" ] && [ -n "$worker" ] || fail "expected a parent trace and a worker trace"
ppid_pid=$(python3 -c 'import json,sys; p=[json.loads(l) for l in open(sys.argv[1]) if "\"process\"" in l][0]; print(p["pid"])' "$parent")
check_json "$worker" parent="$ppid_pid" <<'PY'
p = of_type("process")[0]
expect(p["ppid"] == int(arg["parent"]), f"the worker's ppid {p['ppid']} is the parent {arg['parent']}")
cs = of_type("compile")
expect(len(cs) == 1 and cs[0]["compiler"] == "ptxas" and cs[0]["output"].endswith("w.cubin"),
       f"the worker's ptxas: {cs}")
PY
fi
echo "ok: Triton-like, XLA-like and Inductor-like compiles captured, with samples"
