#!/usr/bin/env python3
"""CLI tests of `jitstall export`, and enum values from a newer preload through report, baseline and check.

Harness: clitest.py. `python3 test_export.py --list` names the cases; ctest runs each
as cli.<case>.
"""
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)


@case
def test_export_chrome(env):
    spec = run_spec()
    # A second thread launching a second kernel, and CUPTI records.
    spec = spec.replace("end exit_status", call("cuLaunchKernel", 12500, 0.01, name=KERNEL2,
                                                func="0x31", tid=4242) + "end exit_status")
    spec = spec.replace("end exit_status",
                        "cupti cupti_op=compile cupti_start=1301ms cupti_end=12200ms load_seq=3\n"
                        "cupti cupti_op=cache_store cupti_start=12200ms cupti_end=12290ms "
                        "load_seq=3 cupti_cache_path=/root/.nv/ComputeCache\n"
                        "end exit_status")
    t = env.trace("jit", spec)
    t2 = env.trace("second", run_spec(pid=555, off=500))
    o = env.path("out.json")
    _, err = env.expect_rc(0, "export", "--format", "chrome", "-o", o, t, t2)
    expect("wrote" in err and "ui.perfetto.dev" in err, err)
    # Times are microseconds with exactly three decimals, never binary
    # fraction noise such as 7625.2399999999998.
    raw = open(o).read()
    nums = re.findall(r'"(?:ts|dur)":(-?[0-9.eE+-]+)', raw)
    bad = [n for n in nums if not re.fullmatch(r"-?\d+\.\d{3}", n)]
    expect(nums and not bad, f"ts/dur not printed with 3 decimals: {bad[:5]}")
    doc = json.load(open(o))
    expect(doc.get("displayTimeUnit") == "ms", "displayTimeUnit ms")
    ev = doc["traceEvents"]
    # calls only: compile and first-call slices are checked in test_compiles.py
    xs = [e for e in ev if e["ph"] == "X" and e.get("cat") not in ("cupti", "compile", "first_call")]
    p100 = [e for e in xs if e["pid"] == 100]
    expect([e["name"] for e in p100] == ["cuInit", "cuDevicePrimaryCtxRetain", "cuLibraryLoadData",
                                         "cuModuleLoadData", "cuLaunchKernel", "cuLaunchKernel"],
           f"one X event per call of pid 100: {[e['name'] for e in p100]}")
    init = [e for e in p100 if e["name"] == "cuInit"][0]
    expect(abs(init["ts"] - 10000) < 1e-6 and abs(init["dur"] - 150000) < 1e-6,
           f"ts/dur in microseconds from the earliest process start: {init}")
    jit = [e for e in p100 if e["name"] == "cuLibraryLoadData"][0]
    a = jit["args"]
    expect(jit["cat"] == "jit" and a["verdict"] == "ptx_jit" and a["jit_from"] == "compute_75"
           and a["kernels"] == ["add(float*, float*)"] and a["cache"] == "miss_stored"
           and a["source"] == "/opt/app/lib/libkern.so" and a["result"] == 0, a)
    meta = [e for e in ev if e["ph"] == "M"]
    pn = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    expect(pn == {100: "prog (pid 100)", 555: "prog (pid 555)"}, pn)
    tn = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta if e["name"] == "thread_name"}
    expect(tn.get((100, 100)) == "main thread 100" and tn.get((100, 4242)) == "thread 4242"
           and tn.get((100, 0)) == "CUPTI JIT activity", tn)
    inst = [e for e in ev if e["ph"] == "i"]
    fl = [e for e in inst if e["name"].startswith("first launch: ") and e["pid"] == 100]
    expect(sorted(e["name"] for e in fl) == ["first launch: add(float*, float*)",
                                            "first launch: mul(float*, float*)"], fl)
    expect(all(e["s"] in ("t", "p") for e in inst), "instant scopes")
    fk = [e for e in inst if e["name"].startswith("first kernel: add(float*, float*)")
          and e["pid"] == 100]
    expect(len(fk) == 1 and fk[0]["s"] == "p" and "11400.0 ms" in fk[0]["name"], fk)
    launch100 = [e for e in fl if e["name"].endswith("add(float*, float*)")][0]
    expect(launch100["tid"] == 100 and abs(launch100["ts"] - 11400000) < 1e-3, launch100)
    cu = [e for e in ev if e.get("cat") == "cupti"]
    expect(len(cu) == 2 and cu[0]["name"] == "CUPTI JIT compile" and cu[0]["tid"] == 0
           and abs(cu[0]["dur"] - 10899000) < 1e-3, cu)
    # The second process starts 500 ms later on the shared clock.
    p555 = [e for e in xs if e["pid"] == 555 and e["name"] == "cuInit"][0]
    expect(abs(p555["ts"] - 510000) < 1e-3, p555)
    # stdout, unknown format.
    out, _ = env.expect_rc(0, "export", t)
    expect(json.loads(out)["traceEvents"], "export to stdout")
    _, err = env.expect_rc(2, "export", "--format", "pprof", "-o", o, t)
    expect("unknown format 'pprof'" in err, err)


