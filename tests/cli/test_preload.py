#!/usr/bin/env python3
"""CLI tests of The real preload on the simulated driver, and the pytest plugin.

Harness: clitest.py. `python3 test_preload.py --list` names the cases; ctest runs each
as cli.<case>.
"""
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)


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
    if os.environ.get("JITSTALL_EMULATED") == "1":
        # A hit is told from a miss by its speed when the cache did not change
        # (common/jitcache.c); under qemu-user a hit takes longer than any
        # real one, so the outcome is "unknown" there.
        print("skip (the warm run's cache hit): under qemu-user a hit is not fast")
    else:
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
    # Success does not read like an error: one plain line, no "!!! Exit:" frame.
    expect(out.rstrip().endswith("\njitstall: session run under libjitstall.so: within the 60000 "
                                 "ms JIT budget") and "!!!" not in out and "Exit:" not in out,
           out)
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


if __name__ == "__main__":
    sys.exit(main(sys.argv))
