#!/usr/bin/env python3
"""One set of habits for every command: exit codes, directories, names, help,
format names, plurals, error texts, and the small ones.

Harness: clitest.py. `python3 test_habits.py --list` names the cases; ctest
runs each as cli.<case>.
"""
import subprocess
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)


@case
def test_dump_takes_a_directory(env):
    # dump DIR reads every *.jst in it, in name order, like every reader.
    a = env.trace("a", run_spec(pid=1), subdir="d")
    b = env.trace("b", run_spec(pid=2), subdir="d")
    open(env.path("d/notes.txt"), "w").write("not a trace\n")
    out, _ = env.expect_rc(0, "dump", env.path("d"))
    one, _ = env.expect_rc(0, "dump", a, b)
    expect(out == one and "pid=1 " in out and "pid=2 " in out, out[:500])
    os.makedirs(env.path("empty"))
    _, err = env.expect_rc(2, "dump", env.path("empty"))
    expect(err == f"jitstall dump: {env.path('empty')}: no *.jst traces in this directory\n", err)


@case
def test_help_command(env):
    # `jitstall help report` is `jitstall report --help`, for every command.
    for cmd in ("report", "check", "diff", "export", "scan", "warm", "dump", "run", "baseline"):
        want, _ = env.expect_rc(0, cmd, "--help")
        got, _ = env.expect_rc(0, "help", cmd)
        expect(got == want, f"help {cmd}: {got[:200]!r}")
    _, err = env.expect_rc(2, "help", "nosuch")
    expect("unknown command 'nosuch'" in err, err)


@case
def test_export_perfetto_name(env):
    t = env.trace("a", run_spec())
    chrome, _ = env.expect_rc(0, "export", "--format", "chrome", t)
    perfetto, _ = env.expect_rc(0, "export", "--format", "perfetto", t)
    expect(perfetto == chrome and '"traceEvents"' in chrome, perfetto[:200])


@case
def test_error_texts_one_case(env):
    # The same error reads the same in every command: the system's text in
    # lower case, as jitstall's own.
    missing = env.path("missing.jst")
    for cmd in (["report"], ["check", "--max-jit-ms", "1"], ["dump"], ["export"], ["baseline"]):
        rc, _, err = env.run(*cmd, missing)
        expect(rc == 2 and "no such file or directory" in err and "No such" not in err,
               f"{cmd}: {rc} {err!r}")
    _, err = env.expect_rc(2, "dump", env.tmp + "/")
    expect("Is a directory" not in err, err)


@case
def test_link_step_one_name(env):
    # A PTX link step is "kern75.ptx (via cuLinkAddData_v2)" in report,
    # check and diff alike.
    def spec(pid):
        s = process(pid) + call("cuInit", 1010, 150)
        s += call("cuLinkCreate_v2", 1290, 1, handle="0x77")
        s += call("cuLinkAddData_v2", 1300, 400, handle="0x77", jit_input=1, name="kern75.ptx",
                  image_hash="0x79848faa88e739f9")
        s += call("cuLinkComplete", 1700, 5, handle="0x77", cubin_size=65536)
        return s + launch(1800) + end()
    a, b = env.trace("a", spec(100)), env.trace("b", spec(200).replace("dur=400ms", "dur=900ms"))
    name = "kern75.ptx (via cuLinkAddData_v2)"
    rep, _ = env.expect_rc(0, "report", a)
    expect(name in rep, rep)
    out, _ = env.expect_rc(1, "check", "--max-jit-ms", "1", a)
    expect(f"module {name}" in out and "in-memory image" not in out, out)
    out, _ = env.expect_rc(0, "diff", a, b)
    expect(name in out and "in-memory image" not in out, out)


@case
def test_diff_plural(env):
    a = env.trace("a", run_spec(pid=1))
    only = process(7, exe="/usr/bin/other") + call("cuInit", 1010, 150) + \
        sass_load(1300, 2) + launch(1400) + end()
    d = env.path("both")
    os.makedirs(d)
    shutil.copy(a, d)
    env.trace("o", only, subdir="both")
    out, _ = env.expect_rc(0, "diff", d, a)
    expect("1 module (0 JIT'd)" in out and "1 modules" not in out, out)


def _demangled_long():
    # f(T, T, ... 11 times), T a 150-character class: a short mangled name
    # (each further T is the substitution S_) whose demangled form is far
    # beyond 1023 bytes, as template-heavy library kernels are.
    cls = "a" * 150
    mangled = "_Z1f150" + cls + "S_" * 10
    return mangled, "f(" + ", ".join([cls] * 11) + ")"


@case
def test_scan_json_long_names_whole(env):
    mangled, want = _demangled_long()
    expect(len(want) > 1023, len(want))
    ptx = env.path("long.ptx")
    open(ptx, "w").write(".version 7.5\n.target sm_75\n.address_size 64\n\n"
                         f".visible .entry {mangled}()\n{{\n\tret;\n}}\n")
    out, _ = env.expect_rc(0, "scan", "--json", "--arch", "sm_90", ptx)
    doc = json.loads(out)
    names = [n for f in doc["files"] for im in f["images"] for n in im["kernels_demangled"]]
    expect(names == [want], f"{[len(n) for n in names]} vs {len(want)}")
    if shutil.which("c++filt"):
        cf = subprocess.run(["c++filt", mangled], capture_output=True, text=True).stdout.strip()
        expect(cf == names[0], "c++filt agrees")


@case
def test_scan_empty_image_every_arch(env):
    # A host-only object carries a cubin without kernels: "empty" on every
    # architecture, also the one whose SASS it carries.
    fix = os.environ.get("JST_FIXTURES", os.path.join(HERE, "..", "fixtures"))
    obj = os.path.join(fix, "hostonly.o")
    for arch in ("sm_75", "sm_80", "sm_90"):
        out, _ = env.expect_rc(0, "scan", "--json", "--arch", arch, obj)
        v = [im["verdict"] for f in json.loads(out)["files"] for im in f["images"]]
        expect(v == ["empty"], f"{arch}: {v}")


def _sim_env(env):
    sim = os.environ.get("JST_SIMDIR")
    if not sim:
        raise Skip("the simulated driver is not built")
    return {"LD_LIBRARY_PATH": sim, "CUDA_CACHE_PATH": env.path("cache")}


@case
def test_device_same_meaning(env):
    # scan --device=N and warm --device N name the same GPU by the same number.
    e = _sim_env(env)
    fix = os.environ.get("JST_FIXTURES", os.path.join(HERE, "..", "fixtures"))
    fb = os.path.join(fix, "ptx75.fatbin")
    out0, _ = env.expect_rc(0, "scan", "--device=0", fb, env=e)
    outall, _ = env.expect_rc(0, "scan", "--device", fb, env=e)
    expect(out0 == outall and "sm_90" in out0, out0)
    _, err = env.expect_rc(2, "scan", "--device=7", fb, env=e)
    expect("--device=7: no such GPU (the driver found 1)" in err, err)
    _, err = env.expect_rc(2, "warm", "--device", "7", fb, env=e)
    out, _ = env.expect_rc(0, "warm", "--device=0", "--cache", env.path("c"), fb, env=e)
    head = [l for l in out.splitlines() if l.startswith("GPU 0: ")]
    expect(head and head[0].count("(sm_90)") == 1, f"the architecture said once: {head}")
    js, _ = env.expect_rc(0, "warm", "--json", "--device=0", "--cache", env.path("c2"), fb, env=e)
    expect(not re.search(r"\d\.\d{16,}", js), f"JSON numbers with sane precision: {js[:400]}")
    json.loads(js)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
