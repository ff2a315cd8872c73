#!/usr/bin/env python3
"""What a new user meets first (issue 33): advice that holds for NVIDIA's own
libraries, gates that scanned nothing, readable lengths, and the habits of a
command line (colour, stdin, the command to run next).

Harness: clitest.py. `python3 test_first_use.py --list` names the cases; ctest
runs each as cli.<case>.
"""
import json
import os
import shutil
import subprocess
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)

HERE = os.path.dirname(os.path.abspath(__file__))
MKFATBIN = os.path.join(HERE, "..", "scan", "mkfatbin.py")


def _variant_load(start_ms, source, h, entries, verdict, result, kernel, **kw):
    ent = " ".join("entry=" + q(e) for e in entries)
    return (f"call call=cuLibraryLoadData start={start_ms}ms dur=1ms result={result} "
            f"image_kind=fatbin_wrapper image_hash={h} source={q(source)} verdict={verdict} "
            f"target_cc=90 kernel={kernel} {ent} "
            + " ".join(f"{k}={v}" for k, v in kw.items()) + "\n")


@case
def test_trace_variants_for_other_gpus(env):
    # cudart hands the driver each of cuBLAS's variants; the one whose PTX is
    # for a newer GPU fails there, and cuBLAS goes on with its sm_90 image.
    # The report applies scan's rule: that load is for other GPUs, not a
    # culprit with a -gencode fix. A library with nothing for sm_90 still is.
    lt, solo = "/opt/lib/libcublasLt.so.13", "/opt/lib/libsolo.so"
    why = q("nothing runs on sm_90")
    head = process() + call("cuInit", 1010, 150)
    head += _variant_load(1200, lt, "0x111", ["cubin sm_100 none", "ptx compute_120 zstd",
                                              "cubin sm_120 none"], "no_compatible", 209,
                          "_Z3k12v", reason=why)
    head += _variant_load(1210, lt, "0x222", ["cubin sm_90 none"], "sass", 0, "_Z3k90v",
                          sass_arch="sm_90")
    tail = launch(1300, kernel="_Z3k90v") + end()
    solo_load = _variant_load(1220, solo, "0x333", ["cubin sm_120 none", "ptx compute_120 zstd"],
                              "no_compatible", 209, "_Z4solov", reason=why)
    t = env.trace("variants", head + solo_load + tail)
    out, _ = env.expect_rc(0, "report", "--json", t)
    mods = json.loads(out)["processes"][0]["modules"]
    v = sorted((m.get("source"), m["verdict"]) for m in mods)
    expect(v == [(lt, "other_gpus"), (lt, "sass"), (solo, "no_compatible")], v)
    text, _ = env.expect_rc(0, "report", t)
    expect("rebuild /opt/lib/libcublasLt" not in text and "rebuild /opt/lib/libsolo.so" in text,
           text)
    # The gate on verdicts agrees: cuBLAS alone passes.
    env.expect_rc(0, "check", "--forbid-verdict", "no_compatible", env.trace("lt", head + tail))
    env.expect_rc(1, "check", "--forbid-verdict", "no_compatible", t)

# ---- a gate that scanned nothing does not pass ----

@case
def test_scan_nothing_is_no_pass(env):
    os.makedirs(env.path("emptydir"))
    txt = env.path("notatrace.txt")
    open(txt, "w").write("just text\n")
    # Without a gate: says so, exit 0.
    _, err = env.expect_rc(0, "scan", "--arch", "sm_90", env.path("emptydir"))
    expect(err == "jitstall scan: warning: no CUDA code in any PATH (0 files read)\n", err)
    # With --fail-on: exit 1, unless --allow-empty.
    for args in ([env.path("emptydir")], [txt], [env.path("emptydir"), txt]):
        _, err = env.expect_rc(1, "scan", "--arch", "sm_90,sm_100", "--fail-on", "no_compatible",
                               *args)
        expect("no CUDA code in any PATH" in err and "--allow-empty" in err, err)
        env.expect_rc(0, "scan", "--arch", "sm_90", "--fail-on", "no_compatible",
                      "--allow-empty", *args)
    _, err = env.expect_rc(2, "scan", "--arch", "sm_90", "--allow-empty", txt)
    expect(err == "jitstall scan: --allow-empty goes with --fail-on\n", err)
    # A missing path is a usage error, whatever else was named, and nothing is
    # scanned.
    out, err = env.expect_rc(2, "scan", "--arch", "sm_90", txt, env.path("nonexistent"))
    expect(out == "" and err == f"jitstall scan: cannot stat {env.path('nonexistent')}: "
           "no such file or directory\n", (out, err))


def _sim(env):
    sim = os.environ.get("JST_SIMDIR")
    if not sim:
        raise Skip("the simulated driver is not built")
    return {"LD_LIBRARY_PATH": sim, "CUDA_CACHE_PATH": env.path("cache")}


