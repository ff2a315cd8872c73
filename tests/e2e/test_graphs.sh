#!/usr/bin/env bash
# CUDA graph capture, by each route to the driver (linked symbols, dlsym,
# cuGetProcAddress): prog_graphs loads PTX the simulated driver JITs, captures
# and instantiates 8 graphs (every variant in turn), launches its kernel for
# the first time, then captures 4 more. Under the preload it behaves exactly
# as without, error paths included (a capture of the NULL stream, an end
# without a begin). The trace has every capture call with its route, result,
# stream and graph, and the caller's stack for the first capture only. The
# report blames the captures inside the first call (graph_capture, 8 graphs)
# and counts all 12 in the process's `graphs` object and its "CUDA graphs"
# line; `check --max-graph-capture-ms` fails under that time and passes above.
. "$(dirname "$0")/lib.sh"

P="$BIN/prog_graphs"
# Each capture costs 5 ms in the simulated driver, each instantiation 2 ms.
export JITSTALL_SIM_CAPTURE_US=5000 JITSTALL_SIM_INSTANTIATE_US=2000

for route in direct dlsym procaddr; do
    run_plain "$route.plain" CUDA_CACHE_PATH="$WORK/cache.$route.plain" "$P" "$FIX" 3 "$route" 8 4
    run_traced "$route" CUDA_CACHE_PATH="$WORK/cache.$route" "$P" "$FIX" 3 "$route" 8 4
    expect_rc "$route.plain" 3
    same_behaviour "$route.plain" "$route"
    grep -q '^capture of the NULL stream: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED$' "$WORK/$route.out" ||
        fail "$route: the NULL stream's capture is refused"
    grep -q '^end without a begin: CUDA_ERROR_ILLEGAL_STATE$' "$WORK/$route.out" ||
        fail "$route: an end without a begin is refused"
    grep -q '^captured in the first call: 8 ok, 0 failed$' "$WORK/$route.out" ||
        fail "$route: 8 captures in the first call"

    T=$(the_trace "$route")
    dump_json "$T" "$WORK/$route.json"
    check_json "$WORK/$route.json" route="$route" <<'PY'
route = arg["route"]
begins, ends, insts = calls("cuStreamBeginCapture"), calls("cuStreamEndCapture"), calls("cuGraphInstantiate")
expect(len(begins) == 13 and len(ends) == 13 and len(insts) == 12,
       f"13 begins, 13 ends, 12 instantiations: {len(begins)}, {len(ends)}, {len(insts)}")
for c in begins + ends + insts:
    expect(c["route"] == route, f"{c['call']} by route {route}: {c['route']}")
    expect("handle" in c and c["dur_ns"] >= 0 and c["tid"] > 0, f"{c['call']}: handle, time, thread")
expect(begins[0]["result"] == 900 and int(str(begins[0]["handle"]), 0) == 0, "the NULL stream's capture: 900")
expect(ends[0]["result"] == 401 and "graph" not in ends[0], "the end without a begin: 401, no graph")
expect(all(e["result"] == 0 and e.get("graph") for e in ends[1:]), "every other end made a graph")
expect(all(e["dur_ns"] >= 5_000_000 for e in ends[1:]), "each end took the simulated 5 ms")
expect(all(i["result"] == 0 and i.get("graph") and i["handle"] for i in insts),
       "every instantiation: its graph and executable graph")
expect({i["graph"] for i in insts} == {e["graph"] for e in ends[1:]}, "instantiated what was captured")
names = {c["call"] for c in begins + insts}
want = {"cuStreamBeginCapture", "cuStreamBeginCapture_v2", "cuStreamBeginCaptureToGraph",
        "cuGraphInstantiateWithFlags", "cuGraphInstantiateWithParams"}
expect(want <= names, f"every variant recorded under its own name: {sorted(names)}")
stacks = [c for c in begins + ends + insts if c.get("stack_id")]
expect(stacks == [begins[0]], "a stack for the first capture only")
PY

    "$JST_CLI" report --json "$T" >"$WORK/$route.report.json" || fail "$route: report --json"
    python3 - "$WORK/$route.report.json" <<'PY' || fail "$route: graph capture in the report's JSON"
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
g = p["graphs"]
assert g["count"] == 12 and g["instantiated"] == 12, g
assert g["capture_ns"] >= 12 * 5_000_000 and g["instantiate_ns"] >= 12 * 2_000_000, g
assert g["before_first_kernel_ns"] >= 8 * 7_000_000, g
fc = [f for f in p["first_calls"] if f["kernel"] == "add_one"]
assert len(fc) == 1, p["first_calls"]
blame = {b["cause"]: b for b in fc[0]["blame"]}
gc = blame.get("graph_capture")
assert gc and gc["graphs"] == 8 and gc["dur_ns"] >= 8 * 7_000_000, blame
assert max(blame.values(), key=lambda b: b["dur_ns"])["cause"] == "graph_capture", blame
assert sum(b["dur_ns"] for b in fc[0]["blame"]) == fc[0]["dur_ns"], "the blame sums to the call"
PY
done

