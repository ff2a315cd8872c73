#!/usr/bin/env python3
"""CLI tests of `jitstall diff`, `export`, `check` and `baseline`.

Every case builds exact traces with gen_trace (tests/cli/gen_trace.c, the real
trace writer) and asserts on the real stdout, stderr, exit status, JSON and
JUnit XML. ctest runs one case per test (tests/cli/CMakeLists.txt):

    python3 test_cli.py --list      names of the cases
    python3 test_cli.py CASE...     run cases (all when none is named)

Environment: JST_CLI (the jitstall binary), JST_GEN_TRACE (gen_trace), JST_DOCS
(docs/), and for the "preload" case JST_PRELOAD, JST_SIMDIR, JST_PROG_DIRECT,
JST_FIXTURES.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77
CASES = {}


def case(fn):
    CASES[fn.__name__[len("test_"):]] = fn
    return fn


class Failure(Exception):
    pass


def expect(cond, msg):
    if not cond:
        raise Failure(msg)


class Skip(Exception):
    pass


# ---- building traces ----

KERNEL = "_Z3addPfS_"          # add(float*, float*)
KERNEL2 = "_Z3mulPfS_"         # mul(float*, float*)


def q(s):
    """A quoted gen_trace value."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def process(pid=100, exe="/opt/app/bin/prog", args=("prog", "--query"), start_ms=1000):
    argv = " ".join("arg=" + q(a) for a in args)
    return (f"process pid={pid} ppid=1 exe={q(exe)} {argv} host=ci realtime=1700000000s "
            f"mono={start_ms}ms proc_start={start_ms}ms version=0.1.0\n"
            "device device=0 cc_major=9 cc_minor=0 dev_name=\"NVIDIA H200\"\n")


def call(api, start_ms, dur_ms, **kw):
    fields = " ".join(f"{k}={v}" for k, v in kw.items())
    return f"call call={api} start={start_ms}ms dur={dur_ms}ms result=0 {fields}\n"


def jit_load(start_ms, dur_ms, source="/opt/app/lib/libkern.so", h="0xabc", kernel=KERNEL,
             cache="miss_stored", api="cuLibraryLoadData", **kw):
    kw.setdefault("cache_reason", "none")
    return call(api, start_ms, dur_ms, image_kind="fatbin_wrapper", image_hash=h,
                source=q(source), verdict="ptx_jit", jit_from="compute_75", target_cc=90,
                kernel=kernel, reason=q("PTX compute_75 only; GPU is sm_90"), cache=cache,
                ptx_size=5000000, entry=q("ptx compute_75 zstd"), **kw)


def sass_load(start_ms, dur_ms, source="/opt/app/lib/libok.so", h="0xdef", kernel=KERNEL2,
              api="cuModuleLoadData", **kw):
    return call(api, start_ms, dur_ms, image_kind="fatbin", image_hash=h, source=q(source),
                verdict="sass", sass_arch="sm_90", target_cc=90, kernel=kernel, **kw)


def launch(start_ms, kernel=KERNEL, **kw):
    return call("cuLaunchKernel", start_ms, 0.01, name=kernel, func="0x30", **kw)


def end():
    return "end exit_status=0 end_reason=exit\n"


def run_spec(pid=100, jit_ms=11000.0, cache="miss_stored", fixed=False, h="0xabc",
             args=("prog", "--query"), exe="/opt/app/bin/prog", ctx_ms=120, extra_jit=None,
             source="/opt/app/lib/libkern.so", with_end=True, off=0):
    """One process: init, context, libkern.so (JIT unless fixed), libok.so (SASS),
    first launch. Starts at 1000 ms (+off); the first launch is at 1300 + load + 100 ms."""
    s = process(pid, exe, args, start_ms=1000 + off)
    s += call("cuInit", 1010 + off, 150)
    s += call("cuDevicePrimaryCtxRetain", 1170 + off, ctx_ms)
    t = 1300 + off
    if fixed:
        s += sass_load(t, 3, source=source, h=h, kernel=KERNEL, api="cuLibraryLoadData")
        t += 3
    else:
        s += jit_load(t, jit_ms, cache=cache, h=h, source=source)
        t += jit_ms
    for i, (src, ms) in enumerate(extra_jit or []):
        s += jit_load(t, ms, source=src, h=hex(0x1000 + i), kernel=f"_Z4k{i}xxPf")
        t += ms
    s += sass_load(t + 10, 2)
    s += launch(t + 100)
    if with_end:
        s += end()
    return s


class Env:
    def __init__(self):
        self.cli = os.environ.get("JST_CLI")
        self.gen = os.environ.get("JST_GEN_TRACE")
        if not self.cli or not self.gen:
            raise SystemExit("test_cli.py: JST_CLI and JST_GEN_TRACE must be set (run via ctest)")
        self.tmp = tempfile.mkdtemp(prefix="jst-cli-")

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def trace(self, name, spec, truncate=False, subdir=None):
        d = self.path(subdir) if subdir else self.tmp
        os.makedirs(d, exist_ok=True)
        out = os.path.join(d, name if name.endswith(".jst") else name + ".jst")
        argv = [self.gen] + (["--truncate"] if truncate else []) + [out]
        r = subprocess.run(argv, input=spec.encode(), capture_output=True)
        if r.returncode != 0:
            raise Failure(f"gen_trace failed: {r.stderr.decode(errors='replace')}\n{spec}")
        return out

    def run(self, *args, env=None):
        e = dict(os.environ)
        e.pop("NO_COLOR", None)
        if env:
            e.update(env)
        r = subprocess.run([self.cli] + [str(a) for a in args], capture_output=True, env=e,
                           timeout=60)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")

    def expect_rc(self, want, *args, **kw):
        rc, out, err = self.run(*args, **kw)
        expect(rc == want, f"jitstall {' '.join(map(str, args))}: exit {rc}, expected {want}\n"
               f"--- stdout\n{out}--- stderr\n{err}")
        return out, err


def fail_lines(out):
    return [l for l in out.splitlines() if l.startswith("FAIL ")]


# ---- check: budgets ----

@case
def test_max_jit_ms(env):
    t = env.trace("jit", run_spec())
    out, _ = env.expect_rc(0, "check", "--max-jit-ms", "12000", t)
    expect("jitstall check: OK: 1 process within budget (1 check)" in out, out)
    out, _ = env.expect_rc(1, "check", "--max-jit-ms", "500", t)
    lines = fail_lines(out)
    expect(len(lines) == 1, f"one regression line:\n{out}")
    l = lines[0]
    for want in ("prog[100] max-jit-ms:", "JIT took 11000.0 ms", "budget 500.0 ms",
                 "(+10500.0 ms)", "/opt/app/lib/libkern.so [add(float*, float*)]",
                 "ptx_jit from compute_75", "cache miss_stored", "call site",
                 "fix: ", "-gencode arch=compute_90,code=sm_90"):
        expect(want in l, f"{want!r} in {l!r}")
    expect("FAILED: 1 regression in 1 of 1 process" in out, out)
    # Fractional budgets are accepted; the boundary is "more than N".
    env.expect_rc(0, "check", "--max-jit-ms", "11000", t)
    env.expect_rc(1, "check", "--max-jit-ms", "10999.5", t)


@case
def test_max_ttfk_ms(env):
    t = env.trace("jit", run_spec(jit_ms=1000))  # ttfk = 300 + 1000 + 100 ms
    env.expect_rc(0, "check", "--max-ttfk-ms", "1400", t)
    out, _ = env.expect_rc(1, "check", "--max-ttfk-ms", "1000", t)
    l = fail_lines(out)
    expect(len(l) == 1 and "time to first kernel 1400.0 ms, budget 1000.0 ms (+400.0 ms)" in l[0]
           and "libkern.so" in l[0], out)
    # No JIT at all: the line says what the time went to instead.
    t2 = env.trace("fixed", run_spec(fixed=True, ctx_ms=900))
    out, _ = env.expect_rc(1, "check", "--max-ttfk-ms", "100", t2)
    expect("no JIT before it" in out, out)