@case
def test_warm_nothing_is_no_pass(env):
    e = _sim(env)
    os.makedirs(env.path("emptydir"))
    junk = env.path("garbage.bin")
    open(junk, "wb").write(os.urandom(4096))
    for p in (env.path("emptydir"), junk):
        _, err = env.expect_rc(1, "warm", p, env=e)
        expect("no CUDA code in any PATH" in err and "--allow-empty" in err, err)
        out, _ = env.expect_rc(0, "warm", "--allow-empty", p, env=e)
    _, err = env.expect_rc(2, "warm", junk, env.path("nonexistent"), env=e)
    expect(err.startswith(f"jitstall warm: cannot stat {env.path('nonexistent')}"), err)


# ---- readable lengths ----

def _many_kernels_ptx(path, n, name_len):
    body = "".join(f".visible .entry {'k' * name_len}{i}()\n{{\n\tret;\n}}\n" for i in range(n))
    open(path, "w").write(".version 7.5\n.target sm_75\n.address_size 64\n\n" + body)


@case
def test_scan_names_cut_to_width(env):
    ptx = env.path("many.ptx")
    _many_kernels_ptx(ptx, 25, 300)
    mk = env.path("long.fatbin")
    for cols, width in ((None, 100), ("60", 60), ("200", 200)):
        e = {"COLUMNS": cols} if cols else {}
        if cols is None:
            e["COLUMNS"] = ""  # not a terminal, no COLUMNS: the default
        out, _ = env.expect_rc(0, "scan", "--arch", "sm_90", ptx, env=e)
        lines = out.splitlines()
        names = [l for l in lines if l.startswith("      ")]
        expect(len(names) == 11 and names[-1] == "      ... and 15 more", names[-2:])
        expect(all(len(l) <= width for l in names), [len(l) for l in names])
        expect(names[0].endswith("...") and names[0].startswith("      kkkk"), names[0])
    # JSON stays whole: every kernel, every name at full length.
    out, _ = env.expect_rc(0, "scan", "--json", "--arch", "sm_90", ptx)
    ks = json.loads(out)["files"][0]["images"][0]["kernels"]
    expect(len(ks) == 25 and all(len(k) > 300 for k in ks), [len(k) for k in ks])
    # A short mangled name keeps its bracket.
    out, _ = env.expect_rc(0, "scan", "--arch", "sm_90",
                           os.path.join(os.environ.get("JST_FIXTURES", os.path.join(
                               HERE, "..", "fixtures")), "ptx75.fatbin"), env={"COLUMNS": ""})
    expect("      fill(int*, int)  [_Z4fillPii]" in out, out)


@case
def test_scan_summary(env):
    fix = os.environ.get("JST_FIXTURES", os.path.join(HERE, "..", "fixtures"))
    paths = [os.path.join(fix, n) for n in ("sm90.fatbin", "ptx75.fatbin", "kernels.cu")]
    full, _ = env.expect_rc(0, "scan", "--arch", "sm_90,sm_100", *paths)
    out, _ = env.expect_rc(0, "scan", "--summary", "--arch", "sm_90,sm_100", *paths)
    want = [l for l in full.splitlines() if l.startswith(("summary for", "per architecture",
                                                          "  sm_"))]
    expect(out.splitlines() == want, out)
    # --json stays whole with --summary.
    a, _ = env.expect_rc(0, "scan", "--json", "--arch", "sm_90", *paths)
    b, _ = env.expect_rc(0, "scan", "--json", "--summary", "--arch", "sm_90", *paths)
    expect(a == b, "json with --summary")

# ---- habits ----

def _report_on_tty(env, trace, *opts, term="xterm", no_color=None):
    """report's text output with stdout on a pseudo-terminal."""
    import pty
    m, sl = pty.openpty()
    e = dict(os.environ, TERM=term)
    e.pop("NO_COLOR", None)
    if no_color is not None:
        e["NO_COLOR"] = no_color
    p = subprocess.Popen([env.cli, *opts, "report", trace], stdout=sl, stderr=subprocess.PIPE,
                         env=e)
    os.close(sl)
    out = b""
    while True:
        try:
            b = os.read(m, 65536)
        except OSError:
            break
        if not b:
            break
        out += b
    p.wait(timeout=60)
    os.close(m)
    return out.decode(errors="replace")


