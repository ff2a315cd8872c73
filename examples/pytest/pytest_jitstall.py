"""jitstall for pytest: fail a GPU test session that spends too long in PTX JIT.

Install it (`pip install examples/pytest` from a jitstall checkout; pytest then
loads it through its `pytest11` entry point) and run:

    pytest --jitstall-max-jit-ms 500            # or JITSTALL_MAX_JIT_MS=500 pytest

The session is then run again, as a child process, under libjitstall.so
(LD_PRELOAD), with its traces in a fresh directory; everything the tests start
(subprocesses, xdist workers, forked data loaders) is traced too. When the child
ends, `jitstall check --max-jit-ms N` reads the complete traces, its regression
lines are printed, and the session fails (exit status 1) when a process spent
more than N ms in the driver's JIT, even if every test passed.

If the session already runs under the preload (`jitstall run -- pytest ...`,
or LD_PRELOAD set by hand), nothing is re-run: the check runs at the end of the
session over JITSTALL_DIR. The pytest process's own trace is then still open
and reported as partial; the other processes' traces are complete.

Options (or environment variables):
  --jitstall-max-jit-ms N     JITSTALL_MAX_JIT_MS    the budget; the plugin is off without it
  --jitstall-dir DIR          JITSTALL_DIR           trace directory (default: a new temporary one)
  --jitstall-junit FILE                              also write JUnit XML (one testcase per process)
  --jitstall-check-args ARGS  JITSTALL_CHECK_ARGS    more `jitstall check` options, e.g.
                                                     "--forbid-verdict ptx_jit --require-cache hit"
  JITSTALL=/path/to/jitstall, JITSTALL_PRELOAD=/path/to/libjitstall.so when they are
  not found on PATH / next to the jitstall binary.
"""
import glob
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import pytest

_CHILD = "JITSTALL_PYTEST_CHILD"  # set in the re-run session


def pytest_addoption(parser):
    g = parser.getgroup("jitstall", "PTX JIT budget (jitstall)")
    g.addoption("--jitstall-max-jit-ms", type=float, default=None, metavar="N",
                help="fail the session when a process spends more than N ms in PTX JIT")
    g.addoption("--jitstall-dir", default=None, metavar="DIR",
                help="directory for the jitstall traces (default: a new temporary one)")
    g.addoption("--jitstall-junit", default=None, metavar="FILE",
                help="also write jitstall check's JUnit XML to FILE")
    g.addoption("--jitstall-check-args", default=None, metavar="ARGS",
                help="more options for jitstall check, e.g. '--forbid-verdict ptx_jit'")


def _budget(config):
    v = config.getoption("--jitstall-max-jit-ms")
    if v is None and os.environ.get("JITSTALL_MAX_JIT_MS"):
        try:
            v = float(os.environ["JITSTALL_MAX_JIT_MS"])
        except ValueError:
            raise pytest.UsageError("JITSTALL_MAX_JIT_MS is not a number of milliseconds")
    return v


def _find_jitstall():
    exe = os.environ.get("JITSTALL") or shutil.which("jitstall")
    if not exe or not os.access(exe, os.X_OK):
        raise pytest.UsageError("jitstall not found: put it on PATH or set JITSTALL=/path/to/jitstall")
    lib = os.environ.get("JITSTALL_PRELOAD")
    if not lib:
        here = os.path.dirname(os.path.realpath(exe))
        for rel in ("libjitstall.so", "../lib/libjitstall.so", "../lib/jitstall/libjitstall.so"):
            cand = os.path.normpath(os.path.join(here, rel))
            if os.path.exists(cand):
                lib = cand
                break
    if not lib or not os.path.exists(lib):
        raise pytest.UsageError("libjitstall.so not found next to jitstall: "
                                "set JITSTALL_PRELOAD=/path/to/libjitstall.so")
    return exe, lib


def _preloaded():
    return "libjitstall.so" in os.environ.get("LD_PRELOAD", "")


def _check(config, exe, trace_dir, budget):
    """Runs jitstall check; returns (exit status, its output)."""
    if not glob.glob(os.path.join(trace_dir, "*.jst")):
        return 0, f"jitstall: no CUDA driver calls were traced in {trace_dir}; nothing to check\n"
    argv = [exe, "check", "--max-jit-ms", f"{budget:g}"]
    extra = config.getoption("--jitstall-check-args") or os.environ.get("JITSTALL_CHECK_ARGS")
    if extra:
        argv += shlex.split(extra)
    junit = config.getoption("--jitstall-junit")
    if junit:
        argv += ["--junit", junit]
    argv.append(trace_dir)
    r = subprocess.run(argv, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    budget = _budget(config)
    if budget is None or os.environ.get(_CHILD) or _preloaded():
        return  # off, the re-run child, or already traced (checked at session end)
    if hasattr(config, "workerinput"):
        return  # an xdist worker: its controller does the work
    exe, lib = _find_jitstall()
    trace_dir = config.getoption("--jitstall-dir") or os.environ.get("JITSTALL_DIR")
    if trace_dir:
        os.makedirs(trace_dir, exist_ok=True)
    else:
        trace_dir = tempfile.mkdtemp(prefix="jitstall-pytest-")
    env = dict(os.environ)
    env[_CHILD] = "1"
    env["JITSTALL_DIR"] = os.path.abspath(trace_dir)
    env["LD_PRELOAD"] = lib + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    # The same command line, in the same interpreter, now under the preload.
    argv = list(getattr(sys, "orig_argv", [])) or [sys.executable, "-m", "pytest"] + sys.argv[1:]
    argv[0] = sys.executable
    sys.stdout.flush()
    sys.stderr.flush()
    child = subprocess.run(argv, env=env).returncode
    rc, out = _check(config, exe, env["JITSTALL_DIR"], budget)
    sys.stdout.write(out)
    sys.stdout.write(f"jitstall: traces in {env['JITSTALL_DIR']}\n")
    sys.stdout.flush()
    if child != 0:
        status = child
    elif rc != 0:
        status = int(pytest.ExitCode.TESTS_FAILED)
    else:
        status = 0
    why = ("tests failed" if child else
           f"PTX JIT over the {budget:g} ms budget (jitstall check exit {rc})" if rc else
           f"within the {budget:g} ms JIT budget")
    msg = f"jitstall: session run under libjitstall.so: {why}"
    if status == 0:
        # Success is one plain line: pytest.exit() would frame it in "!!!"
        # as an interruption. The child session already ran and reported
        # every test; this outer one has nothing left to do or write.
        sys.stdout.write(f"{msg}\n")
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    pytest.exit(msg, returncode=status)


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    budget = _budget(config)
    if budget is None or os.environ.get(_CHILD) or not _preloaded():
        return
    if hasattr(config, "workerinput"):
        return
    trace_dir = os.environ.get("JITSTALL_DIR") or "."
    exe = os.environ.get("JITSTALL") or shutil.which("jitstall")
    if not exe:
        raise pytest.UsageError("jitstall not found: put it on PATH or set JITSTALL")
    rc, out = _check(config, exe, trace_dir, budget)
    tr = config.pluginmanager.get_plugin("terminalreporter")
    if tr:
        tr.write_sep("-", "jitstall check")
        tr.write(out)
    else:
        sys.stdout.write(out)
    if rc != 0 and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
