#!/usr/bin/env python3
"""The harness every tests/cli/test_<command>.py shares.

Each case builds exact traces with gen_trace (tests/cli/gen_trace.c, the real
trace writer) and asserts on the real stdout, stderr, exit status, JSON and
JUnit XML. ctest runs one case per test, named cli.<case>
(tests/cli/CMakeLists.txt); every test file answers the same way:

    python3 test_<command>.py --list      names of its cases
    python3 test_<command>.py CASE...     run cases (all when none is named)

Environment: JST_CLI (the jitstall binary), JST_GEN_TRACE (gen_trace), JST_DOCS
(docs/), and for the cases that run the preload JST_PRELOAD, JST_SIMDIR,
JST_PROG_DIRECT, JST_FIXTURES.
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
            raise SystemExit("tests/cli: JST_CLI and JST_GEN_TRACE must be set (run via ctest)")
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
        # `run ... -- PROGRAM` in the sanitized build: the preload carries
        # ASan, which the program cannot host; the plain build runs the case.
        if (os.environ.get("JST_SANITIZED") == "1" and args and str(args[0]) == "run"
                and "--" in map(str, args)):
            raise Skip("launches a program under the preload, which the sanitized build cannot")
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


def main(argv, make_env=None):
    """Runs the cases registered with @case in the calling file, each with a
    fresh environment (make_env(), default Env)."""
    if argv[1:] == ["--list"]:
        print("\n".join(CASES))
        return 0
    names = argv[1:] or list(CASES)
    rc = 0
    for n in names:
        if n not in CASES:
            print(f"unknown case {n}", file=sys.stderr)
            return 2
        env = (make_env or Env)()
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

