#!/usr/bin/env bash
# A pool of compile workers (prog_workers): the traced parent calls cuInit and
# forks 4 workers; each runs 3 stand-in ptxas through posix_spawn and waits
# for them, without ever calling the driver; the parent launches its kernel
# and then ends them. In every way they end (SIGTERM from the parent, exit(0),
# _exit(0)):
#  - each worker leaves a trace of its own that joins the run by parent pid
#    and holds its 3 compiles (flushed as they complete: SIGTERM and _exit
#    write nothing more);
#  - the parent's trace has a REAP record for each worker, with its status;
#  - `report` prints no per-file warning and is not partial; the workers that
#    end without END are said once: "4 workers ended by their parent (pid N)";
#  - the parent's first call counts the workers' compiles once, grouped under
#    the pool ("4 workers: ptxas 12 runs, ...");
#  - `check` counts no trace as partial.
# Workers that crash on their own (abort) are still partial traces, as today.
# Output and exit status are the same as without the preload.
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/bin"
ln -s "$BIN/fake_cc" "$WORK/bin/ptxas"

for mode in term exit _exit crash; do
    mkdir -p "$WORK/out-$mode"
    run_plain "plain-$mode" "$BIN/prog_workers" "$mode" "$WORK/bin" "$WORK/out-$mode" "$FIX" sm90.cubin
    run_traced "$mode" "$BIN/prog_workers" "$mode" "$WORK/bin" "$WORK/out-$mode" "$FIX" sm90.cubin
    expect_rc "plain-$mode" 0
    same_behaviour "plain-$mode" "$mode"
    n=$(traces_of "$mode" | grep -c .)
    [ "$n" = 5 ] || fail "$mode: expected 5 traces (the parent and 4 workers), found $n"
    for t in $(traces_of "$mode"); do
        dump_json "$t" "$t.json"
    done
    "$JST_CLI" report --json "$WORK/$mode.traces" >"$WORK/$mode.rep.json" 2>"$WORK/$mode.rep.err" ||
        fail "$mode: report --json exited $?"
    "$JST_CLI" report "$WORK/$mode.traces" >"$WORK/$mode.rep.txt" 2>"$WORK/$mode.rep.txt.err" ||
        fail "$mode: report exited $?"
    python3 - "$WORK" "$mode" <<'PY' || fail "$mode: see above"
import glob, json, re, sys
work, mode = sys.argv[1], sys.argv[2]
def fail(msg):
    print(f"FAIL ({mode}): {msg}", file=sys.stderr)
    sys.exit(1)
traces = {}
for f in glob.glob(f"{work}/{mode}.traces/*.jst.json"):
    recs = [json.loads(l) for l in open(f) if l.strip()]
    proc = [r for r in recs if r["type"] == "process"][0]
    traces[proc["pid"]] = (proc, recs)
parents = [pid for pid, (p, _) in traces.items() if p["ppid"] not in traces]
if len(parents) != 1:
    fail(f"one parent expected, got {parents}")
parent = parents[0]
workers = [pid for pid in traces if pid != parent]
if len(workers) != 4 or any(traces[w][0]["ppid"] != parent for w in workers):
    fail(f"4 workers whose ppid is the parent's pid expected: {workers}")
for w in workers:
    recs = traces[w][1]
    cs = [r for r in recs if r["type"] == "compile"]
    if len(cs) != 3 or any(c["compiler"] != "ptxas" for c in cs):
        fail(f"worker {w}: 3 ptxas compiles expected, got {len(cs)}")
    ends = [r for r in recs if r["type"] == "end"]
    if len(ends) != (1 if mode == "exit" else 0):
        fail(f"worker {w}: {len(ends)} END records")
    if any(r["type"] == "device" for r in recs):
        fail(f"worker {w}: the preload called the driver in a worker that never did")
reaps = {r["child_pid"]: r["wait_status"] for r in traces[parent][1] if r["type"] == "reap"}
want = {"term": 15, "exit": 0, "_exit": 0, "crash": 6}[mode]
for w in workers:
    st = reaps.get(w)
    if st is None or (st & 0x7f if mode in ("term", "crash") else st >> 8) != want:
        fail(f"parent's REAP of worker {w}: {st}")
