#!/usr/bin/env bash
# NVTX ranges: prog_nvtx marks "warmup", "query1" (a PTX-only load, which the
# simulated driver JIT-compiles slowly), a domain range "query2" named by a
# registered string, a start/end range and "query1" again. Under the preload
# the program's output and exit status must not change (push and pop return
# what they return without a tool); the trace must hold the range records
# (the first one made before the trace file existed); the report must show
# the queries with the JIT inside query1 and name it in the headline; check
# must gate a named query. A tool the user named in NVTX_INJECTION64_PATH
# keeps the ranges, and the trace says so; a child exec'd by a traced process
# does not inherit the variable the preload set.
. "$(dirname "$0")/lib.sh"
export JITSTALL_SIM_JIT_US_PER_KB=50000 # the 0.6 KiB PTX fixture: about 30 ms

run_plain plain CUDA_CACHE_PATH="$WORK/cache-plain" "$BIN/prog_nvtx" "$FIX" 4
run_traced traced CUDA_CACHE_PATH="$WORK/cache-traced" "$BIN/prog_nvtx" "$FIX" 4
expect_rc plain 4
same_behaviour plain traced
grep -q '^push warmup: -2$' "$WORK/plain.out" || fail "push without a tool does not return -2"
T=$(the_trace traced)
dump_json "$T" "$WORK/traced.json"
check_json "$WORK/traced.json" <<'PY'
r = of_type("range")
ops = [(x["range_op"], x.get("name"), x.get("domain")) for x in r]
want = [("push", "warmup", None), ("pop", None, None), ("push", "query1", None),
        ("pop", None, None), ("push", "query2", "jitstall-test"), ("push", "inner", None),
        ("pop", None, None), ("pop", None, "jitstall-test"), ("start", "background", None),
        ("end", None, None), ("push", "query1", None), ("pop", None, None)]
