#!/usr/bin/env python3
"""CLI tests of the analyzer at scale: every command is linear in the trace,
memory follows the loads and not the calls, an allocation failure is said,
and overlapping loads are counted once in the time to first kernel.

Each case builds traces with gen_trace (the real writer) and asserts on the
real output. The linearity cases use traces large enough that a quadratic
pass takes minutes while a linear one takes a fraction of a second, with a
limit of 60 s: structural, not a timing measurement. ctest runs one case
per test (tests/cli/CMakeLists.txt):

    python3 test_scale.py --list      names of the cases
    python3 test_scale.py CASE...     run cases (all when none is named)

Environment: JST_CLI (the jitstall binary), JST_GEN_TRACE (gen_trace),
JST_SANITIZED=1 (an ASan build: the memory-limit cases are skipped).
"""
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile

import clitest
from clitest import case, expect, Failure, Skip

LIMIT_S = 60


def head(pid=100, start_ms=1000):
    return (f'process pid={pid} ppid=1 exe="/opt/app/bin/prog" arg=prog host=ci '
            f"realtime=1700000000s mono={start_ms}ms proc_start={start_ms}ms version=0.1.0\n"
            'device device=0 cc_major=9 cc_minor=0 dev_name="NVIDIA H200"\n')


def call(api, start_us, dur_us, **kw):
    fields = " ".join(f"{k}={v}" for k, v in kw.items())
    return f"call call={api} start={start_us}us dur={dur_us}us result=0 {fields}\n"


def load(i, t_us, dur_us, jit=True, cache="hit", **kw):
    """Load i: its own library and kernel, so every one is its own culprit
    group and its own fix text (what made grouping quadratic)."""
    src = f'"/opt/app/lib/libk{i}.so"'
    if jit:
        return call("cuModuleLoadData", t_us, dur_us, image_kind="fatbin", image_hash=hex(i + 1),
                    source=src, verdict="ptx_jit", jit_from="compute_80", target_cc=90,
                    kernel=f"_Z2k{i}v", cache=cache, ptx_size=40000, stack_id=1 + i % 50,
                    **kw)
    return call("cuModuleLoadData", t_us, dur_us, image_kind="fatbin", image_hash=hex(i + 1),
                source=src, verdict="sass", sass_arch="sm_90", target_cc=90, kernel=f"_Z2k{i}v",
                **kw)


def stacks():
    # Stacks in a module that is not on disk: symbolizing stays cheap and
    # the call-site notes are deterministic.
    s = ('modmap mod_event=initial mod_path="/opt/app/bin/prog" bias=0x400000 '
         "mod_start=0x400000 mod_end=0x800000\n")
    for k in range(1, 51):
        s += f"stack stack_id={k} ips={hex(0x401000 + 16 * k)},{hex(0x402000 + 16 * k)}\n"
    return s


class Env(clitest.Env):
    """clitest's environment, with a time limit on every command and an
    optional address-space limit."""

    def trace(self, name, spec, batch=False):
        out = self.path(name + ".jst")
        argv = [self.gen] + (["--batch"] if batch else []) + [out]
        r = subprocess.run(argv, input=spec.encode(), capture_output=True)
        if r.returncode != 0:
            raise Failure(f"gen_trace failed: {r.stderr.decode(errors='replace')[:2000]}")
        return out

    def run(self, *args, limit_as=None, limit_s=LIMIT_S):
        argv = [self.cli] + [str(a) for a in args]
        if limit_as:  # MiB of address space, as `ulimit -v` sets it
            if os.environ.get("JST_SANITIZED") == "1":
                raise Skip("an address-space limit cannot hold ASan's shadow memory")
            argv = ["bash", "-c", f'ulimit -v {limit_as * 1024} && exec "$0" "$@"'] + argv
        e = dict(os.environ)
        e["NO_COLOR"] = "1"
        try:
            r = subprocess.run(argv, capture_output=True, env=e, timeout=limit_s)
        except subprocess.TimeoutExpired:
            raise Failure(f"jitstall {' '.join(map(str, args))} ran past {limit_s} s: "
                          "not linear in the trace")
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def many_loads_spec(n):
    s = head() + stacks()
    t = 1_010_000
    s += call("cuInit", t, 1000)
    t += 2000
    for i in range(n):
        # JIT loads of every cache outcome (the fix estimates look at the
        # process's mean hit and SASS load, and the cache size wanted) and a
        # SASS load every fourth.
        kind = i % 4
        if kind == 0:
            s += load(i, t, 300, jit=False)
        elif kind == 1:
            s += load(i, t, 2000, cache="hit")
        elif kind == 2:
            s += load(i, t, 2500, cache="miss_stored", cache_new_bytes=60000)
        else:
            s += load(i, t, 2500, cache="miss_not_stored", cache_reason="too_small")
        s += call("cuModuleGetFunction", t + 2600, 1, name=f"_Z2k{i}v", func=hex(0x10000 + i))
        t += 3000
    s += call("cuLaunchKernel", t, 5, name="_Z2k1v", func="0x10001")
    s += "end exit_status=0 end_reason=exit\n"
    return s