@case
def test_export_first_launch_once(env):
    # Three launches of add (one from another thread) and two of mul: one
    # "first launch" marker per function, not one per launch.
    spec = run_spec().replace(
        "end exit_status",
        launch(12500) + launch(12600, tid=4242) +
        call("cuLaunchKernel", 12700, 0.01, name=KERNEL2, func="0x31") +
        call("cuLaunchKernel", 12800, 0.01, name=KERNEL2, func="0x31") + "end exit_status")
    t = env.trace("many", spec)
    out, _ = env.expect_rc(0, "export", t)
    ev = json.loads(out)["traceEvents"]
    xs = [e for e in ev if e["ph"] == "X" and e["name"] == "cuLaunchKernel"]
    expect(len(xs) == 5, f"one X event per launch: {len(xs)}")
    fl = sorted((e["name"], e["ts"]) for e in ev
                if e["ph"] == "i" and e["name"].startswith("first launch: "))
    expect(fl == [("first launch: add(float*, float*)", 11400000.0),
                  ("first launch: mul(float*, float*)", 11700000.0)], fl)
    fk = [e for e in ev if e["ph"] == "i" and e["name"].startswith("first kernel: ")]
    expect(len(fk) == 1 and fk[0]["ts"] == 11400000.0, fk)


@case
def test_unknown_enum_values(env):
    # A newer preload may record verdicts and cache outcomes this jitstall has
    # no name for: the report JSON keeps "cache" a string, and a baseline
    # written from such a trace can be read back by check.
    spec = run_spec().replace("end exit_status",
                              call("cuModuleLoadData", 11450, 2, verdict=77, image_hash="0x77",
                                   source=q("/opt/app/lib/libnew.so")) + "end exit_status")
    spec = spec.replace("cache=miss_stored", "cache=99")
    t = env.trace("newer", spec)
    out, _ = env.expect_rc(0, "report", "--json", t)
    mods = json.loads(out)["processes"][0]["modules"]
    by_src = {m["source"]: m for m in mods}
    expect(by_src["/opt/app/lib/libkern.so"]["cache"] == "unknown", by_src)
    expect(by_src["/opt/app/lib/libnew.so"]["verdict"] == "none", by_src)
    bl = env.path("newer.json")
    env.expect_rc(0, "baseline", "-o", bl, t)
    doc = json.load(open(bl))
    bm = {m["source"]: m for m in doc["processes"][0]["modules"]}
    expect(bm["/opt/app/lib/libkern.so"]["cache"] == "unknown"
           and bm["/opt/app/lib/libnew.so"]["verdict"] == "none", bm)
    out, err = env.expect_rc(0, "check", "--baseline", bl, t)
    expect("(null)" not in out + err, out + err)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
