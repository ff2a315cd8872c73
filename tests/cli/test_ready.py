#!/usr/bin/env python3
"""CLI tests of servers: the ready moment, late compiles, `status` and the
start-up budget.

A server says when it is ready (a READY record, written by the preload from
JITSTALL_READY); every compile of any compiler that starts after it is late:
report lists it with the request it stalled and the warm-up fix, check gates
it (--max-late-compiles, --max-late-ms), export counts it. `status` reads
traces still being written; `report --k8s` turns many runs' time to ready into
a startupProbe.

Harness: clitest.py. `python3 test_ready.py --list` names the cases; ctest
runs each as cli.<case>.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

from clitest import *  # noqa: F401,F403

MS = 1000000


def ready(at_ms, spec="nvtx:warmup_done", tid=100):
    return f"ready start={at_ms}ms tid={tid} ready_spec={q(spec)}\n"


def server_spec(ready_spec="nvtx:warmup_done", with_ready=True):
    """A server: warm-up JIT 1100-1150 ms, first kernel at 1200 ms, ready at
    2000 ms; then, inside request "req1" (thread 100, 3000-9000 ms), a compile
    of every kind: the driver's JIT (a PTX load), NVRTC, nvJitLink, NVVM,
    nvPTXCompiler, a ptxas child and an XLA compile range."""
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "serve.py"))
    s += jit_load(1100, 50, seq=1, tid=100)
    s += launch(1200, seq=2)
    if with_ready:
        s += ready(2000, ready_spec)
    s += "range range_op=push tid=100 start=3000ms name=req1 depth=1\n"
    s += jit_load(3100, 400, seq=3, h="0xbee", kernel="_Z4latePf", tid=100)
    s += call("nvrtcCompileProgram", 3600, 30, name="compute_90", seq=4)
    s += call("nvJitLinkComplete", 3700, 20, seq=5)
    s += call("nvvmCompileProgram", 3800, 25, name="compute_90", seq=6)
    s += call("nvPTXCompilerCompile", 3900, 15, name="sm_90", seq=7)
    s += ("compile tid=100 start=4000ms dur=100ms seq=7 program=/usr/local/cuda/bin/ptxas "
          "compiler=ptxas target=sm_90 input=k.ptx output=k.cubin child_pid=601 wait_status=0\n")
    s += "range range_op=push tid=100 start=4200ms name=\"XlaCompile:#module=jit_f#\" depth=2\n"
    s += "range range_op=pop tid=100 start=4500ms depth=2\n"
    s += "range range_op=pop tid=100 start=9000ms depth=1\n"
    s += "end exit_status=0 end_reason=exit start=10000ms\n"
    return s


LATE = {"driver": 400, "nvrtc": 30, "nvjitlink": 20, "nvvm": 25, "nvptxcompiler": 15,
        "ptxas": 100, "xla": 300}


def report_json(env, *traces):
    out, _ = env.expect_rc(0, "report", "--json", *traces)
    return json.loads(out)


@case
def test_ready_late_compiles_every_compiler(env):
    # Each compiler's compile after ready is late; the warm-up JIT before it is not.
    for spec in ("nvtx:warmup_done", "file:/tmp/ready", "after:1"):
        t = env.trace("srv", server_spec(spec))
        p = report_json(env, t)["processes"][0]
        expect(p["ttr_ns"] == 1000 * MS and p["ready_spec"] == spec, p.get("ttr_ns"))
        late = {c["compiler"]: c["dur_ns"] // MS for c in p["compiles"] if c["late"]}
        expect(late == LATE, f"late {late}")
        early = [c for c in p["compiles"] if not c["late"]]
        expect(len(early) == 1 and early[0]["start_ns"] == 1100 * MS, early)
        expect(p["late_compiles"] == 7 and p["late_compile_ns"] == sum(LATE.values()) * MS,
               (p["late_compiles"], p["late_compile_ns"]))
        for c in p["compiles"]:
            if c["late"]:
                expect(c["request"] == "req1", c)
                expect(c["late_fix"].startswith("the warm-up does not compile ") and
                       c["late_fix"].endswith("(shape, dtype); add it to the warm-up or ship it"),
                       c["late_fix"])
        kinds = {f["kind"] for f in report_json(env, t)["fixes"]}
        expect("warmup" in kinds, kinds)


@case
def test_ready_child_that_builds_nothing_is_no_late_compile(env):
    # A server that runs nvidia-smi after ready (a health check): the child
    # is followed, but nothing under it compiles and no trace descends from
    # it, so it is no build: no late compile, no culprit, no fix, and the
    # gate passes. A ninja the preload could not enter still counts, by name.
    s = process()
    s += call("cuInit", 1100, 50, seq=1)
    s += call("cuLaunchKernel", 1200, 0.01, name="k", func="0x10", seq=2)
    s += ready(2000)
    s += ("compile tid=100 start=3000ms dur=300ms seq=3 program=/usr/bin/nvidia-smi "
          "arg=nvidia-smi arg=--query-gpu=utilization.gpu compiler=build child_pid=900 "
          "wait_status=0\n")
    s += end()
    t = env.trace("smi", s)
    r = report_json(env, t)
    p = r["processes"][0]
    expect(p["compiles"] == [] and not r["fixes"], (p["compiles"], r["fixes"]))
    env.expect_rc(0, "check", "--max-late-compiles", "0", t)
    out, _ = env.expect_rc(0, "report", t)
    expect("nvidia-smi" not in out and "Late compiles" not in out, out)
    t = env.trace("nj", s.replace("/usr/bin/nvidia-smi arg=nvidia-smi arg=--query-gpu=utilization.gpu",
                                  "/usr/bin/ninja arg=ninja"))
    p = report_json(env, t)["processes"][0]
    expect([c["compiler"] for c in p["compiles"]] == ["build"], p["compiles"])
    env.expect_rc(1, "check", "--max-late-compiles", "0", t)


@case
def test_ready_no_ready_no_late(env):
    # Without a READY record nothing is late, and time to ready is absent.
    p = report_json(env, env.trace("srv", server_spec(with_ready=False)))["processes"][0]
    expect(p["ttr_ns"] is None and p["late_compiles"] == 0, p)
    expect(not any(c["late"] for c in p["compiles"]), p["compiles"])


@case
def test_ready_report_text_and_markdown(env):
    t = env.trace("srv", server_spec())
    out, _ = env.expect_rc(0, "report", t)
    expect("Time to ready         1.00 s (nvtx:warmup_done)" in out, out)
    expect("Late compiles  7 after ready, 890.0 ms: each stalled a request" in out, out)
    sec = out.split("Late compiles")[1]
    expect(re.search(r"driver +400\.0 ms  _Z4latePf  \+1\.10 s after ready  in request req1",
                     sec), sec)
    expect("fix: the warm-up does not compile _Z4latePf (shape, dtype); add it to the warm-up "
           "or ship it" in sec, sec)
    md, _ = env.expect_rc(0, "report", "--markdown", t)
    expect("| 100 | 1.00 s | nvtx:warmup\\_done | 200.0 ms | 7 (890.0 ms) |" in md, md)
    expect("| 100 | driver | 400.0 ms | \\_Z4latePf | req1 |" in md, md)


@case
def test_ready_check_late_budgets(env):
    t = env.trace("srv", server_spec())
    out, _ = env.expect_rc(1, "check", "--max-late-compiles", "0", t)
    lines = fail_lines(out)
    expect(len(lines) == 1 and lines[0].startswith(
        "FAIL python3[100] max-late-compiles: 7 compiles after ready, budget 0 (+7); longest: "
        "driver 400.0 ms for _Z4latePf in request req1; fix: the warm-up does not compile "
        "_Z4latePf"), lines)
    env.expect_rc(0, "check", "--max-late-compiles", "7", t)
    out, _ = env.expect_rc(1, "check", "--max-late-ms", "889", t)
    lines = fail_lines(out)
    expect(len(lines) == 1 and "max-late-ms: compiling after ready took 890.0 ms, budget 889.0 ms"
           in lines[0], lines)
    env.expect_rc(0, "check", "--max-late-ms", "890", t)
    # both budgets: one line each
    out, _ = env.expect_rc(1, "check", "--max-late-compiles", "1", "--max-late-ms", "1", t)
    expect(len(fail_lines(out)) == 2, out)
    # a server that never said it was ready has no late compiles
    env.expect_rc(0, "check", "--max-late-compiles", "0",
                  env.trace("noready", server_spec(with_ready=False)))
    _, err = env.expect_rc(2, "check", "--max-late-ms", "x", t)
    expect("--max-late-ms" in err and len(err.splitlines()) == 1, err)


@case
def test_ready_export_prometheus_and_otlp(env):
    t = env.trace("srv", server_spec())
    out, _ = env.expect_rc(0, "export", "--format", "prometheus", t)
    expect(re.search(r"^# TYPE jitstall_late_compiles_total counter$", out, re.M), out)
    expect(re.search(r"^jitstall_late_compiles_total\{program=\"python3\".*\} 7$", out, re.M), out)
    expect(re.search(r"^jitstall_late_compile_seconds_total\{.*\} 0\.89$", out, re.M), out)
    expect(re.search(r"^jitstall_ready_seconds\{.*\} 1$", out, re.M), out)
    # no ready: no time to ready, and zero late compiles
    out, _ = env.expect_rc(0, "export", "--format", "prometheus",
                           env.trace("noready", server_spec(with_ready=False)))
    expect("jitstall_ready_seconds{" not in out, out)
    expect(re.search(r"^jitstall_late_compiles_total\{.*\} 0$", out, re.M), out)
    out, _ = env.expect_rc(0, "export", "--format", "otlp", t)
    spans = [s for rs in json.loads(out)["resourceSpans"] for ss in rs["scopeSpans"]
             for s in ss["spans"]]

    def attrs(s):
        return {a["key"]: a["value"] for a in s["attributes"]}
    late = [s["name"] for s in spans if attrs(s).get("jitstall.late") == {"boolValue": True}]
    # the late JIT load and runtime compiles as call spans, ptxas and XLA as compile spans
    expect(sorted(late) == sorted(["cuLibraryLoadData", "nvrtcCompileProgram",
                                   "nvJitLinkComplete", "nvvmCompileProgram",
                                   "nvPTXCompilerCompile", "compile ptxas", "compile xla"]), late)
    early = [s for s in spans if s["name"] == "cuLibraryLoadData" and
             "jitstall.late" not in attrs(s)]
    expect(len(early) == 1, "the warm-up JIT is not late")
    root = [s for s in spans if s["name"].endswith("cold start")][0]
    expect(attrs(root)["jitstall.late_compiles"] == {"intValue": "7"}, attrs(root))


# ---- status: traces still being written ----

def mono_ms():
    """Now on CLOCK_MONOTONIC, the traces' clock, in ms."""
    return time.clock_gettime(time.CLOCK_MONOTONIC) * 1000.0


