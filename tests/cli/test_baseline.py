#!/usr/bin/env python3
"""CLI tests of `jitstall baseline`, and `check --baseline` reading it back.

Harness: clitest.py. `python3 test_baseline.py --list` names the cases; ctest runs each
as cli.<case>.
"""
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)


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
    expect("OK: 1 process within budget (5 checks)" in out, out)  # 4 baseline checks + compiles
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
    # An exe the baseline does not know beside one it knows: warned about.
    d3 = "mixed"
    env.trace("a", run_spec(pid=21, args=("prog", "--shard", "2"), fixed=True), subdir=d3)
    env.trace("o", run_spec(exe="/usr/bin/other", pid=30), subdir=d3)
    out, err = env.expect_rc(0, "check", "--baseline", b, env.path(d3))
    expect("other[30]: no matching process in the baseline" in err, err)
    expect("baseline process prog (pid 10) has no match in this run" in err, err)


@case
def test_baseline_matches_nothing(env):
    # A baseline none of whose processes is in the run compared nothing: the
    # gate fails (exit 1) instead of an OK that turns it off.
    b = env.path("base.json")
    env.expect_rc(0, "baseline", env.trace("a", run_spec(pid=10)), "-o", b)
    other = env.trace("other", run_spec(exe="/usr/bin/other", pid=30, fixed=True))
    out, err = env.expect_rc(1, "check", "--baseline", b, other)
    expect("OK" not in out, out)
    lines = fail_lines(out)
    expect(len(lines) == 1 and lines[0].startswith(
        f"FAIL baseline: no process of this run matches the baseline {b} (it has prog)"), out)
    expect("jitstall check: FAILED: 1 regression" in out, out)
    expect("other[30]: no matching process in the baseline" in err, err)
    out, _ = env.expect_rc(1, "check", "--github", "--baseline", b, other)
    expect("::error title=jitstall::baseline: no process of this run matches" in out, out)


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


@case
def test_modules_counted_alike(env):
    # report, baseline, diff and check ask the model what a module is, so a
    # runtime compile (NVRTC) is one of them everywhere: report used to list
    # it while baseline, diff and check left it out.
    spec = run_spec(fixed=True).replace(
        "end exit_status",
        call("nvrtcCompileProgram", 1400, 900, name="saxpy.cu") + "end exit_status")
    t = env.trace("rtc", spec)
    out, _ = env.expect_rc(0, "report", "--json", t)
    rep = json.loads(out)["processes"][0]["modules"]
    base = env.path("rtc.json")
    env.expect_rc(0, "baseline", "-o", base, t)
    bl = json.load(open(base))["processes"][0]["modules"]
    expect(len(rep) == len(bl) == 3, f"report {len(rep)}, baseline {len(bl)}")
    out, _ = env.expect_rc(0, "diff", "--json", base, t)
    mods = json.loads(out)["processes"][0]["modules"]
    expect(len(mods) == 3 and all(m["status"] == "same" for m in mods), mods)
    other = env.trace("other", run_spec(pid=300, exe="/usr/bin/other", fixed=True))
    out, _ = env.expect_rc(0, "diff", t, other)
    expect("prog (pid 100): only in A" in out and "3 modules (0 JIT'd)" in out, out)


# ---- compiles of other compilers and framework caches ----

TAB = "\\x09"
TRITON = (("make_cubin", "/site/triton/backends/nvidia/compiler.py", 300),
          ("compile", "/site/triton/compiler/compiler.py", 280),
          ("<module>", "/app/tri.py", 12))


