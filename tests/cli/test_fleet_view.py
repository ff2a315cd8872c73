#!/usr/bin/env python3
"""CLI tests of report's fleet view and check's percentile budgets.

Harness: clitest.py. `python3 test_fleet_view.py --list` names the cases; ctest
runs each as cli.<case>.

    python3 test_fleet_view.py --write-200 DIR [OUT.txt]

writes the 200 traces of fleet_200 into DIR (and, with OUT.txt, the text
report of them there), to show the fleet view by hand.
"""
import sys

from clitest import *  # noqa: F401,F403 (the harness: case, expect, Env, trace builders)

HOSTS = [f"node{i:02d}" for i in range(1, 21)]
GPUS = [("NVIDIA H200", 9, 0), ("NVIDIA H100 80GB HBM3", 9, 0), ("NVIDIA A100-SXM4-80GB", 8, 0)]


def fleet_run(i):
    """Run i of 200: 150 of a server (two configurations on hosts node01-20),
    50 of a trainer. Cold caches JIT libkern.so; every 10th server run also
    JITs libextra.so; warm ones hit the cache."""
    if i < 150:
        exe, args = "/opt/svc/bin/server", ("server", "--model", "llama")
    else:
        exe, args = "/usr/bin/python3", ("python3", "train.py")
    host = HOSTS[i % len(HOSTS)]
    name, maj, mnr = GPUS[i % 7 % 3]
    cold = i % 4 == 0
    jit_ms = (9000 + (i * 37) % 3000) if cold else (20 + i % 30)
    extra = [("/opt/svc/lib/libextra.so", 400 + i)] if i < 150 and i % 10 == 3 else None
    spec = run_spec(pid=1000 + i, exe=exe, args=args, jit_ms=jit_ms,
                    cache="miss_stored" if cold else "hit", extra_jit=extra, off=i * 10)
    spec = spec.replace("host=ci", f"host={host}", 1)
    spec = spec.replace('dev_name="NVIDIA H200"', f"dev_name={q(name)}", 1)
    spec = spec.replace("cc_major=9 cc_minor=0", f"cc_major={maj} cc_minor={mnr}", 1)
    spec = spec.replace("target_cc=90", f"target_cc={maj}{mnr}")
    return spec.replace("GPU is sm_90", f"GPU is sm_{maj}{mnr}")


def write_200(env, sub="fleet"):
    for i in range(200):
        env.trace(f"run{i:03d}", fleet_run(i), subdir=sub)
    return env.path(sub)


