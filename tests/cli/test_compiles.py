#!/usr/bin/env python3
"""CLI tests of compiles, whatever the compiler, and of first calls.

One model of a compile (driver JIT, NVRTC, nvJitLink, NVVM, nvPTXCompiler,
compiler subprocesses, XLA's compile ranges) and what every command makes of
it: report (compiles[], first_calls[] with a blame table that sums to the
first call's time, framework fixes), check budgets, diff, baseline, export.

Harness: clitest.py. `python3 test_compiles.py --list` names the cases; ctest
runs each as cli.<case>.
"""
import os
import shutil
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)

TAB = "\\x09"


def frames(*fs):
    """py_frame fields, innermost first: (func, file, line)."""
    return " ".join(f'py_frame="{fn}{TAB}{file}{TAB}{line}"' for fn, file, line in fs)


def stack(sid, *fs):
    return f"stack stack_id={sid} ips=0x1000 {frames(*fs)}\n"


def child(start_ms, dur_ms, pid, status, program, seq, **fields):
    """The COMPILE record of a compiler child of thread 100: its program, pid
    and wait status (status 0x300: exit 3; 9: killed by signal 9), and the
    record's other fields as gen_trace spells them (target, input, output,
    compiler, stack_id)."""
    more = "".join(f" {k}={v}" for k, v in fields.items())
    return (f"compile tid=100 start={start_ms}ms dur={dur_ms}ms seq={seq} program={program}"
            f"{more} child_pid={pid} wait_status={status}\n")


TRITON_FRAMES = (("make_cubin", "/site/triton/backends/nvidia/compiler.py", 300),
                 ("compile", "/site/triton/compiler/compiler.py", 280),
                 ("<module>", "/app/tri.py", 12))


def triton_spec(ptxas_ms=400, with_samples=True, fw_cache=True, end_ms=3100):
    """A Triton-like program: a trivial fill is its first kernel at 1500 ms;
    then Triton lowers in Python, runs ptxas (2100 ms + ptxas_ms), loads the
    cubin (2600 ms, 10 ms) and launches add_kernel at 3000 ms. The sampler saw
    the window 1600-3000 ms."""
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "tri.py"))
    s += call("cuInit", 1100, 150, seq=1)
    s += call("cuDevicePrimaryCtxRetain", 1260, 100, seq=2)
    s += call("cuLaunchKernel", 1500, 0.01, name="fill", func="0x10", seq=3)
    s += stack(1, *TRITON_FRAMES)
    s += (f"compile tid=100 start=2100ms dur={ptxas_ms}ms stack_id=1 seq=3 compiler=ptxas "
          "program=/site/triton/backends/nvidia/bin/ptxas target=sm_90a "
          "input=/tmp/x/add_kernel.ptx output=/tmp/x/add_kernel.cubin child_pid=555 "
          "wait_status=0 wait_ns=400ms\n")
    s += call("cuModuleLoadData", 2600, 10, image_kind="cubin", verdict="sass", sass_arch="sm_90",
              target_cc=90, kernel="add_kernel", seq=4, stack_id=1)
    if with_samples:
        s += ("sample tid=100 before_seq=5 sample_ns=700ms samples=70 period_ns=10ms "
              "window_ns=1400ms " + frames(("make_ttir", "/site/triton/compiler/compiler.py", 100),
                                            ("compile", "/site/triton/compiler/compiler.py", 280))
              + "\n")
        s += ("sample tid=100 before_seq=5 sample_ns=400ms samples=40 period_ns=10ms "
              "window_ns=1400ms " + frames(("wait", "/usr/lib/python3.12/subprocess.py", 1200))
              + "\n")
    s += call("cuLaunchKernel", 3000, 0.01, name="add_kernel", func="0x20", seq=5)
    if fw_cache:
        s += ("fw_cache framework=triton cache_path=/root/.triton/cache env_name=TRITON_CACHE_DIR "
              "cache_path_env=0 exists=0 writable=1 fs_type=overlay ephemeral=1 mount=/\n")
    s += f"end exit_status=0 end_reason=exit start={end_ms}ms\n"
    return s


def report_json(env, *traces):
    out, _ = env.expect_rc(0, "report", "--json", *traces)
    return json.loads(out)


def blame(fc):
    return {b["cause"]: b["dur_ns"] for b in fc["blame"]}


MS = 10**6



@case
def test_first_call_needs_compile_work(env):
    # Samples before a launch that followed only a SASS load and driver
    # start-up (a slow machine's trivial fill: 40 ms of the program's own
    # Python) make no first call; the next kernel's, after a ptxas child,
    # does.
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "tri.py"))
    s += call("cuInit", 1100, 150, seq=1)
    s += call("cuDevicePrimaryCtxRetain", 1260, 100, seq=2)
    s += call("cuModuleLoadData", 1400, 5, image_kind="cubin", verdict="sass", sass_arch="sm_90",
              target_cc=90, kernel="fill", seq=3)
    s += ("sample tid=100 before_seq=4 sample_ns=40ms samples=4 period_ns=10ms window_ns=50ms "
          + frames(("setup", "/app/tri.py", 5)) + "\n")
    s += call("cuLaunchKernel", 1460, 0.01, name="fill", func="0x10", seq=4)
    s += stack(1, *TRITON_FRAMES)
    s += ("compile tid=100 start=2100ms dur=400ms stack_id=1 seq=4 compiler=ptxas "
          "program=/site/triton/backends/nvidia/bin/ptxas target=sm_90a child_pid=555 "
          "wait_status=0\n")
    s += call("cuModuleLoadData", 2600, 10, image_kind="cubin", verdict="sass", sass_arch="sm_90",
              target_cc=90, kernel="add_kernel", seq=5, stack_id=1)
    s += call("cuLaunchKernel", 3000, 0.01, name="add_kernel", func="0x20", seq=6)
    s += "end exit_status=0 end_reason=exit start=3100ms\n"
    p = report_json(env, env.trace("fill", s))["processes"][0]
    got = [f["kernel"] for f in p["first_calls"]]
    expect(got == ["add_kernel"], f"first calls {got}")


@case
def test_compiles_site_and_projection_of_a_framework_first_call(env):
    # A Triton first call with no JIT load: its compile's site in the text is
    # Triton's frame, not subprocess.py's wait below it; the ptxas child ranks
    # in Culprits as a compile of its own, with Triton's cache fix; the fixes'
    # projection covers the slowest first call (a warm Triton cache keeps only
    # the cubin's load), in text, Markdown and JSON.
    s = triton_spec().replace(
        stack(1, *TRITON_FRAMES),
        stack(1, ("_try_wait", "/usr/lib/python3.12/subprocess.py", 2004),
              ("wait", "/usr/lib/python3.12/subprocess.py", 1264), *TRITON_FRAMES))
    t = env.trace("tri", s)
    p = report_json(env, t)["processes"][0]
    fc = max(p["first_calls"], key=lambda f: f["dur_ns"])
    expect(fc["kernel"] == "add_kernel", fc)
    expect(p["projected_first_call_ns"] == blame(fc)["module_load"] == 10 * MS,
           f"projected {p['projected_first_call_ns']}, blame {blame(fc)}")
    out, _ = env.expect_rc(0, "report", t)
    expect("at make_cubin (compiler.py:300)" in out and "_try_wait" not in out.split("Compiles")[1]
           .split("First calls")[0], out)
    cul = out.split("Culprits, ranked by time lost")[1].split("Fixes, ranked")[0]
    expect("  1. 400.0 ms  ptxas (subprocess) -> /tmp/x/add_kernel.cubin\n" in cul, cul)
    expect("     compiled   target sm_90a, framework triton, before the first call of add_kernel, "
           "pid 555, exit 0\n" in cul, cul)
    expect("     called by  make_cubin (/site/triton/backends/nvidia/compiler.py:300) in Python"
           in cul, cul)
    expect("     fix        keep Triton's kernel cache: set TRITON_CACHE_DIR" in cul, cul)
    expect("none among the loads" not in out, out)
    # "now" is the first call's time as the headline says it
    m = re.search(r"Slowest first call  add_kernel from <module> \(/app/tri.py:12\) took (\S+ \S+),",
                  out)
    expect(m, out)
    now = m.group(1) if m else "?"
    want = f"Projected slowest first call with these fixes: 10.0 ms (now {now})"
    expect(want in out, f"{want!r} in {out}")
    md, _ = env.expect_rc(0, "report", "--markdown", t)
    expect(f"Projected slowest first call with these fixes: **10.0 ms** (now {now})." in md, md)
    mdc = md.split("Culprits, ranked by time lost")[1].split("Fixes, ranked")[0]
    expect("| 1 | 400.0 ms | pid 100 | `ptxas (subprocess) -> /tmp/x/add_kernel.cubin` | "
           "target sm\\_90a, framework triton," in mdc, mdc)
    expect("None among the loads" not in md, md)
    j = report_json(env, t)
    ptxas = [c for c in j["processes"][0]["compiles"] if c["compiler"] == "ptxas"]
    expect(len(ptxas) == 1 and ptxas[0]["culprit"] and
           ptxas[0]["fix"] == [x for x in j["fixes"] if x["kind"] == "triton_cache"][0]["text"],
           ptxas)
    # Two runs of it: the fleet view names the compile and its fix in both.
    env.trace("tri2", s.replace("pid=100", "pid=101", 1))
    out, _ = env.expect_rc(0, "report", t, env.path("tri2.jst"))
    expect("culprits     2/2 runs, 800.0 ms lost: ptxas (subprocess) -> /tmp/x/add_kernel.cubin"
           in out, out)
    m = re.search(r"fixes        2/2 runs, saves (\S+ \S+): keep Triton's kernel cache", out)
    expect(m, out)

@case
def test_compiles_culprits_rank_every_compiler(env):
    # Compiles that are no driver or library call rank in Culprits with the
    # loads, by time lost: three ptxas children from one call site are one
    # entry with the compile-ahead fix; an XLA range (no stack) has JAX's
    # cache fix; a failed nvcc child is listed with its exit status and no
    # fix; the JIT load keeps its own entry; NVVM's fix speaks of its PTX.
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "app.py"))
    s += "stack stack_id=7 ips=0x7000\n"
    s += jit_load(1100, 50, seq=1)
    s += call("nvvmCompileProgram", 1160, 5, name="compute_90", seq=2)
    for i in range(3):
        s += child(1200 + 130 * i, 120, 700 + i, 0, "/usr/local/cuda/bin/ptxas", 2, stack_id=7,
                   compiler="ptxas", target="sm_90", input=f"k{i}.ptx", output=f"/tmp/k{i}.cubin")
    s += child(1600, 20, 710, "0x300", "/usr/local/cuda/bin/nvcc", 2, compiler="nvcc",
               target="sm_80", input="bad.cu", output="bad.o")
    s += "range range_op=push tid=100 start=1700ms name=\"XlaCompile:#module=jit_f#\" depth=1\n"
    s += "range range_op=pop tid=100 start=2000ms depth=1\n"
    s += launch(2100, seq=3)
    s += end()
    t = env.trace("rank", s)
    out, _ = env.expect_rc(0, "report", t)
    cul = out.split("Culprits, ranked by time lost")[1].split("Fixes, ranked")[0]
    heads = re.findall(r"\n  (\d+)\. (\S+ \S+)  (.*)", cul)
    want = [("1", "360.0 ms", "ptxas (subprocess) -> /tmp/k0.cubin  [3 compiles, pid 100]"),
            ("2", "300.0 ms", "XLA compile jit_f"),
            ("3", "50.0 ms", "/opt/app/lib/libkern.so"),
            ("4", "20.0 ms", "nvcc (subprocess) -> bad.o"),
            ("5", "5.0 ms", "nvvmCompileProgram for compute_90")]
    expect(heads == want, f"{heads}\n{cul}")
    entries = re.split(r"\n  \d+\. ", cul)[1:]
    ahead = ("compile ahead of time: the program runs ptxas while it runs and waits for it; run "
             "ptxas when the program is built or installed and load its output on later runs (the "
             "driver's JIT cache does not hold it)")
    expect(f"fix        {ahead}" in entries[0] and "compiled   target sm_90, " in entries[0] and
           "pid 700, exit 0" in entries[0], entries[0])
    expect("call site  (no stack: the compile was marked by a range, not a call)" in entries[1] and
           "fix        turn on JAX's persistent compilation cache" in entries[1], entries[1])
    expect("compiled   failed (exit status 3); target sm_80, " in entries[3] and
           "pid 710" in entries[3] and "call site  (no stack recorded)" in entries[3] and
           "fix" not in entries[3], entries[3])
    expect("fix        compile once: keep the PTX nvvmCompileProgram produces" in entries[4],
           entries[4])
    j = report_json(env, t)
    fx = {x["kind"]: x for x in j["fixes"]}
    expect(fx["compile_ahead"]["text"] == ahead and fx["compile_ahead"]["saves_ns"] == 360 * MS
           and fx["compile_ahead"]["loads"] == 3, fx.get("compile_ahead"))
    expect(not any("nvcc" in x["text"] for x in j["fixes"]), j["fixes"])
    by = {}
    for c in j["processes"][0]["compiles"]:
        by.setdefault(c["compiler"], []).append(c)
    expect(all(c["culprit"] and c["fix"] == ahead for c in by["ptxas"]), by["ptxas"])
    expect(by["nvcc"][0]["culprit"] and by["nvcc"][0]["fix"] is None, by["nvcc"])
    expect(by["driver"][0]["culprit"] and by["driver"][0]["fix"] ==
           j["processes"][0]["modules"][0]["fix"], by["driver"])
    expect(by["xla"][0]["fix"] == fx["jax_cache"]["text"], by["xla"])
    md, _ = env.expect_rc(0, "report", "--markdown", t)
    expect("| 1 | 360.0 ms | 3, pid 100 | `ptxas (subprocess) -> /tmp/k0.cubin` |" in md, md)
    expect("| 4 | 20.0 ms | pid 100 | `nvcc (subprocess) -> bad.o` | failed (exit status 3); "
           "target sm\\_80, " in md, md)


