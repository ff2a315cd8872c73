#!/usr/bin/env python3
"""tests/run.sh itself: its closing line and its temp files, whatever ctest does.

The script runs in a copy of the tree's tests/ with stand-ins for what it calls:
a deps.sh whose jst_deps succeeds, and cmake and ctest on PATH that print what
the real ones would. The real run.sh is copied unchanged.
"""
import os
import shutil
import stat
import subprocess
import sys

from clitest import case, expect, main

HERE = os.path.dirname(os.path.abspath(__file__))
RUN_SH = os.path.join(HERE, "..", "run.sh")


def fake_tree(tmp, ctest_body):
    top = os.path.join(tmp, "tree")
    os.makedirs(os.path.join(top, "tests"))
    os.makedirs(os.path.join(top, "build"))
    shutil.copy(RUN_SH, os.path.join(top, "tests", "run.sh"))
    with open(os.path.join(top, "tests", "deps.sh"), "w") as f:
        f.write("jst_deps() { return 0; }\n")
    bin_ = os.path.join(tmp, "bin")
    os.makedirs(bin_)
    for name, body in (("cmake", "exit 0\n"), ("ctest", ctest_body)):
        p = os.path.join(bin_, name)
        with open(p, "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(p, 0o755)
    logs = os.path.join(tmp, "tmpdir")
    os.makedirs(logs)
    env = dict(os.environ, PATH=bin_ + ":" + os.environ["PATH"], TMPDIR=logs)
    for v in ("CI", "JITSTALL_SANITIZE", "JITSTALL_FUZZ"):
        env.pop(v, None)
    return top, env, logs


def run_tree(env_, ctest_body):
    top, env, logs = fake_tree(env_.tmp, ctest_body)
    r = subprocess.run(["bash", os.path.join(top, "tests", "run.sh")], capture_output=True,
                       text=True, env=env, timeout=60)
    return r, logs


@case
def test_runsh_failing_ctest_summary(env):
    """ctest fails (exit 8): the closing line still counts, the status is 1 and
    the temp log is gone."""
    r, logs = run_tree(env, "echo 'The following tests FAILED:'\n"
                            "echo '67% tests passed, 1 tests failed out of 3'\nexit 8\n")
    expect("tests/run.sh: 2 passed, 1 failed" in r.stdout,
           f"closing line missing\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}")
    expect(r.returncode == 1, f"exit {r.returncode}, expected 1")
    expect(os.listdir(logs) == [], f"temp files left: {os.listdir(logs)}")


@case
def test_runsh_ctest_crash_summary(env):
    """ctest dies before its summary: counted as one failure, still a closing line."""
    r, logs = run_tree(env, "echo 'Segmentation fault'\nexit 139\n")
    expect("tests/run.sh: 0 passed, 1 failed" in r.stdout,
           f"closing line missing\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}")
    expect(r.returncode == 1, f"exit {r.returncode}, expected 1")
    expect(os.listdir(logs) == [], f"temp files left: {os.listdir(logs)}")


@case
def test_runsh_passing_ctest_summary(env):
    r, logs = run_tree(env, "echo '100% tests passed, 0 tests failed out of 3'\nexit 0\n")
    expect("tests/run.sh: 3 passed, 0 failed" in r.stdout, f"closing line\n{r.stdout}{r.stderr}")
    expect(r.returncode == 0, f"exit {r.returncode}")
    expect(os.listdir(logs) == [], f"temp files left: {os.listdir(logs)}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
