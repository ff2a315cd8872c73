#!/usr/bin/env bash
# Calls cut short. A process SIGKILLed in the middle of a
# slow load, link step or NVRTC compile leaves a trace in which the call is on
# disk before it returned (a BEGIN record) and progress records say how long
# it ran. `jitstall report` shows it as an in-flight culprit with a plausible
# duration, in text, JSON and Markdown; `jitstall check` fails on it with no
# budget given, and --max-ttfk-ms fails too. A call that returns leaves no
# in-flight call behind, and without progress records the duration cannot be
# known (which is why the thread exists).
. "$(dirname "$0")/lib.sh"
skip_emulated "the in-flight timings stretch past their bounds"
export LD_LIBRARY_PATH="$BIN/fakertc:$LD_LIBRARY_PATH"

# kill_during NAME HOLD_S [VAR=value...] PROGRAM ARGS...: runs traced, waits
# until the trace holds a BEGIN record, lets the call run HOLD_S more seconds,
# then SIGKILLs it. $WORK/NAME.elapsed: seconds from BEGIN seen to the kill.
kill_during() {
    local name=$1 hold=$2
    shift 2
    mkdir -p "$WORK/$name.traces"
    env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/$name.traces" "$@" \
        >"$WORK/$name.out" 2>&1 &
    local pid=$! seen=0 t
    for _ in $(seq 1 200); do
        t=$(traces_of "$name" | head -1)
        if [ -n "$t" ] && "$JST_CLI" dump "$t" 2>/dev/null | grep '^begin ' >/dev/null; then
            seen=1
            break
        fi
        kill -0 "$pid" 2>/dev/null || fail "$name ended before its call began: $(cat "$WORK/$name.out")"
        sleep 0.05
    done
    [ "$seen" = 1 ] || fail "$name: no BEGIN record on disk"
    local t0 task
    t0=$(date +%s.%N)
    sleep "$hold"
    # The progress thread, by name, and its blocked signals (hex mask).
    for task in /proc/"$pid"/task/*; do
        if [ "$(cat "$task/comm" 2>/dev/null)" = jitstall-prog ]; then
            sed -n 's/^SigBlk:[[:space:]]*//p' "$task/status" >"$WORK/$name.sigblk"
        fi
    done
    kill -9 "$pid"
    python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" \
        "$(date +%s.%N)" >"$WORK/$name.elapsed"
    wait "$pid" 2>/dev/null || true
}

# in_flight_report NAME CALL PHRASE: report (text, JSON, Markdown) and check of
# a killed run whose CALL was in flight for about $WORK/NAME.elapsed seconds.
in_flight_report() {
    local name=$1 call=$2 phrase=$3 trace rc
    trace=$(the_trace "$name")
    "$JST_CLI" report --json "$trace" >"$WORK/$name.report.json" 2>/dev/null ||
        fail "$name: report --json failed"
    python3 - "$WORK/$name.report.json" "$call" "$(cat "$WORK/$name.elapsed")" <<'PY' ||
import json, sys
rep = json.load(open(sys.argv[1]))
call, elapsed = sys.argv[2], float(sys.argv[3])
p = rep["processes"][0]
fl = [m for m in p["modules"] if m["in_flight"]]
assert len(fl) == 1, f"one module in flight, got {len(fl)}"
m = fl[0]
assert m["call"].startswith(call), f"the in-flight call is {call}: {m['call']}"
assert m["culprit"] and m["lost_ns"] == m["dur_ns"], "an in-flight call is a culprit"
d = m["dur_ns"] / 1e9
# It ran from before the BEGIN was seen until the kill; the last progress
# record is at most one period (0.2 s) before the kill.
assert elapsed - 0.45 <= d <= elapsed + 1.0, f"in flight {d:.2f} s, killed after {elapsed:.2f} s"
assert p["ttfk_in_flight"] and p["ttfk_ns"] >= m["dur_ns"], "counts in time to first kernel"
assert p["first_launch_ns"] is None, "no kernel was launched"
if m["jit"]:
    assert p["jit_ns"] >= m["dur_ns"] and m["cache"] == "unknown", "a JIT in flight: jit_ns"
PY
        fail "$name: the JSON report does not show $call in flight"
    "$JST_CLI" report "$trace" >"$WORK/$name.report.txt" 2>&1 || fail "$name: report failed"
    grep -q "in flight  still $phrase when the trace ends, after at least [0-9.]* m\?s" "$WORK/$name.report.txt" ||
        fail "$name: text report has no in-flight line: $(cat "$WORK/$name.report.txt")"
    grep -q "Time to first kernel  more than" "$WORK/$name.report.txt" ||
        fail "$name: time to first kernel is not shown as a lower bound"
    "$JST_CLI" report --markdown "$trace" 2>/dev/null | grep "\*\*still $phrase when the trace ends" >/dev/null ||
        fail "$name: Markdown report has no in-flight cell"
    rc=0
    "$JST_CLI" check "$trace" >"$WORK/$name.check" 2>&1 || rc=$?
    [ "$rc" = 1 ] || fail "$name: check with no budget exited $rc: $(cat "$WORK/$name.check")"
    grep -q "^FAIL .* in-flight: $call[_a-z0-9]* still $phrase when the trace ends" "$WORK/$name.check" ||
        fail "$name: no FAIL line for the call in flight: $(cat "$WORK/$name.check")"
    rc=0
    "$JST_CLI" check --max-ttfk-ms 500 "$trace" >"$WORK/$name.check2" 2>&1 || rc=$?
    [ "$rc" = 1 ] || fail "$name: check --max-ttfk-ms 500 exited $rc"
}