@case
def test_compiles_culprit_in_flight(env):
    # An XLA compile still running when the trace ends (the process was
    # killed in it): a culprit with its time so far, said once, in red in a
    # terminal, and the JAX cache fix.
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "app.py"))
    s += call("cuInit", 1100, 10, seq=1)
    s += "range range_op=push tid=100 start=1200ms name=\"XlaCompile:#module=jit_g#\" depth=1\n"
    s += "end exit_status=-9 end_reason=signal start=2400ms\n"
    t = env.trace("inflight", s)
    out, _ = env.expect_rc(0, "report", t)
    cul = out.split("Culprits, ranked by time lost")[1].split("Fixes, ranked")[0]
    expect("  1. 1.20 s  XLA compile jit_g\n" in cul, cul)
    expect("     in flight  still compiling when the trace ends, after at least 1.20 s; framework xla\n"
           in cul and cul.count("still compiling") == 1 and "compiled   " not in cul, cul)
    expect("fix        turn on JAX's persistent compilation cache" in cul, cul)
    j = report_json(env, t)["processes"][0]["compiles"]
    expect(len(j) == 1 and j[0]["in_flight"] and j[0]["culprit"], j)


@case
def test_compiles_every_compiler_one_row(env):
    # Every compiler becomes one compiles[] row with the same keys: the
    # driver's JIT, the four in-process compilers, compiler children and an
    # XLA compile range.
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "app.py"))
    s += jit_load(1100, 50, seq=1)
    s += call("nvrtcCompileProgram", 1200, 30, name="compute_90", seq=2)
    s += call("nvJitLinkComplete", 1240, 20, seq=3)
    s += call("nvvmCompileProgram", 1270, 25, name="compute_90", seq=4)
    s += call("nvPTXCompilerCompile", 1300, 15, name="sm_90", seq=5)
    s += child(1400, 100, 601, "0x300", "/usr/local/cuda/bin/nvcc", 5, compiler="nvcc",
               target="sm_80", input="k.cu", output="k.o")
    s += child(1510, 40, 602, 9, "/usr/bin/x86_64-linux-gnu-gcc-12", 5, input="cuda_utils.c",
               output="cuda_utils.so")
    s += "range range_op=push tid=100 start=1600ms name=\"XlaCompile:#module=jit_f#\" depth=1\n"
    s += "range range_op=pop tid=100 start=1900ms depth=1\n"
    s += launch(2000, seq=6)
    s += end()
    p = report_json(env, env.trace("all", s))["processes"][0]
    got = [(c["compiler"], c["start_ns"] // MS, c["dur_ns"] // MS) for c in p["compiles"]]
    want = [("driver", 1100, 50), ("nvrtc", 1200, 30), ("nvjitlink", 1240, 20),
            ("nvvm", 1270, 25), ("nvptxcompiler", 1300, 15), ("nvcc", 1400, 100),
            ("host_cc", 1510, 40), ("xla", 1600, 300)]
    expect(got == want, f"compiles {got}")
    keys = {"compiler", "framework", "dur_ns", "start_ns", "call_site", "stack", "target", "cache",
            "what", "pid", "exit_status"}
    for c in p["compiles"]:
        expect(keys <= set(c), f"keys {sorted(c)}")
    by = {c["compiler"]: c for c in p["compiles"]}
    expect(by["driver"]["cache"] == "miss_stored" and by["driver"]["target"] == "sm_90",
           by["driver"])
    expect(by["nvcc"]["pid"] == 601 and by["nvcc"]["exit_status"] == 3, by["nvcc"])
    expect(by["nvcc"]["target"] == "sm_80" and by["nvcc"]["what"] == "k.o", by["nvcc"])
    # killed by signal 9: exit_status is the negative signal
    expect(by["host_cc"]["exit_status"] == -9, by["host_cc"])
    expect(by["xla"]["framework"] == "xla" and by["xla"]["what"] == "jit_f", by["xla"])
    expect(by["nvrtc"]["pid"] is None and by["nvrtc"]["exit_status"] is None, by["nvrtc"])
    # NVVM and nvPTXCompiler are runtime compiles like NVRTC: modules of the report
    calls = {m["call"] for m in p["modules"]}
    expect({"nvvmCompileProgram", "nvPTXCompilerCompile"} <= calls, calls)
    out, _ = env.expect_rc(0, "report", env.path("all.jst"))
    expect("Compiles   driver 1 (50.0 ms), nvrtc 1 (30.0 ms)" in out and "xla 1 (300.0 ms)" in out,
           out)
    # the five longest compiles that are not the driver's (those are culprits), longest first
    rows = re.findall(r"\n    (\w+) +[\d.]+ ms", out.split("Compiles   ")[1].split("First calls")[0])
    expect(rows == ["xla", "nvcc", "host_cc", "nvrtc", "nvvm"], rows)
    expect("... and 2 more (all in --json)" in out and "-> k.o  (pid 601, exit 3)" in out, out)


@case
def test_compiles_first_occurrence_wins(env):
    # A field given twice in a compile, sample or fw_cache record: the first
    # value counts, as for every record (docs/FORMAT.md, Fields).
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "x.py"))
    s += stack(1, *TRITON_FRAMES)
    s += ("compile tid=100 start=1100ms dur=100ms dur=900ms stack_id=1 compiler=ptxas compiler=nvcc "
          "output=a.cubin output=b.cubin child_pid=601 child_pid=602 wait_status=0 "
          "wait_status=0x300\n")
    s += ("sample tid=100 before_seq=1 sample_ns=50ms sample_ns=900ms window_ns=100ms "
          "window_ns=5000ms " + frames(("lower", "/site/triton/compiler/compiler.py", 3)) + "\n")
    s += launch(1300, seq=1)
    s += ("fw_cache framework=triton framework=cupy cache_path=/a cache_path=/b exists=0 exists=1\n")
    s += end()
    r = report_json(env, env.trace("rep", s))
    c = r["processes"][0]["compiles"][0]
    expect((c["compiler"], c["dur_ns"] // MS, c["what"], c["pid"], c["exit_status"]) ==
           ("ptxas", 100, "a.cubin", 601, 0), c)
    f = r["processes"][0]["first_calls"][0]
    expect(f["samples"][0]["dur_ns"] == 50 * MS and f["start_ns"] == 1100 * MS, f)
    fx = [x for x in r["fixes"] if x["kind"] == "triton_cache"]
    expect(len(fx) == 1 and "/a did not exist" in fx[0]["text"], r["fixes"])


@case
def test_compiles_xla_ranges_are_not_queries(env):
    # XLA's compile ranges are compiles, never queries: a lone one makes no
    # query, and a query holding one counts its time in compile_ns.
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "jx.py"))
    s += "range range_op=push tid=100 start=1100ms name=\"XlaCompile:#module=jit_a#\" depth=1\n"
    s += jit_load(1150, 20, seq=1)
    s += "range range_op=pop tid=100 start=1400ms depth=1\n"
    s += "range range_op=push tid=100 start=1500ms name=step depth=1\n"
    s += "range range_op=push tid=100 start=1510ms name=\"XlaCompile:#module=jit_b#\" depth=2\n"
    s += "range range_op=pop tid=100 start=1810ms depth=2\n"
    s += "range range_op=pop tid=100 start=2000ms depth=1\n"
    s += launch(1900, seq=2)
    s += end()
    t = env.trace("xla", s)
    p = report_json(env, t)["processes"][0]
    got = [(q["name"], q["dur_ns"] // MS, q["compile_ns"] // MS) for q in p["queries"]]
    expect(got == [("step", 500, 300)], f"queries {got}")
    expect(p.get("first_jit_query") is None, p.get("first_jit_query"))
    expect([c["what"] for c in p["compiles"] if c["compiler"] == "xla"] == ["jit_a", "jit_b"],
           p["compiles"])
    out, _ = env.expect_rc(0, "report", t)
    expect("XlaCompile" not in out, out)


@case
def test_compiles_first_call_blame_sums(env):
    # A kernel whose first launch came after compile work on its thread gets
    # a first call, from the start of the work (or the sampler's window) to
    # the launch; its blame parts sum to its time, each moment counted once.
    t = env.trace("tri", triton_spec())
    p = report_json(env, t)["processes"][0]
    fcs = p["first_calls"]
    expect([f["kernel"] for f in fcs] == ["add_kernel"], fcs)
    f = fcs[0]
    expect(f["start_ns"] // MS == 1600 and f["dur_ns"] // MS == 1400, f)
    b = blame(f)
    expect(sum(b.values()) == f["dur_ns"], f"blame sums {sum(b.values())} != {f['dur_ns']}")
    expect(b["subprocess"] == 400 * MS and b["module_load"] == 10 * MS, b)
    # 990 ms no interval covers; the sampler saw Python in 1100 of its 1400 ms
    expect(abs(b["python"] - round(990 * MS * 1100 / 1400)) <= 1, b)
    expect(b["unexplained"] == 990 * MS - b["python"], b)
    expect(f["framework"] == "triton", f["framework"])
    expect([(s["func"], s["line"], s["dur_ns"] // MS) for s in f["samples"]] ==
           [("make_ttir", 100, 700), ("wait", 1200, 400)], f["samples"])
    ptxas = [c for c in p["compiles"] if c["compiler"] == "ptxas"][0]
    expect(ptxas["framework"] == "triton" and ptxas["kernel"] == "add_kernel", ptxas)
    out, _ = env.expect_rc(0, "report", t)
    # named by the kernel Triton compiled and the program's call site
    expect("Slowest first call  add_kernel from <module> (/app/tri.py:12) took 1.40 s, slower "
           "than time to first kernel" in out, out)
    expect(re.search(r"add_kernel from <module> \(/app/tri\.py:12\)  1\.40 s  \[triton, cache miss\]"
                     r"\n +compiler subprocesses +400\.0 ms", out), out)
    expect("sampled Python (top)     make_ttir (compiler.py:100) 700.0 ms" in out, out)
    # the longest compiles other than the driver's, with their Python call site
    expect(re.search(r"\n    ptxas +400\.0 ms  \[triton\]  for add_kernel  -> /tmp/x/add_kernel"
                     r"\.cubin  \(pid 555, exit 0\)  at make_cubin \(compiler\.py:300\)\n", out), out)
    out, _ = env.expect_rc(0, "report", "--markdown", t)
    expect("| 100 | add\\_kernel from \\<module\\> (/app/tri.py:12) | 1.40 s | triton (cache miss) | "
           "compiler subprocesses 400.0 ms" in out, out)
    expect("**Process 100**: first call of add\\_kernel from \\<module\\> (/app/tri.py:12) took "
           "1.40 s, slower than time to first kernel (500.0 ms)." in out, out)
    expect(p["first_call_headline"] == "first call of add_kernel from <module> (/app/tri.py:12) "
           "took 1.40 s, slower than time to first kernel (500.0 ms)", p["first_call_headline"])
    # Sample records with times: the first call starts at the earliest sample
    # (here 1700 ms), never before the thread's previous launch.
    timed = triton_spec().replace("window_ns=1400ms ", "window_ns=1300ms start=1700ms dur=1200ms ", 1)
    f = report_json(env, env.trace("timed", timed))["processes"][0]["first_calls"][0]
    expect(f["start_ns"] // MS == 1700 and f["dur_ns"] // MS == 1300, f)
    early = triton_spec().replace("window_ns=1400ms ", "window_ns=1400ms start=1200ms ", 1)
    f = report_json(env, env.trace("early", early))["processes"][0]["first_calls"][0]
    expect(f["start_ns"] == 1500 * MS + 10**4, f)
    # No compile work before the fill: it has no first call; a driver-only
    # program whose first kernel holds the only first call shows no section.
    out, _ = env.expect_rc(0, "report", env.trace("plain", run_spec()))
    expect("First calls" not in out and "Compiles" not in out, out)


@case
def test_compiles_samples_by_function(env):
    # Samples of one function at several lines are one function, as a
    # profiler counts it, shown at the line most of them were at.
    extra = ("sample tid=100 before_seq=5 sample_ns=800ms samples=80 period_ns=10ms "
             "window_ns=1400ms " + frames(("make_ttir", "/site/triton/compiler/compiler.py", 101))
             + "\n")
    spec = triton_spec().replace("call call=cuLaunchKernel start=3000ms", extra +
                                 "call call=cuLaunchKernel start=3000ms")
    f = report_json(env, env.trace("lines", spec))["processes"][0]["first_calls"][0]
    got = [(s["func"], s["line"], s["dur_ns"] // MS) for s in f["samples"]]
    expect(got == [("make_ttir", 101, 1500), ("wait", 1200, 400)], got)


@case
def test_compiles_overlaps_counted_once(env):
    # A driver JIT inside an XLA compile range inside nothing else: the JIT's
    # moments count for driver_jit only (the first cause in the order), the
    # rest of the range for framework_compile; the sum is the first call.
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "jx.py"))
    s += launch(1050, kernel="fill", seq=1)
    s += "range range_op=push tid=100 start=1100ms name=\"XlaCompile:#module=jit_a#\" depth=1\n"
    s += jit_load(1200, 100, seq=2)
    s += call("nvrtcCompileProgram", 1250, 100, seq=3)
    s += "range range_op=pop tid=100 start=1500ms depth=1\n"
    s += launch(1600, seq=4)
    s += end()
    f = report_json(env, env.trace("ov", s))["processes"][0]["first_calls"][0]
    b = blame(f)
    expect(f["start_ns"] // MS == 1100 and f["dur_ns"] // MS == 500, f)
    expect(b == {"driver_jit": 100 * MS, "runtime_compiler": 50 * MS,
                 "framework_compile": 250 * MS, "unexplained": 100 * MS}, b)
    expect(f["framework"] == "xla", f)


@case
def test_compiles_child_process_ties_to_parent(env):
    # An Inductor-like parent waits while its compile worker (a child
    # process, its own trace) runs ptxas: the child's compile counts in the
    # parent's first call that it overlaps.
    parent = process(pid=100, exe="/usr/bin/python3", args=("python3", "tc.py"))
    parent += launch(1050, kernel="fill", seq=1)
    parent += stack(1, ("codegen", "/site/torch/_inductor/codegen/wrapper.py", 40))
    parent += ("compile tid=100 start=1100ms dur=100ms stack_id=1 seq=1 compiler=host_cc "
               "program=/usr/bin/gcc output=/tmp/cuda_utils.so child_pid=700 wait_status=0\n")
    parent += launch(2000, kernel="triton_poi_fused", seq=2)
    parent += end()
    child = process(pid=200, exe="/usr/bin/python3", args=("python3", "-m", "worker"))
    child = child.replace("ppid=1", "ppid=100")
    child += stack(1, ("_worker_compile", "/site/torch/_inductor/compile_worker/subproc_pool.py", 9))
    child += ("compile tid=200 start=1300ms dur=500ms stack_id=1 seq=0 compiler=ptxas "
              "program=/site/torch/bin/ptxas target=sm_90a child_pid=701 wait_status=0\n")
    child += end()
    d = "run"
    env.trace("parent", parent, subdir=d)
    env.trace("child", child, subdir=d)
    r = report_json(env, env.path(d))
    p = [x for x in r["processes"] if x["pid"] == 100][0]
    f = p["first_calls"][0]
    b = blame(f)
    expect(f["kernel"] == "triton_poi_fused" and f["dur_ns"] // MS == 900, f)
    expect(b["subprocess"] == 600 * MS and b["unexplained"] == 300 * MS, b)
    expect(f["framework"] == "inductor", f)
    # alone, the parent explains only its own gcc
    alone = report_json(env, env.path(d + "/parent.jst"))["processes"][0]["first_calls"][0]
    expect(blame(alone)["subprocess"] == 100 * MS, alone)
    kinds = {x["kind"] for x in r["fixes"]}
    expect("inductor_cache" in kinds, kinds)


@case
def test_compiles_framework_fixes(env):
    # One fix per framework cache, naming the setting and its default, and
    # how the cache was found at start.
    r = report_json(env, env.trace("tri", triton_spec()))
    fx = [x for x in r["fixes"] if x["kind"] == "triton_cache"]
    expect(len(fx) == 1, r["fixes"])
    expect("TRITON_CACHE_DIR" in fx[0]["text"] and "~/.triton/cache" in fx[0]["text"], fx)
    expect("/root/.triton/cache did not exist" in fx[0]["text"], fx)
    expect("overlay's upper layer, which does not outlive the container" in fx[0]["text"], fx)
    expect(fx[0]["saves_ns"] == 1390 * MS, fx)  # the first call less its module load
    # Frameworks from the stack: Numba (NVVM), CuPy (NVRTC), JAX (native jaxlib)
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "nb.py"))
    s += stack(1, ("compile_cuda", "/site/numba_cuda/numba/cuda/compiler.py", 10),
               ("main", "/app/nb.py", 7))
    s += stack(2, ("compile", "/site/cupy/_core/core.pyx", 5))
    s += ("modmap mod_event=initial mod_path=/site/jaxlib/xla_extension.so bias=0x7000000 "
          "mod_start=0x7000000 mod_end=0x8000000\n")
    s += "stack stack_id=3 ips=0x7000100\n"
    s += call("nvvmCompileProgram", 1100, 30, stack_id=1, seq=1)
    s += call("nvrtcCompileProgram", 1200, 30, stack_id=2, seq=2)
    s += jit_load(1300, 30, stack_id=3, seq=3)
    s += launch(1400, seq=4)
    s += ("fw_cache framework=cupy cache_path=/tmp/cupy env_name=CUPY_CACHE_DIR cache_path_env=1 "
          "exists=1 writable=1 fs_type=tmpfs ephemeral=1 mount=/tmp\n")
    s += end()
    r = report_json(env, env.trace("fw", s))
    fws = {c["compiler"]: c["framework"] for c in r["processes"][0]["compiles"]}
    expect(fws == {"nvvm": "numba", "nvrtc": "cupy", "driver": "xla"}, fws)
    kinds = {x["kind"]: x["text"] for x in r["fixes"]}
    expect({"numba_cache", "cupy_cache", "jax_cache"} <= set(kinds), kinds)
    # Each framework compile's cache outcome: CuPy's and Numba's compiles
    # missed (the driver JIT load keeps the driver cache's outcome); JAX's
    # cache had no directory, and JAX compiled (that load): disabled.
    t = env.trace("fwo", s.replace("end exit_status", "fw_cache framework=jax "
                                   "env_name=JAX_COMPILATION_CACHE_DIR cache_path_env=0\n"
                                   "end exit_status"))
    p = report_json(env, t)["processes"][0]
    got = {c["compiler"]: c["cache"] for c in p["compiles"]}
    expect(got == {"nvvm": "miss", "nvrtc": "miss", "driver": "miss_stored"}, got)
    got = {c["framework"]: (c["outcome"], c["used"]) for c in p["framework_caches"]}
    expect(got == {"cupy": ("miss", True), "jax": ("disabled", True)}, got)
    expect("cache=True" in kinds["numba_cache"], kinds)
    expect("JAX_COMPILATION_CACHE_DIR" in kinds["jax_cache"] and "off by default" in
           kinds["jax_cache"], kinds)
    expect("/tmp/cupy (from CUPY_CACHE_DIR) existed, and it lies on tmpfs" in kinds["cupy_cache"],
           kinds)
    # With the count of its entries: an empty cache is not a warm one.
    for entries, words in (("0", "existed but was empty"), ("3", "existed with 3 entries"),
                           ("1000 entries_more=1", "existed with more than 1000 entries")):
        t = env.trace("e" + entries[:4], s.replace("exists=1 writable=1 fs_type=tmpfs",
                                                   f"exists=1 entries={entries} writable=1 fs_type=tmpfs"))
        text = {x["kind"]: x["text"] for x in report_json(env, t)["fixes"]}["cupy_cache"]
        expect(f"/tmp/cupy (from CUPY_CACHE_DIR) {words}, and it lies on tmpfs" in text, text)
        # A cache that held entries and still missed: keeping it is no fix.
        held = entries != "0"
        expect(text.startswith("keep CuPy's kernel cache") != held, text)
        expect(("keeping the cache does not avoid it" in text) == held, text)
    # A FIFO or a device where the cache should be: no cache can be made there.
    t = env.trace("fifo", s.replace("exists=1 writable=1 fs_type=tmpfs ephemeral=1 mount=/tmp",
                                    "exists=0 writable=0 not_dir=1"))
    text = {x["kind"]: x["text"] for x in report_json(env, t)["fixes"]}["cupy_cache"]
    expect("/tmp/cupy (from CUPY_CACHE_DIR) was not a directory and could not be made" in text, text)


@case
def test_compiles_check_budgets(env):
    t = env.trace("tri", triton_spec())
    out, _ = env.expect_rc(1, "check", "--max-compile-ms", "100", "--max-compiles", "ptxas=0",
                           "--max-first-call-ms", "1000", t)
    fl = fail_lines(out)
    expect(len(fl) == 3, out)
    expect("max-compile-ms: compiling took 400.0 ms, budget 100.0 ms (+300.0 ms); longest: ptxas "
           "400.0 ms (triton) for add_kernel from <module> (/app/tri.py:12); fix: keep Triton's kernel cache: set TRITON_CACHE_DIR"
           in fl[0], fl)
    expect("max-compiles=ptxas: 1 compile by ptxas, budget 0 (+1)" in fl[1], fl)
    expect("max-first-call-ms: first call of add_kernel from <module> (/app/tri.py:12) "
           "[triton, cache miss] took 1400.0 ms, budget 1000.0 ms (+400.0 ms); python" in fl[2],
           fl)
    env.expect_rc(0, "check", "--max-compile-ms", "ptxas=400", "--max-compile-ms", "nvrtc=0",
                  "--max-first-call-ms", "1400", t)
    _, err = env.expect_rc(2, "check", "--max-compile-ms", "gcc=3", t)
    expect("'gcc' is not a compiler" in err, err)
    _, err = env.expect_rc(2, "check", "--max-compiles", "ptxas=x", t)
    expect("is not [COMPILER=]N" in err, err)
    junit = env.path("j.xml")
    env.expect_rc(1, "check", "--max-compile-ms", "xla=0", "--max-compiles", "0", "--junit", junit,
                  t, env.trace("ov", triton_spec().replace("ptxas", "nvcc")))
    names = {c.get("name") for c in validate_junit(env, junit).iter("testcase")}
    expect({"max-compile-ms=xla", "max-compiles"} <= names, names)


@case
def test_compiles_diff_and_baseline(env):
    a = env.trace("a", triton_spec(ptxas_ms=400))
    b = env.trace("b", triton_spec(ptxas_ms=900, end_ms=3600).replace(
        "start=3000ms", "start=3500ms").replace("window_ns=1400ms", "window_ns=1900ms"))
    base = env.path("base.json")
    env.expect_rc(0, "baseline", "-o", base, a)
    doc = json.load(open(base))
    expect(doc["processes"][0]["compiles"] == {"ptxas": {"count": 1, "dur_ns": 400 * MS}}, doc)
    env.expect_rc(0, "check", "--baseline", base, a)
    out, _ = env.expect_rc(1, "check", "--baseline", base, b)
    expect("baseline-compile-time: ptxas (subprocess) time 400.0 ms -> 900.0 ms" in out, out)
    expect("slowest first call 1400.0 ms -> 1900.0 ms" in out, out)
    out, _ = env.expect_rc(0, "diff", a, b)
    expect(re.search(r"compile ptxas +400\.0 ms -> 900\.0 ms \(\+500\.0 ms", out), out)
    out, _ = env.expect_rc(0, "diff", "--json", a, b)
    c = json.loads(out)["processes"][0]["compilers"]
    expect(c == [{"compiler": "ptxas", "a_ns": 400 * MS, "b_ns": 900 * MS, "a_count": 1,
                  "b_count": 1}], c)
    # A baseline from before compiles were kept still reads; the check is skipped.
    del doc["processes"][0]["compiles"]
    json.dump(doc, open(base, "w"))
    env.expect_rc(0, "check", "--baseline", base, b.replace("b.jst", "a.jst"))
    doc["processes"][0]["compiles"] = []
    json.dump(doc, open(base, "w"))
    _, err = env.expect_rc(2, "check", "--baseline", base, a)
    expect("compiles is not an object" in err, err)


@case
def test_compiles_export(env):
    t = env.trace("tri", triton_spec())
    out, _ = env.expect_rc(0, "export", "--format", "chrome", t)
    ev = json.loads(out)
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    sl = {(e["name"], e["cat"]): e for e in ev if e.get("cat") in ("compile", "first_call")}
    ptx = sl[("ptxas: /tmp/x/add_kernel.cubin", "compile")]
    expect(ptx["dur"] == 400000 and ptx["args"]["framework"] == "triton", ptx)
    fc = sl[("first call: add_kernel from <module> (/app/tri.py:12)", "first_call")]
    expect(fc["dur"] == 1400000 and fc["args"]["subprocess"] == 400.0, fc)
    out, _ = env.expect_rc(0, "export", "--format", "prometheus", t)
    expect(re.search(r'^jitstall_compile_seconds\{.*compiler="ptxas"\} 0\.4$', out, re.M), out)
    expect(re.search(r'^jitstall_compiles\{.*compiler="ptxas"\} 1$', out, re.M), out)
    expect(re.search(r'^jitstall_first_call_seconds\{.*\} 1\.4$', out, re.M), out)
    out, _ = env.expect_rc(0, "export", "--format", "otlp", t)
    spans = json.loads(out)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    names = [s["name"] for s in spans]
    expect("compile ptxas" in names and
           "first call add_kernel from <module> (/app/tri.py:12)" in names, names)


def warm_triton_spec(probes=True, real_ptxas=False, entries=3):
    """A Triton-like second process on a warm TRITON_CACHE_DIR: Triton asks
    ptxas for its version twice (for its cache key), loads add_kernel's cubin
    from its cache and launches it; with real_ptxas, one kernel still
    compiles."""
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "tri.py"))
    s += call("cuInit", 1100, 150, seq=1)
    s += stack(1, *TRITON_FRAMES)
    if probes:
        for i, (at, pid) in enumerate(((1300, 600), (1350, 601))):
            s += (f"compile tid=100 start={at}ms dur=20ms stack_id=1 seq=2 compiler=ptxas "
                  "program=/site/triton/backends/nvidia/bin/ptxas "
                  "arg=/site/triton/backends/nvidia/bin/ptxas arg=--version "
                  f"child_pid={pid} wait_status=0\n")
    s += ("compile tid=100 start=1380ms dur=5ms seq=2 program=/usr/bin/gcc arg=gcc "
          "arg=-dumpfullversion child_pid=602 wait_status=0\n")
    if real_ptxas:
        s += ("compile tid=100 start=1400ms dur=200ms stack_id=1 seq=2 compiler=ptxas "
              "program=/site/triton/backends/nvidia/bin/ptxas arg=ptxas arg=-v "
              "arg=--gpu-name=sm_90a arg=/tmp/x/k.ptx target=sm_90a input=/tmp/x/k.ptx "
              "output=/tmp/x/k.cubin child_pid=603 wait_status=0\n")
    s += call("cuModuleLoadData", 1700, 10, image_kind="cubin", verdict="sass", sass_arch="sm_90",
              target_cc=90, kernel="add_kernel", seq=3, stack_id=1)
    s += call("cuLaunchKernel", 1800, 0.01, name="add_kernel", func="0x20", seq=4)
    s += ("fw_cache framework=triton cache_path=/root/.triton/cache env_name=TRITON_CACHE_DIR "
          f"cache_path_env=1 exists=1 entries={entries} writable=1\n")
    s += "end exit_status=0 end_reason=exit start=1900ms\n"
    return s


@case
def test_compiles_version_probes_are_not_compiles(env):
    # "ptxas --version" and "gcc -dumpfullversion" ask a compiler about
    # itself: no compile anywhere (compiles[], first calls, Culprits, fixes,
    # check budgets, exports), but dump still shows the records. A warm
    # Triton process whose only children are such probes gets no "keep
    # Triton's kernel cache" fix: its cache hit.
    t = env.trace("warm", warm_triton_spec())
    r = report_json(env, t)
    p = r["processes"][0]
    expect(p["compiles"] == [] and p["first_calls"] == [], (p["compiles"], p["first_calls"]))
    expect(not [x for x in r["fixes"] if x["kind"] in ("triton_cache", "compile_ahead")],
           r["fixes"])
    out, _ = env.expect_rc(0, "report", t)
    expect("ptxas" not in out and "Triton's kernel cache" not in out, out)
    env.expect_rc(0, "check", "--max-compiles", "0", "--max-compile-ms", "0", t)
    out, _ = env.expect_rc(0, "export", "--format", "prometheus", t)
    expect(not re.search(r'^jitstall_compiles\{.*compiler="ptxas"\} [1-9]', out, re.M), out)
    out, _ = env.expect_rc(0, "dump", t)
    expect(out.count("--version") == 2 and "-dumpfullversion" in out, out)
    # A real compile beside the probes is one compile, and keeps its fix,
    # even though the cache held entries at start (it missed for this kernel).
    r = report_json(env, env.trace("cold", warm_triton_spec(real_ptxas=True)))
    p = r["processes"][0]
    got = [(c["compiler"], c["what"]) for c in p["compiles"] if c["compiler"] != "driver"]
    expect(got == [("ptxas", "/tmp/x/k.cubin")], got)
    fx = [x for x in r["fixes"] if x["kind"] == "triton_cache"]
    expect(len(fx) == 1 and "existed with 3 entries" in fx[0]["text"], r["fixes"])


@case
def test_triton_miss_said_from_its_cache(env):
    # Triton compiled although its cache held entries: where the cache is
    # still there, the fix says why. The process started at 1700000000 s
    # (clitest's anchor); kernel directories are named by the hash of the
    # key, with NAME.json the kernel's metadata.
    cache = env.path("tcache")

    def entry(d, name, meta, when):
        os.makedirs(os.path.join(cache, d), exist_ok=True)
        f = os.path.join(cache, d, name + ".json")
        with open(f, "w") as fh:
            json.dump(meta, fh)
        os.utime(f, (when, when))
        grp = os.path.join(cache, d, "__grp__" + name + ".json")
        with open(grp, "w") as fh:
            json.dump({"child_paths": {}}, fh)

    base = {"name": "k", "num_warps": 4, "num_stages": 3, "target": {"arch": 90},
            "triton_version": "3.5.0"}
    entry("AAAA", "k", dict(base, hash="aaaa"), 1699990000)           # an earlier run
    entry("CCCC", "other", dict(base, name="other", hash="cccc"), 1699990000)
    entry("BBBB", "k", dict(base, hash="bbbb", num_warps=8, triton_version="3.6.0"),
          1700000000 + 1)                                           # this run's
    spec = warm_triton_spec(real_ptxas=True).replace("cache_path=/root/.triton/cache",
                                                     "cache_path=" + q(cache))

    def fix_text(name, sp):
        r = report_json(env, env.trace(name, sp))
        fx = [x for x in r["fixes"] if x["kind"] == "triton_cache"]
        expect(len(fx) == 1, r["fixes"])
        return fx[0]["text"]

    text = fix_text("meta", spec)
    expect("; it missed: the cache held k from an earlier run with other metadata: num_warps 4, "
           "now 8; triton_version \"3.5.0\", now \"3.6.0\"" in text, text)
    out, _ = env.expect_rc(0, "report", env.path("meta.jst"))
    expect("num_warps 4, now 8" in out, out)
    # The same metadata: the key's other inputs changed.
    with open(os.path.join(cache, "BBBB", "k.json"), "w") as fh:
        json.dump(dict(base, hash="bbbb"), fh)
    os.utime(os.path.join(cache, "BBBB", "k.json"), (1700000001, 1700000001))
    text = fix_text("same", spec)
    expect("with the same metadata, so the key's other inputs changed (the kernel's source" in text,
           text)
    # A kernel the cache did not hold by name.
    os.rename(os.path.join(cache, "BBBB", "k.json"), os.path.join(cache, "BBBB", "newk.json"))
    text = fix_text("none", spec)
    expect("it missed: none of the 1 kernel it compiled was in the cache by name" in text, text)
    # Not there any more (the report runs elsewhere), or not a directory:
    # the fix as before, nothing more.
    shutil.rmtree(cache)
    text = fix_text("gone", spec)
    expect("missed" not in text and "existed with 3 entries" in text, text)
    open(cache, "w").close()
    text = fix_text("file", spec)
    expect("missed" not in text, text)


def xla_parallel_spec():
    """A JAX-like program: an XLA compile range on the caller's thread (100),
    1100-1500 ms, during which XLA's threads (200-205) run six ptxas children
    at once (1150-1450 ms); one more ptxas child after the range (1600 ms,
    50 ms) that no framework ran; then the launch."""
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "jx.py"))
    s += launch(1050, kernel="fill", seq=1)
    s += "range range_op=push tid=100 start=1100ms name=\"XlaCompile:#module=jit_f#\" depth=1\n"
    for i in range(6):
        s += (f"compile tid={200 + i} start={1150 + i}ms dur=300ms seq=2 compiler=ptxas "
              f"program=/usr/local/cuda/bin/ptxas arg=ptxas arg=/tmp/m{i}.ptx input=/tmp/m{i}.ptx "
              f"output=/tmp/m{i}.cubin target=sm_90 child_pid={700 + i} wait_status=0\n")
    s += "range range_op=pop tid=100 start=1500ms depth=1\n"
    s += ("compile tid=100 start=1600ms dur=50ms seq=3 compiler=ptxas "
          "program=/usr/local/cuda/bin/ptxas arg=ptxas arg=/tmp/z.ptx input=/tmp/z.ptx "
          "output=/tmp/z.cubin target=sm_90 child_pid=800 wait_status=0\n")
    s += launch(1700, seq=4)
    s += end()
    return s


@case
def test_compiles_inside_a_compile_belong_to_it(env):
    # ptxas children that XLA's threads ran during an XLA compile range are
    # the range's: parent is its index, framework xla, and their fix is JAX's
    # cache, not "compile ahead of time" (which only the child after the
    # range keeps); the six parallel children are one JAX fix, not six.
    t = env.trace("xla", xla_parallel_spec())
    r = report_json(env, t)
    cs = r["processes"][0]["compiles"]
    xi = [i for i, c in enumerate(cs) if c["compiler"] == "xla"]
    expect(len(xi) == 1, cs)
    inside = [c for c in cs if c["compiler"] == "ptxas" and c["start_ns"] < 1500 * MS]
    after = [c for c in cs if c["compiler"] == "ptxas" and c["start_ns"] >= 1500 * MS]
    expect(len(inside) == 6 and all(c["parent"] == xi[0] and c["framework"] == "xla"
                                    for c in inside), inside)
    expect(cs[xi[0]]["parent"] is None and len(after) == 1 and after[0]["parent"] is None and
           after[0]["framework"] is None, (cs[xi[0]], after))
    fx = {x["kind"]: x for x in r["fixes"]}
    expect(all(c["fix"] == fx["jax_cache"]["text"] for c in inside), inside)
    expect(fx["compile_ahead"]["loads"] == 1 and fx["compile_ahead"]["saves_ns"] == 50 * MS,
           fx["compile_ahead"])
    out, _ = env.expect_rc(0, "report", t)
    cul = out.split("Culprits, ranked by time lost")[1].split("Fixes, ranked")[0]
    expect("framework xla" in cul and cul.count("compile ahead of time") == 1, cul)


@case
def test_compiles_fix_saves_no_more_than_its_first_calls(env):
    # Six ptxas children at once (1000-1480 ms, other threads) that no
    # framework ran: compiling them ahead saves their wall time once, not six
    # times; and never more than the first call they ran in took (a host
    # compiler on the caller's thread, 1400-1450 ms, opens it; it ends at the
    # launch, 1500 ms). The fixes rank by that saving.
    s = process(pid=100, exe="/opt/app/bin/app", args=("app",))
    s += launch(1010, kernel="fill", seq=1)
    for i in range(6):
        s += (f"compile tid={200 + i} start=1000ms dur=480ms seq=1 compiler=ptxas "
              f"program=/usr/local/cuda/bin/ptxas arg=ptxas arg=/tmp/m{i}.ptx input=/tmp/m{i}.ptx "
              f"output=/tmp/m{i}.cubin target=sm_90 child_pid={700 + i} wait_status=0\n")
    s += ("compile tid=100 start=1400ms dur=50ms seq=2 compiler=host_cc program=/usr/bin/gcc "
          "arg=gcc arg=-c arg=k.c input=k.c output=k.o child_pid=800 wait_status=0\n")
    s += launch(1500, seq=3)
    s += end()
    t = env.trace("par", s)
    r = report_json(env, t)
    fcs = r["processes"][0]["first_calls"]
    expect(len(fcs) == 1 and fcs[0]["dur_ns"] == 100 * MS, fcs)
    ah = [(x["target"], x["saves_ns"], x["loads"]) for x in r["fixes"] if x["kind"] == "compile_ahead"]
    expect(ah == [("ptxas", 100 * MS, 6), ("host_cc", 50 * MS, 1)], ah)
    per = [c for c in r["processes"][0]["compiles"] if c["compiler"] == "ptxas"]
    expect(len(per) == 6, per)
    out, _ = env.expect_rc(0, "report", t)
    fixes = out.split("Fixes, ranked")[1]
    expect(re.search(r"saves 100\.0 ms.*\n(.*\n)*.*saves 50\.0 ms", fixes), fixes)
    # the compilers' times are wall times too: the six ptxas took 480 ms,
    # in the Compiles line and as the Culprits' time lost
    expect("Compiles   ptxas 6 (480.0 ms), host_cc 1 (50.0 ms)" in out, out)
    expect("  1. 480.0 ms  ptxas (subprocess) -> /tmp/m0.cubin  [6 compiles, pid 100]" in out and
           "2.88 s" not in out, out)
    env.expect_rc(0, "check", "--max-compile-ms", "ptxas=480", t)
    out, _ = env.expect_rc(0, "export", "--format", "prometheus", t)
    expect(re.search(r'^jitstall_compile_seconds\{.*compiler="ptxas"\} 0\.48$', out, re.M), out)
    # Without a first call, the wall time of the six: 480 ms, not 2.88 s.
    r = report_json(env, env.trace("nofc", s.replace(launch(1500, seq=3), "")))
    ah = [x["saves_ns"] for x in r["fixes"] if x["kind"] == "compile_ahead" and
          x["target"] == "ptxas"]
    expect(ah == [480 * MS], ah)


@case
def test_compiles_other_threads_count_once_in_blame(env):
    # The caller's thread runs gcc (1400-1450 ms) and then waits in Python
    # until its launch (1500 ms) while six ptxas children that other threads
    # of the process ran at once (1000-1480 ms) finish: the wait is theirs,
    # not Python's, and they count once (the union of their intervals): the
    # first call is 80 ms of subprocesses and 20 ms of Python, and the parts
    # sum to it.
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "app.py"))
    s += launch(1010, kernel="fill", seq=1)
    for i in range(6):
        s += (f"compile tid={200 + i} start=1000ms dur=480ms seq=1 compiler=ptxas "
              f"program=/usr/local/cuda/bin/ptxas arg=ptxas arg=/tmp/m{i}.ptx input=/tmp/m{i}.ptx "
              f"output=/tmp/m{i}.cubin target=sm_90 child_pid={700 + i} wait_status=0\n")
    s += ("compile tid=100 start=1400ms dur=50ms seq=2 compiler=host_cc program=/usr/bin/gcc "
          "arg=gcc arg=-c arg=k.c input=k.c output=k.o child_pid=800 wait_status=0\n")
    s += ("sample tid=100 before_seq=3 sample_ns=100ms samples=10 period_ns=10ms window_ns=100ms "
          + frames(("wait", "/usr/lib/python3.12/threading.py", 320)) + "\n")
    s += launch(1500, seq=3)
    s += end()
    f = report_json(env, env.trace("thr", s))["processes"][0]["first_calls"]
    expect(len(f) == 1 and f[0]["dur_ns"] == 100 * MS, f)
    b = blame(f[0])
    expect(b == {"subprocess": 80 * MS, "python": 20 * MS}, b)
    expect(sum(b.values()) == f[0]["dur_ns"], b)


