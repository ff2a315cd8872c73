#!/usr/bin/env bash
# The Python frame sampler leaves the program alone (py_sampler.py, run plain
# and traced; output, stderr and exit status must be the same):
#  - descriptors: while it samples, open() returns the lowest free number;
#    close(3); dup2(data, 3); write(3) gets no error and the data file holds
#    only what the program wrote; at the descriptor limit, no EMFILE; a
#    program that puts its own file on the reader's descriptor gets nothing
#    written to it, and the trace says frames are no longer read;
#  - threads: a Python process that runs a compiler and forks but never calls
#    the driver has one thread; the sampler thread ends when nothing is
#    sampled (JITSTALL_DEBUG=1 says so);
#  - a seccomp filter that kills clone/clone3: no thread (sampler or
#    progress), the program runs, the trace says why;
#  - 8 short-lived Python threads that call cuInit leave their slots: the
#    main thread's later Python work before its first launch is sampled.
. "$(dirname "$0")/lib.sh"
PY=$JST_E2E_SRC/py_sampler.py
# The interpreter itself, not a wrapper script that forks (pyenv's shim).
PYTHON=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
CUBIN=$FIX/sm90.cubin
mkdir -p "$WORK/bin"
ln -s "$BIN/fake_cc" "$WORK/bin/gcc"
ln -s "$BIN/fake_cc" "$WORK/bin/ptxas"

# both NAME MODE ARGS...: runs the mode plain and traced, same behaviour.
both() {
    local name=$1
    shift
    run_plain "$name.plain" "$PYTHON" "$PY" "$@"
    run_traced "$name" "$PYTHON" "$PY" "$@"
    expect_rc "$name.plain" 0
    same_behaviour "$name.plain" "$name"
}

both lowest lowest 1.5
grep -q '^lowest: 0 other' "$WORK/lowest.out" || fail "lowest: $(cat "$WORK/lowest.out")"
both dup2 dup2 1.5 "$WORK/dup2.data"
grep -q '^dup2: errors \[\], data intact' "$WORK/dup2.out" || fail "dup2: $(cat "$WORK/dup2.out")"
both limit limit 1.5
grep -q '^limit: 0 EMFILE' "$WORK/limit.out" || fail "limit: $(cat "$WORK/limit.out")"
# Samples were taken meanwhile (else the above proves nothing): the sampler
# thread read frames in every run.
for n in lowest dup2 limit; do
    run_traced "$n.dbg" JITSTALL_DEBUG=1 "$PYTHON" "$PY" $n 0.3 "$WORK/$n.dbg.data"
    grep -q 'sampler thread started' "$WORK/$n.dbg.err" || fail "$n: no sampler thread"
done
echo "ok: the sampler takes no descriptor of the program's"

both takeover takeover "$WORK/take.data" "$CUBIN"
grep -q "^takeover: data b'mine\\\\n'" "$WORK/takeover.out" || fail "takeover: $(cat "$WORK/takeover.out")"
dump_json "$(the_trace takeover)" "$WORK/takeover.json"
grep -q 'Python frames no longer recorded: the program closed or replaced' "$WORK/takeover.json" ||
    fail "takeover: no note that frames are no longer read"
echo "ok: the reader's descriptor taken by the program: nothing written to it, a note"

both nocuda nocuda "$WORK/bin/gcc"
# Traced, the thread count is the plain run's (same_behaviour compares the
# output); natively that is 1, under qemu-user the emulator's own thread is
# one more.
grep -q '^nocuda: cc 0, child 0, threads ' "$WORK/nocuda.out" || fail "nocuda: $(cat "$WORK/nocuda.out")"
[ "$JST_EMULATED" = 1 ] || grep -q 'threads 1$' "$WORK/nocuda.out" || fail "nocuda: $(cat "$WORK/nocuda.out")"
echo "ok: no thread in a Python process that never called the driver"

# The sampler thread ends once nothing was recorded for 10 s (SMP_IDLE_NS).
run_traced idle JITSTALL_DEBUG=1 "$PYTHON" -c "
import ctypes, os, sys, time
sys.path.insert(0, '$JST_E2E_SRC')
cu = ctypes.CDLL('libcuda.so.1'); cu.cuInit(0)
time.sleep(12)
print('threads', len(os.listdir('/proc/self/task')))
cu.cuInit(0)
time.sleep(0.2)
print('threads', len(os.listdir('/proc/self/task')))
"
expect_rc idle 0
[ "$(grep -c 'sampler thread started' "$WORK/idle.err")" = 2 ] ||
    fail "idle: the sampler thread did not start, end and start again"
