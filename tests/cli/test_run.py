#!/usr/bin/env python3
"""CLI tests of `jitstall run`: option parsing and the trace directory.

Uses the harness of clitest.py (Env, case, expect). The cases that trace a
program need libjitstall.so, the simulated driver and prog_direct
(JST_PRELOAD, JST_SIMDIR, JST_PROG_DIRECT, JST_FIXTURES).

    python3 test_run.py --list | CASE...
"""
import os
import sys

import clitest as h
from clitest import case, expect, Skip

h.CASES.clear()  # this file's cases only


def _need_preload():
    need = ("JST_PRELOAD", "JST_SIMDIR", "JST_PROG_DIRECT", "JST_FIXTURES")
    if not all(os.environ.get(v) and os.path.exists(os.environ[v]) for v in need):
        raise Skip("libjitstall.so, the simulated driver or prog_direct is not built")


def _prog_env(env):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("CUDA_") and not k.startswith("JITSTALL_")}
    e.update(LD_LIBRARY_PATH=os.environ["JST_SIMDIR"], CUDA_CACHE_PATH=env.path("cache"))
    return e


def _traced(env, outdir, *opts, image="sm90.fatbin"):
    """jitstall run OPTS -- prog_direct IMAGE; returns (rc, stdout, stderr)."""
    import subprocess
    argv = [env.cli, "run", *opts, "--", os.environ["JST_PROG_DIRECT"],
            os.environ["JST_FIXTURES"], "0", "module", image]
    if outdir:
        argv[2:2] = ["-o", outdir]
    # jitstall run finds libjitstall.so next to itself: point it there.
    r = subprocess.run(argv, capture_output=True, text=True, env=_prog_env(env), timeout=60)
    return r.returncode, r.stdout, r.stderr


def _jst(d):
    return sorted(f for f in os.listdir(d) if f.endswith(".jst"))


@case
def test_run_refuses_old_traces(env):
    # A second run into the same -o DIR would mix runs, and the summary would
    # quote the first run's numbers: refused unless --force.
    _need_preload()
    d = env.path("traces")
    rc, _, err = _traced(env, d)
    expect(rc == 0 and len(_jst(d)) == 1, f"first run: exit {rc}, {_jst(d)}\n{err}")
    first = _jst(d)
    rc, _, err = _traced(env, d)
    expect(rc == 2, f"second run into {d}: exit {rc}, expected 2\n{err}")
    expect("already holds 1 trace of an earlier run" in err and "--force" in err, err)
    expect(_jst(d) == first, f"the old trace was touched: {_jst(d)}")
    rc, _, err = _traced(env, d, "--force")
    expect(rc == 0, f"--force: exit {rc}\n{err}")
    now = _jst(d)
    expect(len(now) == 1 and now != first, f"--force must replace the old trace: {first} -> {now}")
    # Other files in the directory are not ours: left alone.
    open(os.path.join(d, "notes.txt"), "w").write("mine\n")
    rc, _, err = _traced(env, d, "--force")
    expect(rc == 0 and os.path.exists(os.path.join(d, "notes.txt")), f"exit {rc}\n{err}")


@case
def test_run_dir_private(env):
    # The directory run -o makes is 0700, as the preload makes JITSTALL_DIR:
    # traces hold command lines and environment variables.
    _need_preload()
    d = env.path("deep/traces")
    rc, _, err = _traced(env, d)
    expect(rc == 0, f"exit {rc}\n{err}")
    mode = os.stat(d).st_mode & 0o777
    expect(mode == 0o700, f"{d} is {oct(mode)}, expected 0o700")


@case
def test_run_option_spellings(env):
    # -oDIR, --output DIR and --output=DIR all work; options after COMMAND
    # belong to COMMAND.
    _need_preload()
    for i, opts in enumerate((["-o" + env.path("a")], ["--output", env.path("b")],
                              ["--output=" + env.path("c")])):
        import subprocess
        argv = [env.cli, "run", *opts, "--", os.environ["JST_PROG_DIRECT"],
                os.environ["JST_FIXTURES"], "0", "module", "sm90.fatbin"]
        r = subprocess.run(argv, capture_output=True, text=True, env=_prog_env(env), timeout=60)
        d = env.path("abc"[i])
        expect(r.returncode == 0 and os.path.isdir(d) and len(_jst(d)) == 1,
               f"{opts}: exit {r.returncode}, {os.listdir(env.tmp)}\n{r.stderr}")
    out, err = env.expect_rc(0, "run", "-o", env.path("e"), "--", "/bin/echo", "-o", "--force")
    expect(out == "-o --force\n", f"COMMAND's own options must reach it: {out!r}")
    _, err = env.expect_rc(2, "run", "--force", "--", "/bin/true")
    expect("--force goes with -o" in err, err)
    _, err = env.expect_rc(2, "run", "--bogus", "--", "/bin/true")
    expect("unknown option '--bogus'" in err, err)
    _, err = env.expect_rc(2, "run", "-o")
    expect("needs a directory" in err, err)


@case
def test_run_no_cuda_removes_dir(env):
    # A program that never calls the driver leaves no trace: say so and remove
    # the directory that run made for it; a directory that existed is kept.
    d = env.path("none")
    _, err = env.expect_rc(0, "run", "-o", d, "--", "/bin/true")
    expect("made no CUDA driver call" in err and "removed the empty trace directory" in err, err)
    expect(not os.path.exists(d), f"{d} left behind")
    os.makedirs(d)
    _, err = env.expect_rc(0, "run", "-o", d, "--", "/bin/true")
    expect(os.path.isdir(d) and "removed" not in err, f"an existing directory was removed\n{err}")
    cwd = os.getcwd()
    os.chdir(env.tmp)
    try:
        before = set(os.listdir(env.tmp))
        env.expect_rc(0, "run", "--", "/bin/true")
        expect(set(os.listdir(env.tmp)) == before,
               f"default directory left behind: {set(os.listdir(env.tmp)) - before}")
    finally:
        os.chdir(cwd)


if __name__ == "__main__":
    sys.exit(h.main(sys.argv))