@case
def test_first_call_names_call_site_and_function(env):
    # A first call is named by the program's own frame that asked for it
    # (not Triton's, not the standard library's) and by the framework's
    # compiled function where the trace has one (the XLA module).
    fc = [f for f in report_json(env, env.trace("tri", triton_spec()))["processes"][0]
          ["first_calls"] if f["kernel"] == "add_kernel"]
    expect(len(fc) == 1 and fc[0]["call_site"] == "<module> (/app/tri.py:12)" and
           fc[0]["function"] == "add_kernel", fc)  # the kernel Triton compiled and loaded
    fc = report_json(env, env.trace("xla", xla_parallel_spec()))["processes"][0]["first_calls"]
    expect(len(fc) == 1 and fc[0]["function"] == "jit_f" and fc[0]["call_site"] is None, fc)
    # Without a compile's stack, the samples' frames name it.
    s = triton_spec().replace(" stack_id=1 seq=3 compiler=ptxas", " seq=3 compiler=ptxas")
    s = s.replace("(\"compile\", \"/site/triton/compiler/compiler.py\", 280))", "")
    s = s.replace(frames(("make_ttir", "/site/triton/compiler/compiler.py", 100),
                         ("compile", "/site/triton/compiler/compiler.py", 280)),
                  frames(("make_ttir", "/site/triton/compiler/compiler.py", 100),
                         ("main", "/app/tri.py", 30)))
    fc = [f for f in report_json(env, env.trace("smp", s))["processes"][0]["first_calls"]
          if f["kernel"] == "add_kernel"]
    expect(len(fc) == 1 and fc[0]["call_site"] == "main (/app/tri.py:30)", fc)


