#!/usr/bin/env python3
"""CLI tests of a pool's workers: traces of processes that a traced parent
forked, ended by it (no END record), and their compiles in the parent's first
call.

A worker's trace without END reads as normal (not partial: no warning, report
not partial, check counts no damage, one line "N workers ended by their parent
(pid P)") when its parent's trace reaped it (a reap record, after an exit or
SIGTERM/SIGKILL/SIGINT/SIGHUP) or, without a reap record, outlived its last
record. A worker reaped after a crash signal, or one that its parent did not
outlive (it may still run), stays partial. The workers' compiles start and
count in the parent's first call once, as the union of their intervals,
grouped by pool.

Harness: clitest.py. `python3 test_workers.py --list` names the cases; ctest
runs each as cli.<case>.
"""
import json
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)

MS = 10**6


def proc(pid, ppid, start_ms, host="ci"):
    return (f"process pid={pid} ppid={ppid} exe=/opt/app/bin/pool arg=pool arg=--work host={host} "
            f"realtime=1700000000s mono={start_ms}ms proc_start={start_ms}ms version=0.1.0\n")


def parent_spec(reaps=(), end_ms=3000, workers=(201, 202)):
    """Parent 200: cuInit, waits for its workers, loads, launches at 2500 ms,
    reaps them (reap records: (pid, status)), ends at end_ms."""
    s = proc(200, 1, 1000)
    s += "device device=0 cc_major=9 cc_minor=0 dev_name=\"NVIDIA H200\"\n"
    s += call("cuInit", 1010, 50, seq=1)
    s += call("cuModuleLoadData", 2400, 5, image_kind="cubin", verdict="sass", sass_arch="sm_90",
              target_cc=90, kernel="add", seq=2)
    s += call("cuLaunchKernel", 2500, 0.01, name="add", func="0x10", seq=3)
    for pid, st in reaps:
        s += f"reap child_pid={pid} wait_status={st} tid=200 start={end_ms - 10}ms\n"
    s += f"end exit_status=0 end_reason=exit start={end_ms}ms\n"
    return s


def worker_spec(pid, ppid=200, start_ms=1100, compiles=((1200, 400), (1700, 400)), host="ci"):
    """A worker: ptxas children, one after another; no END (truncated)."""
    s = proc(pid, ppid, start_ms, host)
    for i, (t, d) in enumerate(compiles):
        s += (f"compile tid={pid} start={t}ms dur={d}ms seq={i + 1} compiler=ptxas "
              f"program=/usr/local/cuda/bin/ptxas child_pid={pid * 10 + i} wait_status=0\n")
    return s


def run(env, parent, workers, name):
    env.trace("parent", parent, subdir=name)
    for pid, spec in workers:
        env.trace(f"w{pid}", spec, truncate=True, subdir=name)
    d = env.path(name)
    rc, out, err = env.run("report", d, env={"NO_COLOR": "1"})
    expect(rc == 0, f"report exit {rc}: {err}")
    js, _ = env.expect_rc(0, "report", "--json", d)
    return out, err, json.loads(js)


@case
def test_workers_reaped_after_sigterm_read_as_normal(env):
    out, err, rep = run(env, parent_spec(reaps=((201, 15), (202, 9))),
                        [(201, worker_spec(201)), (202, worker_spec(202))], "term")
    expect("warning" not in err, f"report warns:\n{err}")
    expect(not rep["partial"], "the report is partial")
    expect(out.count("2 workers ended by their parent (pid 200)\n") == 1, out)
    expect("partial" not in out and "truncated" not in out, out)
    ws = {p["pid"]: p for p in rep["processes"] if p["pid"] != 200}
    expect(all(p["ended_by_parent"] == 200 and p["truncated"] for p in ws.values()), ws)
    # check: nothing partial
    rc, cout, cerr = env.run("check", env.path("term"))
    expect("partial trace" not in cout + cerr, cout + cerr)


@case
def test_workers_crashed_on_their_own_stay_partial(env):
    # SIGSEGV (11) and SIGABRT with a core (6 | 0x80): crashes, not the parent's end.
    out, err, rep = run(env, parent_spec(reaps=((201, 11), (202, 0x86))),
                        [(201, worker_spec(201)), (202, worker_spec(202))], "crash")
    expect(err.count("partial trace") == 2, err)
    expect(rep["partial"], "the report is not partial")
    expect("ended by their parent" not in out and "ended by its parent" not in out, out)