def triton_run(ptxas_ms=None, cache_dir="/root/.triton/cache", entries=3, tmp="tmpa1b2c3d4",
               kernel="add_kernel", nvcc_ms=None):
    """A Triton-like process: its cache at cache_dir held `entries` kernels
    at start (None: the directory did not exist); with ptxas_ms, Triton's
    ptxas compiled `kernel`, from and into fresh temporary files named tmp (a
    cache miss), else nothing compiled (a hit); with nvcc_ms, an nvcc child
    of no framework built /tmp/build/ext.so after the first launch."""
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "tri.py"))
    s += call("cuInit", 1100, 150, seq=1)
    s += ("stack stack_id=1 ips=0x1000 "
          + " ".join(f'py_frame="{f}{TAB}{file}{TAB}{line}"' for f, file, line in TRITON) + "\n")
    if ptxas_ms:
        s += (f"compile tid=100 start=1300ms dur={ptxas_ms}ms stack_id=1 seq=2 compiler=ptxas "
              f"program=/site/triton/backends/nvidia/bin/ptxas target=sm_90a "
              f"input=/tmp/{tmp}.ptx output=/tmp/{tmp}.ptx.o child_pid=555 "
              "wait_status=0\n")
    s += call("cuModuleLoadData", 2000, 10, image_kind="cubin", verdict="sass", sass_arch="sm_90",
              target_cc=90, kernel=kernel, seq=3, stack_id=1)
    s += call("cuLaunchKernel", 2100, 0.01, name=kernel, func="0x20", seq=4)
    if nvcc_ms:
        s += (f"compile tid=100 start=2200ms dur={nvcc_ms}ms seq=5 compiler=nvcc "
              "program=/usr/local/cuda/bin/nvcc output=/tmp/build/ext.so child_pid=556 "
              "wait_status=0\n")
    state = f"exists=1 entries={entries}" if entries is not None else "exists=0"
    s += (f"fw_cache framework=triton cache_path={cache_dir} env_name=TRITON_CACHE_DIR "
          f"cache_path_env=1 {state} writable=1\n")
    s += "end exit_status=0 end_reason=exit start=3000ms\n"
    return s


def triton_baseline(env, name, spec):
    b = env.path(name + ".json")
    env.expect_rc(0, "baseline", env.trace(name, spec), "-o", b)
    return b


