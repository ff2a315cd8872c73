#!/usr/bin/env bash
# JITSTALL_READY: a server-like program (prog_ready) warms up with one
# kernel, says it is ready, then loads PTX that the simulated driver JITs (a
# late compile). With each form of ready (an NVTX mark, the end of a push/pop
# range, the end of a start/end range, a file that appears, a time after
# start) the trace holds exactly one READY record with the spec that fired,
# after the warm-up's first launch and before the late load's records; marks
# and ranges of other names do not count; the program behaves as without
# jitstall. A spec that means nothing leaves a note and no READY record.
# With JITSTALL_PROM_DIR the metrics file is rewritten while the program
# runs: during the warm-up's slow JIT it says compiling and not ready, during
# the late JIT ready and compiling, and at exit the late compile and that the
# process has ended.
. "$(dirname "$0")/lib.sh"

P="$BIN/prog_ready"
# Every late load compiles: no JIT cache.
export CUDA_CACHE_DISABLE=1

# ready_case NAME SPEC MODE WAIT_S [PATH]: runs traced and untraced, and
# checks the READY record against the records around it.
ready_case() {
    local name=$1 spec=$2 mode=$3 wait=$4 path=${5:-}
    run_plain "$name.plain" "$P" "$FIX" "$mode" "$wait" sm90.fatbin ptx75.fatbin $path
    [ -z "$path" ] || rm -f "$path"
    run_traced "$name" JITSTALL_READY="$spec" "$P" "$FIX" "$mode" "$wait" sm90.fatbin ptx75.fatbin $path
    expect_rc "$name" 0
    same_behaviour "$name.plain" "$name"
    dump_json "$(the_trace "$name")" "$WORK/$name.json"
    check_json "$WORK/$name.json" spec="$spec" mode="$mode" <<'PY'
rd = of_type("ready")
expect(len(rd) == 1, f"one ready record, got {len(rd)}")
r = rd[0]
expect(r.get("ready_spec") == arg["spec"], f"ready_spec {r.get('ready_spec')!r}")
pos = recs.index(r)
launches = [c for c in calls("cuLaunchKernel")]
loads_ = loads()
expect(len(launches) == 2 and len(loads_) == 2, "two loads, two first launches")
first, late = loads_
expect(r["start_ns"] >= launches[0]["start_ns"], "ready after the first kernel")
expect(recs.index(launches[0]) < pos, "ready written after the warm-up's first launch")
late_begin = [b for b in of_type("begin") if b["seq"] == late["seq"]]
expect(late_begin and recs.index(late_begin[0]) > pos, "the late load's begin comes after ready")
expect(recs.index(late) > pos and late["start_ns"] >= r["start_ns"], "the late load starts after ready")
expect(late["verdict"] == "ptx_jit" and late["cache"] != "hit", f"the late load JITs: {late}")
main = of_type("process")[0]["pid"]
if arg["mode"] in ("file", "none"):
    expect(r["tid"] == 0, "the preload noticed it: tid 0")
else:
    expect(r["tid"] == late["tid"], "said on the program's thread")
if arg["spec"].startswith("after:"):
    start = of_type("process")[0]["proc_start_ns"]
    after = float(arg["spec"][6:])
    expect(r["start_ns"] - start >= after * 1e9, "not before after: seconds")
PY
}

ready_case mark nvtx:warmup_done mark 0
ready_case range nvtx:warmup_done range 0
ready_case start nvtx:warmup_done start 0
# The file and timer are polled about every 200 ms: the program waits 0.8 s
# before its late load, so the record comes first.
ready_case file "file:$WORK/ready.flag" file 0.8 "$WORK/ready.flag"
ready_case after after:0.3 none 1.2

# A name that is never marked: no READY.
run_traced never JITSTALL_READY=nvtx:never_said "$P" "$FIX" mark 0 sm90.fatbin ptx75.fatbin
expect_rc never 0
dump_json "$(the_trace never)" "$WORK/never.json"
check_json "$WORK/never.json" <<'PY'
expect(not of_type("ready"), "no ready for a name never said")
PY