def pct(values, p):
    v = sorted(values)
    k = max(1, -(-len(v) * p // 100))
    return v[k - 1]


@case
def test_fleet_200(env):
    d = write_200(env)
    out, err = env.expect_rc(0, "report", d)
    lines = out.splitlines()
    expect("jitstall report: 200 processes" in lines, lines[:8])
    expect(len(lines) < 150, f"200 runs fold into a short report: {len(lines)} lines")
    expect("Process 1000" not in out and "Projected time to first kernel of pid" not in out,
           "no per-process sections by default")
    expect("--per-process" in out, "says how to get the detail")
    m = re.search(r"^  1\. /opt/svc/bin/server  150 runs$", out, re.M)
    expect(m, out[:3000])
    expect(re.search(r"^  2\. /usr/bin/python3  50 runs$", out, re.M), out[:3000])
    # The figures: ttfk = 400 + JIT (run_spec), p50/p95/max by nearest rank.
    server = [fleet_run(i) for i in range(150)]
    doc = json.loads(env.expect_rc(0, "report", "--json", d)[0])
    g = doc["groups"]
    expect([x["runs"] for x in g] == [150, 50], [x["runs"] for x in g])
    s = g[0]
    expect(s["exe"] == "/opt/svc/bin/server" and s["argv"] == ["server", "--model", "llama"], s)
    ttfk = [p["ttfk_ns"] for p in doc["processes"] if p["exe"] == "/opt/svc/bin/server"]
    jit = [p["jit_ns"] for p in doc["processes"] if p["exe"] == "/opt/svc/bin/server"]
    expect(len(ttfk) == 150 == len(server), len(ttfk))
    expect(s["ttfk"] == {"runs": 150, "p50_ns": pct(ttfk, 50), "p95_ns": pct(ttfk, 95),
                         "max_ns": max(ttfk)}, s["ttfk"])
    expect(s["jit"]["p95_ns"] == pct(jit, 95) and s["jit"]["max_ns"] == max(jit), s["jit"])
    # First-call time: each run's slowest first call (the JIT'd kernel's first
    # launch), by the same nearest-rank percentiles.
    fc = [max(f["dur_ns"] for f in p["first_calls"]) for p in doc["processes"]
          if p["exe"] == "/opt/svc/bin/server" and p["first_calls"]]
    expect(fc, "the server's runs have first calls")
    expect(s["first_call"] == {"runs": len(fc), "p50_ns": pct(fc, 50), "p95_ns": pct(fc, 95),
                               "max_ns": max(fc)}, s["first_call"])
    expect(re.search(r"first call   p50 ", out), "the text view shows first-call time")
    # Culprits and fixes with the number of runs each hit.
    cul = {c["text"]: c["runs"] for c in s["culprits"]}
    expect(cul.get("/opt/app/lib/libkern.so") == 150, cul)
    expect(cul.get("/opt/svc/lib/libextra.so") == 15, cul)
    expect(re.search(r"culprits +150/150 runs, [0-9.]+ [a-z]+ lost: /opt/app/lib/libkern.so", out),
           out[:3000])
    expect(re.search(r"^ +15/150 runs, [0-9.]+ [a-z]+ lost: /opt/svc/lib/libextra.so", out, re.M),
           out[:3000])
    expect(all(f["runs"] >= 1 and f["saves_ns"] >= 0 for f in s["fixes"]) and s["fixes"], s)
    expect(re.search(r"^     fixes +\d+/150 runs, saves ", out, re.M), out[:3000])
    # Hosts and GPUs seen.
    expect(sorted(s["hosts"]) == HOSTS, s["hosts"])
    expect(sorted(s["gpus"]) == sorted(f"{n} (sm_{a}{b})" for n, a, b in GPUS), s["gpus"])
    expect("hosts        node01, node02" in out and "(20 in all)" in out, out[:3000])
    # The worst run, named: the longest time to first kernel.
    worst = max((p for p in doc["processes"] if p["exe"] == "/opt/svc/bin/server"),
                key=lambda p: p["ttfk_ns"])
    expect(s["worst"]["pid"] == worst["pid"] and s["worst"]["ttfk_ns"] == worst["ttfk_ns"]
           and s["worst"]["trace"].endswith(".jst"), (s["worst"], worst["pid"]))
    expect(f"worst run    pid {worst['pid']} on " in out, out[:3000])
    # The detail is one option away.
    full, _ = env.expect_rc(0, "report", "--per-process", d)
    expect(full.count("\nProcess ") == 200, "every process with --per-process")
    one, _ = env.expect_rc(0, "report", "--pid", str(worst["pid"]), d)
    expect("\njitstall report: 1 process\n" in one and f"Process {worst['pid']}" in one,
           one[:500])
    _, err = env.expect_rc(2, "report", "--pid", "99999", d)
    expect(err == "jitstall report: --pid: no such process in the traces\n", err)
    md, _ = env.expect_rc(0, "report", "--markdown", d)
    expect("### Programs" in md and "| `/opt/svc/bin/server` | 150 |" in md, md[:2000])


@case
def test_fleet_small_keeps_detail(env):
    # Three runs of one program: the fleet section, and every process's detail.
    for i in range(3):
        env.trace(f"r{i}", fleet_run(i * 4), subdir="few")
    out, _ = env.expect_rc(0, "report", env.path("few"))
    expect("Programs" in out and "/opt/svc/bin/server  3 runs" in out, out[:2000])
    expect(out.count("\nProcess ") == 3, "detail kept under the fold limit")
    # One run per program: no fleet section.
    out, _ = env.expect_rc(0, "report", env.trace("one", fleet_run(0)))
    expect("Programs" not in out, out[:2000])


@case
def test_check_percentile_budget(env):
    d = write_200(env)
    doc = json.loads(env.expect_rc(0, "report", "--json", d)[0])
    s = doc["groups"][0]
    p95 = s["ttfk"]["p95_ns"] / 1e6
    # Just above the server's p95 and the trainer's: passes; below: fails once
    # per program over it, naming p95, the budget and the worst run.
    t = doc["groups"][1]["ttfk"]["p95_ns"] / 1e6
    ok = max(p95, t) + 1
    out, _ = env.expect_rc(0, "check", "--max-ttfk-ms", f"p95={ok}", d)
    expect("OK: 200 processes" in out, out)
    out, _ = env.expect_rc(1, "check", "--max-ttfk-ms", f"p95={p95 - 1}", "--quiet", d)
    lines = fail_lines(out)
    want = (r"FAIL server\[\d+\] max-ttfk-ms=p95: p95 of time to first kernel over 150 of 150 "
            r"runs of /opt/svc/bin/server is [0-9.]+ ms, budget [0-9.]+ ms \(\+1\.0 ms\); worst run "
            r"pid \d+, [0-9.]+ ms \(\S+\.jst\)$")
    expect(any(re.match(want, l) for l in lines), out)
    trainer_over = t > p95 - 1
    expect(len(lines) == 1 + trainer_over, f"one line per program over the budget: {out}")
    expect(f"in {1 + trainer_over} of 200 processes" in out, out)
    # p50 and max too, and together with a per-process budget.
    env.expect_rc(0, "check", "--max-ttfk-ms", f"p50={s['ttfk']['p50_ns'] / 1e6 + 1}",
                  "--max-ttfk-ms", f"max={max(s['ttfk']['max_ns'], doc['groups'][1]['ttfk']['max_ns']) / 1e6 + 1}",
                  d)
    env.expect_rc(1, "check", "--max-jit-ms", f"p95={s['jit']['p95_ns'] / 1e6 - 1}", d)
    for bad in ("p0=10", "q95=1", "p100=5", "p95=", "p95=x", "=5"):
        _, err = env.expect_rc(2, "check", "--max-ttfk-ms", bad, d)
        expect(err.startswith("jitstall check: --max-ttfk-ms: "), err)

# ---- issue 33: one culprit per image, and sections that agree ----

IMAGES = {"kernels.ptx": ("0x79690c875128e87f", 129537, ("scan_rows", "hash_join")),
          "k2.ptx": ("0x1234abcd5678ef01", 40000, ("k2_main", "k2_tail"))}


def ptx_load(start_ms, dur_ms, image, cache, stack_id=None):
    """cuModuleLoadData of a PTX image in memory (no source, no path)."""
    h, size, kernels = IMAGES[image]
    kw = dict(image_kind="ptx", image_hash=h, image_size=size, verdict="ptx_jit",
              jit_from="compute_75", target_cc=90, reason=q("PTX compute_75 only; GPU is sm_90"),
              cache=cache, cache_reason="none", entry=q("ptx compute_75 none"))
    if stack_id:
        kw["stack_id"] = stack_id
    line = call("cuModuleLoadData", start_ms, dur_ms, **kw).rstrip("\n")
    return line + "".join(f" kernel={k}" for k in kernels) + "\n"


def cache_rec(phase, path, exists, entries):
    return (f"cache phase={phase} cache_path={q(path)} cache_path_env=1 exists={exists} "
            f"writable=1 entries={entries} size_bytes={1000 * entries} max_bytes=1073741824\n")


def image_run(i, image, cache_dir, cold, first_in_dir):
    """One run of `python3 run.py IMAGE` that loads IMAGE: 250 ms when cold, 1 ms from the
    cache."""
    off = i * 1000
    s = process(pid=2000 + i, exe="/usr/bin/python3.12", args=("python3", "run.py", image),
                start_ms=1000 + off).replace("realtime=1700000000s",
                                             f"realtime={1700000000000 + off}ms")
    s += cache_rec(0, cache_dir, 0 if first_in_dir else 1, 0 if first_in_dir else 1)
    s += call("cuInit", 1010 + off, 1)
    s += call("cuDevicePrimaryCtxRetain", 1012 + off, 10)
    dur = 250 + i % 7 if cold else 1 + (i % 5) / 10
    s += ptx_load(1030 + off, dur, image, "miss_stored" if cold else "hit")
    s += launch(1030 + off + dur + 5, kernel=IMAGES[image][2][0])
    s += cache_rec(1, cache_dir, 1, 2)
    return s + end()


def write_400(env, sub="f400"):
    """300 runs of kernels.ptx and 100 of k2.ptx, over 34 cache directories that persist:
    each image is compiled once per directory and then served from it."""
    seen, dirs = set(), set()
    for i in range(400):
        image = "kernels.ptx" if i < 300 else "k2.ptx"
        d = f"/srv/jit/c{i % 34:02d}"
        cold = (d, image) not in seen
        env.trace(f"run{i:03d}", image_run(i, image, d, cold, d not in dirs), subdir=sub)
        seen.add((d, image))
        dirs.add(d)
    return env.path(sub)


def rv_dur(ns):
    """The report's duration words (report_words.c rv_dur)."""
    if ns < 1000:
        return f"{ns} ns"
    if ns < 1000000:
        return f"{ns / 1e3:.1f} us"
    if ns < 1000000000:
        return f"{ns / 1e6:.1f} ms"
    return f"{ns / 1e9:.2f} s"


@case
def test_fleet_sections_agree_per_image(env):
    d = write_400(env)
    doc = json.loads(env.expect_rc(0, "report", "--json", d)[0])
    out, _ = env.expect_rc(0, "report", d)
    md, _ = env.expect_rc(0, "report", "--markdown", d)
    # The truth, from JSON's modules: per image, loads and time lost.
    truth = {}
    for p in doc["processes"]:
        for m in p["modules"]:
            t = truth.setdefault(m["image_hash"], [0, 0])
            t[0] += 1
            t[1] += m["lost_ns"]
    want = {IMAGES["kernels.ptx"][0]: 300, IMAGES["k2.ptx"][0]: 100}
    expect({h: n for h, (n, _) in truth.items()} == want, truth)
    # The global Culprits: one per image, its loads and time the image's.
    cul = re.findall(r"^  (\d+)\. ([0-9.]+ [a-z]+)  \(image in memory (0x[0-9a-f]+), via "
                     r"cuModuleLoadData\)  \[(\d+) loads", out, re.M)
    expect(len(cul) == 2, out)
    number = {}
    for num, t, h, n in cul:
        expect(int(n) == truth[h][0], f"culprit {h}: {n} loads, the image has {truth[h][0]}")
        expect(t == rv_dur(truth[h][1]), f"culprit {h}: {t}, the image lost {rv_dur(truth[h][1])}")
        number[h] = int(num)
    # Its kernels are its own.
    culprits = out[out.index("Culprits, ranked"):]
    for name, (h, size, ks) in IMAGES.items():
        blk = culprits[culprits.index(f"(image in memory {h}"):]
        blk = blk[:blk.index("     fix")]
        expect(f"kernels    2: {ks[0]}, {ks[1]}" in blk, blk)
        expect("hit in" in blk and "miss_stored in 34" in blk, blk)
    # Programs: each image's culprit line in its program names the same
    # culprit and the same total.
    prog = re.findall(r"(\d+)/(\d+) runs, ([0-9.]+ [a-z]+) lost: \(image in memory (0x[0-9a-f]+)"
                      r", via cuModuleLoadData\) \(culprit #(\d+)\)", out)
    expect(len(prog) == 2, out)
    for runs, n, t, h, num in prog:
        expect(int(runs) == truth[h][0] == int(n), (runs, n, h))
        expect(t == rv_dur(truth[h][1]) and int(num) == number[h], (t, num, h))
    # JSON's fleet groups: per image, the same loads and time.
    got = {}
    for g in doc["groups"]:
        for c in g["culprits"]:
            x = got.setdefault(c["image_hash"], [0, 0])
            x[0] += c["loads"]
            x[1] += c["lost_ns"]
            expect(c["culprits"] == [number[c["image_hash"]]], c)
    expect(got == {h: list(v) for h, v in truth.items()}, (got, truth))
    # Markdown's Culprits table: the same count and time per image.
    for h, (n, ns) in truth.items():
        expect(re.search(rf"\| {number[h]} \| {re.escape(rv_dur(ns))} \| {n}, pids .*{h}", md),
               md[:4000])


@case
def test_python_helper_two_modules_two_culprits(env):
    # One helper, load(), called for kernels.ptx and then k2.ptx: the same call,
    # from the same place, with as many kernels; two images, so two culprits.
    s = process(pid=700, exe="/usr/bin/python3.12", args=("python3", "app.py"))
    s += call("cuInit", 1010, 1)
    s += call("cuDevicePrimaryCtxRetain", 1012, 10)
    s += ptx_load(1030, 250, "kernels.ptx", "miss_stored")
    s += ptx_load(1290, 120, "k2.ptx", "miss_stored")
    s += launch(1500, kernel="scan_rows") + end()
    t = env.trace("helper", s)
    out, _ = env.expect_rc(0, "report", t)
    md, _ = env.expect_rc(0, "report", "--markdown", t)
    expect("[2 loads" not in out, out)
    for name, (h, size, ks) in IMAGES.items():
        blk = out[out.index(f"(image in memory {h}"):]
        blk = blk[:blk.index("     fix")]
        kib = f"{size / 1024:.1f} KiB"
        expect(f"(ptx, {kib})" in blk and f"kernels    2: {ks[0]}, {ks[1]}" in blk, blk)
        expect(re.search(rf"{h}.*\| 2: `{ks[0]}, {ks[1]}`", md), md)


@case
def test_cache_fixes_one_per_kind_and_only_when_useful(env):
    # 34 containers, each with its own fresh cache /srv/ephemeral/cNN that
    # is gone next time: one fix for all of them, with the count and examples.
    for i in range(34):
        env.trace(f"e{i:02d}", image_run(i * 100, "kernels.ptx", f"/srv/ephemeral/c{i:02d}",
                                         True, True), subdir="eph")
    doc = json.loads(env.expect_rc(0, "report", "--json", env.path("eph"))[0])
    out, _ = env.expect_rc(0, "report", env.path("eph"))
    vol = [f for f in doc["fixes"] if f["kind"] == "cache_volume"]
    expect(len(vol) == 1, [f["text"] for f in vol])
    expect(sorted(vol[0]["targets"]) == [f"/srv/ephemeral/c{i:02d}" for i in range(34)], vol[0])
    expect(vol[0]["loads"] == 34, vol[0])
    expect("keep the JIT cache DIR (each of 34 directories: /srv/ephemeral/c00, "
           "/srv/ephemeral/c01, /srv/ephemeral/c02 and 31 more) across runs" in vol[0]["text"],
           vol[0]["text"])
    fixes = out[out.index("Fixes, ranked"):out.index("JIT cache\n")]
    expect(fixes.count("keep the JIT cache") == 1, fixes)
    # The cache section: capped in text, every directory in JSON.
    cache = out[out.index("\nJIT cache\n"):]
    expect(cache.count("  path      ") == 5, cache)
    expect("... 29 more cache directories (116 lines left out; jitstall report --json lists "
           "every one under \"caches\")" in cache, cache)
    expect(len(doc["caches"]) == 34 and all(c["processes"] == 1 for c in doc["caches"]),
           doc["caches"][:2])
    md, _ = env.expect_rc(0, "report", "--markdown", env.path("eph"))
    expect(md.count("| `/srv/ephemeral/c") == 5 and "29 more cache directories, left out" in md,
           md[md.find("JIT cache"):][:1500])
    # One cache that served 269 of its 270 runs as hits: it is kept already,
    # and "keep it across runs" would change nothing.
    for i in range(270):
        env.trace(f"k{i:03d}", image_run(i * 100, "kernels.ptx", "/srv/kept", i == 0, i == 0),
                  subdir="kept")
    doc = json.loads(env.expect_rc(0, "report", "--json", env.path("kept"))[0])
    out, _ = env.expect_rc(0, "report", env.path("kept"))
    expect(not [f for f in doc["fixes"] if f["kind"] == "cache_volume"], doc["fixes"])
    expect("keep the JIT cache" not in out and "did not exist at start" not in out, out)



@case
def test_answer_first(env):
    # One process: the report opens with the answer, in one line.
    t = env.trace("one", run_spec(pid=100, jit_ms=11000.0))
    out, _ = env.expect_rc(0, "report", t)
    first = out.splitlines()[0]
    expect(re.fullmatch(r"first kernel after 11\.\d\d s: (9\d)% was the driver compiling "
                        r"/opt/app/lib/libkern\.so \(PTX compute_75 only; GPU is sm_90\); fix: "
                        r"rebuild /opt/app/lib/libkern\.so with -gencode arch=compute_90,"
                        r"code=sm_90", first), first)
    expect(out.splitlines()[1] == "" and out.splitlines()[2] == "jitstall report: 1 process", out[:600])
    md, _ = env.expect_rc(0, "report", "--markdown", t)
    expect(md.startswith("> first kernel after 11."), md[:300])
    # A load that hit the cache is said to be a cache load, not a compile.
    t = env.trace("warm", run_spec(pid=101, jit_ms=30.0, cache="hit"))
    first = env.expect_rc(0, "report", t)[0].splitlines()[0]
    expect("was the driver loading /opt/app/lib/libkern.so from the JIT cache" in first, first)
    # A JIT after the first kernel is no part of its wait: said as later.
    late = (process(pid=102) + call("cuInit", 1010, 150) + sass_load(1200, 2) + launch(1300)
            + jit_load(1400, 5000) + end())
    first = env.expect_rc(0, "report", env.trace("late", late))[0].splitlines()[0]
    expect(re.fullmatch(r"first kernel after 300\.0 ms; after it, the driver compiling "
                        r"/opt/app/lib/libkern\.so \(PTX compute_75 only; GPU is sm_90\) took "
                        r"5\.00 s; fix: .*", first), first)
    # Many runs: the fleet's line, then one line per program.
    d = write_200(env)
    lines = env.expect_rc(0, "report", d)[0].splitlines()
    expect(re.fullmatch(r"200 runs of 2 programs: culprits lost [0-9.]+ [a-z]+ in all; \d+% of it "
                        r"was the driver compiling /opt/app/lib/libkern\.so .*\(200 loads, "
                        r"culprits #1, #2.*\); fix: .*", lines[0]), lines[0])
    expect(re.match(r"server --model llama \(150 runs\): first kernel p50 [0-9.]+ [a-z]+, p95 "
                    r"[0-9.]+ [a-z]+; /opt/app/lib/libkern\.so lost [0-9.]+ [a-z]+ in 150/150 runs"
                    r"; fix: ", lines[1]), lines[1])
    expect(lines[2].startswith("python3 train.py (50 runs): first kernel p50 "), lines[2])
    expect(lines[3] == "" and lines[4] == "jitstall report: 200 processes", lines[:6])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--write-200"]:
        e = Env()
        e.tmp = sys.argv[2]
        os.makedirs(e.tmp, exist_ok=True)
        d = write_200(e)
        if len(sys.argv) > 3:
            rc, out, err = e.run("report", d)
            open(sys.argv[3], "w").write(out)
        sys.exit(0)
    sys.exit(main(sys.argv))