T=$(the_trace direct)
"$JST_CLI" report "$T" >"$WORK/report.txt" || fail "report"
grep -Eq '^  CUDA graphs +12 captured, [0-9.]+ ms, instantiate [0-9.]+ ms$' "$WORK/report.txt" ||
    fail "the CUDA graphs line: $(grep -i graph "$WORK/report.txt")"
grep -Eq '^    CUDA graph capture +[0-9.]+ ms' "$WORK/report.txt" ||
    fail "graph capture in the time-to-first-kernel breakdown"
head -1 "$WORK/report.txt" >"$WORK/answer.txt"
grep -Eq '^first kernel after [0-9.]+ ms: [0-9]+% was CUDA graph capture \(12 graphs in all\); fix: capture fewer graphs' "$WORK/answer.txt" ||
    fail "the answer line names graph capture: $(head -1 "$WORK/report.txt")"
# ranked with the loads by its time (12 x 7 ms, over the 9.6 ms JIT): first
grep -Eq '^  1\. [0-9.]+ ms  CUDA graph capture: 12 captured, .*\(process [0-9]+\)$' "$WORK/report.txt" ||
    fail "graph capture the first of the Culprits: $(sed -n '/^Culprits/,/^Fixes/p' "$WORK/report.txt")"
grep -Eq '^  2\. [0-9.]+ ms  .*ptx75' "$WORK/report.txt" || fail "the JIT load second"
# its fix among the Fixes, ranked first; the projection leaves the graphs out
grep -Eq '^  1\. saves [0-9.]+ ms +capture fewer graphs' "$WORK/report.txt" ||
    fail "the graph fix first among the Fixes: $(sed -n '/^Fixes/,/^$/p' "$WORK/report.txt")"
"$JST_CLI" report --json "$T" >"$WORK/fix.json" || fail "report --json"
python3 - "$WORK/fix.json" <<'PY' || fail "the graph fix in JSON"
import json, sys
r = json.load(open(sys.argv[1]))
p = r["processes"][0]
fx = [f for f in r["fixes"] if f["kind"] == "graph_capture"]
assert len(fx) == 1 and fx[0]["text"].startswith("capture fewer graphs"), r["fixes"]
g = p["graphs"]["before_first_kernel_ns"]
assert fx[0]["saves_ns"] >= g, (fx, g)
assert p["projected_ttfk_ns"] <= p["ttfk_ns"] - g, (p["projected_ttfk_ns"], p["ttfk_ns"], g)
PY

# The budget: 12 captures of 5 ms and 12 instantiations of 2 ms take at
# least 84 ms; far under a minute.
rc=0
"$JST_CLI" check --max-graph-capture-ms 50 "$T" >"$WORK/check.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "check --max-graph-capture-ms 50 exited $rc: $(cat "$WORK/check.out")"
grep -Eq 'max-graph-capture-ms: CUDA graph capture took [0-9.]+ ms for 12 graphs' "$WORK/check.out" ||
    fail "the budget's line: $(cat "$WORK/check.out")"
"$JST_CLI" check --max-graph-capture-ms 60000 "$T" >"$WORK/check2.out" 2>&1 ||
    fail "check --max-graph-capture-ms 60000 failed: $(cat "$WORK/check2.out")"
rc=0
"$JST_CLI" check --max-graph-capture-ms x "$T" >"$WORK/check3.out" 2>&1 || rc=$?
[ "$rc" = 2 ] && [ "$(wc -l <"$WORK/check3.out")" = 1 ] ||
    fail "a bad budget is one usage line, exit 2: $rc $(cat "$WORK/check3.out")"

# Every other consumer: diff, Markdown, Chrome slices, Prometheus, OTLP.
"$JST_CLI" diff "$WORK/direct.traces" "$WORK/dlsym.traces" >"$WORK/diff.txt" || fail "diff"
grep -Eq '^  CUDA graph capture +[0-9.]+ ms -> [0-9.]+ ms .*\(12 -> 12 graphs\)$' "$WORK/diff.txt" ||
    fail "diff's graph line: $(cat "$WORK/diff.txt")"
"$JST_CLI" report --markdown "$T" >"$WORK/report.md" || fail "Markdown report"
grep -Eq '^- process [0-9]+: 12 captured, .*; a main cause of its start; fix: ' "$WORK/report.md" ||
    fail "Markdown's CUDA graphs list"
grep -Eq '^\| 1 \| [0-9.]+ ms \| pid [0-9]+ \| CUDA graph capture \| 12 captured' "$WORK/report.md" ||
    fail "Markdown's culprits table ranks graph capture first"