# A spec that means nothing: a note, no READY, the same program.
run_plain bad.plain "$P" "$FIX" mark 0 sm90.fatbin ptx75.fatbin
run_traced bad JITSTALL_READY=soon "$P" "$FIX" mark 0 sm90.fatbin ptx75.fatbin
same_behaviour bad.plain bad
dump_json "$(the_trace bad)" "$WORK/bad.json"
check_json "$WORK/bad.json" <<'PY'
expect(not of_type("ready"), "no ready for a bad spec")
notes = [n["message"] for n in of_type("note") if "JITSTALL_READY=soon" in n.get("message", "")]
expect(len(notes) == 1, f"one note about the spec: {notes}")
PY

# `jitstall run --ready` sets the variable; a bad spec is a usage error.
"$JST_CLI" run -o "$WORK/run.traces" --ready nvtx:warmup_done -- \
    "$P" "$FIX" range 0 sm90.fatbin ptx75.fatbin >"$WORK/run.out" 2>&1 ||
    fail "run --ready failed: $(cat "$WORK/run.out")"
dump_json "$(find "$WORK/run.traces" -name '*.jst' | head -1)" "$WORK/run.json"
check_json "$WORK/run.json" <<'PY'
rd = of_type("ready")
expect(len(rd) == 1 and rd[0]["ready_spec"] == "nvtx:warmup_done", "run --ready: the ready record")
PY
rc=0
"$JST_CLI" run --ready later true >"$WORK/runbad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "run --ready later exited $rc, expected 2"
[ "$(wc -l <"$WORK/runbad.out")" = 1 ] || fail "run --ready later: not one line: $(cat "$WORK/runbad.out")"

# Runtime compilers are counted under their own names in the metrics file
# (written at exit here): NVRTC and nvJitLink, each 200 ms, and the SASS
# load that follows is no compile.
mkdir -p "$WORK/rtc.traces" "$WORK/prom_rtc"
env LD_LIBRARY_PATH="$BIN/fakertc:$LD_LIBRARY_PATH" LD_PRELOAD="$JST_PRELOAD" \
    JITSTALL_DIR="$WORK/rtc.traces" JITSTALL_PROM_DIR="$WORK/prom_rtc" JITSTALL_LIVE_MS=0 \
    JST_FAKE_RTC_MS=200 JST_FAKE_RTC_RESULT=0 "$BIN/prog_rtc_direct" "$FIX" 0 module sm90.fatbin \
    >"$WORK/rtc.out" 2>&1 || fail "prog_rtc_direct failed: $(cat "$WORK/rtc.out")"
python3 - "$WORK"/prom_rtc/*.prom <<'PY' || fail "runtime compilers in the metrics file"
import sys
text = open(sys.argv[1]).read()
secs = {l.split('compiler="')[1].split('"')[0]: float(l.rsplit(" ", 1)[1])
        for l in text.splitlines() if l.startswith("jitstall_compile_seconds{")}
assert set(secs) == {"nvrtc", "nvjitlink"}, f"compilers: {secs}"
assert all(0.19 < v < 2 for v in secs.values()), secs
assert "jitstall_late_compiles_total{" in text and "jitstall_exited{" in text
PY

# The live metrics file. Both loads JIT for about 1.2 s each (no JIT cache);
# the file is rewritten every 100 ms by the preload's thread.
skip_emulated "the live file's timings stretch past their bounds"
mkdir -p "$WORK/live.traces" "$WORK/prom"
python3 - "$WORK" "$JST_PRELOAD" "$P" "$FIX" <<'PY' || fail "the live metrics file"
import glob, os, subprocess, sys, time
work, preload, prog, fix = sys.argv[1:5]
env = dict(os.environ, LD_PRELOAD=preload, JITSTALL_DIR=work + "/live.traces",
           JITSTALL_READY="file:" + work + "/live.flag", JITSTALL_PROM_DIR=work + "/prom",
           JITSTALL_LIVE_MS="100", JITSTALL_SIM_JIT_US_PER_KB="800000", CUDA_CACHE_DISABLE="1")
p = subprocess.Popen([prog, fix, "file", "0.5", "sm80_ptx80.fatbin", "ptx75.fatbin",
                      work + "/live.flag"], env=env, stdout=subprocess.DEVNULL)
seen = []  # distinct contents, in order
threads = []  # the preload's thread, seen by name
while True:
    done = p.poll() is not None
    for f in glob.glob(work + "/prom/*.prom"):
        try:
            text = open(f).read()
        except OSError:
            continue
        if not seen or seen[-1] != text:
            seen.append(text)
    if not done and not threads:
        for t in glob.glob(f"/proc/{p.pid}/task/*/comm"):
            try:
                threads += [1] if open(t).read().strip() == "jitstall-prog" else []
            except OSError:
                pass
    if done:
        break
    time.sleep(0.03)