@case
def test_color_option_and_dumb_terminal(env):
    t = env.trace("t", run_spec())
    esc = "\033["
    expect(esc in _report_on_tty(env, t), "a terminal gets colour")
    expect(esc not in _report_on_tty(env, t, term="dumb"), "TERM=dumb: no colour")
    expect(esc not in _report_on_tty(env, t, no_color="1"), "NO_COLOR: no colour")
    expect(esc not in _report_on_tty(env, t, "--color=never"), "--color=never on a terminal")
    expect(esc in _report_on_tty(env, t, "--color=always", term="dumb"), "--color=always")
    # Not a terminal: auto is off, always is on, wherever the option stands.
    out, _ = env.expect_rc(0, "report", t)
    expect(esc not in out, "a pipe gets no colour")
    for argv in (["--color=always", "report", t], ["report", "--color", "always", t],
                 ["report", t, "--colour=always"]):
        out, _ = env.expect_rc(0, *argv)
        expect(esc in out, f"{argv}: no colour")
    # The program `jitstall run` starts keeps its own --color.
    if os.environ.get("JST_PRELOAD"):
        r = subprocess.run([env.cli, "run", "-o", env.path("o"), "/bin/echo", "--color=never",
                            "--colour", "x"], capture_output=True, text=True, timeout=60)
        expect(r.stdout == "--color=never --colour x\n", r.stdout + r.stderr)
    _, err = env.expect_rc(2, "--color=sometimes", "report", t)
    expect(err == "jitstall: bad --color 'sometimes' (want auto, always or never)\n", err)


@case
def test_trace_from_stdin_and_empty_file(env):
    t = env.trace("t", run_spec())
    want, _ = env.expect_rc(0, "report", "--json", t)
    for cmd in (["report", "--json"], ["dump"], ["check", "--max-jit-ms", "100000"],
                ["export", "--format", "chrome"]):
        direct = subprocess.run([env.cli, *cmd, t], capture_output=True, timeout=60)
        piped = subprocess.run([env.cli, *cmd, "-"], stdin=open(t, "rb"), capture_output=True,
                               timeout=60)
        expect(piped.returncode == direct.returncode == 0, f"{cmd}: {piped.stderr!r}")
        if cmd[0] in ("dump", "export"):
            expect(piped.stdout == direct.stdout, f"{cmd}: stdin differs from the file")
    piped = subprocess.run([env.cli, "report", "--json", "-"], stdin=open(t, "rb"),
                           capture_output=True, text=True, timeout=60)
    a, b = json.loads(piped.stdout), json.loads(want)
    pa, pb = a["processes"][0], b["processes"][0]
    expect(pa["pid"] == pb["pid"] and pa["modules"] == pb["modules"], "same process")
    zero = env.path("zero.jst")
    open(zero, "wb").close()
    for cmd in ("report", "dump", "check", "export"):
        rc, _, err = env.run(cmd, zero)
        expect(rc == 2 and f"{zero}: empty file (0 bytes): not a trace" in err, f"{cmd}: {err}")
    r = subprocess.run([env.cli, "report", "-"], stdin=subprocess.DEVNULL, capture_output=True,
                       text=True, timeout=60)
    expect(r.returncode == 2 and "-: empty file (0 bytes): not a trace" in r.stderr, r.stderr)


@case
def test_next_command_is_the_path_run(env):
    need = ("JST_PRELOAD", "JST_SIMDIR", "JST_PROG_DIRECT", "JST_FIXTURES")
    if not all(os.environ.get(v) for v in need):
        raise Skip("the preload or the simulated driver is not built")
    bindir = env.path("bin")
    os.makedirs(bindir)
    os.symlink(env.cli, os.path.join(bindir, "jitstall"))
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("CUDA_") and not k.startswith("JITSTALL_")}
    e.update(LD_LIBRARY_PATH=os.environ["JST_SIMDIR"], CUDA_CACHE_PATH=env.path("cache"))
    prog = [os.environ["JST_PROG_DIRECT"], os.environ["JST_FIXTURES"], "0", "module",
            "sm90.fatbin"]
    # Run by a relative path: the suggestion repeats it.
    r = subprocess.run(["bin/jitstall", "run", "-o", "out1", "--", *prog], cwd=env.tmp, env=e,
                       capture_output=True, text=True, timeout=60)
    expect(r.returncode == 0 and "jitstall: full report: bin/jitstall report out1\n" in r.stderr,
           r.stderr)
    # Found on PATH: plain "jitstall".
    e["PATH"] = bindir + os.pathsep + e.get("PATH", "")
    r = subprocess.run(["jitstall", "run", "-o", "out2", "--", *prog], cwd=env.tmp, env=e,
                       capture_output=True, text=True, timeout=60)
    expect(r.returncode == 0 and "jitstall: full report: jitstall report out2\n" in r.stderr,
           r.stderr)

# ---- examples ----

@case
def test_pytest_build_output_ignored(env):
    # `pip install examples/pytest` from a checkout: setuptools writes build/
    # and an .egg-info beside the sources; git must not see them as changes.
    root = os.path.abspath(os.path.join(HERE, "..", ".."))
    if not shutil.which("git"):
        raise Skip("no git here")
    if subprocess.run(["git", "-C", root, "rev-parse"], capture_output=True).returncode:
        raise Skip("not a git checkout")
    for p in ("examples/pytest/build/lib/pytest_jitstall.py",
              "examples/pytest/pytest_jitstall.egg-info/PKG-INFO"):
        r = subprocess.run(["git", "-C", root, "check-ignore", "-q", "--no-index", p])
        expect(r.returncode == 0, f"{p} is not ignored")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
