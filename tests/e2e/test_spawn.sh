#!/usr/bin/env bash
# Compiler children: a traced process that starts stand-in ptxas and nvcc by
# fork+exec, vfork+exec, posix_spawn and posix_spawnp (and on a thread with a
# 16 KiB stack: one reaped there, one spawned and reaped there) gets one compile record per child, written at
# its reap: compiler, program, arguments, target, output and its size, pid,
# wait status, the time from the start to the reap, and a stack. An exec that
# fails (a search path's missing candidate) leaves no record. Output and
# exit status are unchanged.
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/bin" "$WORK/out-plain" "$WORK/out-traced"
for n in ptxas nvcc; do ln -s "$BIN/fake_cc" "$WORK/bin/$n"; done
run_plain plain PATH="$WORK/bin:$PATH" "$BIN/prog_spawn" "$WORK/bin" "$WORK/out-plain"
run_traced traced PATH="$WORK/bin:$PATH" "$BIN/prog_spawn" "$WORK/bin" "$WORK/out-traced"
expect_rc plain 0
same_behaviour plain traced
grep -q '^vfork: 3$' "$WORK/plain.out" || fail "the vfork child did not run"
dump_json "$(the_trace traced)" "$WORK/t.json"
check_json "$WORK/t.json" out="$WORK/out-traced" bin="$WORK/bin" <<'PY'
cs = of_type("compile")
expect(len(cs) == 7, f"seven compile records, got {len(cs)}")
by_out = {c.get("output", "").rsplit("/", 1)[-1]: c for c in cs}
want = {
    "fork.cubin": ("ptxas", "exec", "sm_90a", ["fork.ptx"], 0),
    "vfork.o": ("nvcc", "exec", "sm_80", ["k.cu"], 3),
    "spawn.cubin": ("ptxas", "posix_spawn", "sm_90", ["spawn.ptx"], 0),
    "spawnp.o": ("nvcc", "posix_spawn", "compute_90", ["p.cu"], 0),
    "thread.cubin": ("ptxas", "exec", "sm_90", ["spawn.ptx"], 0),
    "search.cubin": ("ptxas", "exec", "sm_90", ["search.ptx"], 0),
    "thread2.cubin": ("ptxas", "posix_spawn", "sm_90", ["spawn.ptx"], 0),
}
expect(sorted(by_out) == sorted(want), f"outputs {sorted(by_out)}")
stacks = {s["stack_id"] for s in of_type("stack")}
for name, (cc, how, target, inputs, rc) in want.items():
    c = by_out[name]
    expect(c["compiler"] == cc, f"{name}: compiler {c['compiler']}")
    expect(c["spawn_how"] == how, f"{name}: spawn_how {c['spawn_how']}")
    expect(c.get("target") == target, f"{name}: target {c.get('target')}")
    expect(c.get("inputs") == inputs, f"{name}: inputs {c.get('inputs')}")
    expect(c["wait_status"] >> 8 == rc and c["wait_status"] & 0x7f == 0, f"{name}: status {c['wait_status']}")
    expect(c["argv"][0] == cc and c["output"] in c["argv"], f"{name}: argv {c['argv']}")
    expect(c.get("out_size") == 100, f"{name}: out_size {c.get('out_size')}")
    expect(c["child_pid"] > 0, f"{name}: child_pid")
    # fake_cc sleeps 30 ms: the time from start to reap holds it
    expect(25_000_000 <= c["dur_ns"] < 5_000_000_000, f"{name}: dur_ns {c['dur_ns']}")
    expect(c["wait_ns"] <= c["dur_ns"], f"{name}: wait_ns {c['wait_ns']} > dur_ns")
    expect(c.get("stack_id") in stacks, f"{name}: stack {c.get('stack_id')} not written")
    expect(c["program"].endswith(cc), f"{name}: program {c['program']}")
expect(by_out["spawnp.o"]["program"] == "nvcc", "posix_spawnp keeps the name searched for")
PY
# A process that does not run Python never starts the frame sampler.
run_traced dbg JITSTALL_DEBUG=1 PATH="$WORK/bin:$PATH" "$BIN/prog_spawn" "$WORK/bin" "$WORK/out-traced"
grep -q 'trace file' "$WORK/dbg.err" || fail "JITSTALL_DEBUG=1 printed nothing: the check proves nothing"
! grep -q 'sampler thread' "$WORK/dbg.err" || fail "a C program started the Python sampler"
echo "ok: compiler children by fork, vfork, posix_spawn(p) and reaped on a 16 KiB thread"