@case
def test_every_command_linear_in_loads(env):
    # 30,000 loads with distinct libraries: the old report took about 17 s
    # for 10,000 such loads and grew faster than the square.
    t = env.trace("many", many_loads_spec(30000))
    for args in (["report"], ["report", "--json"], ["report", "--markdown"],
                 ["check", "--max-jit-ms", "1e12"], ["baseline", "-o", env.path("b.json")],
                 ["diff", t], ["export", "--format", "chrome", "-o", env.path("x.json")],
                 ["dump", "--json"]):
        argv = args + ([t] if args[0] != "diff" else [t])
        rc, out, err = env.run(*argv)
        expect(rc in (0, 1), f"jitstall {' '.join(args)}: exit {rc}: {err[:500]}")
    rc, out, err = env.run("report", "--json", t)
    j = json.loads(out)
    n = len(j["processes"][0]["modules"])
    expect(n == 30000, f"{n} modules, expected 30000")


@case
def test_links_and_cupti_linear(env):
    # LTO-IR link steps (a cuLinkComplete is JIT when an earlier cuLinkAddData
    # on its handle was NVVM) and CUPTI records tied to their loads by time.
    n = 15000
    s = head()
    t = 1_010_000
    for i in range(n):
        h = hex(0x100 + i)
        s += call("cuLinkAddData", t, 10, handle=h, jit_input=5, name=f'"lto{i}"')
        s += call("cuLinkComplete", t + 20, 1000, handle=h, cubin_size=1000)
        s += f"cupti cupti_op=cache_load cupti_start={t + 30}us cupti_end={t + 430}us\n"
        t += 2000
    s += call("cuLaunchKernel", t, 5, name="_Z1kv", func="0x1")
    s += "end exit_status=0 end_reason=exit\n"
    tr = env.trace("links", s)
    rc, out, err = env.run("report", "--json", tr)
    expect(rc == 0, f"report: exit {rc}: {err[:500]}")
    j = json.loads(out)
    p = j["processes"][0]
    expect(p["jit_loads"] == n, f"jit_loads {p['jit_loads']}, expected {n}")
    load = p["ttfk_breakdown"]["jit_cache_load_ns"]
    expect(load == n * 400_000, f"cache load {load}: CUPTI records not tied to their links")


def distinct_loads_spec(n, tag):
    s = head() + call("cuInit", 1_010_000, 1000)
    t = 1_020_000
    for i in range(n):
        s += call("cuModuleLoadData", t, 100, verdict="sass", sass_arch="sm_90",
                  image_hash=hex(ord(tag) << 32 | (i + 1)),
                  source=f'"/opt/lib/lib{tag}{i}.so"', kernel=f"_Z2k{i}v")
        t += 200
    s += call("cuLaunchKernel", t, 5, name="_Z2k0v", func="0x1")
    s += "end exit_status=0 end_reason=exit\n"
    return s


@case
def test_diff_and_baseline_match_linear(env):
    # Two runs whose 80,000 modules match nothing in the other: pairing each
    # module by scanning the other run's list took 80,000 x 80,000 steps.
    n = 80000
    a = env.trace("a", distinct_loads_spec(n, "A"))
    b = env.trace("b", distinct_loads_spec(n, "B"))
    rc, out, err = env.run("diff", "--json", a, b)
    expect(rc in (0, 1), f"diff: exit {rc}: {err[:500]}")
    mods = json.loads(out)["processes"][0]["modules"]
    expect(len(mods) == 2 * n, f"{len(mods)} module lines, expected {2 * n}")
    rc, out, err = env.run("baseline", "-o", env.path("base.json"), a)
    expect(rc == 0, f"baseline: exit {rc}: {err[:500]}")
    rc, out, err = env.run("check", "--baseline", env.path("base.json"), b)
    expect(rc in (0, 1), f"check --baseline: exit {rc}: {err[:500]}")


def lookups_spec(n):
    # One load, then n lookups of its kernel, then the first launch: the
    # launch is the last record, so a reader that drops records loses it.
    s = head() + call("cuInit", 1_010_000, 1000)
    s += load(0, 1_020_000, 2000, cache="hit")
    t = 1_030_000
    body = []
    for i in range(n):
        body.append(f"call call=cuModuleGetFunction start={t + i}us dur=1us result=0 "
                    f"name=_Z2k0v func=0x10000\n")
    s += "".join(body)
    s += call("cuLaunchKernel", t + n + 10, 5, name="_Z2k0v", func="0x10000")
    s += "end exit_status=0 end_reason=exit\n"
    return s


