#!/usr/bin/env python3
"""CLI tests of `jitstall check`: budgets, exit codes, garbage and partial traces, JUnit and GitHub output.

Harness: clitest.py. `python3 test_check.py --list` names the cases; ctest runs each
as cli.<case>.
"""
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)


@case
def test_many_budgets_one_line_each_fix_once(env):
    # Four budgets fail on the same module: one line per budget, and its call
    # site and fix once, on the first line (JUnit keeps each case whole).
    t = env.trace("jit", run_spec())
    junit = env.path("j.xml")
    out, _ = env.expect_rc(1, "check", "--max-jit-ms", "500", "--max-ttfk-ms", "500",
                           "--max-jit-modules", "0", "--forbid-verdict", "ptx_jit",
                           "--junit", junit, t)
    lines = fail_lines(out)
    expect(len(lines) == 4, out)
    expect(out.count("fix: ") == 1 and out.count("-gencode arch=compute_90,code=sm_90") == 1, out)
    expect("fix: " in lines[0] and "call site" in lines[0], lines[0])
    for l in lines[1:]:
        expect(l.endswith("; call site and fix as above") and len(l) < 260, l)
    xml = open(junit).read()
    expect(xml.count("-gencode arch=compute_90,code=sm_90") >= 4, "each JUnit case keeps the fix")


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
    expect("\n## jitstall report" in out, out[:200])
    out, _ = env.expect_rc(0, "report", "--", d)
    expect("\n\njitstall report: 1 process\n" in out, out[:200])
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
def test_junit_unwritable_before_check(env):
    # The JUnit path is tried before the check runs: exit 2 with one line on
    # stderr, and no check output at all (not a FAIL list then exit 2, which
    # hid the check's verdict).
    t = env.trace("a", run_spec())
    for bad in (env.path("no/such/dir/j.xml"), env.tmp):
        out, err = env.expect_rc(2, "check", "--max-jit-ms", "1", "--junit", bad, t)
        expect(out == "", f"the check must not run: {out!r}")
        expect(err.startswith(f"jitstall check --junit: {bad}: ") and err.count("\n") == 1, err)
    # A writable path that did not exist is not left behind by the probe
    # when the run then turns out unreadable.
    j = env.path("j.xml")
    env.expect_rc(2, "check", "--max-jit-ms", "1", "--junit", j, env.path("missing.jst"))
    expect(not os.path.exists(j), "the probe's file is removed")


@case
def test_junit_escaping(env):
    # Markup characters, quotes, a newline, invalid UTF-8 and U+FFFE (valid
    # UTF-8 that XML 1.0 forbids) in the exe and the library path must still
    # give a valid document carrying the text, and valid UTF-8 as it is.
    nasty_src = '/opt/a&b/<lib>\\"q\'\\x01\\xff\\xc3\\x28\\xef\\xbf\\xbe\\xc3\\xa9.so'
    spec = run_spec(exe="/opt/x&y<z>/p\"r'og", source="SRC").replace(q("SRC"), '"' + nasty_src + '"')
    t = env.trace("nasty", spec)
    j = env.path("j.xml")
    env.expect_rc(1, "check", "--forbid-verdict", "ptx_jit", "--junit", j, t)
    root = validate_junit(env, j)
    f = root.find(".//failure")
    expect(f is not None and "/opt/a&b/<lib>\"q'" in f.get("message"), f.get("message"))
    expect("\ufffd" in f.get("message"), "invalid bytes become U+FFFD")
    # each byte of U+FFFE becomes U+FFFD; é stays
    expect("q'\ufffd\ufffd\ufffd(\ufffd\ufffd\ufffd\u00e9.so" in f.get("message"),
           f.get("message"))
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
    # The newline by the CLI's one escaping rule (shown as \n, never a line
    # break of GitHub's), then '%' by GitHub's.
    expect("/opt/100%25/lib\\nkern.so" in e, f"% and newline escaped: {e}")
    expect(not fail_lines(out), "annotations replace the plain lines")
    expect("jitstall check: FAILED: 1 regression" in out, out)


@case
def test_github_step_summary(env):
    # GitHub Actions sets GITHUB_STEP_SUMMARY: check --github appends its
    # verdict and the Markdown report there (after what was already in it).
    t = env.trace("gh", run_spec())
    summ = env.path("summary.md")
    open(summ, "w").write("earlier step\n")
    out, _ = env.expect_rc(1, "check", "--github", "--max-jit-ms", "500", t,
                           env={"GITHUB_STEP_SUMMARY": summ})
    md, _ = env.expect_rc(0, "report", "--markdown", t)
    text = open(summ).read()
    expect(text.startswith("earlier step\n### jitstall check: FAILED: 1 regression in 1 of 1 process\n"),
           text[:300])
    expect(md in text, f"the Markdown report is in the summary:\n{text[:2000]}")
    # Without --github, or without the variable: nothing is written.
    open(summ, "w").write("")
    env.expect_rc(1, "check", "--max-jit-ms", "500", t, env={"GITHUB_STEP_SUMMARY": summ})
    expect(open(summ).read() == "", "no summary without --github")
    # An unwritable summary is a warning; the status stays the check's.
    _, err = env.expect_rc(1, "check", "--github", "--max-jit-ms", "500", t,
                           env={"GITHUB_STEP_SUMMARY": env.path("no/dir/s.md")})
    expect("GITHUB_STEP_SUMMARY" in err, err)


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


@case
def test_github_in_flight_file_line(env):
    # A load still in flight when the trace ends, with a call site that DWARF
    # knows: its ::error annotation carries file= and line= too.
    nm = subprocess.run(["nm", env.gen], capture_output=True, text=True)
    if nm.returncode != 0:
        raise Skip("nm not available")
    addr = [int(p[0], 16) for p in (l.split() for l in nm.stdout.splitlines())
            if len(p) == 3 and p[2] == "main" and p[1] in "Tt"]
    expect(addr, "main in gen_trace's symbol table")
    bias = 0x555555554000
    size = os.path.getsize(env.gen)
    spec = (process() +
            f"modmap mod_event=initial mod_path={q(env.gen)} bias={hex(bias)} "
            f"mod_start={hex(bias)} mod_end={hex(bias + size + 0x100000)}\n"
            f"stack stack_id=1 ips={hex(bias + addr[0] + 8)}\n"
            + call("cuInit", 1010, 150)
            + "begin call=cuModuleLoadData start=1300ms stack_id=1 image_kind=fatbin "
              f"source={q('/opt/app/lib/libkern.so')}\n")
    t = env.trace("inflight", spec, truncate=True)
    out, _ = env.expect_rc(1, "check", "--github", t)
    e = [l for l in out.splitlines() if l.startswith("::error")]
    expect(len(e) == 1 and "in-flight" in e[0], out)
    expect(re.match(r"::error file=[^,]*gen_trace\.c,line=\d+,title=jitstall::prog\[100\] in-flight: ",
                    e[0]), e[0])


# ---- diff ----


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


if __name__ == "__main__":
    sys.exit(main(sys.argv))