# 1. A load killed during its JIT (about 30 s of simulated JIT for 1.6 KiB).
kill_during load 1.5 JITSTALL_PROGRESS_MS=200 JITSTALL_SIM_JIT_US_PER_KB=20000000 \
    "$BIN/prog_direct" "$FIX" 0 module ptx75.fatbin
dump_json "$(the_trace load)" "$WORK/load.json"
check_json "$WORK/load.json" <<'PY'
b = of_type("begin")
expect(len(b) == 1 and b[0]["call_id"] == "cuModuleLoadData", "one BEGIN, of the load")
b = b[0]
expect(b["verdict"] == "ptx_jit" and b["jit_from"] == "compute_75", "the verdict before the call")
expect(len(b.get("kernels", [])) == 3 and b.get("stack_id", 0) > 0, "its kernels and stack")
expect(b["image_kind"] == "fatbin" and b.get("image_hash"), "the image")
expect(not [c for c in calls() if c["seq"] == b["seq"]], "no call record: it never returned")
pr = of_type("progress")
expect(len(pr) >= 4 and all(p["in_flight"] == 1 for p in pr), "progress records while in flight")
expect(pr[-1]["start_ns"] > b["start_ns"], "progress after the begin")
PY
in_flight_report load cuModuleLoadData compiling
# The progress thread blocks every signal the program could be sent (SIGINT,
# SIGUSR1, SIGTERM, SIGALRM, SIGCHLD here), so they reach the program's threads.
[ -s "$WORK/load.sigblk" ] || fail "no thread named jitstall-prog while the load ran"
python3 -c '
import sys
m = int(sys.argv[1], 16)
assert all(m >> (s - 1) & 1 for s in (2, 10, 14, 15, 17)), hex(m)' "$(cat "$WORK/load.sigblk")" ||
    fail "the progress thread does not block the program's signals: SigBlk $(cat "$WORK/load.sigblk")"

# 2. The same load with the progress thread off: nothing on disk says how
# long it ran, so the call lasts until its own BEGIN record.
kill_during noprogress 1 JITSTALL_PROGRESS_MS=0 JITSTALL_SIM_JIT_US_PER_KB=20000000 \
    "$BIN/prog_direct" "$FIX" 0 module ptx75.fatbin
"$JST_CLI" report --json "$(the_trace noprogress)" 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)["processes"][0]
m = [m for m in p["modules"] if m["in_flight"]]
assert len(m) == 1 and m[0]["dur_ns"] < 200000000, m' ||
    fail "without progress records the in-flight time should be unknown (near 0)"

# 3. An NVRTC compile killed half way (the fake compiler sleeps 60 s).
kill_during nvrtc 1.5 JITSTALL_PROGRESS_MS=200 JST_FAKE_RTC_MS=60000 \
    "$BIN/prog_rtc_direct" "$FIX" 0 module sm90.fatbin
dump_json "$(the_trace nvrtc)" "$WORK/nvrtc.json"
check_json "$WORK/nvrtc.json" <<'PY'
b = of_type("begin")
expect(len(b) == 1 and b[0]["call_id"] == "nvrtcCompileProgram", "one BEGIN, of NVRTC")
expect(b[0]["name"] == "sm_90" and b[0]["num_options"] == 3, "its -arch and option count")
PY
in_flight_report nvrtc nvrtcCompileProgram compiling