IMPORT_FRAMES = (("_call_with_frames_removed", "<frozen importlib._bootstrap>", 488),
                 ("_find_and_load", "<frozen importlib._bootstrap>", 1360),
                 ("main", "/app/tri.py", 3))


def sample(before_seq, ms, window_ms, *fs):
    return (f"sample tid=100 before_seq={before_seq} sample_ns={ms}ms samples={ms // 10} "
            f"period_ns=10ms window_ns={window_ms}ms {frames(*fs)}\n")


def warm_fw_spec(fw="triton", compiled=False):
    """A second process on a warm cache of fw (triton, inductor or numba):
    driver start-up during set-up, then the call: only `ptxas --version`
    probes, the cache key hashed (triton_key; Inductor's build_code_hash),
    imports, and the cubin loaded from the cache; with compiled, one kernel
    still compiles (a miss)."""
    s = warm_triton_spec(real_ptxas=compiled).replace("end exit_status", "#")
    s = s.replace("fw_cache framework=triton", f"fw_cache framework={fw}")
    if fw == "inductor":
        s = s.replace("/root/.triton/cache env_name=TRITON_CACHE_DIR",
                      "/tmp/torchinductor_root env_name=TORCHINDUCTOR_CACHE_DIR")
        s = s.replace(stack(1, *TRITON_FRAMES),
                      stack(1, ("compile", "/site/triton/compiler/compiler.py", 280),
                            ("codegen", "/site/torch/_inductor/codecache.py", 900),
                            ("main", "/app/tri.py", 12)))
        key = (("triton_key", "/site/triton/compiler/compiler.py", 40),
               ("build_code_hash", "/site/torch/_inductor/codecache.py", 600),
               ("main", "/app/tri.py", 12))
    elif fw == "numba":
        key = (("typeof_pyval", "/site/numba/core/typing/typeof.py", 30),
               ("compile", "/site/numba_cuda/numba/cuda/dispatcher.py", 900),
               ("main", "/app/tri.py", 12))
    else:
        key = (("read", "/usr/lib/python3.12/hashlib.py", 90),
               ("triton_key", "/site/triton/compiler/compiler.py", 40),
               ("run", "/site/triton/runtime/jit.py", 600),
               ("main", "/app/tri.py", 12))
    s += sample(4, 400, 600, *key)
    s += sample(4, 110, 600, ("<module>", "/site/triton/language/core.py", 1), *IMPORT_FRAMES)
    s += sample(4, 40, 600, ("helper", "/app/util.py", 9), ("main", "/app/tri.py", 12))
    s += "end exit_status=0 end_reason=exit start=1900ms\n"
    return s


