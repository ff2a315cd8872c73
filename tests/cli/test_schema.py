#!/usr/bin/env python3
"""The field schema as the analyzer reads it (analyzer/model_schema.h).

Each case writes a trace with gen_trace (the real writer) and checks what
`jitstall report --json` and `jitstall dump --json` make of it. ctest runs one
case per test (tests/cli/CMakeLists.txt):

    python3 test_schema.py --list      names of the cases
    python3 test_schema.py CASE...     run cases (all when none is named)

Environment: JST_CLI (the jitstall binary), JST_GEN_TRACE (gen_trace), JST_DOCS
(docs/, to find the sources).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

from clitest import CASES, case, expect, Failure


def trace(tmp, spec):
    path = os.path.join(tmp, "t.jst")
    r = subprocess.run([os.environ["JST_GEN_TRACE"], path], input=spec.encode(),
                       capture_output=True)
    expect(r.returncode == 0, f"gen_trace failed: {r.stderr.decode(errors='replace')}")
    return path


def jitstall(*args):
    r = subprocess.run([os.environ["JST_CLI"], *args], capture_output=True)
    expect(r.returncode == 0, f"jitstall {' '.join(args)}: exit {r.returncode}: "
           f"{r.stderr.decode(errors='replace')}")
    return r.stdout.decode()


# Every record repeats a field that is not meant to repeat; the first value is
# the one that counts (docs/FORMAT.md, Fields), the second would change what the
# report says.
REPEATS = """
process pid=100 ppid=1 exe="/first/prog" exe="/second/prog" arg=prog arg=--query host=ci realtime=1700000000s mono=1s proc_start=1s
device device=0 cc_major=9 cc_major=7 cc_minor=0 dev_name="H200" dev_name="other"
call call_id=cuInit start=1100ms dur=100ms dur=900ms
call call_id=cuModuleLoadData start=1300ms dur=2000ms dur=5ms verdict=ptx_jit verdict=sass cache=miss_stored cache=hit source=/opt/lib/a.so source=/opt/lib/b.so kernel=_Z1av kernel=_Z1bv
call call_id=cuLaunchKernel start=4000ms dur=1ms
end start=5s exit_status=0 exit_status=3
"""


@case
def test_schema_first_occurrence_wins(tmp):
    p = json.loads(jitstall("report", "--json", trace(tmp, REPEATS)))["processes"][0]
    expect(p["exe"] == "/first/prog", f"exe: {p['exe']}")
    expect(p["exit_status"] == 0, f"exit_status: {p['exit_status']}")
    expect(p["ttfk_breakdown"]["init_ns"] == 100_000_000,
           f"init_ns: {p['ttfk_breakdown']['init_ns']}")
    expect(p["gpu_arch"] == "sm_90", f"gpu_arch: {p['gpu_arch']}")
    mods = p["modules"]
    expect(len(mods) == 1, f"modules: {mods}")
    m = mods[0]
    expect(m["verdict"] == "ptx_jit" and m["cache"] == "miss_stored",
           f"verdict/cache: {m['verdict']}/{m['cache']}")
    expect(m["dur_ns"] == 2_000_000_000, f"dur_ns: {m['dur_ns']}")
    expect(m["source"] == "/opt/lib/a.so", f"source: {m['source']}")


@case
def test_schema_repeated_fields_keep_all(tmp):
    p = json.loads(jitstall("report", "--json", trace(tmp, REPEATS)))["processes"][0]
    expect(p["argv"] == ["prog", "--query"], f"argv: {p['argv']}")
    m = p["modules"][0]
    expect(m["kernels_mangled"] == ["_Z1av", "_Z1bv"], f"kernels: {m['kernels_mangled']}")


@case
def test_schema_range_first_occurrence_wins(tmp):
    # analyzer/queries.c takes its ranges through the same table.
    spec = REPEATS.replace("end start=5s", (
        "range range_op=push tid=1 tid=9 start=1200ms start=1250ms name=q1 name=q2 depth=1\n"
        "range range_op=pop tid=1 start=3500ms start=1300ms depth=1\n"
        "end start=5s"))
    p = json.loads(jitstall("report", "--json", trace(tmp, spec)))["processes"][0]
    got = [(q["name"], q["tid"], q["start_ns"] // 10**6, q["dur_ns"] // 10**6)
           for q in p["queries"]]
    expect(got == [("q1", 1, 1200, 2300)], f"queries: {got}")


@case
def test_schema_dump_prints_by_the_table(tmp):
    # dump prints every occurrence (it shows the file, not the model), enum
    # values by name, handles in hex, and gathers the four list keys.
    spec = REPEATS.replace("source=/opt/lib/a.so", "handle=0xabc source=/opt/lib/a.so")
    lines = [json.loads(l) for l in jitstall("dump", "--json", trace(tmp, spec)).splitlines()]
    load = lines[3]
    expect(load["call_id"] == "cuModuleLoadData", f"call_id: {load['call_id']}")
    expect(load["verdict"] == ["ptx_jit", "sass"], f"verdict: {load['verdict']}")
    expect(load["handle"] == "0xabc", f"handle: {load['handle']}")
    expect(load["kernels"] == ["_Z1av", "_Z1bv"], f"kernels: {load.get('kernels')}")
    expect(lines[0]["argv"] == ["prog", "--query"], f"argv: {lines[0].get('argv')}")


@case
def test_schema_every_key_has_a_row(tmp):
    # A key added to format.h without a row in common/schema.h would have no
    # name: dump would print it as key_<n> and JSON readers would miss it.
    root = os.path.join(os.environ.get("JST_DOCS", os.path.join(os.path.dirname(__file__),
                                                                "..", "..", "docs")), "..")
    fmt = open(os.path.join(root, "include", "jitstall", "format.h")).read()
    body = fmt[fmt.index("enum jst_key {"):]
    body = body[:body.index("};")]
    keys = re.findall(r"\bJST_F_([A-Z0-9_]+)\s*=", body)
    expect(len(keys) > 90, f"only {len(keys)} keys found in format.h")
    rows = re.findall(r"\bX\(([A-Z0-9_]+),", open(os.path.join(root, "common", "schema.h")).read())
    missing = sorted(set(keys) - set(rows))
    expect(not missing, f"keys without a row in common/schema.h: {missing}")
    expect(len(rows) == len(set(rows)), "a key has two rows in common/schema.h")


def main(argv):
    if argv[1:] == ["--list"]:
        print("\n".join(CASES))
        return 0
    names = argv[1:] or list(CASES)
    rc = 0
    for n in names:
        if n not in CASES:
            print(f"unknown case {n}", file=sys.stderr)
            return 2
        with tempfile.TemporaryDirectory() as tmp:
            try:
                CASES[n](tmp)
                print(f"ok: {n}")
            except Failure as e:
                print(f"FAIL: {n}: {e}", file=sys.stderr)
                rc = 1
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
