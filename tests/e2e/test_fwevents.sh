#!/usr/bin/env bash
# The frameworks' own compile events (interpose/pyevents.c), on the
# simulated driver, with stand-ins of Triton, PyTorch, JAX and Numba that
# publish them as the real ones do (py_fwevents/site-packages):
#  - each compile is an fw_event record with its stages and cache outcome,
#    and a stack for the program's call site; a note names each subscription;
#  - the report blames the compiles on the frameworks, not on sampled
#    Python; a miss gets the cache fix, a hit none (its ahead-of-time fix);
#  - the program is unchanged: output (the framework modules it loaded
#    included: the preload imports none), exit status; a listener slot the
#    program filled is left to it and a note says so; listeners called with
#    arguments no framework gives raise nothing;
#  - subinterpreters are left alone (their compiles are not recorded);
#  - JITSTALL_FW_EVENTS=0: no event, no note.
. "$(dirname "$0")/lib.sh"
P=$JST_E2E_SRC/py_fwevents/py_fwevents.py
caches=(TRITON_CACHE_DIR="$WORK/tc" TORCHINDUCTOR_CACHE_DIR="$WORK/ic" JAX_COMPILATION_CACHE_DIR="$WORK/jc")
mkdir -p "$WORK/tc" "$WORK/ic" "$WORK/jc"
# caches that held an entry each: a miss there is explained by the framework's word
touch "$WORK/ic/an-older-graph" "$WORK/tc/an-older-kernel" "$WORK/jc/an-older-module"
# Each compile spins MS ms: long enough that what is not the compile (the
# launch, the listener's own record) stays a few percent of a first call,
# also under qemu-user, where Python runs ten times slower.
MS=150
[ "$JST_EMULATED" = 1 ] && MS=1000
for m in miss hit own odd; do
    run_plain "p$m" "${caches[@]}" python3 "$P" "$FIX" $m $MS
    run_traced "t$m" "${caches[@]}" python3 "$P" "$FIX" $m $MS
    expect_rc "p$m" 0
    same_behaviour "p$m" "t$m"
    dump_json "$(the_trace "t$m")" "$WORK/t$m.json"
    "$JST_CLI" report --json "$WORK/t$m.traces" >"$WORK/r$m.json" 2>"$WORK/r$m.err" ||
        fail "report --json $m: $(cat "$WORK/r$m.err")"
done
grep -q "the program's own listener: add_kernel miss" "$WORK/town.out" ||
    fail "the program's own Triton listener was not called"
# A listener in the slot before jitstall saw the module: left there.
run_plain pplug STANDIN_TRITON_LISTENER=1 "${caches[@]}" python3 "$P" "$FIX" miss 20 triton
run_traced tplug STANDIN_TRITON_LISTENER=1 "${caches[@]}" python3 "$P" "$FIX" miss 20 triton
same_behaviour pplug tplug
grep -q "a plugin's listener: add_kernel miss" "$WORK/tplug.out" || fail "the plugin's listener was not called"
dump_json "$(the_trace tplug)" "$WORK/tplug.json"

check_json "$WORK/tmiss.json" ms=$MS <<'PY'
ev = of_type("fw_event")
def rows(fw, stage=None):
    return [e for e in ev if e["framework"] == fw and (stage is None or e["fw_stage"] == stage)]
t = rows("triton", "compile")
expect(len(t) == 1 and t[0]["name"] == "add_kernel" and t[0]["fw_cache_outcome"] == "miss",
       f"one Triton compile, a miss: {t}")
st = [e["fw_stage"] for e in rows("triton") if e["fw_stage"] != "compile"]
expect(st == ["cache_lookup", "trace", "lower", "lower", "lower", "backend", "backend", "cache_store"],
       f"Triton's stages in order: {st}")
whole = t[0]
inside = [e for e in rows("triton") if e["fw_stage"] != "compile"]
expect(all(whole["start_ns"] <= e["start_ns"] and e["start_ns"] + e["dur_ns"] <= whole["start_ns"] + whole["dur_ns"]
           for e in inside), "the stages lie in the compile")
expect(abs(sum(e["dur_ns"] for e in inside) - whole["dur_ns"]) <= 1000, "and fill it")
expect(0.9 * int(arg["ms"]) * 1e6 <= whole["dur_ns"] <= 10 * int(arg["ms"]) * 1e6,
       f"the compile's own time: {whole['dur_ns']}")
i = rows("inductor", "compile")
expect(len(i) == 1 and i[0]["fw_cache_outcome"] == "miss" and i[0]["fw_detail"] == "trigger=dynamo",
       f"one Inductor compile, its FX graph cache missed: {i}")
j = [e["fw_stage"] for e in rows("jax")]
expect(j == ["trace", "lower", "cache_lookup", "backend"], f"JAX's stages: {j}")
n = rows("numba", "compile")
expect(len(n) == 1 and n[0]["name"] == "my_kernel", f"Numba's compile: {n}")
expect(all("stack_id" in e for e in t + i + n), "whole compiles carry a stack")
notes = [r["message"] for r in of_type("note") if r["message"].startswith("framework events")]
expect(len(notes) == 4 and all(r["level"] == 0 for r in of_type("note") if r["message"] in notes),
       f"a note per subscription: {notes}")