@case
def test_workers_outlived_without_reap_read_as_normal(env):
    # No reap record (the parent did not wait through libc): the parent's trace
    # goes on after the workers' last records.
    out, err, rep = run(env, parent_spec(), [(201, worker_spec(201)), (202, worker_spec(202))],
                        "outlived")
    expect("warning" not in err, err)
    expect(out.count("2 workers ended by their parent (pid 200)") == 1, out)


@case
def test_worker_still_running_stays_partial(env):
    # The worker's last record is after the parent's end: it may still run.
    out, err, rep = run(env, parent_spec(end_ms=3000),
                        [(201, worker_spec(201, compiles=((1200, 400), (4000, 400))))], "running")
    expect(err.count("partial trace") == 1, err)
    expect("ended by" not in out, out)


@case
def test_worker_of_another_host_is_not_joined(env):
    out, err, rep = run(env, parent_spec(reaps=((201, 15),)),
                        [(201, worker_spec(201, host="other"))], "host")
    expect(err.count("partial trace") == 1, err)
    p = [p for p in rep["processes"] if p["pid"] == 200][0]
    expect(all(not f["pools"] for f in p["first_calls"]), p["first_calls"])


@case
def test_workers_compiles_count_once_in_the_parents_first_call(env):
    # Two workers, two ptxas each, at the same times: 1200-1600 and 1700-2100
    # in both. The parent's first call (from 1200 to its launch at 2500) counts
    # them once: 800 ms of subprocess, not 1600; one pool, 2 workers, 4 runs.
    out, err, rep = run(env, parent_spec(reaps=((201, 15), (202, 15))),
                        [(201, worker_spec(201)), (202, worker_spec(202))], "blame")
    p = [p for p in rep["processes"] if p["pid"] == 200][0]
    expect(len(p["first_calls"]) == 1, p["first_calls"])
    fc = p["first_calls"][0]
    expect(fc["kernel"] == "add" and fc["start_ns"] == 1200 * MS, fc)
    b = {x["cause"]: x["dur_ns"] for x in fc["blame"]}
    expect(b.get("subprocess") == 800 * MS, b)
    expect(fc["pools"] == [{"pid": 200, "workers": 2, "runs": {"ptxas": 4}, "dur_ns": 800 * MS}],
           fc["pools"])
    expect("Pool       2 workers: ptxas 4 runs, 800.0 ms, in the first call of add\n" in out, out)
    expect("Workers    2 forked (2 ended by this process): ptxas 4\n" in out, out)
    expect(out.count("\nProcess ") == 1, "the workers are shown under their parent, not as processes")
    # nor in the answer lines at the top: one line, the parent's
    head = out.split("\njitstall report:")[0]
    expect(head.startswith("pid 200 ") and "pid 201" not in head and "pid 202" not in head, head)
    # the fleet view: the forked workers are not runs of their own
    expect("Programs (runs" not in out, out)


@case
def test_workers_compiles_are_a_miss_of_the_parents_cache(env):
    # Inductor's compile workers compiled while the parent waited; the
    # parent's cache held entries at start. The parent compiled nothing
    # itself, but a process it started did: its first call's cache missed
    # (no "cache hit" fix), and the workers' compiles are misses.
    tab = "\\x09"
    frames = (f'py_frame="codegen{tab}/site/torch/_inductor/codecache.py{tab}900" '
              f'py_frame="main{tab}/app/w.py{tab}5"')
    parent = parent_spec(reaps=((201, 15),)).replace(
        "end exit_status", "fw_cache framework=inductor cache_path=/tmp/ti exists=1 entries=5 "
        "writable=1\nend exit_status")
    worker = worker_spec(201).replace(" compiler=ptxas", " stack_id=1 compiler=ptxas")
    worker = worker.replace("version=0.1.0\n", f"version=0.1.0\nstack stack_id=1 ips=0x1000 {frames}\n",
                            1)
    out, err, rep = run(env, parent, [(201, worker)], "miss")
    p = [p for p in rep["processes"] if p["pid"] == 200][0]
    fc = p["first_calls"]
    expect([(f["framework"], f["cache"]) for f in fc] == [("inductor", "miss")], fc)
    expect([(c["framework"], c["outcome"], c["used"]) for c in p["framework_caches"]] ==
           [("inductor", "miss", True)], p["framework_caches"])
    w = [p for p in rep["processes"] if p["pid"] == 201][0]
    expect({c["cache"] for c in w["compiles"]} == {"miss"}, w["compiles"])
    kinds = {x["kind"] for x in rep["fixes"]}
    expect("framework_aot" not in kinds and "inductor_cache" in kinds, rep["fixes"])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