expect(ops == want, f"range records {ops}")
expect(all(x["tid"] > 0 and x["start_ns"] > 0 for x in r), "every range has a thread and a time")
expect([x.get("depth") for x in r if x["range_op"] in ("push", "pop")] == [1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
       "push depth per thread and domain")
expect(r[8]["range_id"] == r[9]["range_id"] > 0, "start and end share an id")
expect(r[0]["start_ns"] < one("cuInit")["start_ns"], "the push before the first driver call is kept")
PY

"$JST_CLI" report "$T" >"$WORK/report.txt" 2>&1 || fail "report failed"
grep -q "Queries (top-level NVTX ranges)" "$WORK/report.txt" || { cat "$WORK/report.txt" >&2; fail "no Queries part"; }
grep -Eq "First query with JIT  'query1' took [0-9.]+ ms, [0-9.]+ ms of it JIT in" "$WORK/report.txt" ||
    { cat "$WORK/report.txt" >&2; fail "no headline naming query1"; }
"$JST_CLI" report --json "$T" >"$WORK/report.json" || fail "report --json failed"
python3 - "$WORK/report.json" "$JST_E2E_SRC/../golden" <<'PY' || fail "report --json queries"
import json, sys
sys.path.insert(0, sys.argv[2])
import golden
doc = json.load(open(sys.argv[1]))
errs = golden.schema_errors(doc)
assert not errs, errs
p = doc["processes"][0]
q = p["queries"]
assert [x["name"] for x in q] == ["warmup", "query1", "query2", "background", "query1#2"], q
by = {x["name"]: x for x in q}
assert by["query1"]["jit_ns"] >= 25 * 10**6, by["query1"]
assert by["query1"]["jit_ns"] <= by["query1"]["dur_ns"], by["query1"]
assert all(by[n]["jit_ns"] == 0 for n in ("warmup", "query2", "background", "query1#2")), q
assert by["query2"]["domain"] == "jitstall-test" and by["warmup"]["domain"] is None, q
assert not any(x["open"] for x in q), q
assert [x["start_ns"] for x in q] == sorted(x["start_ns"] for x in q), q
assert p["first_jit_query"] == "query1", p["first_jit_query"]
PY

# A forked child writes its own ranges with its own thread id, and none of the
# parent's (made before either trace file existed).
run_plain fork.plain CUDA_CACHE_PATH="$WORK/cache-plain" "$BIN/prog_nvtx" "$FIX" 0 fork
run_traced fork CUDA_CACHE_PATH="$WORK/cache-traced" "$BIN/prog_nvtx" "$FIX" 0 fork
same_behaviour fork.plain fork
for t in $(traces_of fork); do
    dump_json "$t" "$t.json"
    check_json "$t.json" <<'PY'
pid = of_type("process")[0]["pid"]
names = [x.get("name") for x in of_type("range") if x["range_op"] == "push"]
child = "child" in names
expect(names == ["child"] if child else names[:2] == ["warmup", "query1"], f"pushes {names}")
expect(all(x["tid"] == pid for x in of_type("range")), "ranges carry the process's own thread id")
PY
done
[ "$(traces_of fork | wc -l)" = 2 ] || fail "fork: expected two traces"

# More range events before the first driver call than the preload holds: a
# note counts the ones lost, and a pop whose push was lost does not end the
# range around it ("outer" spans the whole run).
run_plain many.plain CUDA_CACHE_PATH="$WORK/cache-plain" "$BIN/prog_nvtx" "$FIX" 0 many
run_traced many CUDA_CACHE_PATH="$WORK/cache-traced" "$BIN/prog_nvtx" "$FIX" 0 many
same_behaviour many.plain many
T2=$(the_trace many)
dump_json "$T2" "$WORK/many.json"
check_json "$WORK/many.json" <<'PY'
notes = [n["message"] for n in of_type("note")]
lost = [n for n in of_type("note") if "NVTX range events before the first driver call" in n["message"]]
expect(len(lost) == 1 and lost[0].get("dropped", 0) > 1000, f"a note on the lost range events: {notes}")
PY
"$JST_CLI" report --json "$T2" >"$WORK/many.report.json" || fail "report --json (many) failed"
python3 - "$WORK/many.report.json" <<'PY' || fail "a pop without its push ended the wrong range"
import json, sys
q = json.load(open(sys.argv[1]))["processes"][0]["queries"]
assert [x["name"] for x in q] == ["outer"] and not q[0]["open"], [x["name"] for x in q][:5]
PY

# Four threads with ranges open at the same time: each range carries its own
# thread and depth, and each thread's outer range is a query of its own.
run_traced threads CUDA_CACHE_PATH="$WORK/cache-traced" "$BIN/prog_nvtx" "$FIX" 0 threads
expect_rc threads 0
T3=$(the_trace threads)
dump_json "$T3" "$WORK/threads.json"
check_json "$WORK/threads.json" <<'PY'
w = [x for x in of_type("range") if x.get("name") in ("worker", "step")]
tids = {x["tid"] for x in w}
pid = of_type("process")[0]["pid"]
expect(len(tids) == 4 and pid not in tids, f"four worker threads: {tids}")
expect(all(x["depth"] == (1 if x["name"] == "worker" else 2) for x in w), "depth per thread")
PY
"$JST_CLI" report --json "$T3" >"$WORK/threads.report.json" || fail "report --json (threads) failed"
python3 - "$WORK/threads.report.json" <<'PY' || fail "worker queries"
import json, sys
q = json.load(open(sys.argv[1]))["processes"][0]["queries"]
w = [x for x in q if x["name"].startswith("worker")]
assert sorted(x["name"] for x in w) == ["worker", "worker#2", "worker#3", "worker#4"], q
assert len({x["tid"] for x in w}) == 4 and not any(x["name"].startswith("step") for x in q), q
PY

# check: a budget on query1 fails with the JIT load; a generous one passes;
# a query no process has fails.
rc=0
"$JST_CLI" check --max-query-ms query1=5 "$T" >"$WORK/check1.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$WORK/check1.out" >&2; fail "check over query1's budget exited $rc"; }
grep -q "FAIL prog_nvtx.* max-query-ms=query1: query 'query1' took .*ptx_jit" "$WORK/check1.out" ||
    { cat "$WORK/check1.out" >&2; fail "no FAIL line for query1"; }