class Sleeper:
    """A live process whose pid the traces name; start_ms is when it started
    on CLOCK_MONOTONIC, as the preload records a process's start (status
    tells a reused pid by it)."""

    def __init__(self):
        self.proc = subprocess.Popen(["sleep", "300"])
        self.pid = self.proc.pid
        stat = open(f"/proc/{self.pid}/stat").read()
        ticks = int(stat.rsplit(")", 1)[1].split()[19])  # field 22, starttime
        boot_ms = ticks * 1000.0 / os.sysconf("SC_CLK_TCK")
        off = (time.clock_gettime(time.CLOCK_BOOTTIME) -
               time.clock_gettime(time.CLOCK_MONOTONIC)) * 1000.0
        # whole ms, as a trace writes it: BOOTTIME runs ahead of MONOTONIC by
        # the time the machine was suspended (a restored VM), which is rarely
        # whole ms, and a ready time of start + 900 ms then read 900.1 ms
        self.start_ms = round(boot_ms - off)

    def wait_until(self, ms_after_start):
        """Sleeps until the process is ms_after_start old."""
        left = self.start_ms + ms_after_start - mono_ms()
        if left > 0:
            time.sleep(left / 1000.0)

    def close(self):
        self.proc.kill()
        self.proc.wait()


def live_process(pid, start_ms):
    host = os.uname().nodename
    return (f"process pid={pid} ppid=1 exe=/usr/bin/python3 arg=python3 arg=serve.py "
            f"host={q(host)} realtime=1700000000s mono={start_ms:.0f}ms "
            f"proc_start={start_ms:.0f}ms version=0.1.0\n")