@case
def test_fw_cache_hit_gets_no_cache_fix_and_its_time_named(env):
    # A warm Triton cache: nothing compiled, the cache held 3 entries at
    # start. Its outcome is a hit (first call, framework_caches); no "keep
    # Triton's kernel cache" fix; the first call's time is named by phase
    # (cache-key hashing in triton_key, imports) with Triton's AOT path.
    t = env.trace("warm", warm_fw_spec())
    r = report_json(env, t)
    p = r["processes"][0]
    kinds = {x["kind"]: x for x in r["fixes"]}
    expect("triton_cache" not in kinds, r["fixes"])
    fx = kinds.get("framework_aot")
    expect(fx and "Triton's kernel cache hit" in fx["text"] and
           "cache-key hashing (triton_key)" in fx["text"] and "triton.tools.compile" in
           fx["text"] and "existed with 3 entries" in fx["text"], r["fixes"])
    fc = p["first_calls"]
    expect(len(fc) == 1 and fc[0]["cache"] == "hit" and fc[0]["framework"] == "triton", fc)
    ph = {x["phase"]: x for x in fc[0]["phases"]}
    expect(ph["cache_key"]["func"] == "triton_key" and ph["import"]["func"] == "<module>" and
           ph["import"]["file"] == "/site/triton/language/core.py" and
           ph["other"]["func"] == "helper", ph)
    expect(sum(x["dur_ns"] for x in fc[0]["phases"]) == blame(fc[0])["python"], (ph, fc[0]))
    expect(ph["cache_key"]["dur_ns"] > 3 * ph["import"]["dur_ns"], ph)
    expect(fx["saves_ns"] == ph["cache_key"]["dur_ns"], fx)
    expect([(c["framework"], c["outcome"], c["used"]) for c in p["framework_caches"]] ==
           [("triton", "hit", True)], p["framework_caches"])
    out, _ = env.expect_rc(0, "report", t)
    expect(re.search(r"^\s+cache-key hashing \(triton_key\)\s+\d", out, re.M) and
           "[triton, cache hit]" in out, out)
    out, _ = env.expect_rc(0, "report", "--markdown", t)
    out = out.replace("\\_", "_")
    expect("[cache-key hashing (triton_key)" in out and "triton (cache hit)" in out, out)
    # The cold process (a kernel compiled although the cache held entries):
    # a miss, and the cache fix stays.
    r = report_json(env, env.trace("cold", warm_fw_spec(compiled=True)))
    p = r["processes"][0]
    kinds = {x["kind"] for x in r["fixes"]}
    expect("triton_cache" in kinds and "framework_aot" not in kinds, r["fixes"])
    expect([c["cache"] for c in p["compiles"] if c["compiler"] == "ptxas"] == ["miss"],
           p["compiles"])
    expect([f["cache"] for f in p["first_calls"]] == ["miss"], p["first_calls"])


@case
def test_fw_cache_hit_inductor_and_numba(env):
    # Inductor on a warm TORCHINDUCTOR_CACHE_DIR: Triton's key hashed from
    # Inductor's build_code_hash is Inductor's time; its next remedy is
    # AOTInductor. Numba has no ahead-of-time path: per-process cost.
    r = report_json(env, env.trace("ind", warm_fw_spec("inductor")))
    kinds = {x["kind"]: x["text"] for x in r["fixes"]}
    expect("inductor_cache" not in kinds and "triton_cache" not in kinds, kinds)
    expect("Inductor's cache hit" in kinds.get("framework_aot", "") and
           "AOTInductor" in kinds["framework_aot"] and
           "cache-key hashing (triton_key)" in kinds["framework_aot"], kinds)
    fc = r["processes"][0]["first_calls"]
    expect([(f["framework"], f["cache"]) for f in fc] == [("inductor", "hit")], fc)
    r = report_json(env, env.trace("indc", warm_fw_spec("inductor", compiled=True)))
    kinds = {x["kind"] for x in r["fixes"]}
    expect("inductor_cache" in kinds and "framework_aot" not in kinds, r["fixes"])
    r = report_json(env, env.trace("nb", warm_fw_spec("numba")))
    kinds = {x["kind"]: x["text"] for x in r["fixes"]}
    expect("numba_cache" not in kinds and "per-process cost of the framework" in
           kinds.get("framework_cost", "") and "type inference (typeof_pyval)" in
           kinds["framework_cost"], kinds)