PY

check_json "$WORK/town.json" <<'PY'
ev = of_type("fw_event")
expect(not [e for e in ev if e["framework"] == "triton"], "no Triton events: the slot is the program's")
expect([e for e in ev if e["framework"] == "inductor"], "the others still subscribed")
PY
check_json "$WORK/tplug.json" <<'PY'
expect(not of_type("fw_event"), "no Triton events: the slot was the plugin's")
expect(any(r["level"] == 1 and "set triton.knobs.compilation.listener itself" in r["message"]
           for r in of_type("note")), "a note says Triton is sampled")
PY

# The report: framework compiles explain nearly all of each first call, the
# sampled rest is small; a miss names the cache, a hit does not.
python3 - "$WORK/rmiss.json" "$WORK/rhit.json" <<'PY' || fail "report (above)"
import json, sys
def fail(m):
    print("FAIL:", m); sys.exit(1)
for path, outcome in ((sys.argv[1], "miss"), (sys.argv[2], "hit")):
    d = json.load(open(path))
    p = d["processes"][0]
    fcs = {f["framework"]: f for f in p["first_calls"]}
    if sorted(fcs) != ["inductor", "numba", "triton", "xla"]:
        fail(f"{outcome}: a first call per framework: {sorted(fcs)}")
    for fw, f in fcs.items():
        b = {x["cause"]: x["dur_ns"] for x in f["blame"]}
        if b.get("framework_compile", 0) < 0.9 * f["dur_ns"]:
            fail(f"{outcome} {fw}: framework compiles {b.get('framework_compile')} of {f['dur_ns']}: {b}")
        if b.get("python", 0) > f["dur_ns"] / 3 or b.get("unexplained", 0) > 0.05 * f["dur_ns"]:
            fail(f"{outcome} {fw}: sampled Python or unexplained too large: {b}")
        if not (f["call_site"] or "").startswith("<module> (") or "py_fwevents.py" not in f["call_site"]:
            fail(f"{outcome} {fw}: the program's line is the call site: {f['call_site']}")
        want = "disabled" if fw == "numba" else outcome
        if f["cache"] != want:
            fail(f"{outcome} {fw}: cache {f['cache']}, not {want}")
    names = {f["framework"]: f["function"] for f in p["first_calls"]}
    if names["triton"] != "add_kernel" or names["xla"] != "jit_step" or names["numba"] != "my_kernel":
        fail(f"{outcome}: each first call named by its function: {names}")
    kinds = {x["kind"] for x in d["fixes"]}
    keep = {"triton_cache", "inductor_cache", "jax_cache"}
    if outcome == "miss" and not keep <= kinds:
        fail(f"miss: the caches' fixes: {kinds}")
    if outcome == "hit" and (kinds & keep or "framework_aot" not in kinds):
        fail(f"hit: no cache fix, the ahead-of-time one: {kinds}")
    fw = [c for c in p["compiles"] if c["compiler"] == "framework"]
    staged = [c for c in fw if c["stage"]]
    if outcome == "miss" and not any(c["stage"] == "backend" and c["framework"] == "triton" and
                                     c["parent"] is not None and not c["culprit"] for c in staged):
        fail("miss: Triton's stages are rows inside its compile, not culprits of their own")
    for f in d["fixes"]:
        fc = sum(x["dur_ns"] for x in p["first_calls"])
        if f["saves_ns"] > fc:
            fail(f"{outcome}: a fix claims {f['saves_ns']} of {fc} ns of first calls: {f['text']}")
PY
"$JST_CLI" report "$WORK/tmiss.traces" >"$WORK/rmiss.txt" 2>&1 || fail "report $WORK/tmiss.traces"
for said in "inductor reported the miss itself, through its FX graph cache's miss counter" \
    "Triton reported the miss itself (its compilation listener" \
    "JAX reported the miss itself (its compilation cache's miss event)"; do
    grep -qF "$said" "$WORK/rmiss.txt" || fail "the report does not say: $said"
done
"$JST_CLI" report "$WORK/thit.traces" >"$WORK/rhit.txt" 2>&1 || fail "report $WORK/thit.traces"
! grep -q "reported the miss itself" "$WORK/rhit.txt" || fail "a hit explained as a miss"

# Other CPython versions where the machine has them (pyenv's): 3.8 and later
# subscribe alike; before 3.8 (no audit hooks) a note says the compiles are
# sampled. The program is unchanged in every one.
for py in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.*/bin/python3; do
    [ -x "$py" ] || continue
    v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) || continue
    case $v in 3.[0-6]) continue ;; esac # older than the stand-ins' Python
    n="v${v/./_}"
    run_plain "p$n" "${caches[@]}" "$py" "$P" "$FIX" miss 20
    run_traced "t$n" "${caches[@]}" "$py" "$P" "$FIX" miss 20
    expect_rc "p$n" 0
    same_behaviour "p$n" "t$n"
    dump_json "$(the_trace "t$n")" "$WORK/t$n.json"
    check_json "$WORK/t$n.json" v="$v" <<'PY'