def phase_stage(pid, t0, stage):
    """One server's trace at a stage of its start (t0: its start, ms):
    "compiling" (a PTX JIT begun at +200 ms, not returned, a progress record
    at +500 ms), "ready" (it returned at +800 ms, ready at +900 ms),
    "exited" (then the end record at +1000 ms)."""
    s = live_process(pid, t0)
    s += call("cuInit", t0 + 50, 50, tid=pid)
    jit = dict(image_kind="fatbin_wrapper", source=q("/opt/app/lib/libkern.so"),
               verdict="ptx_jit", jit_from="compute_75", target_cc=90, kernel=KERNEL, seq=2,
               tid=pid)
    fields = " ".join(f"{k}={v}" for k, v in jit.items())
    s += f"begin call=cuLibraryLoadData start={t0 + 200:.0f}ms {fields}\n"
    s += f"progress start={t0 + 500:.0f}ms in_flight=1\n"
    if stage == "compiling":
        return s
    s += f"call call=cuLibraryLoadData start={t0 + 200:.0f}ms dur=600ms result=0 {fields}\n"
    s += ready(t0 + 900, "file:/tmp/ready", tid=0)
    if stage == "ready":
        return s
    return s + f"end exit_status=0 end_reason=exit start={t0 + 1000:.0f}ms\n"