@case
def test_first_call_window_starts_after_driver_setup(env):
    # Numba-like: the program sets up (cuInit, context) while the sampler
    # already runs, then calls its kernel: NVVM compiles, the module loads,
    # the kernel launches. The first call starts where set-up ended, not at
    # the first sample: driver start-up is no part of it.
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "nb.py"))
    s += call("cuInit", 1100, 200, seq=1)
    s += call("cuDevicePrimaryCtxRetain", 1310, 100, seq=2)
    s += stack(1, ("compile_cuda", "/site/numba_cuda/numba/cuda/compiler.py", 10),
               ("main", "/app/nb.py", 7))
    s += call("nvvmCompileProgram", 1700, 300, stack_id=1, seq=3)
    s += call("cuModuleLoadData", 2100, 10, image_kind="cubin", verdict="sass", sass_arch="sm_90",
              target_cc=90, kernel="axpy", seq=4, stack_id=1)
    s += ("sample tid=100 before_seq=5 sample_ns=1000ms samples=100 period_ns=10ms "
          "window_ns=1500ms start=1000ms " +
          frames(("typeinfer", "/site/numba/core/typeinfer.py", 5), ("main", "/app/nb.py", 7)) +
          "\n")
    s += call("cuLaunchKernel", 2500, 0.01, name="axpy", func="0x20", seq=5)
    s += end()
    fc = report_json(env, env.trace("nb", s))["processes"][0]["first_calls"]
    expect(len(fc) == 1, fc)
    b = blame(fc[0])
    expect(fc[0]["start_ns"] == 1410 * MS and fc[0]["dur_ns"] == 1090 * MS, fc)
    expect("driver_init" not in b and b["runtime_compiler"] == 300 * MS, b)


def mlp_spec():
    """torch.compile of an MLP: the first kernel the call launched is a
    cuBLAS gemm, but the call compiled a Triton kernel for Inductor."""
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "mlp.py"))
    s += call("cuInit", 1100, 150, seq=1)
    s += call("cuLaunchKernel", 1500, 0.01, name="fill", func="0x10", seq=2)
    s += stack(1, ("make_cubin", "/site/triton/backends/nvidia/compiler.py", 300),
               ("codegen", "/site/torch/_inductor/codecache.py", 900),
               ("forward", "/app/mlp.py", 20))
    s += ("compile tid=100 start=2000ms dur=400ms stack_id=1 seq=2 compiler=ptxas "
          "program=/site/triton/backends/nvidia/bin/ptxas target=sm_90a child_pid=555 "
          "wait_status=0\n")
    s += call("cuModuleLoadData", 2500, 10, image_kind="cubin", verdict="sass", sass_arch="sm_90",
              target_cc=90, kernel="triton_poi_fused_gelu_0", seq=3, stack_id=1)
    s += call("cuLaunchKernel", 2600, 0.01, name="sm90_xmma_gemm_bf16", func="0x30", seq=4)
    s += call("cuLaunchKernel", 2700, 0.01, name="triton_poi_fused_gelu_0", func="0x20", seq=5)
    return s + end()


@case
def test_first_call_named_by_call_site_and_function(env):
    # Text and Markdown name the first call by the Triton kernel and the
    # program's call site; the gemm is only its first kernel.
    t = env.trace("mlp", mlp_spec())
    fc = report_json(env, t)["processes"][0]["first_calls"]
    expect([(f["kernel"], f["function"], f["call_site"]) for f in fc] ==
           [("sm90_xmma_gemm_bf16", "triton_poi_fused_gelu_0", "forward (/app/mlp.py:20)")], fc)
    out, _ = env.expect_rc(0, "report", t)
    expect(re.search(r"^    triton_poi_fused_gelu_0 from forward \(/app/mlp.py:20\)  ", out, re.M)
           and "      first kernel sm90_xmma_gemm_bf16" in out, out)
    expect("Slowest first call  triton_poi_fused_gelu_0 from forward" in out, out)
    out, _ = env.expect_rc(0, "report", "--markdown", t)
    out = out.replace("\\_", "_")
    expect("| triton_poi_fused_gelu_0 from forward (/app/mlp.py:20) (first kernel "
           "sm90_xmma_gemm_bf16) |" in out, out)


def build_run(env, d, build_dir, children_ms=((1200, 500, "nvcc", "sm_90", "a.o"),
                                             (1250, 500, "ptxas", "sm_90", "b.cubin"),
                                             (1800, 300, "host_cc", None, "m.so"))):
    """A Python parent (pid 100) that waits 1100-2200 ms for a build tool
    (pid 300, `ninja -C build_dir`), whose own trace has its compilers (two in
    parallel), and a 5 ms `uname` child before it; then the first launch."""
    parent = process(pid=100, exe="/usr/bin/python3", args=("python3", "ext.py"))
    parent += launch(1050, kernel="fill", seq=1)
    parent += child(1060, 5, 299, 0, "/usr/bin/uname", 2, compiler="build", arg="uname")
    parent += child(1100, 1100, 300, 0, "/usr/bin/ninja", 3, compiler="build",
                    arg=f"ninja arg=-C arg={build_dir}", cwd="/home/u")
    parent += launch(2210, kernel="my_op", seq=4)
    parent += end()
    tool = process(pid=300, exe="/usr/bin/ninja", args=("ninja",)).replace("ppid=1", "ppid=100")
    for k, (s, dur, cc, tgt, out) in enumerate(children_ms):
        more = {"compiler": cc, "output": out}
        if tgt:
            more["target"] = tgt
        tool += child(s, dur, 400 + k, 0, "/usr/bin/" + cc, k, **more).replace("tid=100", "tid=300")
    tool += end()
    env.trace("parent", parent, subdir=d)
    env.trace("tool", tool, subdir=d)
    # nvcc's own trace (pid 400, under the tool): its cicc. Named to come
    # first in the run, before the traces above it.
    nv = process(pid=400, exe="/usr/bin/nvcc", args=("nvcc",)).replace("ppid=1", "ppid=300")
    nv += child(1210, 200, 500, 0, "/usr/bin/cicc", 0, compiler="cicc", output="a.ptx").replace(
        "tid=100", "tid=400")
    nv += end()
    env.trace("a_nvcc", nv, subdir=d)
    return report_json(env, env.path(d))


@case
def test_compiles_build_tool_is_a_compile_with_children(env):
    # A build tool the parent waited for is a compile row (`build`) whose
    # span holds its descendants' compiles: they tie to it (parent,
    # parent_pid), its wait counts first in blame as `build` (the two
    # parallel children once), the Culprits rank the build, not its
    # compilers, and a short child (uname) is no row at all.
    r = build_run(env, "lib", "/home/u/.cache/flashinfer/90/jit")
    p = [x for x in r["processes"] if x["pid"] == 100][0]
    rows = [c for c in p["compiles"] if c["compiler"] == "build"]
    expect(len(rows) == 1 and rows[0]["what"] == "/usr/bin/ninja", p["compiles"])
    expect(rows[0]["dir"] == "/home/u/.cache/flashinfer/90/jit" and rows[0]["culprit"], rows)
    bi = p["compiles"].index(rows[0])
    t = [x for x in r["processes"] if x["pid"] == 300][0]
    expect(all(c["parent"] == bi and c["parent_pid"] == 100 and not c["culprit"]
               for c in t["compiles"]), t["compiles"])
    # a level further down: cicc in nvcc's trace is under the tool's nvcc row
    nv = [x for x in r["processes"] if x["pid"] == 400][0]["compiles"]
    ni = [k for k, c in enumerate(t["compiles"]) if c["compiler"] == "nvcc"][0]
    expect(len(nv) == 1 and nv[0]["parent"] == ni and nv[0]["parent_pid"] == 300, nv)
    expect(not nv[0]["culprit"] and nv[0]["fix"] is None, nv)
    f = [x for x in p["first_calls"] if x["kernel"] == "my_op"][0]
    b = blame(f)
    expect(b["build"] == 1100 * MS and sum(b.values()) == f["dur_ns"], b)
    # the library's own cache named; no compile_ahead for the compilers
    fx = [x for x in r["fixes"] if x["kind"] == "extension_cache"]
    expect(len(fx) == 1 and "keep /home/u/.cache/flashinfer, the library's own build cache"
           in fx[0]["text"], r["fixes"])
    expect(fx[0]["saves_ns"] <= f["dur_ns"], fx)
    expect(not any(x["kind"] == "compile_ahead" for x in r["fixes"]), r["fixes"])
    # check's per-compiler budget names the build
    out, _ = env.expect_rc(1, "check", "--max-compile-ms=build=1000", env.path("lib"))
    expect("max-compile-ms=build" in out, out)
    env.expect_rc(0, "check", "--max-compile-ms=build=2000", env.path("lib"))
    txt, _ = env.expect_rc(0, "report", env.path("lib"))
    expect("Build tree" in txt and "`- nvcc" in txt and "-> a.o" in txt, txt)
    # The build's own processes (the tool, nvcc) are in its tree: no answer
    # line, no process block, no pool of their own; the first call is named
    # by its kernel and call site, not by the build tool's program.
    head = txt.split("\njitstall report:")[0]
    expect(head.startswith("pid 100 ") and "pid 300" not in head and "pid 400" not in head, head)
    expect("Process 300" not in txt and "Pool " not in txt and " worker" not in txt, txt)
    expect("Slowest first call  /usr/bin/ninja" not in txt, txt)


@case
def test_compiles_build_tool_verbose_is_no_probe(env):
    # torch runs `ninja -v`: for a build tool a one-letter option is no
    # version probe (it is for a compiler: `gcc -v`), so the build is a row,
    # its wait is `build` in blame, and the compiles under it tie to it.
    parent = process(pid=100, exe="/usr/bin/python3", args=("python3", "ext.py"))
    parent += launch(1050, kernel="fill", seq=1)
    parent += child(1060, 150, 298, 0, "/usr/bin/gcc", 2, arg="gcc arg=-v")
    parent += child(1300, 900, 300, 0, "/usr/bin/ninja", 3, compiler="build", arg="ninja arg=-v",
                    cwd="/srv/app/build")
    parent += launch(2210, kernel="my_op", seq=4)
    parent += end()
    tool = process(pid=300, exe="/usr/bin/ninja", args=("ninja", "-v")).replace("ppid=1", "ppid=100")
    tool += child(1400, 700, 400, 0, "/usr/bin/nvcc", 0, compiler="nvcc", target="sm_90",
                  output="k.cuda.o").replace("tid=100", "tid=300")
    tool += end()
    env.trace("parent", parent, subdir="v")
    env.trace("tool", tool, subdir="v")
    r = report_json(env, env.path("v"))
    p = [x for x in r["processes"] if x["pid"] == 100][0]
    expect([(c["compiler"], c["what"]) for c in p["compiles"]] == [("build", "/usr/bin/ninja")],
           p["compiles"])
    f = [x for x in p["first_calls"] if x["kernel"] == "my_op"][0]
    expect(blame(f)["build"] == 900 * MS, f["blame"])
    t = [x for x in r["processes"] if x["pid"] == 300][0]
    expect([(c["parent_pid"], c["culprit"]) for c in t["compiles"]] == [(100, False)], t["compiles"])


@case
def test_nvrtc_output_named_by_its_program(env):
    # A program compiles kernels.cu with NVRTC and passes the PTX to
    # cuModuleLoadData: no file holds those bytes, so the load is named by
    # the NVRTC program (nvrtcCreateProgram's name), not by its hash; JSON
    # keeps the hash and says rtc_program.
    s = process()
    s += call("cuInit", 1100, 50, seq=1)
    s += call("nvrtcCompileProgram", 1200, 30, name="compute_90", rtc_program="kernels.cu",
              rtc_ptx_hash="0x1234", seq=2)
    s += call("cuModuleLoadData", 1300, 900, image_kind="ptx", image_hash="0x1234", image_size=100,
              verdict="ptx_jit", jit_from="compute_90", target_cc=90, kernel=KERNEL,
              reason=q("PTX compute_90 only; GPU is sm_90"), cache="miss_stored",
              cache_reason="none", seq=3)
    s += launch(2300, seq=4)
    s += end()
    t = env.trace("rtc", s)
    out, _ = env.expect_rc(0, "report", t)
    expect("NVRTC program kernels.cu (via cuModuleLoadData)" in out and "image in memory" not in out,
           out)
    m = [x for x in report_json(env, t)["processes"][0]["modules"]
         if x["call"] == "cuModuleLoadData"][0]
    expect(m["rtc_program"] == "kernels.cu" and m["read_from"] is None and
           m["image_hash"] == "0x0000000000001234", m)


