#!/usr/bin/env python3
"""CLI tests of `jitstall diff`.

Harness: clitest.py. `python3 test_diff.py --list` names the cases; ctest runs each
as cli.<case>.
"""
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)


@case
def test_diff_text(env):
    a = env.trace("before", run_spec())
    b = env.trace("after", run_spec(pid=200, fixed=True, h="0xabd",
                                   extra_jit=[("/opt/app/lib/libnew.so", 40)]))
    out, _ = env.expect_rc(0, "diff", a, b)
    lines = out.splitlines()
    expect(lines[0] == f"jitstall diff: A = {a}, B = {b}", lines[0])
    expect(lines[1] == "prog (pid 100 -> 200)", lines[1])
    expect(re.match(r"\s+time to first kernel\s+11400\.0 ms -> 443\.0 ms \(-10957\.0 ms, -96%\)$",
                    lines[2]), lines[2])
    expect(re.match(r"\s+JIT time\s+11000\.0 ms -> 40\.0 ms \(-10960\.0 ms, -100%\)$", lines[3]),
           lines[3])
    expect(any(re.match(r"\s+changed\s+/opt/app/lib/libkern.so \[add\(float\*, float\*\)\]: "
                        r"ptx_jit -> sass, JIT 11000\.0 ms -> 0\.0 ms", l) for l in lines), out)
    expect(any(re.match(r"\s+appeared\s+/opt/app/lib/libnew.so .*ptx_jit, JIT 40\.0 ms", l)
               for l in lines), out)
    expect(any(re.match(r"\s+same\s+/opt/app/lib/libok.so \[mul\(float\*, float\*\)\]: sass$", l)
               for l in lines), out)
    # The other way round the new module disappears.
    out, _ = env.expect_rc(0, "diff", b, a)
    expect(re.search(r"disappeared\s+/opt/app/lib/libnew.so", out), out)
    # Processes only on one side.
    c = env.trace("other", run_spec(pid=300, exe="/usr/bin/other"))
    d = env.path("both")
    os.makedirs(d)
    shutil.copy(a, d)
    shutil.copy(c, d)
    out, _ = env.expect_rc(0, "diff", d, b)
    expect("other (pid 300): only in A" in out, out)


@case
def test_diff_json(env):
    a = env.trace("before", run_spec(cache="miss_stored", jit_ms=1000))
    b = env.trace("after", run_spec(pid=200, cache="hit", jit_ms=30))
    out, _ = env.expect_rc(0, "diff", "--json", a, b)
    doc = json.loads(out)
    expect(doc["a"] == a and doc["b"] == b, "paths")
    (p,) = doc["processes"]
    expect(p["status"] == "matched" and p["pid_a"] == 100 and p["pid_b"] == 200, p)
    expect(p["ttfk_a_ns"] == 1400000000 and p["ttfk_b_ns"] == 430000000
           and p["ttfk_delta_ns"] == -970000000, p)
    expect(p["jit_a_ns"] == 1000000000 and p["jit_b_ns"] == 30000000
           and p["jit_delta_ns"] == -970000000, p)
    m = {x["source"]: x for x in p["modules"]}
    k = m["/opt/app/lib/libkern.so"]
    expect(k["status"] == "same" and k["verdict_a"] == k["verdict_b"] == "ptx_jit"
           and k["cache_a"] == "miss_stored" and k["cache_b"] == "hit"
           and k["jit_a_ns"] == 1000000000 and k["jit_b_ns"] == 30000000
           and k["image_hash_a"] == "0x0000000000000abc" and k["kernels"] == [KERNEL], k)
    # A baseline file as A.
    base = env.path("base.json")
    env.expect_rc(0, "baseline", a, "-o", base)
    out2, _ = env.expect_rc(0, "diff", "--json", base, b)
    doc2 = json.loads(out2)
    expect(doc2["processes"][0]["modules"] == p["modules"], "baseline as A gives the same modules")
    _, err = env.expect_rc(2, "diff", a)
    expect("needs exactly two runs" in err, err)
    _, err = env.expect_rc(2, "diff", a, base)
    expect("B must be traces" in err, err)


@case
def test_diff_rebuilt_same_path(env):
    # The library rebuilt at the same path, PTX only before and SASS after,
    # with no kernel names recorded for the SASS load (an older preload, or a
    # compressed cubin): one module, changed, not appeared + disappeared.
    a = env.trace("before", run_spec())
    spec = re.sub(f" kernel={KERNEL}(?=[ \\n])", "", run_spec(pid=200, fixed=True, h="0xabd"),
                  count=1)
    expect(spec.count(f"kernel={KERNEL}") == 0, spec)
    b = env.trace("after", spec)
    out, _ = env.expect_rc(0, "diff", a, b)
    expect(re.search(r"changed\s+/opt/app/lib/libkern.so.*: ptx_jit -> sass", out), out)
    expect("appeared" not in out and "disappeared" not in out, out)


@case
def test_diff_rebuilt_in_memory(env):
    # An image in memory (no library, no file) rebuilt from PTX to SASS: its
    # hash changed, its kernels did not (listed in another order): changed,
    # named as report names it.
    def in_memory(spec):
        return spec.replace(f" source={q('/opt/app/lib/libkern.so')}", "", 1)
    one = f" kernel={KERNEL}(?=[ \\n])"
    a_spec = re.sub(one, f" kernel={KERNEL} kernel=_Z4zzzzPf", in_memory(run_spec()), count=1)
    b_spec = re.sub(one, f" kernel=_Z4zzzzPf kernel={KERNEL}",
                    in_memory(run_spec(pid=200, fixed=True, h="0xabd")), count=1)
    expect("_Z4zzzzPf" in a_spec and "_Z4zzzzPf" in b_spec, b_spec)
    a, b = env.trace("before", a_spec), env.trace("after", b_spec)
    out, _ = env.expect_rc(0, "diff", a, b)
    expect(re.search(r"changed\s+\(image in memory 0x0000000000000abd, via cuLibraryLoadData\) "
                     r".*: ptx_jit -> sass", out), out)
    expect("appeared" not in out and "disappeared" not in out, out)
    rep, _ = env.expect_rc(0, "report", a)
    expect("(image in memory 0x0000000000000abc, via cuLibraryLoadData)" in rep,
           f"report names it alike:\n{rep}")


# ---- export ----


if __name__ == "__main__":
    sys.exit(main(sys.argv))