@case
def test_max_ttfk_ms_no_launch(env):
    # Killed during a 20 s JIT: no launch, no END. Must not pass a 1 s budget.
    spec = process() + call("cuInit", 1010, 150) + jit_load(1300, 20000)
    t = env.trace("killed", spec, truncate=True)
    out, err = env.expect_rc(1, "check", "--max-ttfk-ms", "1000", t)
    expect("no kernel launched in the" in out and "libkern.so" in out, out)
    expect("partial trace" in err, f"partial warning on stderr: {err}")
    # A short trace without a launch is not measurable: warning, pass.
    spec = process() + call("cuInit", 1010, 150) + end()
    t = env.trace("nolaunch", spec)
    out, err = env.expect_rc(0, "check", "--max-ttfk-ms", "1000", t)
    expect("no kernel launched; max-ttfk-ms not measurable" in err, err)


@case
def test_max_jit_modules(env):
    t = env.trace("two", run_spec(extra_jit=[("/opt/app/lib/libmore.so", 500)]))
    env.expect_rc(0, "check", "--max-jit-modules", "2", t)
    out, _ = env.expect_rc(1, "check", "--max-jit-modules", "1", t)
    l = fail_lines(out)
    expect(len(l) == 1 and "2 modules JIT-compiled, budget 1 (+1)" in l[0], out)
    expect("worst module /opt/app/lib/libkern.so" in l[0], "the worst module is named: " + l[0])
    out, _ = env.expect_rc(1, "check", "--max-jit-modules", "0", t)
    env.expect_rc(2, "check", "--max-jit-modules", "1.5", t)


@case
def test_forbid_verdict(env):
    t = env.trace("jit", run_spec())
    env.expect_rc(0, "check", "--forbid-verdict", "no_compatible", t)
    out, _ = env.expect_rc(1, "check", "--forbid-verdict", "ptx_jit", t)
    l = fail_lines(out)
    expect(len(l) == 1, out)
    expect("forbid-verdict=ptx_jit: forbidden verdict ptx_jit (PTX compute_75 only; GPU is sm_90)"
           in l[0], l[0])
    # Repeatable: one line per module per forbidden verdict.
    out, _ = env.expect_rc(1, "check", "--forbid-verdict", "ptx_jit", "--forbid-verdict", "sass",
                           t)
    l = fail_lines(out)
    expect(len(l) == 2 and "forbid-verdict=sass" in l[1] and "libok.so" in l[1], out)
    # Names are validated.
    _, err = env.expect_rc(2, "check", "--forbid-verdict", "ptx", t)
    expect("unknown verdict 'ptx'" in err and "ptx_jit" in err, err)
    # A fixed build passes.
    env.expect_rc(0, "check", "--forbid-verdict", "ptx_jit", env.trace("fixed", run_spec(fixed=True)))


@case
def test_require_cache(env):
    warm = env.trace("warm", run_spec(jit_ms=30, cache="hit"))
    cold = env.trace("cold", run_spec(cache="miss_stored"))
    ro = env.trace("ro", run_spec(cache="miss_not_stored").replace(
        "cache_reason=none", "cache_reason=read_only"))
    env.expect_rc(0, "check", "--require-cache", "hit", warm)
    out, _ = env.expect_rc(1, "check", "--require-cache", "hit", cold)
    expect("require-cache=hit: cache miss_stored, required hit" in out, out)
    out, _ = env.expect_rc(1, "check", "--require-cache", "miss_stored", ro)
    expect("cache miss_not_stored, required miss_stored" in out and "(read_only)" in out, out)
    env.expect_rc(0, "check", "--require-cache", "miss_stored", cold)
    # A run without JIT has no cache question.
    env.expect_rc(0, "check", "--require-cache", "hit", env.trace("fx", run_spec(fixed=True)))
    _, err = env.expect_rc(2, "check", "--require-cache", "warm", warm)
    expect("--require-cache: 'warm' is not one of hit, miss_stored, unknown" in err, err)


@case
def test_all_budgets_one_run(env):
    t = env.trace("jit", run_spec())
    out, _ = env.expect_rc(1, "check", "--max-jit-ms", "500", "--max-ttfk-ms", "1000",
                           "--max-jit-modules", "0", "--forbid-verdict", "ptx_jit",
                           "--require-cache", "hit", t)
    names = [re.match(r"FAIL prog\[100\] (\S+):", l).group(1) for l in fail_lines(out)]
    expect(names == ["max-jit-ms", "max-ttfk-ms", "max-jit-modules", "forbid-verdict=ptx_jit",
                     "require-cache=hit"], f"one line per budget, in order: {names}")
    expect("5 regressions in 1 of 1 process" in out, out)


# ---- check: baselines ----

@case
def test_baseline_file(env):
    t = env.trace("jit", run_spec())
    b = env.path("base.json")
    _, err = env.expect_rc(0, "baseline", t, "-o", b)
    expect("wrote" in err, err)
    doc = json.load(open(b))
    expect(doc["format"] == "jitstall-baseline" and doc["version"] == 1, "format and version")
    p = doc["processes"][0]
    expect(p["exe"] == "prog" and p["pid"] == 100 and p["ttfk_ns"] == 11400000000
           and p["jit_ns"] == 11000000000 and re.fullmatch(r"0x[0-9a-f]{16}", p["argv_hash"]), p)
    m = p["modules"]
    expect(len(m) == 2, m)
    expect(m[0]["image_hash"] == "0x0000000000000abc" and m[0]["verdict"] == "ptx_jit"
           and m[0]["jit"] is True and m[0]["jit_ns"] == 11000000000
           and m[0]["cache"] == "miss_stored" and m[0]["source"] == "/opt/app/lib/libkern.so"
           and m[0]["kernels"] == [KERNEL], m[0])
    expect(m[1]["verdict"] == "sass" and m[1]["jit"] is False and m[1]["cache"] == "none", m[1])
    # Same run against itself: nothing to report.
    out, _ = env.expect_rc(0, "check", "--baseline", b, t)
    expect("OK: 1 process within budget (4 checks)" in out, out)
    # stdout when no -o.
    out, _ = env.expect_rc(0, "baseline", t)
    expect(json.loads(out) == doc, "baseline to stdout is the same document")


@case
def test_baseline_new_jit_module(env):
    good = env.trace("good", run_spec(fixed=True, h="0xabd"))
    bad = env.trace("bad", run_spec())
    b = env.path("base.json")
    env.expect_rc(0, "baseline", good, "-o", b)
    out, _ = env.expect_rc(1, "check", "--baseline", b, bad)
    l = fail_lines(out)
    new = [x for x in l if "baseline-new-jit" in x]
    expect(len(new) == 1, out)
    expect("new JIT'd module, JIT 11000.0 ms (baseline: sass)" in new[0]
           and "/opt/app/lib/libkern.so [add(float*, float*)]" in new[0]
           and "-gencode arch=compute_90,code=sm_90" in new[0], new[0])
    ttfk = [x for x in l if "baseline-ttfk" in x]
    expect(len(ttfk) == 1 and "time to first kernel 403.0 ms -> 11400.0 ms" in ttfk[0]
           and "tolerance 20%" in ttfk[0], out)
    # A module the baseline never loaded counts as new too.
    spec = run_spec(fixed=True, h="0xabd", extra_jit=[("/opt/app/lib/libnew.so", 50)])
    out, _ = env.expect_rc(1, "check", "--baseline", b, env.trace("extra", spec))
    expect("new JIT'd module, JIT 50.0 ms (baseline: not loaded); module /opt/app/lib/libnew.so"
           in out, out)


@case
def test_baseline_jit_time_tolerance(env):
    b = env.path("base.json")
    env.expect_rc(0, "baseline", env.trace("base", run_spec(jit_ms=1000)), "-o", b)
    slower = env.trace("slower", run_spec(jit_ms=1500))
    out, _ = env.expect_rc(1, "check", "--baseline", b, slower)
    l = [x for x in fail_lines(out) if "baseline-jit-time" in x]
    expect(len(l) == 1 and "JIT time 1000.0 ms -> 1500.0 ms (+500.0 ms, +50%, tolerance 20%)"
           in l[0] and "libkern.so" in l[0], out)
    env.expect_rc(0, "check", "--baseline", b, "--tolerance", "60", slower)
    env.expect_rc(0, "check", "--baseline", b, env.trace("within", run_spec(jit_ms=1150)))
    # Growth under --min-delta-ms is noise.
    env.expect_rc(0, "check", "--baseline", b, "--tolerance", "0", "--min-delta-ms", "600",
                  slower)
    env.expect_rc(2, "check", "--baseline", b, "--tolerance", "-5", slower)