assert p.returncode == 0, f"exit {p.returncode}"

def val(text, name, sub=""):
    for line in text.splitlines():
        if line.startswith(name + "{") and sub in line:
            return float(line.rsplit(" ", 1)[1])
    return None

jit = 'compiler="driver"'
live = [t for t in seen if val(t, "jitstall_exited") == 0]
assert len(live) >= 5, f"{len(live)} live versions of the file"
warm = [t for t in live if val(t, "jitstall_compiling", jit) == 1 and val(t, "jitstall_ready") == 0]
assert warm, "compiling and not ready during the warm-up JIT"
late = [t for t in live if val(t, "jitstall_compiling", jit) == 1 and val(t, "jitstall_ready") == 1]
assert late, "compiling and ready during the late JIT"
assert seen.index(warm[0]) < seen.index(late[0]), "the warm-up before the late compile"
grow = [val(t, "jitstall_compile_seconds", jit) for t in warm]
assert grow[-1] > grow[0], f"compile seconds grow during a JIT: {grow}"
last = seen[-1]
assert val(last, "jitstall_exited") == 1, "the last file says the process ended"
assert val(last, "jitstall_compiling", jit) == 0, "nothing compiling at exit"
assert val(last, "jitstall_late_compiles_total") == 1, "one late compile"
assert 1.0 < val(last, "jitstall_late_compile_seconds_total") < 3, "its time"
assert val(last, "jitstall_ready") == 1
assert not glob.glob(work + "/prom/.jitstall_*"), "no temporary file left"
assert threads, "written by the preload's thread (jitstall-prog)"
PY

# A late compiler child (a stand-in ptxas that takes 1.5 s), as Triton runs
# one: shown compiling while it runs, counted late once reaped.
mkdir -p "$WORK/bin" "$WORK/prom2"
ln -sf "$BIN/fake_cc" "$WORK/bin/ptxas"
python3 - "$WORK" "$JST_PRELOAD" "$P" "$FIX" <<'PY' || fail "the live metrics file with a compiler child"
import glob, os, subprocess, sys, time
work, preload, prog, fix = sys.argv[1:5]
env = dict(os.environ, LD_PRELOAD=preload, JITSTALL_DIR=work + "/live.traces",
           JITSTALL_READY="nvtx:warmup_done", JITSTALL_PROM_DIR=work + "/prom2",
           JITSTALL_LIVE_MS="100", FAKE_CC_MS="1500")
p = subprocess.Popen([prog, fix, "mark", "0", "sm90.fatbin", "cc:" + work + "/bin/ptxas"],
                     env=env, stdout=subprocess.DEVNULL)
seen = []
while True:
    done = p.poll() is not None
    for f in glob.glob(work + "/prom2/*.prom"):
        text = open(f).read()
        if not seen or seen[-1] != text:
            seen.append(text)
    if done:
        break
    time.sleep(0.03)
assert p.returncode == 0, f"exit {p.returncode}"
cc = 'compiler="ptxas"'
def val(text, name, sub=""):
    for line in text.splitlines():
        if line.startswith(name + "{") and sub in line:
            return float(line.rsplit(" ", 1)[1])
    return None
assert [t for t in seen if val(t, "jitstall_compiling", cc) == 1 and val(t, "jitstall_ready") == 1
        and val(t, "jitstall_exited") == 0], "ptxas shown compiling after ready"
last = seen[-1]
assert val(last, "jitstall_late_compiles_total") == 1, "the child is a late compile"
assert 1.4 < val(last, "jitstall_compile_seconds", cc) < 3, "its time"
assert val(last, "jitstall_compiling", cc) == 0
PY
echo "ok"