rep = json.load(open(f"{work}/{mode}.rep.json"))
txt = open(f"{work}/{mode}.rep.txt").read()
if mode != "crash":
    # every worker's ptxas, under its parent, once; no process block of its own
    for w in workers:
        if len(re.findall(rf"\n    pid {w} +ptxas 3 \(", txt)) != 1:
            fail(f"worker {w}'s ptxas line under its parent:\n{txt}")
    if txt.count("\nProcess ") != 1:
        fail("the workers are shown as processes of their own")
    if "Workers    4 forked" not in txt:
        fail("no Workers line under the parent")
procs = {p["pid"]: p for p in rep["processes"]}
if mode == "crash":
    if any(procs[w].get("ended_by_parent") for w in workers):
        fail("a worker that crashed on its own reads as ended by its parent")
    sys.exit(0)
for w in workers:
    if mode != "exit" and procs[w].get("ended_by_parent") != parent:
        fail(f"worker {w}: ended_by_parent {procs[w].get('ended_by_parent')}")
if rep.get("partial"):
    fail("the report is partial")
fcs = procs[parent]["first_calls"]
if len(fcs) != 1:
    fail(f"the parent's first calls: {fcs}")
fc = fcs[0]
pools = fc["pools"]
if len(pools) != 1 or pools[0]["pid"] != parent or pools[0]["workers"] != 4 or pools[0]["runs"] != {"ptxas": 12}:
    fail(f"pools {pools}")
sub = sum(b["dur_ns"] for b in fc["blame"] if b["cause"] == "subprocess")
if not (0 < sub <= fc["dur_ns"] and pools[0]["dur_ns"] <= fc["dur_ns"]):
    fail(f"subprocess blame {sub} and pool {pools[0]['dur_ns']} within {fc['dur_ns']}")
# the 12 compiles of 30 ms each, 3 after another in 4 workers at once: the
# union is about 3 of them, far less than the 12 summed
summed = sum(c["dur_ns"] for w in workers for c in procs[w]["compiles"])
if not pools[0]["dur_ns"] < summed / 2:
    fail(f"the pool's time {pools[0]['dur_ns']} is not the union of {summed} summed")
PY
    if [ "$mode" = crash ]; then
        grep -q 'partial trace' "$WORK/$mode.rep.txt.err" || fail "crash: no partial-trace warning"
        ! grep -q 'ended by their parent' "$WORK/$mode.rep.txt" || fail "crash: read as ended by their parent"
        continue
    fi
    ! grep -q 'warning' "$WORK/$mode.rep.txt.err" || {
        cat "$WORK/$mode.rep.txt.err" >&2
        fail "$mode: report warns"
    }
    ! grep -q 'partial\|truncated' "$WORK/$mode.rep.txt" || fail "$mode: report says partial or truncated"
    ended=$(grep -c 'ended by their parent' "$WORK/$mode.rep.txt" || true)
    if [ "$mode" = exit ]; then
        [ "$ended" = 0 ] || fail "exit: workers that wrote END read as ended by their parent"
    else
        [ "$ended" = 1 ] || fail "$mode: the 'ended by their parent' line appears $ended times"
        grep -q '^4 workers ended by their parent (pid [0-9]*)$' "$WORK/$mode.rep.txt" ||
            fail "$mode: no '4 workers ended by their parent (pid N)' line"
    fi
    grep -q 'Pool       4 workers: ptxas 12 runs, ' "$WORK/$mode.rep.txt" ||
        fail "$mode: the parent's report does not show the pool's compiles"
    # check: no trace counts as partial or damaged
    "$JST_CLI" check "$WORK/$mode.traces" >"$WORK/$mode.chk" 2>"$WORK/$mode.chk.err" || true
    ! grep -q 'partial trace' "$WORK/$mode.chk" "$WORK/$mode.chk.err" || fail "$mode: check counts a partial trace"
done
echo "ok: forked compile workers record their compiles, and workers their parent ended read as normal"