@case
def test_baseline_cache_worse(env):
    b = env.path("base.json")
    env.expect_rc(0, "baseline", env.trace("warm", run_spec(jit_ms=30, cache="hit")), "-o", b)
    out, _ = env.expect_rc(1, "check", "--baseline", b, "--tolerance", "100000",
                           env.trace("cold", run_spec(jit_ms=30, cache="miss_stored")))
    l = [x for x in fail_lines(out) if "baseline-cache" in x]
    expect(len(l) == 1 and "cache outcome got worse: hit -> miss_stored" in l[0], out)


@case
def test_baseline_improvements(env):
    b = env.path("base.json")
    env.expect_rc(0, "baseline", env.trace("bad", run_spec()), "-o", b)
    out, _ = env.expect_rc(0, "check", "--baseline", b, env.trace("good", run_spec(fixed=True)))
    expect(not fail_lines(out), out)
    expect("improved prog[100] baseline-new-jit: module no longer JIT-compiled (ptx_jit -> sass)"
           in out, out)
    expect("improved prog[100] baseline-ttfk: time to first kernel 11400.0 ms -> 403.0 ms" in out,
           out)
    # Cold -> warm cache and a faster JIT are improvements as well.
    env.expect_rc(0, "baseline", env.trace("cold", run_spec(jit_ms=1000)), "-o", b)
    out, _ = env.expect_rc(0, "check", "--baseline", b,
                           env.trace("warm", run_spec(jit_ms=30, cache="hit")))
    expect("cache outcome miss_stored -> hit" in out and "JIT time 1000.0 ms -> 30.0 ms" in out,
           out)
    out, _ = env.expect_rc(0, "check", "-q", "--baseline", b,
                           env.trace("warm2", run_spec(jit_ms=30, cache="hit")))
    expect("improved" not in out, "--quiet hides improvements")


@case
def test_baseline_process_matching(env):
    # Two processes of one exe told apart by their arguments, in a directory;
    # the current run lists them in the other order, with other pids.
    d1 = "base"
    env.trace("a", run_spec(pid=10, args=("prog", "--shard", "1"), jit_ms=1000), subdir=d1)
    env.trace("b", run_spec(pid=11, args=("prog", "--shard", "2"), fixed=True), subdir=d1)
    b = env.path("base.json")
    env.expect_rc(0, "baseline", env.path(d1), "-o", b)
    d2 = "cur"
    env.trace("a", run_spec(pid=21, args=("prog", "--shard", "2"), fixed=True), subdir=d2)
    env.trace("b", run_spec(pid=20, args=("prog", "--shard", "1"), jit_ms=1000), subdir=d2)
    out, _ = env.expect_rc(0, "check", "--baseline", b, env.path(d2))
    expect("OK: 2 processes within budget" in out, out)
    # Shard 2 now JITs: only it regresses.
    env.trace("a", run_spec(pid=21, args=("prog", "--shard", "2")), subdir=d2)
    out, _ = env.expect_rc(1, "check", "--baseline", b, env.path(d2))
    expect(all(l.startswith("FAIL prog[21] ") for l in fail_lines(out)), out)
    # An exe the baseline does not know: warned about, budgets only.
    out, err = env.expect_rc(0, "check", "--baseline", b,
                             env.trace("other", run_spec(exe="/usr/bin/other", pid=30)))
    expect("other[30]: no matching process in the baseline" in err, err)
    expect("baseline process prog (pid 10) has no match in this run" in err, err)


@case
def test_baseline_unreadable(env):
    t = env.trace("jit", run_spec())
    bad = env.path("bad.json")
    for content, want in [
        ("not json at all", "not valid JSON (line 1"),
        ('{"format": "something-else", "version": 1, "processes": []}', "not a jitstall baseline"),
        ('{"format": "jitstall-baseline", "version": 99, "processes": []}',
         "baseline version 99 is newer than this jitstall reads (1)"),
        ('{"format": "jitstall-baseline", "version": 1, "processes": [{"exe": "prog"}]}',
         "processes[0]: argv_hash"),
        # Deep nesting is refused by the JSON library, not by a crash.
        ('{"format": "jitstall-baseline", "version": 1, "processes": [' + '[' * 100000
         + ']' * 100000 + ']}', "not valid JSON (line 1: maximum parsing depth reached"),
        ('{"format": "jitstall-baseline", "format": "jitstall-baseline", "version": 1, '
         '"processes": []}', "not valid JSON (line 1: duplicate object key"),
        ('{"format": "jitstall-baseline", "version": 1, "processes": [{"exe": "a\\u0000b"}]}',
         "not valid JSON (line 1: \\u0000 is not allowed"),
    ]:
        open(bad, "w").write(content)
        _, err = env.expect_rc(2, "check", "--baseline", bad, t)
        expect(err.startswith("jitstall check: --baseline " + bad + ": ") and want in err,
               f"{want!r} in {err!r}")
    _, err = env.expect_rc(2, "check", "--baseline", env.path("missing.json"), t)
    expect("cannot open" in err, err)


# ---- check: exit codes, garbage, partial traces ----

@case
def test_check_usage(env):
    t = env.trace("jit", run_spec())
    out, _ = env.expect_rc(0, "check", "--help")
    expect(out.startswith("usage: jitstall check"), out)
    _, err = env.expect_rc(2, "check")
    expect("no trace or directory given" in err, err)
    _, err = env.expect_rc(2, "check", t)
    expect("nothing to check" in err, err)
    _, err = env.expect_rc(2, "check", "--max-jit-ms", "abc", t)
    expect("--max-jit-ms: 'abc' is not a non-negative number" in err, err)
    _, err = env.expect_rc(2, "check", "--max-jit-ms", t)
    _, err = env.expect_rc(2, "check", "--bogus", t)
    expect("unknown option" in err and "--bogus" in err, err)
    _, err = env.expect_rc(2, "check", "--max-jit-ms", "5", env.path("nope.jst"))
    expect(env.path("nope.jst") in err, err)


@case
def test_options_after_operands(env):
    # Every command takes its options before or after the traces, as getopt
    # does; `--` ends the options (a trace named like an option).
    t = env.trace("jit", run_spec())
    d = os.path.dirname(t)
    for cmd, opt in (("report", "--json"), ("dump", "--json"), ("export", "--format=chrome"),
                     ("scan", "--arch=sm_90")):
        target = env.path("no-cuda-here") if cmd == "scan" else t
        if cmd == "scan":
            open(target, "w").write("plain text\n")
        a, _ = env.expect_rc(0, cmd, opt, target)
        b, _ = env.expect_rc(0, cmd, target, opt)
        expect(a == b, f"{cmd}: '{opt} TRACE' and 'TRACE {opt}' differ")
    out, _ = env.expect_rc(0, "report", d, "--markdown")
    expect(out.startswith("## jitstall report"), out[:200])
    out, _ = env.expect_rc(0, "report", "--", d)
    expect(out.startswith("jitstall report: 1 process"), out[:200])
    _, err = env.expect_rc(2, "report", "--", "--json")
    expect("--json: no such file or directory" in err, err)
    _, err = env.expect_rc(2, "dump", t, "--bogus")
    expect("unknown option '--bogus'" in err, err)


@case
def test_garbage_input(env):
    g = env.path("garbage.jst")
    open(g, "wb").write(os.urandom(300))
    h = env.path("header_only_bad.jst")
    open(h, "wb").write(b"JSTRACE\0" + b"\xff" * 100)
    empty = env.path("emptydir")
    os.makedirs(empty)
    for cmd in (["check", "--max-jit-ms", "1"], ["baseline"], ["export", "-o", env.path("x.json")]):
        for bad in (g, h, empty):
            rc, out, err = env.run(*cmd, bad)
            expect(rc == 2, f"{cmd} {bad}: exit {rc}, expected 2\n{out}{err}")
            lines = err.strip().splitlines()
            expect(len(lines) >= 1 and lines[0].startswith(f"jitstall {cmd[0]}: {bad}"),
                   f"one clear line naming the file: {err!r}")
    expect(not os.path.exists(env.path("x.json")), "no output file from failed export")
    # diff too, on either side.
    t = env.trace("ok", run_spec())
    env.expect_rc(2, "diff", g, t)
    env.expect_rc(2, "diff", t, g)
    # A directory with one garbage file among good traces: unreadable, exit 2.
    d = env.path("mixed")
    env.trace("good", run_spec(), subdir="mixed")
    shutil.copy(g, os.path.join(d, "zz.jst"))
    _, err = env.expect_rc(2, "check", "--max-jit-ms", "1", d)
    expect("zz.jst" in err, err)