@case
def test_baseline_keeps_compile_groups_and_framework_caches(env):
    # Per process: the compiles of every compiler but the driver, by
    # compiler, framework and what they built (for a path, which may be a
    # temporary file, the kernel whose first call they were part of, else the
    # file name), with count, summed time and cache outcome; and each
    # framework cache's outcome.
    b = triton_baseline(env, "cold", triton_run(ptxas_ms=400, nvcc_ms=300))
    p = json.load(open(b))["processes"][0]
    got = [(g["compiler"], g["framework"], g["kernel"], g["what"], g["count"],
            g["dur_ns"] // 10**6, g["cache"]) for g in p["compile_groups"]]
    expect(got == [("ptxas", "triton", "add_kernel", None, 1, 400, "miss"),
                   ("nvcc", None, None, "ext.so", 1, 300, None)], got)
    expect(p["framework_caches"] == [{"framework": "triton", "path": "/root/.triton/cache",
                                      "outcome": "miss"}], p["framework_caches"])
    b = triton_baseline(env, "warm", triton_run())
    p = json.load(open(b))["processes"][0]
    expect(p["compile_groups"] == [] and p["framework_caches"][0]["outcome"] == "hit", p)


@case
def test_baseline_framework_cache_hit_to_miss_fails(env):
    # Triton's cache hit in the known-good run; now its directory is gone
    # (lost with /tmp) and ptxas compiles again: one line that names the
    # cache and the time it cost, and the fix once; the same compile's new
    # group and its compiler's time are not said again (the slowest first
    # call, which it made slower, is a line of its own).
    b = triton_baseline(env, "warm", triton_run())
    cold = env.trace("cold", triton_run(ptxas_ms=400, entries=None))
    out, _ = env.expect_rc(1, "check", "--baseline", b, cold)
    lines = [x for x in fail_lines(out) if "slowest first call" not in x]
    expect(len(lines) == 1, out)
    expect("python3[100] baseline-cache: triton cache hit -> miss (/root/.triton/cache): compiled "
           "again, 400.0 ms in 1 compile (longest: ptxas for add_kernel, 400.0 ms)"
           in lines[0], out)
    expect(out.count("fix: keep Triton's kernel cache") == 1, out)
    # The same in JUnit: a failure of baseline-cache.
    junit = env.path("j.xml")
    env.expect_rc(1, "check", "--baseline", b, "--junit", junit, cold)
    fails = {t.get("name"): t.find("failure") for t in validate_junit(env, junit).iter("testcase")}
    expect(fails["baseline-cache"] is not None and
           "triton cache hit -> miss" in fails["baseline-cache"].get("message", "") +
           (fails["baseline-cache"].text or ""), fails)
    # The run against itself, and warm against warm, pass.
    env.expect_rc(0, "check", "--baseline", b, env.trace("warm2", triton_run()))
    env.expect_rc(0, "check", "--baseline", triton_baseline(env, "c", triton_run(ptxas_ms=400)),
                  cold)


@case
def test_baseline_new_costly_compile_fails(env):
    # A compile group the baseline did not have, costing more than the
    # noise bound (--min-delta-ms): it fails with its cost and its fix; under
    # the bound, it passes.
    b = triton_baseline(env, "base", triton_run(ptxas_ms=400))
    t = env.trace("ext", triton_run(ptxas_ms=400, nvcc_ms=300))
    out, _ = env.expect_rc(1, "check", "--baseline", b, t)
    lines = fail_lines(out)
    expect(len(lines) == 1 and "baseline-compile-time: new compile nvcc -> ext.so: 300.0 ms in 1 "
           "compile, not in the baseline" in lines[0], out)
    env.expect_rc(0, "check", "--baseline", b, "--min-delta-ms", "300", t)
    # Another kernel compiled instead of the baseline's, in the same time:
    # the compiler's total did not grow, the new group fails.
    out, _ = env.expect_rc(1, "check", "--baseline", b,
                           env.trace("other", triton_run(ptxas_ms=400, kernel="mul_kernel")))
    lines = fail_lines(out)
    expect(len(lines) == 1 and "new compile ptxas for mul_kernel (triton, cache miss): "
           "400.0 ms in 1 compile" in lines[0], out)
    expect("improved python3[100] baseline-compile-time: compile gone: ptxas for add_kernel"
           in out, out)


@case
def test_baseline_compiles_unchanged_or_better_pass(env):
    # The same compiles into other temporary files: unchanged, no line.
    b = triton_baseline(env, "cold", triton_run(ptxas_ms=400, nvcc_ms=300))
    out, _ = env.expect_rc(0, "check", "--baseline", b,
                           env.trace("again", triton_run(ptxas_ms=400, nvcc_ms=300,
                                                         tmp="tmpzz9q_x0w")))
    expect(not fail_lines(out) and "improved" not in out, out)
    # Miss -> hit is fine, and said as an improvement.
    out, _ = env.expect_rc(0, "check", "--baseline", b,
                           env.trace("warm", triton_run(nvcc_ms=300)))
    expect("improved python3[100] baseline-cache: triton cache miss -> hit" in out, out)
    # diff shows the framework cache's change with the baseline as A.
    out, _ = env.expect_rc(0, "diff", b, env.trace("warm", triton_run(nvcc_ms=300)))
    expect(re.search(r"triton cache +miss -> hit", out), out)


@case
def test_baseline_without_compile_groups_still_checks(env):
    # A baseline written before compile groups and framework caches were
    # kept has no compile expectations: a cache that now misses and a new
    # compile do not fail on them (the compiler's time still does).
    b = triton_baseline(env, "warm", triton_run())
    doc = json.load(open(b))
    for p in doc["processes"]:
        del p["compile_groups"]
        del p["framework_caches"]
    json.dump(doc, open(b, "w"))
    out, _ = env.expect_rc(1, "check", "--baseline", b,
                           env.trace("cold", triton_run(ptxas_ms=400, entries=None)))
    lines = [x for x in fail_lines(out) if "slowest first call" not in x]
    expect(len(lines) == 1 and "ptxas (subprocess) time 0.0 ms -> 400.0 ms" in lines[0], out)
    env.expect_rc(0, "check", "--baseline", b, env.trace("warm2", triton_run()))
    # A malformed entry is refused.
    doc["processes"][0]["compile_groups"] = [{"compiler": "ptxas", "count": -1, "dur_ns": 1}]
    json.dump(doc, open(b, "w"))
    _, err = env.expect_rc(2, "check", "--baseline", b, env.trace("warm3", triton_run()))
    expect("processes[0].compile_groups[0]: needs a compiler" in err, err)
    # A compiler or framework this jitstall has no name for is skipped; a
    # what from the file is shown escaped.
    doc["processes"][0]["compile_groups"] = [
        {"compiler": "future_cc", "count": 1, "dur_ns": 10**9},
        {"compiler": "nvcc", "framework": "future_fw", "count": 1, "dur_ns": 10**9},
        {"compiler": "nvcc", "what": "\x1b[31mext.so", "count": 1, "dur_ns": 500 * 10**6}]
    json.dump(doc, open(b, "w"))
    out, _ = env.expect_rc(0, "check", "--baseline", b, env.trace("warm4", triton_run()))
    gone = [x for x in out.splitlines() if "compile gone" in x]
    expect(gone == ["improved python3[100] baseline-compile-time: compile gone: "
                    "nvcc -> \\x1b[31mext.so (500.0 ms in the baseline)"], out)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
