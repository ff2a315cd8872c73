#!/usr/bin/env bash
# jitstall's own cost: END carries self_ns (the preload's own time, without
# the real driver calls), each call record its own share, and
# JITSTALL_DEBUG=1 prints the time per phase at exit. The cache walk at start
# is reused at exit when nothing was stored meanwhile.
. "$(dirname "$0")/lib.sh"
skip_emulated "jitstall's own time against the simulated JIT is a timing of the emulator"
export JITSTALL_SIM_JIT_US_PER_KB=50000
run_traced cost JITSTALL_DEBUG=1 JITSTALL_PROGRESS_MS=10 "$BIN/prog_dlsym" "$FIX" 0 module ptx75.fatbin sm90.fatbin
expect_rc cost 0
dump_json "$(the_trace cost)" "$WORK/cost.json"
check_json "$WORK/cost.json" <<'PY'
end = of_type("end")
expect(len(end) == 1, "one END record")
own = end[0].get("self_ns", 0)
proc = of_type("process")[0]
life = end[0]["start_ns"] - proc["mono_ns"]
expect(0 < own < life, f"END self_ns {own} within the traced life {life}")
cs = calls()
expect(cs and all("self_ns" in c for c in cs), "every call record has self_ns")
# The JIT of ptx75.fatbin (~100 ms here) is the driver's, not jitstall's:
# a call's self_ns never holds its dur_ns.
jit = [c for c in loads() if c.get("verdict") == "ptx_jit"]
expect(jit and jit[0]["dur_ns"] > 50000000, f"a JIT load: {jit}")
expect(own < jit[0]["dur_ns"], f"self_ns {own} excludes the driver's JIT {jit[0]['dur_ns']}")
expect(sum(c["self_ns"] for c in cs) <= own, "calls' self_ns add up to at most END's")
# The PTX is scanned for kernels once; BEGIN and the call record both list them.
b = [x for x in of_type("begin") if x.get("seq") == jit[0]["seq"]]
expect(b and b[0].get("kernels") and b[0].get("kernels") == jit[0].get("kernels"),
       f"same kernels in BEGIN and call: {b} {jit[0].get('kernels')}")
PY
for phase in "load unwinder" "open trace" "cache walk at start" "module map" "image inspection" \
    "stack capture" "cache walk at exit" "final flush" "own total"; do
    grep -q "jitstall\[[0-9]*\]: cost: $phase" "$WORK/cost.err" || fail "no '$phase' line: $(cat "$WORK/cost.err")"
done
# The progress thread's records (every 10 ms of the ~80 ms JIT) count too.
n=$(sed -n 's/.*cost: progress records .* in \([0-9]*\)$/\1/p' "$WORK/cost.err")
[ "${n:-0}" -gt 0 ] || fail "progress records not counted: $(grep progress "$WORK/cost.err")"
# The cuGetProcAddress route (prog_cudart_like resolves every function
# through it, as cudart does): mapping what it returns counts, outside events.
run_traced gpa JITSTALL_DEBUG=1 "$BIN/prog_cudart_like" "$FIX" 0
expect_rc gpa 0
n=$(sed -n 's/.*cost: cuGetProcAddress mapping .* in \([0-9]*\)$/\1/p' "$WORK/gpa.err")
[ "${n:-0}" -gt 0 ] || fail "cuGetProcAddress mapping not counted: $(grep -i procaddress "$WORK/gpa.err")"
# Exit: the first run stored an entry (index changed), so its exit walked
# the cache; a warm run (a hit, index unchanged) reuses the walk at start.
reuse='cache at exit: index unchanged since start'
! grep -q "$reuse" "$WORK/cost.err" || fail "cold run reused the start walk"
run_traced warm JITSTALL_DEBUG=1 "$BIN/prog_dlsym" "$FIX" 0 module ptx75.fatbin
expect_rc warm 0
grep -q "$reuse" "$WORK/warm.err" || fail "warm run walked the cache again at exit"
for run in cost warm; do
    dump_json "$(the_trace $run)" "$WORK/$run.json"
done
check_json "$WORK/cost.json" <<'PY'
st = {c["phase"]: c for c in of_type("cache_state")}
expect(st["start"]["entries"] == 0 and st["exit"]["entries"] == 1, f"cold: 0 then 1 entry: {st}")
PY
check_json "$WORK/warm.json" <<'PY'
st = {c["phase"]: c for c in of_type("cache_state")}
expect(st["start"]["entries"] == st["exit"]["entries"] == 1, f"warm: 1 entry at both ends: {st}")
expect(st["start"]["size_bytes"] == st["exit"]["size_bytes"] > 0, f"same size: {st}")
PY
# Without JITSTALL_DEBUG the program's stderr is untouched.
run_plain plain "$BIN/prog_dlsym" "$FIX" 0 module ptx75.fatbin sm90.fatbin
run_traced quiet "$BIN/prog_dlsym" "$FIX" 0 module ptx75.fatbin sm90.fatbin
same_behaviour plain quiet
echo "ok: self_ns in END and calls; phases printed with JITSTALL_DEBUG=1"