def status_json(env, want_rc, *args):
    out, _ = env.expect_rc(want_rc, "status", "--json", *args)
    return json.loads(out)


@case
def test_status_compiling_then_ready_then_exited(env):
    sl = Sleeper()
    try:
        sl.wait_until(1500)
        d = env.path("traces")
        for stage in ("compiling", "ready", "exited"):
            env.trace("srv", phase_stage(sl.pid, sl.start_ms, stage),
                      truncate=stage != "exited", subdir="traces")
            j = status_json(env, 0, "--stuck", "0.5", d)
            (p,) = j["processes"]
            expect(p["pid"] == sl.pid and p["program"] == "python3", p)
            expect(p["phase"] == stage and not p["stuck"], (stage, p))
            text, _ = env.expect_rc(0, "status", "--stuck", "0.5", d)
            line = text.splitlines()[1]
            if stage == "compiling":
                # in flight since +200 ms: now, not the trace's last record, ends it
                expect(1.29e9 <= p["compiling_ns"] <= 60e9 and p["compiler"] == "driver", p)
                expect(p["compile_ns"] >= 1.29e9 and p["up_ns"] >= 1.49e9, p)
                expect(p["live"] is True, p)
                expect(re.search(r"compiling driver PTX JIT \S+ for \d+\.\d+ s$", line), line)
            elif stage == "ready":
                expect(abs(p["compile_ns"] - 600 * MS) < MS and p["ready_spec"] == "file:/tmp/ready", p)
                expect(p["up_ns"] >= 1.49e9 and abs(p["ttr_ns"] - 900 * MS) < MS, p)
                expect(line.endswith("  ready (after 900.0 ms)"), line)
            else:
                expect(p["live"] is False and p["exit_status"] == 0, p)
                expect(abs(p["up_ns"] - 1000 * MS) < MS, p)
                expect(line.endswith("exited (status 0)"), line)
    finally:
        sl.close()