@case
def test_compiles_build_fix_by_directory(env):
    # Under the torch extensions' directory: TORCH_EXTENSIONS_DIR; elsewhere:
    # build it when the package is installed.
    r = build_run(env, "torch", "/home/u/.cache/torch_extensions/py311_cu124/my_op")
    fx = [x for x in r["fixes"] if x["kind"] == "extension_cache"]
    expect(len(fx) == 1 and "TORCH_EXTENSIONS_DIR" in fx[0]["text"] and
           "under /home/u/.cache/torch_extensions" in fx[0]["text"], fx)
    r = build_run(env, "plain", "/srv/app/build")
    fx = [x for x in r["fixes"] if x["kind"] == "extension_cache"]
    expect(len(fx) == 1 and fx[0]["text"].startswith("build it when the package is installed"), fx)

@case
def test_check_names_first_call_as_report_does(env):
    # --max-first-call-ms names the first call as the report does: the
    # Triton kernel Inductor compiled, from the program's call site, the
    # cuBLAS gemm that launched first only aside.
    t = env.trace("mlp", mlp_spec())
    out, _ = env.expect_rc(1, "check", "--max-first-call-ms", "100", t)
    fl = fail_lines(out)
    expect(len(fl) == 1 and "max-first-call-ms: first call of triton_poi_fused_gelu_0 from "
           "forward (/app/mlp.py:20) (first kernel sm90_xmma_gemm_bf16) [inductor, cache miss] "
           "took " in fl[0], fl)
    # A warm process: its framework's cache hit, and its Python time's
    # largest phase beside the Python cause, as the report shows them.
    w = env.trace("warm", warm_fw_spec())
    ph = report_json(env, w)["processes"][0]["first_calls"][0]["phases"][0]
    out, _ = env.expect_rc(1, "check", "--max-first-call-ms", "100", w)
    fl = fail_lines(out)
    expect(len(fl) == 1 and "[triton, cache hit] took 550.0 ms" in fl[0] and
           re.search(r"; python [\d.]+ ms \(cache_key %.1f ms\)" % (ph["dur_ns"] / MS), fl[0]) and
           ph["phase"] == "cache_key", (fl, ph))
    # The longest compile of a compile budget is named by the first call it
    # was for, not by that call's first kernel.
    out, _ = env.expect_rc(1, "check", "--max-compile-ms", "100", t)
    fl = fail_lines(out)
    expect(len(fl) == 1 and "longest: ptxas 400.0 ms (inductor) for triton_poi_fused_gelu_0 "
           "from forward (/app/mlp.py:20); fix" in fl[0] and "sm90_xmma" not in fl[0], fl)


def chrome_first_calls(env, t):
    ev = json.loads(env.expect_rc(0, "export", "--format", "chrome", t)[0])
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    return [e for e in ev if e.get("cat") == "first_call"]


def otlp_first_calls(env, t):
    out, _ = env.expect_rc(0, "export", "--format", "otlp", t)
    spans = json.loads(out)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return [(s["name"], {a["key"]: list(a["value"].values())[0] for a in s["attributes"]})
            for s in spans if s["name"].startswith("first call")]


@case
def test_export_names_first_call_with_phases_and_cache(env):
    # Chrome, OTLP and Prometheus name a first call as the report does
    # (function, call site, kernel) and carry its framework cache outcome
    # and its Python time by phase.
    t = env.trace("mlp", mlp_spec())
    fc = chrome_first_calls(env, t)
    expect(len(fc) == 1 and fc[0]["name"] == "first call: triton_poi_fused_gelu_0 from forward "
           "(/app/mlp.py:20) (first kernel sm90_xmma_gemm_bf16)", fc)
    a = fc[0]["args"]
    expect(a["function"] == "triton_poi_fused_gelu_0" and
           a["call_site"] == "forward (/app/mlp.py:20)" and a["kernel"] == "sm90_xmma_gemm_bf16",
           a)
    sp = otlp_first_calls(env, t)
    expect(len(sp) == 1 and sp[0][0] == "first call triton_poi_fused_gelu_0 from forward "
           "(/app/mlp.py:20) (first kernel sm90_xmma_gemm_bf16)", sp)
    # A compile names the first call it was for the same way.
    ev = json.loads(env.expect_rc(0, "export", "--format", "chrome", t)[0])
    ev = ev["traceEvents"] if isinstance(ev, dict) else ev
    cs = [e for e in ev if e.get("cat") == "compile"]
    expect(len(cs) == 1 and cs[0]["args"]["first_call"] ==
           "triton_poi_fused_gelu_0 from forward (/app/mlp.py:20)", cs)
    out, _ = env.expect_rc(0, "export", "--format", "otlp", t)
    cs = [{a["key"]: list(a["value"].values())[0] for a in x["attributes"]} for x in
          json.loads(out)["resourceSpans"][0]["scopeSpans"][0]["spans"]
          if x["name"] == "compile ptxas"]
    expect(len(cs) == 1 and cs[0]["jitstall.first_call"] ==
           "triton_poi_fused_gelu_0 from forward (/app/mlp.py:20)", cs)
    at = sp[0][1]
    expect(at["jitstall.function"] == "triton_poi_fused_gelu_0" and
           at["jitstall.call_site"] == "forward (/app/mlp.py:20)" and
           at["jitstall.kernel"] == "sm90_xmma_gemm_bf16", at)
    # A warm Triton process: a cache hit, its time in cache-key hashing,
    # imports and other Python.
    t = env.trace("warm", warm_fw_spec())
    ph = {x["phase"]: x["dur_ns"] for x in
          report_json(env, t)["processes"][0]["first_calls"][0]["phases"]}
    expect(set(ph) == {"cache_key", "import", "other"}, ph)
    a = chrome_first_calls(env, t)[0]["args"]
    expect(a["cache"] == "hit" and a["framework"] == "triton" and
           a["phases"] == {k: v / MS for k, v in ph.items()} and
           list(a["phases"]) == sorted(ph, key=lambda k: -ph[k]), a)
    at = otlp_first_calls(env, t)[0][1]
    expect(at["jitstall.cache"] == "hit" and
           {k: int(at[f"jitstall.phase.{k}_ns"]) for k in ph} == ph, at)
    out, _ = env.expect_rc(0, "export", "--format", "prometheus", t)
    for k, v in ph.items():
        expect(re.search(r'^jitstall_first_call_phase_seconds\{.*,phase="%s"\} %s$' %
                         (k, re.escape("%.9g" % (v / 1e9))), out, re.M), (k, out))
    expect(re.search(r'^jitstall_framework_cache_outcomes\{.*,framework="triton",'
                     r'outcome="hit"\} 1$', out, re.M) and
           re.search(r'^jitstall_framework_cache_outcomes\{.*,framework="triton",'
                     r'outcome="miss"\} 0$', out, re.M), out)
    out, _ = env.expect_rc(0, "export", "--format", "prometheus",
                           env.trace("cold", warm_fw_spec(compiled=True)))
    expect(re.search(r'^jitstall_framework_cache_outcomes\{.*,framework="triton",'
                     r'outcome="miss"\} 1$', out, re.M), out)


@case
def test_diff_says_framework_cache_and_phases(env):
    # A cold process (Triton compiled a kernel: its cache missed) against a
    # warm one (a hit): diff says the outcome changed, and which phases of
    # the slowest first call changed time.
    a = env.trace("cold", warm_fw_spec(compiled=True).replace(
        "sample tid=100 before_seq=4 sample_ns=400ms", "sample tid=100 before_seq=4 "
        "sample_ns=200ms"))
    b = env.trace("warm", warm_fw_spec())
    pa = {x["phase"]: x["dur_ns"] for x in
          report_json(env, a)["processes"][0]["first_calls"][0]["phases"]}
    pb = {x["phase"]: x["dur_ns"] for x in
          report_json(env, b)["processes"][0]["first_calls"][0]["phases"]}
    expect(pa["cache_key"] != pb["cache_key"], (pa, pb))
    out, _ = env.expect_rc(0, "diff", a, b)
    expect(re.search(r"^  triton cache +miss -> hit$", out, re.M), out)
    expect(re.search(r"^  first call phase cache_key +%s ms -> %s ms \(\+" %
                     (re.escape("%.1f" % (pa["cache_key"] / MS)),
                      re.escape("%.1f" % (pb["cache_key"] / MS))), out, re.M), out)
    out, _ = env.expect_rc(0, "diff", "--json", a, b)
    p = json.loads(out)["processes"][0]
    expect(p["framework_caches"] == [{"framework": "triton", "a": "miss", "b": "hit"}],
           p["framework_caches"])
    ph = {x["phase"]: (x["a_ns"], x["b_ns"]) for x in p["first_call_phases"]}
    expect(ph["cache_key"] == (pa["cache_key"], pb["cache_key"]), ph)
    # The same run twice: neither line.
    out, _ = env.expect_rc(0, "diff", b, b)
    expect("triton cache" not in out and "first call phase" not in out, out)


@case
def test_jax_miss_said_from_its_cache(env):
    # JAX's persistent cache was on and JAX compiled anyway: where the cache
    # is still there, its fix says why, per module. Entries are files named
    # MODULE-<64 hex> (some versions add -cache and -atime); the process
    # lived from 1700000000 s (clitest's anchor) for about a second.
    cache = env.path("jcache")
    os.makedirs(cache)

    def entry(name, when):
        f = os.path.join(cache, name)
        with open(f, "w") as fh:
            fh.write("x")
        os.utime(f, (when, when))

    entry("jit_f-" + "a" * 64, 1699990000)            # an earlier run's, another key
    entry("jit_h-" + "b" * 64 + "-cache", 1700000001)  # written by this run
    entry("jit_h-" + "b" * 64 + "-atime", 1700000001)
    entry("jit_g-" + "z" * 64, 1699990000)            # no entry: not hex
    os.makedirs(os.path.join(cache, "jit_k-" + "c" * 64))  # a directory: no entry
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "app.py"))
    s += call("cuInit", 1010, 5)
    for name, at, ms in (("jit_f", 1100, 200), ("jit_g", 1400, 300), ("jit_h", 1800, 1500),
                         ("jit_k", 3400, 1200)):
        s += f"range range_op=push tid=100 start={at}ms name=\"XlaCompile:#module={name}#\" depth=1\n"
        s += f"range range_op=pop tid=100 start={at + ms}ms depth=1\n"
    s += launch(4700, seq=3)
    s += (f"fw_cache framework=jax cache_path={q(cache)} env_name=JAX_COMPILATION_CACHE_DIR "
          "cache_path_env=1 exists=1 writable=1 entries=3\n")
    s += end()
    r = report_json(env, env.trace("jax", s))
    fx = [x for x in r["fixes"] if x["kind"] == "jax_cache"]
    expect(len(fx) == 1, r["fixes"])
    text = fx[0]["text"]
    expect(text.startswith("keep JAX's persistent compilation cache: JAX_COMPILATION_CACHE_DIR")
           and "off by default" not in text, text)
    expect("it missed: the cache held jit_f from an earlier run under another key: the "
           "computation (shapes, dtypes, code), jaxlib, XLA flags, compile options or GPUs "
           "changed" in text, text)
    expect("JAX did not keep jit_g (0.30 s): it keeps compiles of at least "
           "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS (1 s unless set); set it to 0" in text, text)
    expect("JAX did not keep jit_k: under JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES" in text, text)
    expect("jit_h" not in text, text)
    out, _ = env.expect_rc(0, "report", env.path("jax.jst"))
    expect("JAX did not keep jit_g (0.30 s)" in out, out)
    # The cache gone where the report runs: only what the trace says.
    shutil.rmtree(cache)
    text = [x for x in report_json(env, env.trace("gone", s))["fixes"]
            if x["kind"] == "jax_cache"][0]["text"]
    expect("it missed" not in text and "did not keep" not in text, text)




def no_build_run(env, d, **traces):
    """Writes the traces into d and checks that pid 100 has no build row and
    the run no extension_cache fix; returns the report and pid 100's entry."""
    for name, text in traces.items():
        env.trace(name, text, subdir=d)
    r = report_json(env, env.path(d))
    p = [x for x in r["processes"] if x["pid"] == 100][0]
    expect(not [c for c in p["compiles"] if c["compiler"] == "build"], p["compiles"])
    expect(not [x for x in r["fixes"] if x["kind"] == "extension_cache"], r["fixes"])
    return r, p