@case
def test_partial_trace(env):
    t = env.trace("cut", run_spec(with_end=False), truncate=True)
    out, err = env.expect_rc(1, "check", "--max-jit-ms", "500", t)
    expect("partial trace" in err and "checked what it holds" in err, err)
    expect(len(fail_lines(out)) == 1 and "JIT took 11000.0 ms" in out, out)
    out, err = env.expect_rc(0, "check", "--max-jit-ms", "20000", t)
    expect("partial trace" in err, err)
    out, _ = env.expect_rc(0, "check", "--github", "--max-jit-ms", "20000", t)
    expect("::warning title=jitstall::" in out and "partial trace" in out, out)


def damage_block(path, index):
    """Flips one payload byte of block `index` of a version 2 trace; returns its offset."""
    b = bytearray(open(path, "rb").read())
    at, k = 32, 0
    while at + 28 <= len(b):
        expect(b[at:at + 4] == b"JBLK", f"block header at byte {at}")
        stored = int.from_bytes(b[at + 8:at + 12], "little")
        if k == index:
            b[at + 28 + stored // 2] ^= 0x20
            open(path, "wb").write(bytes(b))
            return at
        at, k = at + 28 + stored, k + 1
    raise Failure(f"no block {index}")


@case
def test_damaged_trace_same_rule(env):
    # One damaged block: every command reads the rest, warns once naming the
    # block and byte, and exits as for a whole trace (the rule of jitstall(1)).
    t = env.trace("hurt", run_spec())
    at = damage_block(t, 2)
    where = f"block 2 at byte {at}: checksum mismatch"
    for cmd, rc in ((["report"], 0), (["report", "--json"], 0), (["check", "--max-jit-ms", "20000"], 0),
                    (["check", "--max-jit-ms", "500"], 1), (["baseline", "-o", env.path("b.json")], 0),
                    (["export", "-o", env.path("x.json")], 0), (["dump"], 0), (["dump", "--json"], 0)):
        out, err = env.expect_rc(rc, *cmd, t)
        if cmd[0] == "report":  # the report itself says what is missing
            expect(where in out and "partial" in out, f"{cmd}: {where!r} in the report:\n{out}")
            continue
        lines = [l for l in err.splitlines() if "partial trace" in l]
        expect(len(lines) == 1 and where in lines[0], f"{cmd}: one warning with {where!r}: {err!r}")
    out, err = env.expect_rc(0, "diff", t, t)
    expect(where in err, f"diff: {err!r}")
    out, _ = env.expect_rc(0, "report", "--json", t)
    p = json.loads(out)["processes"][0]
    expect(where in (p["damage"] or "") and not p["complete"], f"JSON damage: {p['damage']!r}")
    expect(p["jit_ns"] == 11000000000, f"the JIT load after the damage is there: {p['jit_ns']}")


@case
def test_call_site(env):
    # A stack inside gen_trace itself (built with -g): the regression line must
    # carry the symbolized call site, main (gen_trace.c:N) in .../gen_trace.
    nm = subprocess.run(["nm", env.gen], capture_output=True, text=True)
    if nm.returncode != 0:
        raise Skip("nm not available")
    addr = None
    for line in nm.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == "main" and parts[1] in "Tt":
            addr = int(parts[0], 16)
    expect(addr is not None, "main in gen_trace's symbol table")
    bias = 0x555555554000
    size = os.path.getsize(env.gen)
    spec = run_spec().replace("call call=cuLibraryLoadData", "call call=cuLibraryLoadData stack_id=1")
    mod = (f"modmap mod_event=initial mod_path={q(env.gen)} bias={hex(bias)} "
           f"mod_start={hex(bias)} mod_end={hex(bias + size + 0x100000)}\n"
           f"stack stack_id=1 ips={hex(bias + addr + 8)}\n")
    spec = spec.replace("call call=cuInit", mod + "call call=cuInit", 1)
    t = env.trace("stack", spec)
    out, _ = env.expect_rc(1, "check", "--forbid-verdict", "ptx_jit", t)
    m = re.search(r"call site (main \((\S*/)?gen_trace\.c:\d+\) in \S*gen_trace);", out)
    expect(m, f"symbolized call site in: {out}")


# ---- check: JUnit and GitHub ----

def validate_junit(env, path):
    """Schema check with xmllint when present, and a structural check always."""
    data = open(path, "rb").read()
    root = ET.fromstring(data)  # well-formed
    if shutil.which("xmllint"):
        r = subprocess.run(["xmllint", "--noout", "--schema", os.path.join(HERE, "junit.xsd"),
                            path], capture_output=True, text=True)
        expect(r.returncode == 0, f"xmllint --schema junit.xsd: {r.stderr}")
    expect(root.tag == "testsuites", "root <testsuites>")
    suites = root.findall("testsuite")
    expect(len(suites) == 1 and suites[0].get("name") == "jitstall", "one testsuite jitstall")
    s = suites[0]
    cases = s.findall("testcase")
    expect(int(s.get("tests")) == len(cases), "tests= counts the testcases")
    nfail = sum(1 for c in cases if c.find("failure") is not None)
    expect(int(s.get("failures")) == nfail, "failures= counts failed testcases")
    expect(int(root.get("tests")) == len(cases) and int(root.get("failures")) == nfail,
           "testsuites totals")
    for c in cases:
        # Stable from run to run: no pid in the name, or CI history breaks.
        expect(re.fullmatch(r"jitstall\.[^.]+", c.get("classname") or ""),
               f"classname jitstall.<exe>: {c.get('classname')}")
        expect(c.get("name"), "testcase name")
        expect(re.fullmatch(r"\d+\.\d{3}", c.get("time") or ""), f"testcase time: {c.get('time')}")
        f = c.find("failure")
        if f is not None:
            expect(f.get("message") and f.get("type") in ("budget", "regression"), "failure attrs")
            expect((f.text or "").startswith(f.get("message").split(" (and ")[0][:40]),
                   "details start with the message")
    expect(re.fullmatch(r"\d+\.\d{3}", s.get("time") or ""), "testsuite time")
    return root


@case
def test_junit(env):
    d = "run"
    env.trace("a", run_spec(pid=100), subdir=d)
    env.trace("b", run_spec(pid=101, fixed=True, exe="/opt/app/bin/prog.v2"), subdir=d)
    j = env.path("junit.xml")
    out, _ = env.expect_rc(1, "check", "--max-jit-ms", "500", "--max-ttfk-ms", "60000",
                           "--forbid-verdict", "ptx_jit", "--forbid-verdict", "no_compatible",
                           "--junit", j, env.path(d))
    root = validate_junit(env, j)
    cases = root.findall("testsuite/testcase")
    expect(len(cases) == 2 * 4, f"one testcase per budget per process: {len(cases)}")
    by = {(c.get("classname"), c.get("name")): c for c in cases}
    expect(("jitstall.prog", "max-jit-ms") in by, sorted(by))
    expect(("jitstall.prog_v2", "forbid-verdict=no_compatible") in by,
           "dots in the exe name do not make packages")
    f = by[("jitstall.prog", "max-jit-ms")].find("failure")
    line = [l for l in fail_lines(out) if "max-jit-ms" in l][0][len("FAIL "):]
    expect(f is not None and f.get("message") == line, "the failure message is the line")
    expect(by[("jitstall.prog", "max-ttfk-ms")].find("failure") is None, "ttfk passed")
    expect(all(c.find("failure") is None for k, c in by.items() if k[0] == "jitstall.prog_v2"),
           "the fixed process passes everything")
    # Time is what the check measured: JIT 11000 ms, ttfk 1300+11000+100-1000 ms.
    expect(by[("jitstall.prog", "max-jit-ms")].get("time") == "11.000",
           by[("jitstall.prog", "max-jit-ms")].get("time"))
    expect(by[("jitstall.prog", "max-ttfk-ms")].get("time") == "11.400",
           by[("jitstall.prog", "max-ttfk-ms")].get("time"))
    expect(root.find("testsuite").get("failures") == "2", "2 failing testcases")
    # The same program twice (ranks): names by start order, not by pid, so a
    # rerun with other pids gives the same names.
    names = []
    for pids in ((300, 200), (7, 9)):
        d2 = f"ranks{pids[0]}"
        env.trace("r0", run_spec(pid=pids[0], off=0), subdir=d2)
        env.trace("r1", run_spec(pid=pids[1], off=50), subdir=d2)
        env.expect_rc(1, "check", "--max-jit-ms", "500", "--junit", j, env.path(d2))
        root = validate_junit(env, j)
        names.append(sorted((c.get("classname"), c.get("name"), c.find("failure").get("message")
                             .split("]")[0]) for c in root.findall("testsuite/testcase")))
    expect([n[:2] for n in names[0]] == [("jitstall.prog", "max-jit-ms"),
                                         ("jitstall.prog_2", "max-jit-ms")], names[0])
    expect([n[:2] for n in names[0]] == [n[:2] for n in names[1]], names)
    expect(names[0][0][2] == "prog[300" and names[1][0][2] == "prog[7", "first started is .prog")
    # Passing run: a valid document with no failures, exit 0.
    env.expect_rc(0, "check", "--max-jit-ms", "50000", "--junit", j, env.path(d))
    root = validate_junit(env, j)
    expect(root.find("testsuite").get("failures") == "0", "no failures")
    # Unwritable JUnit path: exit 2.
    _, err = env.expect_rc(2, "check", "--max-jit-ms", "1", "--junit",
                           env.path("no/such/dir/j.xml"), env.path(d))
    expect("--junit" in err, err)


@case
def test_junit_escaping(env):
    # Markup characters, quotes, a newline and invalid UTF-8 in the exe and the
    # library path must still give a valid document carrying the text.
    nasty_src = '/opt/a&b/<lib>\\"q\'\\x01\\xff\\xc3\\x28.so'
    spec = run_spec(exe="/opt/x&y<z>/p\"r'og", source="SRC").replace(q("SRC"), '"' + nasty_src + '"')
    t = env.trace("nasty", spec)
    j = env.path("j.xml")
    env.expect_rc(1, "check", "--forbid-verdict", "ptx_jit", "--junit", j, t)
    root = validate_junit(env, j)
    f = root.find(".//failure")
    expect(f is not None and "/opt/a&b/<lib>\"q'" in f.get("message"), f.get("message"))
    expect("\ufffd" in f.get("message"), "invalid bytes become U+FFFD")
    c = root.find(".//testcase")
    expect(c.get("classname") == "jitstall.p\"r'og", c.get("classname"))


@case
def test_github(env):
    t = env.trace("gh", run_spec(source="SRC").replace(q("SRC"), '"/opt/100%/lib\\nkern.so"'))
    out, _ = env.expect_rc(1, "check", "--github", "--max-jit-ms", "500", t)
    errs = [l for l in out.splitlines() if l.startswith("::error")]
    expect(len(errs) == 1, out)
    e = errs[0]
    expect(e.startswith("::error title=jitstall::prog[100] max-jit-ms: JIT took 11000.0 ms"), e)
    expect("/opt/100%25/lib%0Akern.so" in e, f"% and newline escaped: {e}")
    expect(not fail_lines(out), "annotations replace the plain lines")
    expect("jitstall check: FAILED: 1 regression" in out, out)


@case
def test_github_file_line(env):
    # A call site with DWARF (a stack inside gen_trace, built with -g): the
    # annotation carries file= and line=, relative to GITHUB_WORKSPACE when
    # the file lies inside it, so it lands on the source line.
    nm = subprocess.run(["nm", env.gen], capture_output=True, text=True)
    if nm.returncode != 0:
        raise Skip("nm not available")
    addr = [int(p[0], 16) for p in (l.split() for l in nm.stdout.splitlines())
            if len(p) == 3 and p[2] == "main" and p[1] in "Tt"]
    expect(addr, "main in gen_trace's symbol table")
    bias = 0x555555554000
    size = os.path.getsize(env.gen)
    spec = run_spec().replace("call call=cuLibraryLoadData", "call call=cuLibraryLoadData stack_id=1")
    mod = (f"modmap mod_event=initial mod_path={q(env.gen)} bias={hex(bias)} "
           f"mod_start={hex(bias)} mod_end={hex(bias + size + 0x100000)}\n"
           f"stack stack_id=1 ips={hex(bias + addr[0] + 8)}\n")
    t = env.trace("stack", spec.replace("call call=cuInit", mod + "call call=cuInit", 1))
    out, _ = env.expect_rc(1, "check", "--github", "--forbid-verdict", "ptx_jit", t)
    e = [l for l in out.splitlines() if l.startswith("::error")]
    expect(len(e) == 1, out)
    m = re.match(r"::error file=([^,]+),line=(\d+),title=jitstall::prog\[100\] ", e[0])
    expect(m and m.group(1).endswith("gen_trace.c") and int(m.group(2)) > 0, e[0])
    full = m.group(1)
    if full.startswith("/"):
        ws = os.path.dirname(os.path.dirname(full))
        out, _ = env.expect_rc(1, "check", "--github", "--forbid-verdict", "ptx_jit", t,
                               env={"GITHUB_WORKSPACE": ws + "/"})
        want = os.path.relpath(full, ws)
        expect(f"::error file={want},line={m.group(2)}," in out, f"relative to the workspace: {out}")
    # No call site known: no file= (as in test_github).
    out, _ = env.expect_rc(1, "check", "--github", "--forbid-verdict", "ptx_jit",
                           env.trace("nostack", run_spec()))
    expect("::error title=jitstall::" in out, out)


# ---- diff ----

@case
def test_diff_text(env):
    a = env.trace("before", run_spec())
    b = env.trace("after", run_spec(pid=200, fixed=True, h="0xabd",
                                   extra_jit=[("/opt/app/lib/libnew.so", 40)]))
    out, _ = env.expect_rc(0, "diff", a, b)
    lines = out.splitlines()
    expect(lines[0] == f"jitstall diff: A = {a}, B = {b}", lines[0])
    expect(lines[1] == "prog (pid 100 -> 200)", lines[1])
    expect(re.match(r"\s+time to first kernel\s+11400\.0 ms -> 443\.0 ms \(-10957\.0 ms, -96%\)$",
                    lines[2]), lines[2])
    expect(re.match(r"\s+JIT time\s+11000\.0 ms -> 40\.0 ms \(-10960\.0 ms, -100%\)$", lines[3]),
           lines[3])
    expect(any(re.match(r"\s+changed\s+/opt/app/lib/libkern.so \[add\(float\*, float\*\)\]: "
                        r"ptx_jit -> sass, JIT 11000\.0 ms -> 0\.0 ms", l) for l in lines), out)
    expect(any(re.match(r"\s+appeared\s+/opt/app/lib/libnew.so .*ptx_jit, JIT 40\.0 ms", l)
               for l in lines), out)
    expect(any(re.match(r"\s+same\s+/opt/app/lib/libok.so \[mul\(float\*, float\*\)\]: sass$", l)
               for l in lines), out)
    # The other way round the new module disappears.
    out, _ = env.expect_rc(0, "diff", b, a)
    expect(re.search(r"disappeared\s+/opt/app/lib/libnew.so", out), out)
    # Processes only on one side.
    c = env.trace("other", run_spec(pid=300, exe="/usr/bin/other"))
    d = env.path("both")
    os.makedirs(d)
    shutil.copy(a, d)
    shutil.copy(c, d)
    out, _ = env.expect_rc(0, "diff", d, b)
    expect("other (pid 300): only in A" in out, out)


@case
def test_diff_json(env):
    a = env.trace("before", run_spec(cache="miss_stored", jit_ms=1000))
    b = env.trace("after", run_spec(pid=200, cache="hit", jit_ms=30))
    out, _ = env.expect_rc(0, "diff", "--json", a, b)
    doc = json.loads(out)
    expect(doc["a"] == a and doc["b"] == b, "paths")
    (p,) = doc["processes"]
    expect(p["status"] == "matched" and p["pid_a"] == 100 and p["pid_b"] == 200, p)
    expect(p["ttfk_a_ns"] == 1400000000 and p["ttfk_b_ns"] == 430000000
           and p["ttfk_delta_ns"] == -970000000, p)
    expect(p["jit_a_ns"] == 1000000000 and p["jit_b_ns"] == 30000000
           and p["jit_delta_ns"] == -970000000, p)
    m = {x["source"]: x for x in p["modules"]}
    k = m["/opt/app/lib/libkern.so"]
    expect(k["status"] == "same" and k["verdict_a"] == k["verdict_b"] == "ptx_jit"
           and k["cache_a"] == "miss_stored" and k["cache_b"] == "hit"
           and k["jit_a_ns"] == 1000000000 and k["jit_b_ns"] == 30000000
           and k["image_hash_a"] == "0x0000000000000abc" and k["kernels"] == [KERNEL], k)
    # A baseline file as A.
    base = env.path("base.json")
    env.expect_rc(0, "baseline", a, "-o", base)
    out2, _ = env.expect_rc(0, "diff", "--json", base, b)
    doc2 = json.loads(out2)
    expect(doc2["processes"][0]["modules"] == p["modules"], "baseline as A gives the same modules")
    _, err = env.expect_rc(2, "diff", a)
    expect("needs exactly two runs" in err, err)
    _, err = env.expect_rc(2, "diff", a, base)
    expect("B must be traces" in err, err)


# ---- export ----

@case
def test_export_chrome(env):
    spec = run_spec()
    # A second thread launching a second kernel, and CUPTI records.
    spec = spec.replace("end exit_status", call("cuLaunchKernel", 12500, 0.01, name=KERNEL2,
                                                func="0x31", tid=4242) + "end exit_status")
    spec = spec.replace("end exit_status",
                        "cupti cupti_op=compile cupti_start=1301ms cupti_end=12200ms load_seq=3\n"
                        "cupti cupti_op=cache_store cupti_start=12200ms cupti_end=12290ms "
                        "load_seq=3 cupti_cache_path=/root/.nv/ComputeCache\n"
                        "end exit_status")
    t = env.trace("jit", spec)
    t2 = env.trace("second", run_spec(pid=555, off=500))
    o = env.path("out.json")
    _, err = env.expect_rc(0, "export", "--format", "chrome", "-o", o, t, t2)
    expect("wrote" in err and "ui.perfetto.dev" in err, err)
    # Times are microseconds with exactly three decimals, never binary
    # fraction noise such as 7625.2399999999998.
    raw = open(o).read()
    nums = re.findall(r'"(?:ts|dur)":(-?[0-9.eE+-]+)', raw)
    bad = [n for n in nums if not re.fullmatch(r"-?\d+\.\d{3}", n)]
    expect(nums and not bad, f"ts/dur not printed with 3 decimals: {bad[:5]}")
    doc = json.load(open(o))
    expect(doc.get("displayTimeUnit") == "ms", "displayTimeUnit ms")
    ev = doc["traceEvents"]
    xs = [e for e in ev if e["ph"] == "X" and e.get("cat") != "cupti"]
    p100 = [e for e in xs if e["pid"] == 100]
    expect([e["name"] for e in p100] == ["cuInit", "cuDevicePrimaryCtxRetain", "cuLibraryLoadData",
                                         "cuModuleLoadData", "cuLaunchKernel", "cuLaunchKernel"],
           f"one X event per call of pid 100: {[e['name'] for e in p100]}")
    init = [e for e in p100 if e["name"] == "cuInit"][0]
    expect(abs(init["ts"] - 10000) < 1e-6 and abs(init["dur"] - 150000) < 1e-6,
           f"ts/dur in microseconds from the earliest process start: {init}")
    jit = [e for e in p100 if e["name"] == "cuLibraryLoadData"][0]
    a = jit["args"]
    expect(jit["cat"] == "jit" and a["verdict"] == "ptx_jit" and a["jit_from"] == "compute_75"
           and a["kernels"] == ["add(float*, float*)"] and a["cache"] == "miss_stored"
           and a["source"] == "/opt/app/lib/libkern.so" and a["result"] == 0, a)
    meta = [e for e in ev if e["ph"] == "M"]
    pn = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    expect(pn == {100: "prog (pid 100)", 555: "prog (pid 555)"}, pn)
    tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    expect(tn.get((100, 100)) == "main thread 100" and tn.get((100, 4242)) == "thread 4242"
           and tn.get((100, 0)) == "CUPTI JIT activity", tn)
    inst = [e for e in ev if e["ph"] == "i"]
    fl = [e for e in inst if e["name"].startswith("first launch: ") and e["pid"] == 100]
    expect(sorted(e["name"] for e in fl) == ["first launch: add(float*, float*)",
                                            "first launch: mul(float*, float*)"], fl)
    expect(all(e["s"] in ("t", "p") for e in inst), "instant scopes")
    fk = [e for e in inst if e["name"].startswith("first kernel: add(float*, float*)")
          and e["pid"] == 100]
    expect(len(fk) == 1 and fk[0]["s"] == "p" and "11400.0 ms" in fk[0]["name"], fk)
    launch100 = [e for e in fl if e["name"].endswith("add(float*, float*)")][0]
    expect(launch100["tid"] == 100 and abs(launch100["ts"] - 11400000) < 1e-3, launch100)
    cu = [e for e in ev if e.get("cat") == "cupti"]
    expect(len(cu) == 2 and cu[0]["name"] == "CUPTI JIT compile" and cu[0]["tid"] == 0
           and abs(cu[0]["dur"] - 10899000) < 1e-3, cu)
    # The second process starts 500 ms later on the shared clock.
    p555 = [e for e in xs if e["pid"] == 555 and e["name"] == "cuInit"][0]
    expect(abs(p555["ts"] - 510000) < 1e-3, p555)
    # stdout, unknown format.
    out, _ = env.expect_rc(0, "export", t)
    expect(json.loads(out)["traceEvents"], "export to stdout")
    _, err = env.expect_rc(2, "export", "--format", "pprof", "-o", o, t)
    expect("unknown format 'pprof'" in err, err)


@case
def test_export_first_launch_once(env):
    # Three launches of add (one from another thread) and two of mul: one
    # "first launch" marker per function, not one per launch.
    spec = run_spec().replace(
        "end exit_status",
        launch(12500) + launch(12600, tid=4242) +
        call("cuLaunchKernel", 12700, 0.01, name=KERNEL2, func="0x31") +
        call("cuLaunchKernel", 12800, 0.01, name=KERNEL2, func="0x31") + "end exit_status")
    t = env.trace("many", spec)
    out, _ = env.expect_rc(0, "export", t)
    ev = json.loads(out)["traceEvents"]
    xs = [e for e in ev if e["ph"] == "X" and e["name"] == "cuLaunchKernel"]
    expect(len(xs) == 5, f"one X event per launch: {len(xs)}")
    fl = sorted((e["name"], e["ts"]) for e in ev
                if e["ph"] == "i" and e["name"].startswith("first launch: "))
    expect(fl == [("first launch: add(float*, float*)", 11400000.0),
                  ("first launch: mul(float*, float*)", 11700000.0)], fl)
    fk = [e for e in ev if e["ph"] == "i" and e["name"].startswith("first kernel: ")]
    expect(len(fk) == 1 and fk[0]["ts"] == 11400000.0, fk)


@case
def test_unknown_enum_values(env):
    # A newer preload may record verdicts and cache outcomes this jitstall has
    # no name for: the report JSON keeps "cache" a string, and a baseline
    # written from such a trace can be read back by check.
    spec = run_spec().replace("end exit_status",
                              call("cuModuleLoadData", 11450, 2, verdict=77, image_hash="0x77",
                                   source=q("/opt/app/lib/libnew.so")) + "end exit_status")
    spec = spec.replace("cache=miss_stored", "cache=99")
    t = env.trace("newer", spec)
    out, _ = env.expect_rc(0, "report", "--json", t)
    mods = json.loads(out)["processes"][0]["modules"]
    by_src = {m["source"]: m for m in mods}
    expect(by_src["/opt/app/lib/libkern.so"]["cache"] == "unknown", by_src)
    expect(by_src["/opt/app/lib/libnew.so"]["verdict"] == "none", by_src)
    bl = env.path("newer.json")
    env.expect_rc(0, "baseline", "-o", bl, t)
    doc = json.load(open(bl))
    bm = {m["source"]: m for m in doc["processes"][0]["modules"]}
    expect(bm["/opt/app/lib/libkern.so"]["cache"] == "unknown"
           and bm["/opt/app/lib/libnew.so"]["verdict"] == "none", bm)
    out, err = env.expect_rc(0, "check", "--baseline", bl, t)
    expect("(null)" not in out + err, out + err)


@case
def test_check_long_exe_name(env):
    # An executable name longer than a whole FAIL line (the trace says what
    # it likes) used to overflow the line buffer; the line is cut instead.
    exe = "/opt/" + "a" * 5000
    t = env.trace("longexe", run_spec(exe=exe))
    out, err = env.expect_rc(1, "check", "--max-jit-ms", "1", t)
    lines = fail_lines(out)
    expect(len(lines) == 1 and lines[0].startswith("FAIL " + "a" * 100), out[:300])
    expect("Sanitizer" not in err and "stack smashing" not in err, err[-2000:])


# ---- NVTX ranges: queries ----

def queries_spec(q_end_ms=12350):
    """run_spec's process (JIT 1300-12300 ms on thread 100) with ranges: thread 2
    "other" 1200-5300 (4000 ms of the JIT inside); thread 1 "q" 1250-12350 with a
    nested push and a start/end inside; thread 2 "q" again; thread 1 "tail" never
    ended; thread 4 "x" with a pop of the default domain while a domain push is
    open; thread 5 "s" started, ended by thread 6; the trace ends at 13000 ms."""
    r = ("range range_op=push tid=2 start=1200ms name=other depth=1\n"
         "range range_op=push tid=1 start=1250ms name=q depth=1\n"
         "range range_op=push tid=1 start=1260ms name=inner depth=2\n"
         "range range_op=start tid=1 start=1270ms name=bg range_id=7\n"
         "range range_op=end tid=3 start=1280ms range_id=7\n"
         "range range_op=pop tid=1 start=1290ms depth=2\n"
         "range range_op=pop tid=2 start=5300ms depth=1\n"
         f"range range_op=pop tid=1 start={q_end_ms}ms depth=1\n"
         "range range_op=push tid=1 start=12500ms name=tail depth=1\n"
         "range range_op=push tid=2 start=12600ms name=q domain=d depth=1\n"
         "range range_op=pop tid=2 start=12700ms domain=d depth=1\n"
         "range range_op=push tid=4 start=12800ms name=x depth=1\n"
         "range range_op=push tid=4 start=12810ms name=y domain=d depth=1\n"
         "range range_op=pop tid=4 start=12820ms depth=1\n"
         "range range_op=start tid=5 start=12850ms name=s range_id=9\n"
         "range range_op=pop tid=4 start=12900ms domain=d depth=1\n"
         "range range_op=end tid=6 start=12950ms range_id=9\n")
    return run_spec(with_end=False) + r + "end exit_status=0 end_reason=exit start=13000ms\n"


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
def test_check_max_query_ms(env):
    t = env.trace("queries", queries_spec())
    out, _ = env.expect_rc(1, "check", "--max-query-ms", "q=11000", "--max-query-ms",
                           "q#2=1000", t)
    lines = fail_lines(out)
    expect(len(lines) == 1 and "max-query-ms=q: query 'q' took 11100.0 ms, budget 11000.0 ms"
           in lines[0] and "libkern.so" in lines[0], out)
    env.expect_rc(0, "check", "--max-query-ms", "q=11100", t)
    out, err = env.expect_rc(2, "check", "--max-query-ms", "q", t)
    expect("'q' is not NAME=MS" in err, err)


@case
def test_baseline_queries(env):
    base = env.path("base.json")
    env.expect_rc(0, "baseline", env.trace("queries", queries_spec()), "-o", base)
    doc = json.load(open(base))
    got = [(q["name"], q["dur_ns"] // 10**6, q["jit_ns"] // 10**6) for q in doc["processes"][0]["queries"]]
    expect(got[:2] == [("other", 4100, 4000), ("q", 11100, 11000)] and len(got) == 6, got)
    # q 3000 ms slower: a regression; the same run: none.
    slow = env.trace("slow", queries_spec(q_end_ms=12350 + 3000))
    out, _ = env.expect_rc(1, "check", "--baseline", base, slow)
    lines = fail_lines(out)
    expect(len(lines) == 1 and "baseline-query: query 'q' took 11100.0 ms -> 14100.0 ms" in lines[0],
           out)
    env.expect_rc(0, "check", "--baseline", base, env.trace("same", queries_spec()))
    # A baseline without queries (made before NVTX ranges) checks as before.
    del doc["processes"][0]["queries"]
    json.dump(doc, open(base, "w"))
    env.expect_rc(0, "check", "--baseline", base, slow)
    doc["processes"][0]["queries"] = [{"name": "q"}]
    json.dump(doc, open(base, "w"))
    _, err = env.expect_rc(2, "check", "--baseline", base, slow)
    expect("queries[0]: needs a name" in err, err)


# ---- docs match --help ----

@case
def test_help_matches_man(env):
    docs = os.environ.get("JST_DOCS", os.path.join(HERE, "..", "..", "docs"))
    readme = open(os.path.join(docs, "..", "README.md")).read()
    usage_block = readme[readme.index("## Usage"):]
    for cmd in re.findall(r"^  (\w+) ", env.run("--help")[1], re.M):
        # README's Usage lists every command with its exact usage line(s).
        out, _ = env.expect_rc(0, cmd, "--help")
        usage = " ".join(out.split("\n\n")[0].split()).replace("usage: ", "", 1)
        expect(usage in usage_block, f"README.md's Usage lacks the usage of {cmd}: {usage!r}")
    for cmd in ("diff", "export", "check", "baseline", "dump", "scan", "run", "report", "warm"):
        out, _ = env.expect_rc(0, cmd, "--help")
        page = os.path.join(docs, f"jitstall-{cmd}.1.md")
        expect(os.path.exists(page), f"{page} exists")
        text = open(page).read()
        m = re.search(r"^## OPTIONS\n(.*?)(?=^## )", text, re.S | re.M)
        expect(m, f"{page} has an OPTIONS section")
        usage = out.split("\n\n")[0]  # the usage line(s)
        optlines = "\n".join(l for l in out.splitlines() if re.match(r"\s+(-\w, )?--", l))
        opts = set(re.findall(r"--[a-z][a-z-]+", usage + "\n" + optlines))
        documented = set(re.findall(r"--[a-z][a-z-]+", m.group(1)))
        expect(opts <= documented, f"{cmd}: options in --help missing from {page}: "
               f"{sorted(opts - documented)}")
        expect(documented <= opts, f"{cmd}: options in {page} missing from --help: "
               f"{sorted(documented - opts)}")
        expect(out.splitlines()[0] in text, f"{page} has the usage line {out.splitlines()[0]!r}")
    top = open(os.path.join(docs, "jitstall.1.md")).read()
    readme = open(os.path.join(docs, "..", "README.md")).read()
    for var in ("JITSTALL_DIR", "JITSTALL_REAL_LIBCUDA", "JITSTALL_DISABLE", "JITSTALL_DEBUG",
                "JITSTALL_STACK_DEPTH", "JITSTALL_CUPTI", "JITSTALL_BUDGET_MS",
                "JITSTALL_FAIL_EXIT_CODE", "JITSTALL_CUPTI_PATH", "JITSTALL_DEBUG_DIR",
                "JITSTALL_PROGRESS_MS"):
        expect(f"`{var}`" in top, f"jitstall.1.md documents {var}")
        expect(f"`{var}" in readme, f"README.md lists {var}")
    out, _ = env.expect_rc(0, "--help")
    for cmd in re.findall(r"^  (\w+) ", out, re.M):
        expect(f"jitstall {cmd}" in top or f"jitstall-{cmd}" in top,
               f"jitstall.1.md mentions the {cmd} command")


# ---- the real preload on the simulated driver ----

@case
def test_preload(env):
    need = ("JST_PRELOAD", "JST_SIMDIR", "JST_PROG_DIRECT", "JST_FIXTURES")
    if not all(os.environ.get(v) for v in need) or \
            not all(os.path.exists(os.environ[v]) for v in need):
        raise Skip("libjitstall.so, the simulated driver or prog_direct is not built")
    fix = os.environ["JST_FIXTURES"]

    def traced(name, *images):
        d = env.path(name)
        os.makedirs(d)
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("CUDA_") and not k.startswith("JITSTALL_")}
        e.update(LD_LIBRARY_PATH=os.environ["JST_SIMDIR"], LD_PRELOAD=os.environ["JST_PRELOAD"],
                 JITSTALL_DIR=d, CUDA_CACHE_PATH=env.path("cache"),
                 JITSTALL_SIM_JIT_US_PER_KB="5000")
        r = subprocess.run([os.environ["JST_PROG_DIRECT"], fix, "0", "module", *images],
                           capture_output=True, env=e, timeout=60)
        expect(r.returncode == 0, f"prog_direct exited {r.returncode}: {r.stderr!r}")
        return d

    cold = traced("cold", "ptx75.fatbin", "sm90.fatbin")
    out, _ = env.expect_rc(1, "check", "--forbid-verdict", "ptx_jit", cold)
    l = fail_lines(out)
    expect(len(l) == 1 and "forbidden verdict ptx_jit" in l[0] and "compute_75" in l[0]
           and "call site" in l[0] and "fix: " in l[0], out)
    b = env.path("base.json")
    env.expect_rc(0, "baseline", cold, "-o", b)
    warm = traced("warm", "ptx75.fatbin", "sm90.fatbin")
    out, _ = env.expect_rc(0, "check", "--baseline", b, warm)
    expect("cache outcome miss_stored -> hit" in out, out)
    env.expect_rc(0, "check", "--require-cache", "hit", warm)
    fixed = traced("fixed", "sm90.fatbin")
    env.expect_rc(0, "check", "--forbid-verdict", "ptx_jit", "--max-jit-modules", "0", fixed)
    o = env.path("t.json")
    env.expect_rc(0, "export", "-o", o, cold)
    ev = json.load(open(o))["traceEvents"]
    expect(any(e["ph"] == "X" and e.get("args", {}).get("verdict") == "ptx_jit" for e in ev),
           "the JIT load is in the timeline")
    expect(any(e["ph"] == "i" and e["name"].startswith("first launch: ") for e in ev),
           "first-launch marker")
    out, _ = env.expect_rc(0, "diff", cold, fixed)
    expect("disappeared" in out or "changed" in out, out)


@case
def test_pytest_plugin(env):
    # examples/pytest/conftest.py on a suite whose test runs a program on the
    # simulated driver: the session must fail on the JIT budget, pass within it.
    need = ("JST_PRELOAD", "JST_SIMDIR", "JST_PROG_DIRECT", "JST_FIXTURES")
    if not all(os.environ.get(v) and os.path.exists(os.environ[v]) for v in need):
        raise Skip("libjitstall.so, the simulated driver or prog_direct is not built")
    # The interpreter CMake found with pytest in it (tests/cli/CMakeLists.txt);
    # none is a failure, not a skip: tests/run.sh installs python3-pytest.
    py = os.environ.get("JST_PYTEST_PYTHON")
    expect(py, "no python3 with pytest and venv was found at configure time "
               "(apt-get install python3-pytest python3-venv)")
    # The plugin is installed as a package into a fresh venv, as a user would,
    # and the suite lives in a subdirectory, so its options come from the
    # pytest11 entry point, not from a conftest.py.
    venv = env.path("venv")
    r = subprocess.run([py, "-m", "venv", "--system-site-packages", venv],
                       capture_output=True, text=True)
    expect(r.returncode == 0, f"venv: {r.stderr}")
    vpy = os.path.join(venv, "bin", "python")
    # From a copy: setuptools leaves build/ and *.egg-info beside the sources.
    pkg = env.path("pkg")
    shutil.copytree(os.path.join(HERE, "..", "..", "examples", "pytest"), pkg)
    r = subprocess.run([vpy, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                        "--no-build-isolation", pkg],
                       capture_output=True, text=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    expect(r.returncode == 0, f"pip install examples/pytest: {r.stdout}{r.stderr}")
    root = env.path("suite")
    suite = os.path.join(root, "gpu")
    os.makedirs(suite)
    open(os.path.join(suite, "test_gpu.py"), "w").write(
        "import os, subprocess\n"
        "def test_first_query():\n"
        "    r = subprocess.run([os.environ['PROG'], os.environ['FIX'], '0', 'module',\n"
        "                        *os.environ['IMAGES'].split()], capture_output=True)\n"
        "    assert r.returncode == int(os.environ.get('WANT', '0')), r.stderr\n")

    runs = []

    def pytest_run(images, *args, want="0", extra_env=None):
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("CUDA_") and not k.startswith("JITSTALL_")}
        e.update(JITSTALL=env.cli, JITSTALL_PRELOAD=os.environ["JST_PRELOAD"],
                 LD_LIBRARY_PATH=os.environ["JST_SIMDIR"], PROG=os.environ["JST_PROG_DIRECT"],
                 FIX=os.environ["JST_FIXTURES"], IMAGES=images, WANT=want,
                 CUDA_CACHE_PATH=env.path("cache"), JITSTALL_SIM_JIT_US_PER_KB="5000")
        e.update(extra_env or {})
        if "LD_PRELOAD" not in e and any(a.startswith("--jitstall-max") for a in args):
            # A fresh trace directory per session, inside the test's own tmp.
            runs.append(env.path(f"traces{len(runs)}"))
            args = args + ("--jitstall-dir", runs[-1])
        r = subprocess.run([vpy, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                            *args, "gpu/"], capture_output=True, text=True, env=e, timeout=120,
                           cwd=root)
        return r.returncode, r.stdout + r.stderr

    rc, out = pytest_run("ptx75.fatbin sm90.fatbin", "--jitstall-max-jit-ms", "1")
    expect(rc == 1, f"over budget: exit {rc}\n{out}")
    expect("1 passed" in out and re.search(r"FAIL prog_direct\[\d+\] max-jit-ms: JIT took", out)
           and "Exit: jitstall: session run under libjitstall.so: PTX JIT over the 1 ms budget"
           in out, out)
    j = env.path("pytest-junit.xml")
    rc, out = pytest_run("ptx75.fatbin sm90.fatbin", "--jitstall-max-jit-ms", "60000",
                         "--jitstall-junit", j)
    expect(rc == 0 and "within the 60000 ms JIT budget" in out, f"exit {rc}\n{out}")
    validate_junit(env, j)
    rc, out = pytest_run("ptx75.fatbin", "--jitstall-max-jit-ms", "60000",
                         "--jitstall-check-args", "--forbid-verdict ptx_jit")
    expect(rc == 1 and "forbid-verdict=ptx_jit" in out, f"exit {rc}\n{out}")
    rc, out = pytest_run("sm90.fatbin", "--jitstall-max-jit-ms", "0")
    expect(rc == 0, f"SASS only, budget 0: exit {rc}\n{out}")
    # A failing test keeps its own status.
    rc, out = pytest_run("sm90.fatbin", "--jitstall-max-jit-ms", "0", want="9")
    expect(rc == 1 and "1 failed" in out and "tests failed" in out, f"exit {rc}\n{out}")
    # Already under the preload: checked at session end, not re-run.
    d = env.path("traced")
    os.makedirs(d)
    rc, out = pytest_run("ptx75.fatbin", "--jitstall-max-jit-ms", "1",
                         extra_env={"LD_PRELOAD": os.environ["JST_PRELOAD"], "JITSTALL_DIR": d,
                                    "CUDA_CACHE_PATH": env.path("cold-cache")})
    expect(rc == 1 and "jitstall check" in out and "max-jit-ms" in out
           and "session run under" not in out, f"exit {rc}\n{out}")
    # No budget: the plugin stays out of the way.
    rc, out = pytest_run("ptx75.fatbin")
    expect(rc == 0 and "jitstall" not in out, f"exit {rc}\n{out}")


def main(argv):
    if argv[1:] == ["--list"]:
        print("\n".join(CASES))
        return 0
    names = argv[1:] or list(CASES)
    rc = 0
    for n in names:
        if n not in CASES:
            print(f"unknown case {n}", file=sys.stderr)
            return 2
        env = Env()
        try:
            CASES[n](env)
            print(f"ok: {n}")
        except Skip as e:
            print(f"skip: {n}: {e}")
            if len(names) == 1:
                rc = SKIP
        except Failure as e:
            print(f"FAIL: {n}: {e}", file=sys.stderr)
            rc = 1
        finally:
            env.close()
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