@case
def test_status_capturing_a_graph(env):
    # A server capturing one graph per batch size: two captured, the third
    # begun at +300 ms and not ended. It is capturing, not starting, and
    # never stuck; once ended, it is starting again (and stuck when idle).
    sl = Sleeper()
    try:
        t0 = sl.start_ms
        s = live_process(sl.pid, t0) + call("cuInit", t0 + 50, 50, tid=sl.pid)
        for i, at in enumerate((100, 200)):
            s += call("cuStreamBeginCapture", t0 + at, 0.01, tid=sl.pid, handle="0x10")
            s += call("cuStreamEndCapture", t0 + at + 50, 0.01, tid=sl.pid, handle="0x10",
                      graph=hex(0x900 + i))
        s += call("cuStreamBeginCapture", t0 + 300, 0.01, tid=sl.pid, handle="0x10")
        sl.wait_until(1800)
        t = env.trace("cap", s, truncate=True, subdir="c")
        j = status_json(env, 0, "--stuck", "1", t)
        (p,) = j["processes"]
        expect(p["phase"] == "capturing" and not p["stuck"] and p["graphs_captured"] == 2, p)
        expect(1.49e9 <= p["capturing_ns"] <= 60e9, p)
        text, _ = env.expect_rc(0, "status", "--stuck", "1", t)
        line = text.splitlines()[1]
        expect(re.search(r"capturing a CUDA graph for \d+\.\d+ s \(2 captured so far\)$", line),
               line)
        # the capture ended at +350 ms: nothing since, so stuck after 1 s
        s += call("cuStreamEndCapture", t0 + 350, 0.01, tid=sl.pid, handle="0x10", graph="0x902")
        t = env.trace("ended", s, truncate=True, subdir="e")
        j = status_json(env, 1, "--stuck", "1", t)
        (p,) = j["processes"]
        expect(p["phase"] == "starting" and p["stuck"] and p["graphs_captured"] == 3
               and p["capturing_ns"] is None, p)
    finally:
        sl.close()


@case
def test_status_stuck(env):
    sl = Sleeper()
    try:
        t0 = sl.start_ms
        # its one driver call ended at +100 ms; nothing since
        s = live_process(sl.pid, t0) + call("cuInit", t0 + 50, 50, tid=sl.pid)
        t = env.trace("stuck", s, truncate=True, subdir="d")
        sl.wait_until(2500)
        out, _ = env.expect_rc(1, "status", "--stuck", "1", env.path("d"))
        expect(re.search(r"starting  STUCK: no driver call or compile for \d+\.\d+ s "
                         r"\(--stuck 1 s\)", out), out)
        j = status_json(env, 1, "--stuck", "1", t)
        expect(j["stuck"] == 1 and j["processes"][0]["stuck"], j)
        expect(2.39e9 <= j["processes"][0]["idle_ns"] < 60e9, j)
        # a longer budget, or none: not stuck
        env.expect_rc(0, "status", "--stuck", "30", t)
        env.expect_rc(0, "status", t)
        # ready is never stuck
        env.trace("ready", s + ready(t0 + 200), truncate=True, subdir="r")
        j = status_json(env, 0, "--stuck", "1", env.path("r"))
        expect(j["processes"][0]["phase"] == "ready", j)
        # the same pid, but a process that started 100 s earlier: the trace of
        # a killed run whose pid was reused (a restarted container) has exited
        env.trace("old", live_process(sl.pid, t0 - 100000) +
                  call("cuInit", t0 - 99000, 50, tid=sl.pid), truncate=True, subdir="o")
        j = status_json(env, 0, "--stuck", "1", env.path("o"))
        expect(j["processes"][0]["phase"] == "exited" and j["processes"][0]["live"] is False, j)
    finally:
        sl.close()
    # the process is gone: exited (no end record), never stuck
    j = status_json(env, 0, "--stuck", "1", t)
    expect(j["processes"][0]["phase"] == "exited" and j["processes"][0]["live"] is False, j)


@case
def test_status_cut_last_block(env):
    # A trace read while the preload writes it: its last block cut short.
    sl = Sleeper()
    try:
        sl.wait_until(600)
        t = env.trace("cut", phase_stage(sl.pid, sl.start_ms, "compiling") +
                      "note message=\"padding so the cut lands in a block\"\n", truncate=True)
        data = open(t, "rb").read()
        open(t, "wb").write(data[:-10])
        j = status_json(env, 0, "--stuck", "0.1", t)
        expect(j["processes"][0]["phase"] == "compiling", j)
    finally:
        sl.close()


@case
def test_status_compiler_child_in_flight(env):
    # A compiler child recorded without its wait status (not reaped yet) is a
    # compile in flight: the process is compiling, not stuck.
    sl = Sleeper()
    try:
        t0 = sl.start_ms
        s = live_process(sl.pid, t0) + call("cuInit", t0 + 50, 50, tid=sl.pid)
        s += (f"compile tid={sl.pid} start={t0 + 200:.0f}ms seq=2 compiler=ptxas "
              "program=/usr/local/cuda/bin/ptxas output=/tmp/k.cubin child_pid=77\n")
        t = env.trace("child", s, truncate=True)
        sl.wait_until(1500)
        out, _ = env.expect_rc(0, "status", "--stuck", "1", t)
        expect(re.search(r"compiling ptxas \(subprocess\) /tmp/k\.cubin for \d+\.\d+ s$",
                         out.splitlines()[1]), out)
    finally:
        sl.close()