grep -q 'sampler thread ends' "$WORK/idle.err" || fail "idle: the sampler thread did not end"
# One thread more once the sampler runs again; natively 1 then 2 (under
# qemu-user the emulator's own thread adds one to both).
base=1
[ "$JST_EMULATED" = 1 ] && base=2
[ "$(tr '\n' ' ' <"$WORK/idle.out")" = "threads $base threads $((base + 1)) " ] ||
    fail "idle: $(cat "$WORK/idle.out")"
echo "ok: the sampler thread ends when nothing is sampled, and starts again"

# A forked child reads its own memory, not its parent's, through the number
# its parent's reader had.
both forked forked "$CUBIN"
child=""
for t in $(traces_of forked); do
    dump_json "$t" "$WORK/forked.json"
    grep -q '"in_child' "$WORK/forked.json" && child=$t
done
[ -n "$child" ] || fail "forked: no trace has the child's frames"
dump_json "$child" "$WORK/forked.json"
check_json "$WORK/forked.json" <<'PY'
stacks = {r["stack_id"]: r for r in of_type("stack")}
top = [stacks[c["stack_id"]]["py_frame"][0].split("\t")[0] for c in calls("cuModuleLoad")]
expect(top == ["load"] and "in_child" in stacks[calls("cuModuleLoad")[0]["stack_id"]]["py_frame"][1],
       f"the child's load from in_child: {top}")
PY
echo "ok: a forked child reads its own frames"

# 8 threads come and go; the main thread's work is still sampled.
run_traced threads "$PYTHON" "$PY" threads "$CUBIN" "$WORK/bin/ptxas" 285
expect_rc threads 0
dump_json "$(the_trace threads)" "$WORK/threads.json"
check_json "$WORK/threads.json" <<'PY'
main = calls("cuModuleLoad")[0]["tid"]
launch = [c for c in calls("cuLaunchKernel") if c["tid"] == main][0]
sm = [s for s in of_type("sample") if s["before_seq"] == launch["seq"]]
spin = sum(s["sample_ns"] for s in sm if any(f.split("\t")[0] == "spin" for f in s["py_frame"]))
expect(spin >= 140_000_000, f"the main thread's 285 ms of Python sampled: {spin} ns in {len(sm)}")
PY
echo "ok: slots of ended threads are used again"

# A seccomp filter that kills clone: no thread (neither the sampler nor, for
# the PTX load that JITs, the progress thread), a note, same run.
run_plain seccomp.plain "$BIN/seccomp_deny" --clone "$PYTHON" "$PY" work "$FIX/k75.ptx"
if [ "$(cat "$WORK/seccomp.plain.rc")" = 77 ]; then
    echo "skip: the seccomp part: a filter cannot be installed here ($(tail -1 "$WORK/seccomp.plain.err"))"
    exit 77
fi
expect_rc seccomp.plain 0
run_traced seccomp "$BIN/seccomp_deny" --clone "$PYTHON" "$PY" work "$FIX/k75.ptx"
same_behaviour seccomp.plain seccomp
dump_json "$(the_trace seccomp)" "$WORK/seccomp.json"
[ "$(grep -c "no thread of jitstall's started: the process runs under a seccomp filter" \
    "$WORK/seccomp.json")" = 1 ] || fail "seccomp: not one note"
grep -q '"py_frame"' "$WORK/seccomp.json" || fail "seccomp: no Python frames at recorded calls"
echo "ok: no thread under a seccomp filter"

# A seccomp filter (here one that refuses process_vm_readv) in a process that
# already runs a thread of its own: clone is evidently allowed, so the sampler
# runs as usual (a container's default profile is such a filter).
run_traced seccomp_mt "$BIN/seccomp_deny" "$PYTHON" "$PY" work_threaded "$FIX/k75.ptx"
expect_rc seccomp_mt 0
dump_json "$(the_trace seccomp_mt)" "$WORK/seccomp_mt.json"
grep -q "no thread of jitstall's started" "$WORK/seccomp_mt.json" &&
    fail "seccomp_mt: no thread although the program runs threads of its own"
grep -q '"type":"sample"' "$WORK/seccomp_mt.json" || fail "seccomp_mt: no samples"
echo "ok: a filter in a process with threads of its own: sampled"