# 4. A link step killed during its PTX JIT.
kill_during link 1 JITSTALL_PROGRESS_MS=200 JITSTALL_SIM_JIT_US_PER_KB=20000000 \
    "$BIN/prog_link" "$FIX" 0 k75.ptx
in_flight_report link cuLinkAddData compiling

# 5. Across fork: the parent's load starts the progress thread, the forked
# child (which has no thread) JIT-loads slowly and is killed. The child's own
# trace must show progress: the thread is started again in the child.
mkdir -p "$WORK/fork.traces"
env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/fork.traces" JITSTALL_PROGRESS_MS=200 \
    JITSTALL_SIM_JIT_US_PER_KB=20000000 "$BIN/prog_forkload" "$FIX" sm90.fatbin ptx75.fatbin \
    >"$WORK/fork.out" 2>&1 &
ppid=$!
child=""
for _ in $(seq 1 200); do
    child=$(pgrep -P "$ppid" | head -1 || true)
    [ -n "$child" ] && break
    sleep 0.05
done
[ -n "$child" ] || fail "prog_forkload forked no child: $(cat "$WORK/fork.out")"
sleep 1.5
kill -9 "$child"
wait "$ppid" || fail "prog_forkload exited $?: $(cat "$WORK/fork.out")"
grep -q '^child killed by signal 9$' "$WORK/fork.out" || fail "fork: $(cat "$WORK/fork.out")"
ctrace=$(traces_of fork | grep -- "-$child-")
[ -n "$ctrace" ] || fail "no trace of the child $child: $(traces_of fork)"
dump_json "$ctrace" "$WORK/fork-child.json"
check_json "$WORK/fork-child.json" <<'PY'
b = of_type("begin")
expect(len(b) == 1 and b[0]["verdict"] == "ptx_jit", "the child's JIT load began")
expect(len(of_type("progress")) >= 3, "the child wrote progress records of its own")
PY

# 6. Calls that return: each BEGIN meets its call record, nothing is in flight.
run_plain done.plain "$BIN/prog_rtc_direct" "$FIX" 0 module ptx75.fatbin
run_traced done "$BIN/prog_rtc_direct" "$FIX" 0 module ptx75.fatbin
same_behaviour done.plain done
dump_json "$(the_trace done)" "$WORK/done.json"
check_json "$WORK/done.json" <<'PY'
b = of_type("begin")
expect(len(b) == 3, f"BEGINs of the load, NVRTC and nvJitLink: {len(b)}")
for x in b:
    c = [c for c in calls() if c["seq"] == x["seq"]]
    expect(len(c) == 1 and c[0]["call_id"] == x["call_id"], "each BEGIN has its call, same seq")
    expect(c[0]["start_ns"] >= x["start_ns"], "the call starts after its BEGIN")
# The progress thread writes only while a call is in flight: each progress
# record lies between a BEGIN and its call record (in file order).
seen = [r for r in recs if r["type"] in ("begin", "call", "progress")]
open_ = set()
for r in seen:
    if r["type"] == "begin":
        open_.add(r["seq"])
    elif r["type"] == "call":
        open_.discard(r["seq"])
    else:
        expect(open_, "a progress record while no call was in flight")
PY
"$JST_CLI" report --json "$(the_trace done)" 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)["processes"][0]
assert not [m for m in p["modules"] if m["in_flight"]] and not p["ttfk_in_flight"]' ||
    fail "a completed run shows a call in flight"
rc=0
"$JST_CLI" check "$(the_trace done)" >/dev/null 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "check with no budget and nothing in flight exited $rc, expected 2"
# 7. The progress thread is made for a call that may compile, never for a
# program that loads only SASS for the device (a thread costs every such
# start about 0.1 ms for nothing).
run_traced sass JITSTALL_DEBUG=1 "$BIN/prog_direct" "$FIX" 0 module sm90.fatbin
expect_rc sass 0
dump_json "$(the_trace sass)" "$WORK/sass.json"
grep -q '"type":"begin"' "$WORK/sass.json" || fail "the SASS load wrote no BEGIN: the check proves nothing"
! grep -q "progress thread started" "$WORK/sass.err" ||
    fail "a SASS-only program started the progress thread"
run_traced ptx JITSTALL_DEBUG=1 "$BIN/prog_direct" "$FIX" 0 module ptx75.fatbin
expect_rc ptx 0
grep -q "progress thread started" "$WORK/ptx.err" ||
    fail "a PTX load did not start the progress thread: $(head -5 "$WORK/ptx.err")"
echo "ok: calls in flight"