@case
def test_status_errors(env):
    _, err = env.expect_rc(2, "status", env.path("nope"))
    expect(err.startswith("jitstall status: ") and len(err.splitlines()) == 1, err)
    os.makedirs(env.path("empty"))
    out, _ = env.expect_rc(0, "status", env.path("empty"))
    expect("no trace yet" in out, out)
    _, err = env.expect_rc(2, "status", "--stuck", "soon", env.path("empty"))
    expect("--stuck" in err and len(err.splitlines()) == 1, err)
    _, err = env.expect_rc(2, "status")
    expect(len(err.splitlines()) == 1, err)


# ---- the start-up budget ----

def run_with_ready(pid, ready_s, with_ready=True):
    """A run of serve.py started at 1000 ms: first kernel at 1200 ms, ready
    ready_s seconds after its start (without ready: the first kernel at
    ready_s instead)."""
    s = process(pid=pid, exe="/usr/bin/python3", args=("python3", "serve.py"))
    if with_ready:
        s += launch(1200, seq=1)
        s += ready(1000 + ready_s * 1000, tid=pid)
    else:
        s += launch(1000 + ready_s * 1000, seq=1)
    return s + f"end exit_status=0 end_reason=exit start={2000 + ready_s * 1000}ms\n"


@case
def test_budget_over_200_runs(env):
    # 200 runs ready after 1, 2, ..., 200 s; every fifth sets no ready moment
    # and counts by its time to first kernel. Nearest rank: p50 100 s, p95
    # 190 s, p99 198 s, max 200 s.
    for i in range(1, 201):
        env.trace(f"run{i:03d}", run_with_ready(1000 + i, i, with_ready=i % 5 != 0),
                  subdir="runs")
    d = env.path("runs")
    out, _ = env.expect_rc(0, "report", "--k8s", "--budget", "150", d)
    sec = out[out.index("Start-up budget"):]
    expect(sec.startswith("Start-up budget (200 runs: 160 by time to ready, 40 by time to first "
                          "kernel where no ready was set)\n"
                          "  p50 100.00 s, p95 190.00 s, p99 198.00 s, max 200.00 s\n"
                          "  a budget of 150.00 s would have killed 50 of 200 runs (25.0%)\n"), sec)
    # 198 s + 25% = 247.5 s: 25 periods of 10 s
    expect("failureThreshold x periodSeconds = 25 x 10 s = 250 s, covering p99 (198.00 s) with "
           "a 25% margin" in sec, sec)
    expect("\n  startupProbe:\n" in sec and "\n    periodSeconds: 10\n" in sec and
           "\n    failureThreshold: 25 " in sec, sec)
    j = json.loads(env.expect_rc(0, "report", "--json", "--budget", "199", d)[0])["startup"]
    expect((j["runs"], j["runs_by_ready"], j["p50_ns"], j["p95_ns"], j["p99_ns"], j["max_ns"]) ==
           (200, 160, 100e9, 190e9, 198e9, 200e9), j)
    expect(j["killed_by_budget"] == 1 and j["probe_failure_threshold"] == 25, j)
    md, _ = env.expect_rc(0, "report", "--markdown", "--k8s", d)
    expect("```yaml\nstartupProbe:\n" in md and "**Start-up budget** (200 runs" in md, md)
    _, err = env.expect_rc(2, "report", "--budget", "soon", d)
    expect("--budget" in err and len(err.splitlines()) == 1, err)


@case
def test_budget_absent_without_ready(env):
    # Runs that never said they were ready: no budget section unless asked.
    t = env.trace("cold", run_spec())
    out, _ = env.expect_rc(0, "report", t)
    expect("Start-up budget" not in out and "Time to ready" not in out, out)
    expect("startup" not in json.loads(env.expect_rc(0, "report", "--json", t)[0]), "no key")
    out, _ = env.expect_rc(0, "report", "--budget", "1", t)
    expect("1 by time to first kernel" in out and "would have killed 1 of 1 runs" in out, out)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
