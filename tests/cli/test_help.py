#!/usr/bin/env python3
"""CLI tests of `--help` of every command matches its man page.

Harness: clitest.py. `python3 test_help.py --list` names the cases; ctest runs each
as cli.<case>.
"""
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)


@case
def test_help_matches_man(env):
    docs = os.environ.get("JST_DOCS", os.path.join(HERE, "..", "..", "docs"))
    readme = open(os.path.join(docs, "..", "README.md")).read()
    usage_block = readme[readme.index("## Usage"):]
    for cmd in re.findall(r"^  (\w+) ", env.run("--help")[1], re.M):
        # README's Usage lists every command with its exact usage line(s).
        out, _ = env.expect_rc(0, cmd, "--help")
        usage = " ".join(out.split("\n\n")[0].split()).replace("usage: ", "", 1)
        expect(usage in usage_block, f"README.md's Usage lacks the usage of {cmd}: {usage!r}")
    for cmd in ("diff", "export", "check", "baseline", "dump", "scan", "run", "report", "warm",
                "status"):
        out, _ = env.expect_rc(0, cmd, "--help")
        page = os.path.join(docs, f"jitstall-{cmd}.1.md")
        expect(os.path.exists(page), f"{page} exists")
        text = open(page).read()
        m = re.search(r"^## OPTIONS\n(.*?)(?=^## )", text, re.S | re.M)
        expect(m, f"{page} has an OPTIONS section")
        usage = out.split("\n\n")[0]  # the usage line(s)
        optlines = "\n".join(l for l in out.splitlines() if re.match(r"\s+(-\w, )?--", l))
        opts = set(re.findall(r"--[a-z][a-z-]+", usage + "\n" + optlines))
        documented = set(re.findall(r"--[a-z][a-z-]+", m.group(1)))
        expect(opts <= documented, f"{cmd}: options in --help missing from {page}: "
               f"{sorted(opts - documented)}")
        expect(documented <= opts, f"{cmd}: options in {page} missing from --help: "
               f"{sorted(documented - opts)}")
        expect(out.splitlines()[0] in text, f"{page} has the usage line {out.splitlines()[0]!r}")
    top = open(os.path.join(docs, "jitstall.1.md")).read()
    readme = open(os.path.join(docs, "..", "README.md")).read()
    for var in ("JITSTALL_DIR", "JITSTALL_REAL_LIBCUDA", "JITSTALL_DISABLE", "JITSTALL_DEBUG",
                "JITSTALL_STACK_DEPTH", "JITSTALL_CUPTI", "JITSTALL_BUDGET_MS",
                "JITSTALL_FAIL_EXIT_CODE", "JITSTALL_CUPTI_PATH", "JITSTALL_DEBUG_DIR",
                "JITSTALL_PROGRESS_MS", "JITSTALL_READY", "JITSTALL_LIVE_MS"):
        expect(f"`{var}`" in top, f"jitstall.1.md documents {var}")
        expect(f"`{var}" in readme, f"README.md lists {var}")
    out, _ = env.expect_rc(0, "--help")
    for cmd in re.findall(r"^  (\w+) ", out, re.M):
        expect(f"jitstall {cmd}" in top or f"jitstall-{cmd}" in top,
               f"jitstall.1.md mentions the {cmd} command")


@case
def test_unknown_option_one_line(env):
    # Every command says what getopt_long refused in the same one line, never
    # a usage text, and exits 2.
    t = env.trace("t", run_spec())
    for cmd in ("baseline", "check", "diff", "export", "report", "scan", "warm"):
        _, err = env.expect_rc(2, cmd, "--bogus", t)
        want = (f"jitstall {cmd}: unknown option or missing value '--bogus' "
                f"(see 'jitstall {cmd} --help')\n")
        expect(err == want, f"{cmd}: {err!r}")


@case
def test_usage_errors_one_line(env):
    # Every command reads its options the same way (analyzer/cli.c): no
    # operand is one line naming what is missing, never a usage text; where
    # getopt can tell an unknown option from a missing value (dump, run) the
    # line says which.
    t = env.trace("t", run_spec())
    for cmd, what in (("baseline", "trace or directory"), ("check", "trace or directory"),
                      ("dump", "trace"), ("export", "trace or directory"), ("report", "trace"),
                      ("run", "command"), ("scan", "PATH"), ("warm", "PATH")):
        out, err = env.expect_rc(2, cmd)
        want = f"jitstall {cmd}: no {what} given (see 'jitstall {cmd} --help')\n"
        expect(out == "" and err == want, f"{cmd}: {out!r} {err!r}")
    for cmd in ("dump", "run"):
        _, err = env.expect_rc(2, cmd, "--bogus", t)
        want = f"jitstall {cmd}: unknown option '--bogus' (see 'jitstall {cmd} --help')\n"
        expect(err == want, f"{cmd}: {err!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