def report_in_200_mib(env, trace):
    """report --json of trace under a 200 MiB address-space limit: it must
    succeed and drop nothing for want of memory. Its one process."""
    rc, out, err = env.run("report", "--json", trace, limit_as=200)
    expect(rc == 0, f"report under 200 MiB: exit {rc}: {err[:500]}")
    p = json.loads(out)["processes"][0]
    expect(not any("out of memory" in m for m in p["missing"]), f"missing: {p['missing']}")
    return p


@case
def test_lookups_fit_in_bounded_memory(env):
    # 1,000,000 lookups took about 360 MB to report (every call kept, every
    # string copied); under a 200 MiB address-space limit records were lost
    # without a word. Now they are counted, not kept.
    n = 1_000_000
    p = report_in_200_mib(env, env.trace("lookups", lookups_spec(n)))
    expect(p["ttfk_ns"] == (n + 10 + 30_000) * 1000,
           f"ttfk {p['ttfk_ns']}: the last record (the first launch) was lost")


def launches_spec(n):
    # A JIT load, then the first launches of n kernels, each its own.
    s = head() + call("cuInit", 1_010_000, 1000)
    s += load(1, 1_020_000, 2000, cache="miss_stored")
    t = 1_030_000
    s += "".join(f"call call=cuLaunchKernel start={t + 2 * i}us dur=1us result=0 "
                 f"name=_Z2L{i}v func={hex(0x100000 + i)} seq={10 + i}\n" for i in range(n))
    s += "end exit_status=0 end_reason=exit\n"
    return s


@case
def test_launches_fit_in_bounded_memory(env):
    # 500,000 first launches (of as many kernels): first calls need each
    # launch's thread, time and kernel, and the report kept each as a whole
    # call record, 191 MB resident for 1 M events. A launch is now 40 bytes.
    p = report_in_200_mib(env, env.trace("launches", launches_spec(500_000)))
    fcs = p["first_calls"]
    expect(len(fcs) == 1 and fcs[0]["kernel"] == "_Z2L0v", f"first calls: {fcs}")
    expect(p["ttfk_ns"] == 30_000 * 1000, f"ttfk {p['ttfk_ns']}")


@case
def test_out_of_memory_is_said(env):
    # Loads are kept one by one; under a limit too small for them the reader
    # runs out of memory. It must say so and mark the trace partial, never
    # report a clean run with loads missing.
    if os.environ.get("JITSTALL_EMULATED") == "1":
        raise Skip("under qemu-user emulation: the address-space limit is too small for "
                   "qemu's own translation buffer")
    n = 60000
    s = head() + call("cuInit", 1_010_000, 1000)
    t = 1_020_000
    big = "x" * 3000
    for i in range(n):
        s += call("cuModuleLoadData", t, 100, verdict="sass", sass_arch="sm_90",
                  source=f'"/opt/lib/{big}{i}.so"')
        t += 200
    s += call("cuLaunchKernel", t, 5, name="_Z1kv", func="0x1")
    s += "end exit_status=0 end_reason=exit\n"
    tr = env.trace("oom", s)
    rc, out, err = env.run("report", tr, limit_as=120)
    expect(re.search(r"oom\.jst: partial trace \(out of memory while reading: \d+ records or fields "
                     r"dropped\); using what it holds", err),
           f"no out-of-memory line on stderr (exit {rc}): {err[:500]}")
    # The reader keeps no more of the trace and gives back the memory it set
    # aside, so the report still comes out, saying what is missing.
    # (exit 0 today, as for other partial traces; never 2, "unreadable")
    expect(rc >= 0 and rc != 2, f"exit {rc}: {err[:500]}")
    expect(re.search(r"jitstall ran out of memory reading the trace: \d+ records or fields "
                     r"were dropped", out), out[:1500])


@case
def test_overlapping_loads_count_once(env):
    # Four 100 ms JIT loads on four threads at the same time, first launch
    # 20 ms after they end: the JIT took 100 ms of the 130 ms to the first
    # kernel, not 400 ms (307%).
    s = head(start_ms=1000)
    for k in range(4):
        s += call("cuModuleLoadData", 1_010_000, 100_000, tid=10 + k, image_kind="fatbin",
                  image_hash=hex(k + 1), source=f'"/opt/lib/lib{k}.so"', verdict="ptx_jit",
                  jit_from="compute_80", target_cc=90, kernel=f"_Z2k{k}v", cache="miss_stored",
                  ptx_size=40000)
    s += call("cuLaunchKernel", 1_130_000, 5, tid=10, name="_Z2k0v", func="0x1")
    s += "end exit_status=0 end_reason=exit\n"
    tr = env.trace("overlap", s)
    rc, out, err = env.run("report", tr)
    expect(rc == 0, f"report: exit {rc}: {err}")
    line = next((l for l in out.splitlines() if l.strip().startswith("JIT ")), "")
    expect(re.search(r"JIT\s+100\.0 ms\s+76\.9%", line), f"JIT line: {line!r}")
    expect("400.0 ms of work in 4 overlapping loads" in line, f"JIT line: {line!r}")
    rc, out, err = env.run("report", "--json", tr)
    b = json.loads(out)["processes"][0]["ttfk_breakdown"]
    expect(b["jit_ns"] == 100_000_000 and b["jit_work_ns"] == 400_000_000 and
           b["jit_overlap_loads"] == 4, f"breakdown: {b}")
    rc, out, err = env.run("report", "--markdown", tr)
    expect("400.0 ms of work in 4 overlapping loads, 100.0 ms of wall time" in out, out)