@case
def test_compiles_worker_and_program_children_are_no_build(env):
    # Two children the program waited for only at the end, or that compiled
    # nothing, are no build (seen on the H200: torch.compile's compile-worker
    # pool, reaped at exit, was a 13 s "build" that held every first call and
    # got "build it when the package is installed"; a CUDA program run as a
    # child, whose only work was its own driver cache hit, was one too).
    # (1) A worker pool (pid 300) started at 1060 ms and reaped at 6 s; the
    # thread that started it launched kernels meanwhile; the worker's ptxas
    # ran 1200-1700 ms.
    parent = process(pid=100, exe="/usr/bin/python3", args=("python3", "serve.py"))
    parent += launch(1050, kernel="fill", seq=1)
    parent += child(1060, 4940, 300, 0, "/usr/bin/python3", 2, compiler="build",
                    arg="python3 arg=-m arg=torch._inductor.compile_worker")
    parent += launch(1800, kernel="triton_poi_fused_0", seq=3)
    parent += launch(1900, kernel="triton_poi_fused_0", seq=4)
    parent += end()
    worker = process(pid=300, exe="/usr/bin/python3", args=("python3", "-m", "worker")).replace(
        "ppid=1", "ppid=100")
    worker += child(1200, 500, 400, 0, "/site/torch/bin/ptxas", 0, compiler="ptxas",
                    target="sm_90", output="k.cubin").replace("tid=100", "tid=300")
    worker += end()
    r, p = no_build_run(env, "pool", parent=parent, worker=worker)
    f = [x for x in p["first_calls"] if x["kernel"] == "triton_poi_fused_0"]
    expect(f and "build" not in blame(f[0]) and blame(f[0]).get("subprocess", 0) == 500 * MS,
           f and blame(f[0]))
    # (2) A CUDA program (pid 310) the parent ran and waited for 1.1 s: its
    # trace has only its own driver load, a cache hit. No build.
    parent = process(pid=100, exe="/usr/bin/python3", args=("python3", "bench.py"))
    parent += launch(1050, kernel="fill", seq=1)
    parent += child(1100, 1100, 310, 0, "/opt/app/bin/query", 2, compiler="build",
                    arg="/opt/app/bin/query")
    parent += launch(2210, kernel="my_op", seq=4)
    parent += end()
    prog = process(pid=310, exe="/opt/app/bin/query", args=("query",), start_ms=1100).replace(
        "ppid=1", "ppid=100")
    prog += jit_load(1150, 3, cache="hit").replace("call call", "call tid=310 call")
    prog += launch(1160, kernel="q").replace("call call", "call tid=310 call")
    prog += end()
    no_build_run(env, "prog", parent=parent, prog=prog)
    # The same child with a compiler in its tree is a build (the rule cuts
    # only what built nothing).
    prog2 = prog.replace("end exit_status", child(1170, 400, 320, 0, "/usr/bin/nvcc", 9,
                                                  compiler="nvcc", output="x.o").replace(
        "tid=100", "tid=310") + "end exit_status")
    env.trace("parent", parent, subdir="prog2")
    env.trace("prog", prog2, subdir="prog2")
    r = report_json(env, env.path("prog2"))
    p = [x for x in r["processes"] if x["pid"] == 100][0]
    expect(len([c for c in p["compiles"] if c["compiler"] == "build"]) == 1, p["compiles"])


def h200(name):
    d = os.path.join(os.environ.get("JST_FIXTURES", os.path.join(HERE, "..", "fixtures")),
                     "h200", name)
    if not os.path.isdir(d):
        raise Skip(f"tests/fixtures/h200/{name} is not there")
    return d


@case
def test_compiles_h200_traces_builds_fixes_and_first_calls(env):
    # Traces from the H200 (tests/gpu, torch 2.11, CuPy 14): the compile
    # worker pool that torch.compile starts and reaps at exit made every
    # first call a "build" with the fix "build it when the package is
    # installed". (a) cold torch.compile: Python is the largest cause, as
    # cProfile says, and the fix is Inductor's cache.
    r = report_json(env, h200("cold_compile"))
    p = [x for x in r["processes"] if x["pid"] == 2690][0]
    expect(not [c for c in p["compiles"] if c["compiler"] == "build"], p["compiles"])
    f = [x for x in p["first_calls"] if x["kernel"] == "triton_poi_fused_add_cos_mul_sin_0"][0]
    b = blame(f)
    expect(max(b, key=b.get) == "python" and "build" not in b, b)
    expect([x["kind"] for x in r["fixes"]] == ["inductor_cache"], r["fixes"])
    # (b) the warm second process: the call hits, one ahead-of-time fix (not
    # one per first call: torch.ones' fill kernel is none), no cache fix.
    r = report_json(env, h200("warm_compile"))
    kinds = [x["kind"] for x in r["fixes"]]
    expect(kinds == ["framework_aot"], r["fixes"])
    p = [x for x in r["processes"] if x["pid"] == 931][0]
    f = [x for x in p["first_calls"] if x["kernel"] == "triton_poi_fused_add_cos_mul_sin_0"][0]
    expect(f["cache"] == "hit" and "build" not in blame(f), f)
    # The call is the program's: named by the user's line, not by the code
    # Inductor generated into its cache directory and ran; and torch.ones'
    # fill kernel, launched while torch's compiler was imported, is no first
    # call of the framework (it is not the framework's function).
    expect(f["call_site"] == "setup_compile.<locals>.call "
           "(/work/main/tests/gpu/fw_first_call.py:50)", f["call_site"])
    expect([x["kernel"] for x in p["first_calls"]] == ["triton_poi_fused_add_cos_mul_sin_0"],
           p["first_calls"])
    # (c) a third process on a warm bundle: the CUDA program it ran as a
    # child (a driver cache hit) is no build. CuPy's one NVRTC compile there
    # is its cache-key probe (_preprocess of an empty program, from
    # _compile_with_cache_cuda, in every process): no compile, no culprit, no
    # fix; CuPy's cache hit, and its time is cache-key hashing.
    r = report_json(env, h200("bundle_third"))
    p = [x for x in r["processes"] if x["pid"] == 1647][0]
    expect(not [c for c in p["compiles"] if c["compiler"] in ("build", "nvrtc")], p["compiles"])
    kinds = {x["kind"]: x["text"] for x in r["fixes"]}
    expect(not {"rtc_cache", "extension_cache", "cupy_cache", "inductor_cache"} & set(kinds),
           r["fixes"])
    f = [x for x in p["first_calls"] if x["framework"] == "cupy"]
    expect(len(f) == 1 and f[0]["cache"] == "hit" and
           "cache_key" in [x["phase"] for x in f[0]["phases"]], f)
    expect("per-process cost" in kinds.get("framework_cost", ""), kinds)
    out, _ = env.expect_rc(0, "report", h200("bundle_third"))
    expect("(failed load)" not in out, out)


@case
def test_compiles_compiler_children_and_quiet_children_fold(env):
    # Seen on the H200: a cold Triton program's first screen gave gcc-real and
    # collect2 (the launcher's build, followed by the preload) an answer line
    # and a process block each ("no kernel launched"), and torch.compile's
    # idle worker-pool parent (driver start-up only) one more. A compiler the
    # program ran is shown under its compile row; a child that launched,
    # loaded and compiled nothing is counted, not given a line.
    d = "fold"
    parent = process(pid=100, exe="/usr/bin/python3", args=("python3", "tri.py"))
    parent += launch(1050, kernel="fill", seq=1)
    parent += child(1100, 400, 200, 0, "/usr/bin/gcc", 2, compiler="host_cc", output="cu.so")
    parent += launch(1600, kernel="add_kernel", seq=3)
    parent += end()
    gcc = process(pid=200, exe="/opt/gcc/bin/gcc-real", args=("gcc",), start_ms=1100).replace(
        "ppid=1", "ppid=100")
    gcc += child(1400, 50, 201, 0, "/opt/gcc/bin/collect2", 0, compiler="host_cc",
                 output="cu.so").replace("tid=100", "tid=200")
    gcc += end()
    col = process(pid=201, exe="/opt/gcc/bin/collect2", args=("collect2",), start_ms=1400).replace(
        "ppid=1", "ppid=200")
    col += end()
    idle = process(pid=300, exe="/usr/bin/python3", args=("python3", "-m", "pool"),
                   start_ms=1200).replace("ppid=1", "ppid=100")
    idle += call("cuInit", 1210, 5).replace("call call", "call tid=300 call")
    idle += end()
    for name, text in (("parent", parent), ("gcc", gcc), ("collect2", col), ("idle", idle)):
        env.trace(name, text, subdir=d)
    out, _ = env.expect_rc(0, "report", env.path(d))
    head = out.split("\njitstall report:")[0]
    expect(head.startswith("pid 100 ") and "pid 200" not in head and "pid 201" not in head and
           "pid 300" not in head, head)
    expect("(and 1 child process that launched no kernel, loaded no module and compiled "
           "nothing)" in head, head)
    expect("Process 200 " not in out and "Process 201 " not in out, out)
    md, _ = env.expect_rc(0, "report", "--markdown", env.path(d))
    head = md.split("## jitstall report")[0]
    expect("pid 100:" in head and "pid 200:" not in head and "pid 300:" not in head and
           "1 child process that launched no kernel" in head, head)
    # --per-process shows every process, as before
    out, _ = env.expect_rc(0, "report", "--per-process", env.path(d))
    expect("Process 200 " in out, out)


@case
def test_compiles_shell_of_system_counts_once(env):
    # A program (pid 100) runs nvcc (pid 400, 1100-1500 ms) and waits; nvcc
    # runs cicc through system() (1150-1400 ms, its row names no pid), and
    # the shell system() started (pid 401) is traced too: its own row of the
    # same cicc (1160-1390 ms, exec'd as pid 402) is that compile again. One
    # cicc row, under nvcc; and cicc, inside nvcc, has no fix of its own: the
    # program's only fix is to compile ahead with nvcc, saving no more than
    # its first call (1000-1500 ms).
    prog = process(pid=100, exe="/opt/app/bin/app", args=("app",))
    prog += launch(1000, kernel="fill", seq=1)
    prog += child(1100, 400, 400, 0, "/usr/local/cuda/bin/nvcc", 2, compiler="nvcc",
                  output="k.cubin", target="sm_90")
    prog += launch(1500, kernel="k", seq=3)
    prog += end()
    nv = process(pid=400, exe="/usr/local/cuda/bin/nvcc", args=("nvcc",)).replace("ppid=1", "ppid=100")
    nv += ("compile tid=400 start=1150ms dur=250ms seq=1 compiler=cicc program=cicc "
           "spawn_how=system arg=cicc arg=k.cpp1.ii output=k.ptx wait_status=0\n")
    nv += end()
    sh = process(pid=401, exe="/usr/bin/dash", args=("sh", "-c", "cicc k.cpp1.ii")).replace(
        "ppid=1", "ppid=400")
    sh += ("compile tid=401 start=1160ms dur=230ms seq=1 compiler=cicc "
           "program=/usr/local/cuda/nvvm/bin/cicc spawn_how=exec arg=cicc arg=k.cpp1.ii "
           "output=k.ptx child_pid=402 wait_status=0\n")
    sh += end()
    for name, spec in (("prog", prog), ("nvcc", nv), ("sh", sh)):
        env.trace(name, spec, subdir="run")
    r = report_json(env, env.path("run"))
    rows = {p["pid"]: p["compiles"] for p in r["processes"]}
    expect(len(rows[400]) == 1 and rows[400][0]["compiler"] == "cicc", rows[400])
    expect(rows[400][0]["parent_pid"] == 100 and rows[400][0]["fix"] is None, rows[400])
    expect(rows[401] == [], f"the shell's cicc is the system() row again: {rows[401]}")
    ah = [(x["target"], x["saves_ns"]) for x in r["fixes"] if x["kind"] == "compile_ahead"]
    expect(ah == [("nvcc", 400 * MS)], r["fixes"])
    out, _ = env.expect_rc(0, "report", env.path("run"))
    expect("cicc 1 run" in out and "cicc 2" not in out, out)


@case
def test_first_call_function_is_no_stage_detail(env):
    # PyTorch's CUDA-graph recording reports no function's name, only its
    # trigger ("trigger=cudagraph_recording", the stage's detail): the first
    # call it opens is named by the kernel its window loaded and launched,
    # not by that detail.
    s = process(pid=100, exe="/usr/bin/python3", args=("python3", "srv.py"))
    s += call("cuInit", 1010, 20)
    s += launch(1050, kernel="fill", seq=1)
    s += ('fw_event tid=100 start=1100ms dur=300ms framework=inductor fw_stage=graph_record '
          'fw_cache_outcome=miss fw_detail="trigger=cudagraph_recording"\n')
    s += sass_load(1410, 5, source="/tmp/ic/k.cubin", kernel="triton_poi_fused_0")
    s += launch(1420, kernel="triton_poi_fused_0", seq=3)
    s += end()
    r = report_json(env, env.trace("rec", s))
    fcs = r["processes"][0]["first_calls"]
    expect(len(fcs) == 1 and fcs[0]["function"] == "triton_poi_fused_0", fcs)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