"$JST_CLI" export -o "$WORK/chrome.json" "$T" || fail "export"
python3 - "$WORK/chrome.json" <<'PY' || fail "Chrome slices of the captures"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
caps = [e for e in ev if e.get("cat") == "graph_capture"]
assert len(caps) == 12 and all(e["name"] == "CUDA graph capture" and e["dur"] >= 5000 for e in caps), caps
PY
"$JST_CLI" export --format prometheus "$T" >"$WORK/prom.txt" || fail "prometheus"
grep -Eq '^jitstall_graphs_captured\{.*\} 12$' "$WORK/prom.txt" || fail "jitstall_graphs_captured"
awk '/^jitstall_graph_capture_seconds\{/ { ok = $NF >= 0.084 } END { exit !ok }' "$WORK/prom.txt" ||
    fail "jitstall_graph_capture_seconds: $(grep graph "$WORK/prom.txt")"
"$JST_CLI" export --format otlp "$T" >"$WORK/otlp.json" || fail "OTLP export"
grep -q '"jitstall.graphs_captured"' "$WORK/otlp.json" || fail "OTLP attributes"

# After ready: a timer fires during the pause between the first call and
# the 4 later captures, which count as late.
# Under qemu-user the first call's captures are slower: the timer and the
# pause grow alike.
ready_s=0.2 pause_s=1.0
[ "${JST_EMULATED:-0}" = 1 ] && ready_s=1.5 pause_s=4.0
run_traced late JITSTALL_READY=after:$ready_s CUDA_CACHE_PATH="$WORK/cache.late" "$P" "$FIX" 3 direct 8 4 $pause_s
expect_rc late 3
"$JST_CLI" report --json "$(the_trace late)" >"$WORK/late.json" || fail "report late"
python3 - "$WORK/late.json" <<'PY' || fail "graphs after ready"
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
g = p["graphs"]
assert p["ready_ns"] and g["late_count"] == 4 and g["late_ns"] >= 4 * 7_000_000, g
PY
"$JST_CLI" report "$(the_trace late)" >"$WORK/late.txt" || fail "report late (text)"
grep -Eq '^  CUDA graphs +12 captured, .*; 4 after ready \(' "$WORK/late.txt" ||
    fail "the CUDA graphs line says 4 after ready"
# While a capture is held open, `jitstall status` reads the live trace: the
# begin is on disk (flushed), so the process is capturing, not stuck, even
# with --stuck below the capture's length; once the end is written, it is not.
hold_s=4
[ "${JST_EMULATED:-0}" = 1 ] && hold_s=12
mkdir -p "$WORK/held.traces"
mkdir -p "$WORK/prom"
env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/held.traces" CUDA_CACHE_PATH="$WORK/cache.held" \
    JITSTALL_PROM_DIR="$WORK/prom" JITSTALL_LIVE_MS=100 \
    "$P" "$FIX" 3 direct 2 2 0 "$hold_s" >"$WORK/held.out" 2>&1 &
held=$!
seen=""
for _ in $(seq 1 $((hold_s * 10))); do
    sleep 0.1
    if "$JST_CLI" status --json --stuck 0.5 "$WORK/held.traces" >"$WORK/held.json" 2>"$WORK/held.err" &&
        python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["processes"][0]; sys.exit(p["phase"] != "capturing")' "$WORK/held.json" 2>/dev/null; then
        seen=1
        break
    fi
done
[ -n "$seen" ] || { kill "$held" 2>/dev/null; fail "status never said capturing: $(cat "$WORK/held.json" "$WORK/held.err" 2>/dev/null)"; }
sleep 1 # past --stuck 0.5 within the capture: still not stuck
"$JST_CLI" status --stuck 0.5 "$WORK/held.traces" >"$WORK/held.txt" 2>&1 ||
    { kill "$held" 2>/dev/null; fail "capturing is not stuck: $(cat "$WORK/held.txt")"; }
grep -Eq 'capturing a CUDA graph for [0-9.]+ s \(4 captured so far\)$' "$WORK/held.txt" ||
    { kill "$held" 2>/dev/null; fail "status's capturing line: $(cat "$WORK/held.txt")"; }
# the live metrics file says so too: capturing, 4 graphs so far
prom() { cat "$WORK"/prom/jitstall_prog_graphs_*.prom 2>/dev/null; }
sleep 0.5
prom | grep -Eq '^jitstall_capturing\{.*\} 1$' && prom | grep -Eq '^jitstall_graphs_captured\{.*\} 4$' ||
    { kill "$held" 2>/dev/null; fail "the live metrics while capturing: $(prom)"; }
rc=0
wait "$held" || rc=$?
[ "$rc" = 3 ] && grep -q '^held capture: CUDA_SUCCESS$' "$WORK/held.out" || fail "the held run: $rc $(cat "$WORK/held.out")"
# at exit: 5 graphs, the held one's seconds in the total, no capture open
prom | grep -Eq '^jitstall_capturing\{.*\} 0$' && prom | grep -Eq '^jitstall_graphs_captured\{.*\} 5$' &&
    prom | awk -v h="$hold_s" '/^jitstall_graph_capture_seconds\{/ { ok = $NF >= h } END { exit !ok }' ||
    fail "the metrics at exit: $(prom)"
echo "ok: graphs"