"$JST_CLI" check --max-query-ms query1=60000 --max-query-ms 'query1#2=60000' "$T" >"$WORK/check2.out" 2>&1 ||
    { cat "$WORK/check2.out" >&2; fail "check within query1's budget failed"; }
rc=0
"$JST_CLI" check --max-query-ms nosuch=1000 "$T" >"$WORK/check3.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "no process has a query 'nosuch'" "$WORK/check3.out" ||
    { cat "$WORK/check3.out" >&2; fail "a query no process has passed the check ($rc)"; }

# The user's own NVTX tool stays; the trace says the ranges were not recorded.
TOOL="$BIN/fakenvtx/libfake_nvtx_tool.so"
run_plain tool.plain NVTX_INJECTION64_PATH="$TOOL" CUDA_CACHE_PATH="$WORK/cache-plain" "$BIN/prog_nvtx" "$FIX" 0
run_traced tool NVTX_INJECTION64_PATH="$TOOL" CUDA_CACHE_PATH="$WORK/cache-traced" "$BIN/prog_nvtx" "$FIX" 0
same_behaviour tool.plain tool
grep -q '^tool push query1$' "$WORK/tool.err" || { cat "$WORK/tool.err" >&2; fail "the user's tool lost the ranges"; }
dump_json "$(the_trace tool)" "$WORK/tool.json"
check_json "$WORK/tool.json" <<'PY'
expect(not of_type("range"), "no range records when another tool has NVTX")
notes = [n["message"] for n in of_type("note")]
expect(sum("NVTX ranges were not recorded" in m and "fake_nvtx_tool" in m for m in notes) == 1,
       f"one note naming the user's tool: {notes}")
PY
"$JST_CLI" report "$(the_trace tool)" >"$WORK/tool.report" 2>&1 || fail "report of the tool run failed"
grep -q "note .*NVTX ranges were not recorded" "$WORK/tool.report" || fail "the report does not show the note"
if grep -q "Queries" "$WORK/tool.report"; then fail "Queries shown without ranges"; fi

# A child exec'd by a traced process does not inherit the variable: here an
# untraced child (JITSTALL_DISABLE=1) sees the environment it would see
# without jitstall.
run_plain exec.plain sh -c 'JITSTALL_DISABLE=1 printenv NVTX_INJECTION64_PATH; echo "rc=$?"'
run_traced exec sh -c 'JITSTALL_DISABLE=1 printenv NVTX_INJECTION64_PATH; echo "rc=$?"'
same_behaviour exec.plain exec
# The mark slots (1-3) are filled too: a mark may be the ready moment
# (JITSTALL_READY=nvtx:NAME).
# NVTX's tables as an older or damaged NVTX copy gives them: slots past the
# size NVTX reports, and empty slots, are left alone; a callbacks table too
# small for its function, or none, makes the injection decline.
run_traced abi "$BIN/prog_nvtx_abi"
expect_rc abi 0
printf '%s\n' "current: init 1, filled 1 2 3 4 5 6 8 9 10 11" "older: init 1, filled 1 2 3 4 5" \
    "short-table: init 0, filled" "no-callbacks: init 0, filled" "start ids differ: 1" \
    "wide and attribute start ids: 1" "cuInit: 0" >"$WORK/abi.want"
diff -u "$WORK/abi.want" "$WORK/abi.out" >&2 || fail "the injection mishandled NVTX's tables"
dump_json "$(the_trace abi)" "$WORK/abi.json"
check_json "$WORK/abi.json" <<'PY'
names = [x["name"] for x in of_type("range") if x["range_op"] == "push"]
expect(names[:2] == ["", "whole"], f"an attribute structure too small for its message: {names}")
expect(names[2:] == ["wide \u00e9"], f"a wide name, as UTF-8: {names}")
starts = [x["name"] for x in of_type("range") if x["range_op"] == "start"]
expect(starts == ["a", "b", "wide start", "whole"], f"start names, wide and by attribute: {starts}")
PY
echo "ok: NVTX ranges"