old = arg["v"] == "3.7"
ev = of_type("fw_event")
notes = [r["message"] for r in of_type("note") if r["message"].startswith("framework events")]
if old:
    expect(not ev and any("before 3.8" in m for m in notes), f"Python {arg['v']}: a note, no event: {notes}")
else:
    expect(len(ev) == 15 and len(notes) == 4, f"Python {arg['v']}: {len(ev)} events, notes {notes}")
PY
    echo "Python $v: same output and exit status, events as expected"
done

# Subinterpreters (a server may run its code in them): their objects are never
# touched, their compiles not recorded; the main interpreter's are.
run_plain psub python3 "$JST_E2E_SRC/py_fwevents/py_subinterp.py"
if [ "$(rc_of psub)" = 77 ]; then
    echo "skip (this part): no subinterpreter module in $(python3 --version)"
else
    run_traced tsub python3 "$JST_E2E_SRC/py_fwevents/py_subinterp.py"
    expect_rc psub 0
    same_behaviour psub tsub
    dump_json "$(the_trace tsub)" "$WORK/tsub.json"
    check_json "$WORK/tsub.json" <<'PY'
names = sorted({e["name"] for e in of_type("fw_event") if "name" in e})
expect(names == ["main_jit", "main_kernel"], f"the main interpreter's compiles only: {names}")
PY
fi

# A Python program that imports no framework gets no audit hook: the
# interpreter then builds no audit event's arguments for jitstall.
run_traced nofw JITSTALL_DEBUG=1 python3 -c 'import ctypes, json, decimal; print(json.dumps([1]))'
expect_rc nofw 0
! grep -q "audit hook" "$WORK/nofw.err" || fail "an audit hook in a program that imported no framework"
run_traced onefw JITSTALL_DEBUG=1 "${caches[@]}" python3 "$P" "$FIX" miss 5 numba
grep -q "framework events: audit hook added" "$WORK/onefw.err" || fail "no audit hook with a framework imported"

# numba-cuda's copy of the events refuses Numba's names: its own are taken,
# a compile is a miss, and a kernel loaded from its cache (the compiler lock
# taken, nothing compiled) is a cache load, no compile.
mkdir -p "$WORK/nc_hit" && echo index >"$WORK/nc_hit/my_kernel.nbi" # a cache with an entry
for m in miss hit; do
    run_traced "ncuda_$m" "${caches[@]}" NUMBA_CACHE_DIR="$WORK/nc_$m" python3 "$P" "$FIX" "$m" "$MS" numbacuda
    expect_rc "ncuda_$m" 0
    dump_json "$(the_trace "ncuda_$m")" "$WORK/ncuda_$m.json"
done
check_json "$WORK/ncuda_miss.json" <<'PY'
n = [e for e in of_type("fw_event") if e["framework"] == "numba"]
expect([(e["fw_stage"], e["fw_cache_outcome"], e["name"], e["fw_detail"]) for e in n] ==
       [("compile", "miss", "my_kernel", "numba-cuda:compile")], f"one compile: {n}")
expect(any(r["message"] == "framework events: numba.cuda.core.event (numba-cuda:compile)"
           for r in of_type("note")), "its note")
PY
check_json "$WORK/ncuda_hit.json" <<'PY'
n = [e for e in of_type("fw_event") if e["framework"] == "numba"]
expect(len(n) == 1 and n[0]["fw_stage"] == "cache_load" and
       n[0]["fw_detail"] == "numba-cuda:compiler_lock", f"the cache load: {n}")
PY
for m in miss hit; do "$JST_CLI" report --json "$WORK/ncuda_$m.traces" >"$WORK/ncuda_$m.rep.json"; done
python3 - "$WORK/ncuda_miss.rep.json" "$WORK/ncuda_hit.rep.json" <<'PY' || fail "numba-cuda report (above)"
import json, sys
for path, outcome in zip(sys.argv[1:], ("miss", "hit")):
    p = json.load(open(path))["processes"][0]
    f = [x for x in p["first_calls"] if x["framework"] == "numba"]
    b = {x["cause"]: x["dur_ns"] for x in f[0]["blame"]} if f else {}
    if not f or b.get("framework_compile", 0) < 0.9 * f[0]["dur_ns"] or f[0]["cache"] != outcome:
        print("FAIL:", outcome, f and f[0]["cache"], b)
        sys.exit(1)
PY

run_traced off JITSTALL_FW_EVENTS=0 "${caches[@]}" python3 "$P" "$FIX" miss 20
expect_rc off 0
dump_json "$(the_trace off)" "$WORK/off.json"
check_json "$WORK/off.json" <<'PY'
expect(not of_type("fw_event"), "JITSTALL_FW_EVENTS=0: no event")
expect(not [r for r in of_type("note") if r["message"].startswith("framework events")], "and no note")
PY
echo "ok: framework events from Triton, PyTorch, JAX and Numba stand-ins; hit, miss, the program's own listener, odd calls, off"
