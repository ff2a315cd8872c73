#!/usr/bin/env python3
"""CLI tests of `jitstall report`: NVTX ranges and the queries they mark.

Harness: clitest.py. `python3 test_report.py --list` names the cases; ctest runs each
as cli.<case>.
"""
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)


@case
def test_report_queries(env):
    t = env.trace("queries", queries_spec())
    out, _ = env.expect_rc(0, "report", "--json", t)
    p = json.loads(out)["processes"][0]
    got = [(q["name"], q["tid"], q["start_ns"] // 10**6, q["dur_ns"] // 10**6, q["jit_ns"] // 10**6,
            q["open"], q["domain"]) for q in p["queries"]]
    want = [("other", 2, 1200, 4100, 4000, False, None), ("q", 1, 1250, 11100, 11000, False, None),
            ("tail", 1, 12500, 500, 0, True, None), ("q#2", 2, 12600, 100, 0, False, "d"),
            ("x", 4, 12800, 20, 0, False, None), ("s", 5, 12850, 100, 0, False, None)]
    expect(got == want, f"queries {got}")
    expect(p["first_jit_query"] == "other", p["first_jit_query"])
    expect(p["query_headline"].startswith("first query 'other' took "), p["query_headline"])
    out, _ = env.expect_rc(0, "report", t)
    expect("First query with JIT  'other' took" in out and "Queries (top-level NVTX ranges)" in out,
           out)
    expect(re.search(r"tail .*\(open\)", out), out)
    out, _ = env.expect_rc(0, "report", "--markdown", t)
    expect("| 100 | q\\#2 | d |" in out, out)
    # Text and Markdown show the first 20 queries; JSON has all.
    many = "".join(f"range range_op=push tid=1 start={14000 + 10 * i}ms name=step depth=1\n"
                   f"range range_op=pop tid=1 start={14005 + 10 * i}ms depth=1\n"
                   for i in range(25))
    t2 = env.trace("many", run_spec(with_end=False) + many + end())
    out, _ = env.expect_rc(0, "report", t2)
    expect("step#20 " in out and "step#21" not in out and "... and 5 more (all in --json)" in out,
           out)
    out, _ = env.expect_rc(0, "report", "--markdown", t2)
    expect("... and 5 more" in out and "step\\#21" not in out, out)
    out, _ = env.expect_rc(0, "report", "--json", t2)
    expect(len(json.loads(out)["processes"][0]["queries"]) == 25, out[:200])
    # Without range records the report has no queries at all.
    out, _ = env.expect_rc(0, "report", "--json", env.trace("noranges", run_spec()))
    p = json.loads(out)["processes"][0]
    expect("queries" not in p and "first_jit_query" not in p, sorted(p))


@case
def test_report_partial_worded_like_check(env):
    # report loads traces with the helper check uses, in its lenient mode: a
    # partial trace gets the same warning words on stderr, and an unreadable
    # input next to a readable one is named in the report, not fatal.
    t = env.trace("cut", run_spec(with_end=False), truncate=True)
    _, err_r = env.expect_rc(0, "report", t)
    _, err_c = env.expect_rc(1, "check", "--max-jit-ms", "1", t)
    why = "partial trace (truncated: the stream ended early or without an END record)"
    expect(f"jitstall report: warning: {t}: {why}; using what it holds\n" == err_r, err_r)
    expect(f"{t}: {why}" in err_c, err_c)
    junk = env.path("junk.jst")
    open(junk, "w").write("not a trace\n")
    out, err = env.expect_rc(2, "report", "--json", junk, t)
    errors = json.loads(out)["unreadable"]
    expect(len(errors) == 1 and errors[0].startswith(junk + ":"), errors)
    # The bad input makes the status 2, its reason on stderr (the report of
    # the good one is still written), as check, diff, export and baseline do.
    expect(f"jitstall report: {errors[0]}\n" in err, err)
    _, err = env.expect_rc(2, "report", junk)
    expect(err.splitlines()[-1] == "jitstall report: no readable trace", err)


@case
def test_python_chain_folds_interpreter_frames(env):
    # A load made from Python: the chain is its Python frames, not the
    # interpreter's C frames between them ("[python interpreter] in
    # /usr/bin/python3.12" once per Python frame).
    tab = "\\x09"
    s = run_spec(pid=300, exe="/usr/bin/python3.12", args=("python3", "app.py"))
    mods = ('modmap mod_event=initial mod_path="/usr/bin/python3.12" bias=0x400000 '
            'mod_start=0x400000 mod_end=0x800000\n'
            'modmap mod_event=initial mod_path="/opt/app/lib/libkern.so" bias=0x7f0000000000 '
            'mod_start=0x7f0000000000 mod_end=0x7f0000100000\n')
    ips = "0x7f0000001000,0x401000,0x402000,0x403000,0x404000,0x405000,0x406000"
    pf = (f'py_frame="load{tab}/srv/app/helpers.py{tab}12" key_131=2 '
          f'py_frame="run{tab}/srv/app/app.py{tab}30" key_131=4 '
          f'py_frame="<module>{tab}/srv/app/app.py{tab}40" key_131=6')
    s = s.replace("call call=cuInit", mods + f"stack stack_id=1 ips={ips} {pf}\n" +
                  "call call=cuInit", 1)
    s = s.replace("call call=cuLibraryLoadData", "call call=cuLibraryLoadData stack_id=1", 1)
    t = env.trace("py", s)
    out, _ = env.expect_rc(0, "report", t)
    chain = re.findall(r"^     called by  (.*)$", out, re.M)
    expect(chain == ["load (/srv/app/helpers.py:12) in Python", "run (/srv/app/app.py:30) in Python",
                     "<module> (/srv/app/app.py:40) in Python"], chain)
    doc = json.loads(env.expect_rc(0, "report", "--json", t)[0])
    frames = [f["func"] for f in doc["processes"][0]["modules"][0]["stack"]]
    expect("[python interpreter]" not in frames, frames)