# ---- hostile shapes: small traces that made lookups quadratic ----

def hostile_maps_spec(n, frames=6400):
    """n dlopens of distinct libraries over one address range, the newer half
    closed again (newest first), one stack of `frames` frames in that range,
    and loads from memory with that stack: every frame's module lookup and
    the loads' caller lookup meet every map."""
    s = head()
    s += call("cuInit", 1_010_000, 1000)
    for i in range(n):
        s += (f'modmap mod_event=dlopen mod_path="/opt/l/lib{i}.so" bias=0x400000 '
              "mod_start=0x400000 mod_end=0x800000\n")
    for i in range(n - 1, n // 2, -1):
        s += (f'modmap mod_event=dlclose mod_path="/opt/l/lib{i}.so" bias=0x400000 '
              "mod_start=0x400000 mod_end=0x800000\n")
    s += "stack stack_id=1 ips=" + ",".join(hex(0x400100 + 16 * f) for f in range(frames)) + "\n"
    t = 1_020_000
    for j in range(4):
        s += call("cuModuleLoadData", t, 2000, image_kind="fatbin", image_hash=hex(j + 1),
                  verdict="ptx_jit", jit_from="compute_80", target_cc=90, kernel=f"_Z2k{j}v",
                  cache="miss_stored", ptx_size=40000, stack_id=1)
        t += 3000
    s += call("cuLaunchKernel", t, 5, name="_Z2k1v", func="0x10001")
    return s + "end exit_status=0 end_reason=exit\n"


def closed_maps_spec(n):
    """n libraries opened and closed again over one address range, one that
    stays open, and then n/2 loads, each with a stack of its own: every
    frame's lookup for a call made after them meets every closed map."""
    s = head()
    s += call("cuInit", 1_010_000, 1000)
    s += ('modmap mod_event=dlopen mod_path="/opt/l/base.so" bias=0x400000 '
          "mod_start=0x400000 mod_end=0x800000\n")
    for i in range(n):
        for ev in ("dlopen", "dlclose"):
            s += (f'modmap mod_event={ev} mod_path="/opt/l/lib{i}.so" bias=0x400000 '
                  "mod_start=0x400000 mod_end=0x800000\n")
    for st in range(n // 2):
        s += (f"stack stack_id={st + 1} ips="
              + ",".join(hex(0x400100 + 16 * f + st) for f in range(64)) + "\n")
    t = 1_020_000
    for j in range(n // 2):
        s += call("cuModuleLoadData", t, 2000, image_kind="fatbin", image_hash=hex(j + 1),
                  verdict="ptx_jit", jit_from="compute_80", target_cc=90, kernel=f"_Z2k{j}v",
                  cache="miss_stored", ptx_size=40000, stack_id=j + 1)
        t += 3000
    s += call("cuLaunchKernel", t, 5, name="_Z2k1v", func="0x10001")
    return s + "end exit_status=0 end_reason=exit\n"


def hostile_lookups_spec(loads, lookups):
    """`loads` PTX loads from memory (each asks whether NVRTC made it) and
    `lookups` kernel lookups."""
    s = head()
    s += call("cuInit", 1_010_000, 1000)
    t = 1_020_000
    for i in range(loads):
        s += call("cuModuleLoadData", t, 20, image_kind="ptx", image_hash=hex(i + 1),
                  verdict="ptx_jit", jit_from="compute_80", target_cc=90, kernel=f"_Z2k{i}v",
                  cache="hit", ptx_size=400)
        t += 30
    for j in range(lookups):
        i = j % loads
        s += call("cuModuleGetFunction", t, 1, name=f"_Z2k{i}v", func=hex(0x10000 + i))
        t += 2
    return s + "end exit_status=0 end_reason=exit\n"


def run_limited(env, *args):
    """One run of the CLI, which must end within LIMIT_S."""
    argv = [env.cli] + [str(a) for a in args]
    e = dict(os.environ)
    e["NO_COLOR"] = "1"
    pr = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=e)
    try:
        _, err = pr.communicate(timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        pr.kill()
        pr.communicate()
        raise Failure(f"jitstall {' '.join(map(str, args))} ran past {LIMIT_S} s")
    expect(pr.returncode in (0, 1), f"jitstall {' '.join(map(str, args))}: exit "
           f"{pr.returncode}: {err[:300]}")


def growth(env, args_for, small, large):
    """The CPU time (user + system, which a shared machine disturbs far less
    than wall time) of args_for(large) over that of args_for(small), each the
    best of three, with 0.1 s as the floor (below it, noise rules)."""
    def best(a):
        ts = []
        for _ in range(3):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            run_limited(env, *a)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            ts.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        return min(ts)
    ts, tl = best(args_for(small)), best(args_for(large))
    return max(tl, 0.1) / max(ts, 0.1), ts, tl


def expect_n_log_n(env, traces, cmds, small, large, what):
    """Each command over traces[large] (four times traces[small]) takes at
    most 8 times as long: well under the 16 times a quadratic pass gives
    (doubling was too close to any bound between linear and quadratic: 2.2
    to 2.6 times under qemu). what: (small, large) as the figures say them."""
    for cmd in cmds:
        r, ts, tl = growth(env, lambda n: cmd + [traces[n]], small, large)
        name = " ".join(c for c in cmd if not c.startswith("/"))
        print(f"{name}: {what[0]} {ts:.2f} s, {what[1]} {tl:.2f} s CPU ({r:.1f}x)")
        expect(r <= 8, f"{name}: four times the input took {r:.1f}x the time "
               f"({ts:.2f} s -> {tl:.2f} s): worse than n log n")


@case
def test_overlapping_module_maps_linear(env):
    # 20,000 and 40,000 overlapping maps under a 6,400-frame stack: report
    # took 46 s and 507 s (a dlclose search for every matching map, and the
    # whole map scanned for every frame).
    traces = {n: env.trace(f"maps{n}", hostile_maps_spec(n)) for n in (10000, 40000)}
    expect_n_log_n(env, traces, (["report"], ["report", "--json"],
                                 ["check", "--max-jit-ms", "1e12"]),
                   10000, 40000, ("10,000 maps", "40,000 maps"))


@case
def test_closed_maps_linear(env):
    # Maps opened and closed before the calls whose stacks are symbolized:
    # the lookup for a call scanned every closed map over the address (2,000
    # and 8,000 maps: report --json 0.54 s and 9.6 s, 18 times for four
    # times the input).
    traces = {n: env.trace(f"closed{n}", closed_maps_spec(n)) for n in (2000, 8000)}
    expect_n_log_n(env, traces, (["report"], ["report", "--json"],
                                 ["check", "--max-jit-ms", "1e12"]),
                   2000, 8000, ("2,000 maps", "8,000 maps"))
    rc, out, err = env.run("report", "--json", traces[2000])
    objs = {f["object"] for m in json.loads(out)["processes"][0]["modules"] for f in m["stack"]}
    expect(objs == {"/opt/l/base.so"}, f"frames resolved to {objs}: only base.so is open")


@case
def test_many_lookups_of_many_loads_linear(env):
    # 20,000 loads and 100,000 kernel lookups: export --format otlp took
    # 10-20 s (every call scanned for every load). Four times the loads and
    # lookups measure 3.7-5.2 times natively and 3.1-3.7 under qemu.
    sizes = {1: (5000, 25000), 4: (20000, 100000)}
    traces = {k: env.trace(f"lk{k}", hostile_lookups_spec(*v)) for k, v in sizes.items()}
    expect_n_log_n(env, traces, (["export", "--format", "otlp", "-o", env.path("o.json")],
                                 ["report", "--json"]),
                   1, 4, ("5,000 loads + 25,000 lookups", "20,000 + 100,000"))

def many_compiles_spec(n):
    """n compiler children, each a culprit of its own (its own output), from
    100 call sites, half of them in Triton's compiler (whose compiles share
    its cache fix's saving); two of every three ptxas, the rest failed nvcc."""
    s = head() + stacks()
    for k in range(51, 101):
        s += (f"stack stack_id={k} ips={hex(0x401000 + 16 * k)} "
              'py_frame="make_cubin\x09/site/triton/backends/nvidia/compiler.py\x09300"\n')
    t = 1_010_000
    s += call("cuInit", t, 1000)
    t += 2000
    for i in range(n):
        ok = i % 3 != 2
        s += (f"compile tid=100 start={t}us dur=900us stack_id={1 + i % 100} "
              f"compiler={'ptxas' if ok else 'nvcc'} program=/usr/local/cuda/bin/ptxas "
              f"target=sm_90 input=/tmp/k{i}.ptx output=/tmp/k{i}.cubin child_pid={10000 + i} "
              f"wait_status={0 if ok else 0x300}\n")
        t += 1000
    s += call("cuLaunchKernel", t, 5, name="_Z2k1v", func="0x10001")
    s += "end exit_status=0 end_reason=exit\n"
    return s


@case
def test_many_compile_culprits_linear(env):
    # Compiles rank in Culprits with the loads: each needs its call site, its
    # fix, its share of a framework fix's saving and its group (the share
    # was found by a walk over the process's compiles for each compile: 5,000
    # and 20,000 Triton compiles took report 0.05 and 0.78 s).
    traces = {n: env.trace(f"cc{n}", many_compiles_spec(n)) for n in (5000, 20000)}
    expect_n_log_n(env, traces, (["report"], ["report", "--json"], ["report", "--markdown"]),
                   5000, 20000, ("5,000 compiles", "20,000 compiles"))
    rc, out, err = env.run("report", traces[20000])
    expect(rc == 0, f"report: exit {rc}: {err[:500]}")
    cul = out.split("Culprits, ranked by time lost")[1].split("\nFixes, ranked")[0]
    # one entry per call site and outcome: 100 sites, each with ptxas and nvcc
    heads = re.findall(r"\n  \d+\. \S+ ms  (\w+) .*\[(\d+) compiles, pid 100\]", cul)
    kinds = sorted({k for k, _ in heads})
    expect(len(heads) == 200 and kinds == ["nvcc", "ptxas"] and
           sum(int(n) for _, n in heads) == 20000, f"{len(heads)} entries, {kinds}")
    tri = cul.count("fix        keep Triton's kernel cache")
    expect(tri == 100, f"{tri} entries with Triton's cache fix, expected 100")


def long_compile_spec(n):
    """n first calls on thread 100 (a ptxas child, then a launch), while
    another thread holds an XLA compile range open to the end and runs one
    ptxas child that lasts the whole run: every first call overlaps them."""
    s = head()
    s += call("cuInit", 1_010_000, 1000)
    s += ('range range_op=push tid=200 start=1015000us name="XlaCompile:#module=jit_all#" '
          "depth=1\n")
    s += ("compile tid=300 start=1016000us dur=%dus compiler=ptxas program=/usr/local/cuda/bin/ptxas "
          "child_pid=4 wait_status=0\n" % (2000 * n + 10_000))
    t = 1_020_000
    for i in range(n):
        s += (f"compile tid=100 start={t}us dur=900us compiler=ptxas "
              f"program=/usr/local/cuda/bin/ptxas output=/tmp/k{i}.cubin child_pid={10 + i} "
              "wait_status=0\n")
        s += call("cuLaunchKernel", t + 1000, 5, name=f"_Z1k{i}v", func=hex(0x1000 + i))
        t += 2000
    return s + "end exit_status=0 end_reason=exit\n"


@case
def test_first_calls_beside_a_long_compile_linear(env):
    # A first call's blame takes the compiles other threads ran during it,
    # and a fix's saving is capped by the first calls its compiles ran in:
    # neither may walk every earlier compile (or window) for each one when a
    # compile on another thread spans the whole run. Exports name the first
    # call each compile was for: no scan of the first calls per compile
    # (10,000 and 40,000: chrome 0.4 and 5.0 s with one).
    traces = {n: env.trace(f"long{n}", long_compile_spec(n)) for n in (10000, 40000)}
    expect_n_log_n(env, traces, (["report", "--json"],
                                 ["export", "--format", "chrome", "-o", env.path("c.json")],
                                 ["export", "--format", "otlp", "-o", env.path("o.json")],
                                 ["check", "--max-compile-ms", "0"]), 10000, 40000,
                   ("10,000 first calls", "40,000 first calls"))
    rc, out, err = env.run("report", "--json", traces[10000])
    p = json.loads(out)["processes"][0]
    expect(len(p["first_calls"]) == 10000 and
           all(sum(b["dur_ns"] for b in f["blame"]) == f["dur_ns"] for f in p["first_calls"]),
           "blame sums")


def many_samples_spec(n):
    """n sampler records before one first launch, each a Python function of
    its own (the shape of a long Python start-up), and one function seen far
    more often than any other, after a compile so that the launch is a first
    call."""
    s = head()
    s += call("cuInit", 1_010_000, 1000)
    s += ("compile tid=100 start=1020000us dur=900us compiler=ptxas "
          "program=/usr/local/cuda/bin/ptxas child_pid=5 wait_status=0\n")
    t = 1_030_000
    rows = [f'sample tid=100 start={t + i}us dur=1us '
            f'py_frame="fn{i}\\x09/app/m{i % 97}.py\\x09{i}" '
            f"samples=1 sample_ns=1ms before_seq=7 period_ns=10ms window_ns={n + 500}ms\n"
            for i in range(n)]
    rows.insert(n // 2, f'sample tid=100 start={t + n}us dur=1us '
                'py_frame="hot\\x09/app/hot.py\\x0942" samples=50 sample_ns=500ms before_seq=7 '
                f"period_ns=10ms window_ns={n + 500}ms\n")
    s += "".join(rows)
    s += call("cuLaunchKernel", t + n + 10_000, 5, name="_Z1kv", func="0x1", seq=7)
    return s + "end exit_status=0 end_reason=exit\n"


@case
def test_many_samples_linear(env):
    # 20,000 / 80,000 / 160,000 sampled functions before one launch took
    # every command 0.48 / 11.1 / 46 s: each sample's function was looked for
    # in a list of those seen so far, grown one element at a time.
    traces = {n: env.trace(f"samp{n}", many_samples_spec(n)) for n in (10000, 40000)}
    expect_n_log_n(env, traces, (["report"], ["check", "--max-jit-ms", "1e12"],
                                 ["export", "--format", "chrome", "-o", env.path("c.json")],
                                 ["baseline", "-o", env.path("b.json")],
                                 ["diff", traces[10000]]),
                   10000, 40000, ("10,000 samples", "40,000 samples"))
    rc, out, err = env.run("report", "--json", traces[40000])
    fc = json.loads(out)["processes"][0]["first_calls"][0]
    top = fc["samples"][0] if fc.get("samples") else None
    expect(top and top["func"] == "hot" and top["line"] == 42 and len(fc["samples"]) == 10,
           f"the hot function first: {str(fc)[:600]}")


def fw_events_spec(n):
    """n first calls on one thread, each a Triton compile as Triton reports
    it (the whole compile and its eight stages, the cache missed, a stack)
    then its kernel's load and first launch; and n JAX backend compiles with
    no cache event before them (whose outcome is looked for)."""
    s = head() + stacks() + call("cuInit", 1_010_000, 1000)
    rows = []
    t = 2_000_000
    stages = ("cache_lookup", "trace", "lower", "lower", "lower", "backend", "backend",
              "cache_store")
    for i in range(n):
        rows.append(f'fw_event tid=100 start={t}us dur=900us framework=triton fw_stage=compile '
                    f'name="k{i}" fw_cache_outcome=miss stack_id={1 + i % 50}\n')
        for k, st in enumerate(stages):
            rows.append(f'fw_event tid=100 start={t + 100 * k}us dur=100us framework=triton '
                        f'fw_stage={st} name="k{i}" fw_cache_outcome=miss\n')
        rows.append(f'fw_event tid=100 start={t + 900}us dur=50us framework=jax '
                    f'fw_stage=backend name="jit_k{i}" fw_detail="/jax/core/compile/backend_compile_duration"\n')
        rows.append(load(i, t + 960, 10, jit=False))
        rows.append(call("cuLaunchKernel", t + 990, 5, name=f"_Z2k{i}v", func=hex(0x500000 + i)))
        t += 1000
    s += "".join(rows)
    return s + "end exit_status=0 end_reason=exit\n"


@case
def test_fw_events_linear(env):
    # Every compile asks for its framework's cache outcome and its fix, and
    # every backend compile for the cache event before it: once per process
    # and per thread, never a scan of every event.
    traces = {n: env.trace(f"fwe{n}", fw_events_spec(n)) for n in (2000, 8000)}
    expect_n_log_n(env, traces, (["report"], ["report", "--json"],
                                 ["check", "--max-jit-ms", "1e12"],
                                 ["export", "--format", "chrome", "-o", env.path("c.json")]),
                   2000, 8000, ("2,000 compiles", "8,000 compiles"))
    rc, out, err = env.run("report", "--json", traces[8000])
    p = json.loads(out)["processes"][0]
    fw = [c for c in p["compiles"] if c["compiler"] == "framework"]
    whole = [c for c in fw if c["framework"] == "triton" and c["stage"] is None]
    expect(len(fw) == 8000 * 10 and len(whole) == 8000,
           f"a row per event with a span: {len(fw)}, {len(whole)} whole compiles")
    expect(all(c["cache"] == "miss" and c["culprit"] for c in whole), "whole compiles: culprits")
    staged = [c for c in fw if c["framework"] == "triton" and c["stage"]]
    expect(not any(c["culprit"] for c in staged) and all(c["parent"] is not None for c in staged),
           "stages are in their compile's row")
    expect(len(p["first_calls"]) == 8000, f"a first call each: {len(p['first_calls'])}")


def graphs_spec(n):
    """n rounds on one thread, each a first call: a JIT load, a CUDA graph
    captured on a stream of its own and instantiated, then its kernel's
    first launch; and n more captures begun on streams never ended (a
    damaged trace), all before the first round."""
    s = head() + call("cuInit", 1_010_000, 1000)
    rows = [call("cuStreamBeginCapture", 1_020_000 + i, 0, handle=hex(0x100000 + i))
            for i in range(n)]
    t = 2_000_000
    for i in range(n):
        rows.append(load(i, t, 50))
        rows.append(call("cuStreamBeginCapture", t + 60, 1, handle=hex(i + 1)))
        rows.append(call("cuStreamEndCapture", t + 70, 20, handle=hex(i + 1),
                         graph=hex(0x900000 + i)))
        rows.append(call("cuGraphInstantiate", t + 100, 10, graph=hex(0x900000 + i),
                         handle=hex(0xa00000 + i)))
        rows.append(call("cuLaunchKernel", t + 200, 5, name=f"_Z2k{i}v", func=hex(0x500000 + i)))
        t += 1000
    s += "".join(rows)
    return s + "end exit_status=0 end_reason=exit\n"


@case
def test_graphs_linear(env):
    # A first call per capture, and captures never ended: each first call's
    # graphs are found by a search, not a scan of every capture, and the
    # captures open at once are bounded.
    traces = {n: env.trace(f"graphs{n}", graphs_spec(n)) for n in (2000, 8000)}
    expect_n_log_n(env, traces, (["report"], ["report", "--json"],
                                 ["check", "--max-graph-capture-ms", "1e12"]),
                   2000, 8000, ("2,000 rounds", "8,000 rounds"))
    rc, out, err = env.run("report", "--json", traces[8000])
    p = json.loads(out)["processes"][0]
    expect(p["graphs"]["count"] == 8000 and p["graphs"]["instantiated"] == 8000,
           f"8,000 graphs: {p['graphs']}")
    gc = [b for f in p["first_calls"] for b in f["blame"] if b["cause"] == "graph_capture"]
    expect(len(gc) == 8000 and all(b["graphs"] == 1 for b in gc),
           f"one graph in each first call: {len(gc)}")


def notes_spec(notes, with_launch=True):
    """A process whose notes are given as (count, bytes) pairs, each note its
    own block (as the writer writes a record larger than a block), then its
    first launch."""
    s = head() + call("cuInit", 1_010_000, 1000)
    for n, size in notes:
        s += f"repeat {n} note message*{size}=x level=1\n"
    if with_launch:
        s += call("cuLaunchKernel", 1_300_000, 5, name="_Z1kv", func="0x1")
    return s + "end exit_status=0 end_reason=exit\n"


@case
def test_memory_bomb_bounded(env):
    # 3,000 notes of 1 MB each compress to a 300 KB trace: report held 2.9 GB
    # and dump ran for 46 s (two minutes on a busy machine). Under a 200 MiB
    # address-space limit and 20 s each, the reader skips records over its
    # limits, stops decoding once the records pass 128 times the file's size
    # (plus 64 MiB), and says so.
    t = env.trace("bomb", notes_spec([(3000, 1_000_000)]))
    expect(os.path.getsize(t) < 1_000_000, f"the bomb is {os.path.getsize(t)} bytes")
    for args in (["report"], ["report", "--json"], ["dump"], ["dump", "--json"],
                 ["check", "--max-jit-ms", "1e9"]):
        rc, out, err = env.run(*args, t, limit_as=200, limit_s=20)
        name = " ".join(args)
        expect(rc in (0, 1), f"{name}: exit {rc}: {err[:500]}")
        expect("reading stopped at byte" in err
               and "more than 64 MiB plus 128 times the file's bytes" in err
               and "records over the reader's size limits skipped" in err
               and "the first: a note record of 1000018 bytes, over the limit of 64 KiB" in err,
               f"{name}: no warning that says what was left out: {err[:800]}")
        expect("out of memory" not in out + err, f"{name}: ran out of memory: {err[:500]}")
    rc, out, err = env.run("report", "--json", t, limit_as=200, limit_s=20)
    p = json.loads(out)["processes"][0]
    expect(p["damage"] and "reading stopped" in p["damage"] and not p["complete"],
           f"damage: {p['damage']}")


@case
def test_oversized_records_skipped(env):
    # Records over their type's limit are skipped and the rest is read: two
    # notes of 2 MB (blocks skipped undecoded) and five of 100 KB (decoded and
    # dropped) before the first launch; the launch and its time stay.
    t = env.trace("big", notes_spec([(2, 2_000_000), (5, 100_000)]))
    rc, out, err = env.run("report", "--json", t, limit_as=200, limit_s=20)
    expect(rc == 0, f"report: exit {rc}: {err[:500]}")
    p = json.loads(out)["processes"][0]
    expect(p["ttfk_ns"] == 300_000_000, f"ttfk {p['ttfk_ns']}: the launch after them was lost")
    expect("7 records over the reader's size limits skipped" in (p["damage"] or "") and
           "a block of 2000026 bytes, over the limit of 1024 KiB" in p["damage"],
           f"damage: {p['damage']}")
    rc, out, err = env.run("dump", t, limit_as=200, limit_s=20)
    expect(rc == 0 and "cuLaunchKernel" in out and "7 records over" in err,
           f"dump: exit {rc}: {err[:500]}")


@case
def test_decode_bound_spares_real_traces(env):
    # The most repetitive trace a real program writes (one kernel looked up
    # again and again, in 128 KiB zstd blocks as the preload writes them)
    # compresses about 28 times: it is read whole, without a warning.
    n = 500_000
    t = env.trace("lookups", lookups_spec(n), batch=True)
    rc, out, err = env.run("report", "--json", t)
    expect(rc == 0 and "warning" not in err, f"report: exit {rc}: {err[:500]}")
    p = json.loads(out)["processes"][0]
    expect(p["damage"] is None and p["complete"], f"damage: {p['damage']}")
    expect(p["ttfk_ns"] == (n + 10 + 30_000) * 1000, f"ttfk {p['ttfk_ns']}")


if __name__ == "__main__":
    sys.exit(clitest.main(sys.argv, Env))