def graphs_server(pid, start_ms=1000):
    """A server that captures 10 graphs (30 ms each, then a 10 ms
    instantiation) after a 20 ms JIT load, before its first kernel."""
    s = process(pid, exe="/opt/srv/bin/serve", args=("serve",), start_ms=start_ms)
    s += call("cuInit", start_ms + 10, 50)
    s += jit_load(start_ms + 100, 20, h=f"0x{pid:x}")
    t = start_ms + 200
    for i in range(10):
        s += call("cuStreamBeginCapture", t, 0.01, handle=hex(0x10 + i))
        s += call("cuStreamEndCapture", t + 30, 0.01, handle=hex(0x10 + i), graph=hex(0x900 + i))
        s += call("cuGraphInstantiate", t + 31, 10, graph=hex(0x900 + i), handle=hex(0xa00 + i))
        t += 50
    return s + launch(t + 10) + end()


@case
def test_graph_capture_ranked_once_for_the_run(env):
    # Three servers whose start is mostly graph capture: one culprit for the
    # run, ranked by its time above the JIT loads (it was listed after them,
    # once per process, with a "*"), and one fix in Fixes (it was missing)
    # whose saving leaves the projected time to first kernel.
    for pid in (100, 101, 102):
        env.trace(f"srv{pid}", graphs_server(pid), subdir="fleet")
    d = env.path("fleet")
    out, _ = env.expect_rc(0, "report", d)
    culprits = out[out.index("Culprits, ranked"):out.index("Fixes, ranked")]
    expect(re.search(r"^  1\. [0-9.]+ s  CUDA graph capture: 30 captured, 900\.\d ms, "
                     r"instantiate 300\.\d ms  \[3 processes, pid 100, 101, 102\]$", culprits, re.M),
           culprits)
    expect(culprits.count("CUDA graph capture") == 1 and re.search(r"^  2\. ", culprits, re.M),
           culprits)
    fixes = out[out.index("Fixes, ranked"):]
    expect(re.search(r"^  1\. saves [0-9.]+ m?s +capture fewer graphs", fixes, re.M), fixes)
    j = json.loads(env.expect_rc(0, "report", "--json", d)[0])
    fx = [f for f in j["fixes"] if f["kind"] == "graph_capture"]
    before = sum(p["graphs"]["before_first_kernel_ns"] for p in j["processes"])
    expect(len(fx) == 1 and fx[0]["saves_ns"] == before and before >= 3 * 390 * 10**6,
           (fx, before))
    for p in j["processes"]:
        expect(p["projected_ttfk_ns"] <= p["ttfk_ns"] - p["graphs"]["before_first_kernel_ns"], p)
    md = env.expect_rc(0, "report", "--markdown", d)[0]
    expect(re.search(r"^\| 1 \| [0-9.]+ s \| 3 processes, pid 100, 101, 102 \| CUDA graph capture "
                     r"\| 30 captured", md, re.M), md)
    # beside another program's JIT that outweighs it, it comes second
    env.trace("srv", graphs_server(100), subdir="big")
    env.trace("jit", run_spec(pid=104, jit_ms=5000.0, h="0x5555"), subdir="big")
    out, _ = env.expect_rc(0, "report", env.path("big"))
    culprits = out[out.index("Culprits, ranked"):out.index("Fixes, ranked")]
    expect(re.search(r"^  1\. 5\.00 s  ", culprits, re.M) and
           re.search(r"^  2\. [0-9.]+ ms  CUDA graph capture: 10 captured, .*\(process 100\)$",
                     culprits, re.M), culprits)


@case
def test_graph_capture_alone_makes_a_first_call(env):
    # A server whose kernels are loaded and whose start compiled nothing
    # captures 10 graphs (1200-1700 ms), then launches its first request's
    # kernel: that first call is the capture's (blame graph_capture, with
    # the graphs), not dropped for want of a compile. It starts at the
    # first capture, not at the warm-up launch before it.
    s = process(100, exe="/opt/srv/bin/serve", args=("serve",), start_ms=1000)
    s += call("cuInit", 1010, 50)
    s += launch(1100, kernel="warmup", seq=100)
    t = 1200
    for i in range(10):
        s += call("cuStreamBeginCapture", t, 0.01, handle=hex(0x10 + i))
        s += call("cuStreamEndCapture", t + 30, 0.01, handle=hex(0x10 + i), graph=hex(0x900 + i))
        s += call("cuGraphInstantiate", t + 31, 10, graph=hex(0x900 + i), handle=hex(0xa00 + i))
        t += 50
    s += launch(t + 10, kernel="first_request", seq=200) + end()
    j = json.loads(env.expect_rc(0, "report", "--json", env.trace("srv", s))[0])
    fcs = j["processes"][0]["first_calls"]
    expect(len(fcs) == 1 and fcs[0]["kernel"] == "first_request", fcs)
    b = {x["cause"]: x for x in fcs[0]["blame"]}
    expect(fcs[0]["start_ns"] == 1200 * 10**6, fcs[0])
    expect(b["graph_capture"]["graphs"] == 10 and b["graph_capture"]["dur_ns"] >= 400 * 10**6, b)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
