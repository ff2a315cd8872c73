#!/usr/bin/env python3
"""Tests of `jitstall warm` (and scan's PTX-text case) on the simulated driver.

Each case warms a fresh cache, then runs a program under libjitstall.so with
that cache and checks from the trace that its load was a cache hit; others
check warm's text, JSON and exit codes, and the report's message for a cache
warmed for another GPU. ctest runs one case per test (tests/warm/CMakeLists.txt):

    python3 test_warm.py --list      names of the cases
    python3 test_warm.py CASE...     run cases (all when none is named)

Environment: JST_CLI, JST_PRELOAD, JST_SIMDIR (the simulated libcuda.so.1),
JST_PROG_DIRECT, JST_PROG_PTXTEXT, JST_WARM_LIB, JST_FIXTURES; JST_SANITIZE=1 in
a sanitizer build, where the runs under the preload are skipped (exit 77).
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
from clitest import case, expect, Skip, main as run_cases  # noqa: E402  (the shared harness)


class Env:
    def __init__(self):
        self.cli = os.environ["JST_CLI"]
        self.fix = os.environ["JST_FIXTURES"]
        self.tmp = tempfile.mkdtemp(prefix="jst-warm-")

    def path(self, *p):
        return os.path.join(self.tmp, *p)

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def env(self, cache=None, **extra):
        """A clean environment on the simulated driver (no CUDA_*/JITSTALL_* leaks)."""
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("CUDA_") and not k.startswith("JITSTALL_")}
        e["LD_LIBRARY_PATH"] = os.environ["JST_SIMDIR"]
        e["JITSTALL_SIM_JIT_US_PER_KB"] = "5000"
        if cache:
            e["CUDA_CACHE_PATH"] = cache
        e.update(extra)
        return e

    def warm(self, rc, *args, env=None):
        r = subprocess.run([self.cli, "warm", *args], capture_output=True, text=True,
                           env=env or self.env(), timeout=60)
        expect(r.returncode == rc, f"warm {args}: exit {r.returncode}, want {rc}\n"
               f"stdout: {r.stdout}\nstderr: {r.stderr}")
        return r.stdout, r.stderr

    def cli_run(self, rc, *args):
        r = subprocess.run([self.cli, *args], capture_output=True, text=True, timeout=60)
        expect(r.returncode == rc, f"{args}: exit {r.returncode}, want {rc}\n{r.stdout}{r.stderr}")
        return r.stdout

    def traced(self, name, cache, argv, **extra):
        """Runs argv under the preload; returns the trace directory."""
        if os.environ.get("JST_SANITIZE") == "1":
            # An ASan-built libjitstall.so cannot be preloaded into a program
            # without the ASan runtime: this part runs in the plain build only.
            raise Skip("the preload is built with sanitizers")
        d = self.path(name)
        os.makedirs(d)
        e = self.env(cache, LD_PRELOAD=os.environ["JST_PRELOAD"], JITSTALL_DIR=d, **extra)
        r = subprocess.run(argv, capture_output=True, env=e, timeout=60)
        expect(r.returncode == 0, f"{argv[0]} exited {r.returncode}: {r.stderr!r}")
        return d

    def expect_hit(self, trace_dir):
        """The warmed program's one JIT load was a cache hit. With the cache
        unchanged, the preload tells a hit from a miss by its speed
        (common/jitcache.c); under qemu-user (JITSTALL_EMULATED=1) on a busy
        machine a hit can be slower than any real one, and is "unknown", which
        still means the load wrote nothing to the cache: there it passes too,
        with a note. A load that stored an entry (miss_stored) fails anywhere."""
        got = self.jit_caches(trace_dir)
        if os.environ.get("JITSTALL_EMULATED") == "1" and got == ["unknown"]:
            print("note: under qemu-user the hit was slower than the preload's hit bound "
                  "(outcome unknown; the cache did not change)")
            return
        expect(got == ["hit"], got)

    def jit_caches(self, trace_dir):
        """Cache outcome of every JIT load in the traces of trace_dir."""
        out = self.cli_run(0, "report", "--json", trace_dir)
        doc = json.loads(out)
        got = []
        for p in doc["processes"]:
            for m in p.get("modules", []):
                if m.get("verdict") in ("ptx_jit", "forced_jit"):
                    got.append(m.get("cache"))
        return got


def prog_direct(env, *images):
    return [os.environ["JST_PROG_DIRECT"], env.fix, "0", "module", *images]


def summary_line(out):
    l = [x for x in out.splitlines() if x.startswith("summary for ")]
    expect(len(l) == 1, f"one summary line: {out}")
    return l[0]


# ---- warm, then the program's load is a cache hit ----

@case
def test_fatbin(env):
    cache = env.path("cache")
    fb = os.path.join(env.fix, "ptx75.fatbin")
    out, err = env.warm(0, "--cache", cache, fb)
    expect(re.search(r"^  warmed +\S*ptx75.fatbin @0x0 \[compute_75\]: 3 kernels, compiled in "
                     r"[0-9.]+ s, \+1 entry \(16.0 KiB\)$", out, re.M), out)
    expect("1 image needs the JIT: 1 warmed, 0 already cached, 0 not warmed (3 kernels ready)"
           in summary_line(out), out)
    expect("cache +1 entry, +16.0 KiB (now 1 entry, 16.0 KiB)" in out, out)
    expect(err == "", f"stderr: {err!r}")
    label = json.load(open(os.path.join(cache, "jitstall-warm.json")))
    w = label["warmed_for"][0]
    expect(w["cc"] == 90 and w["driver_version"] == 13000 and "simulated" in w["gpu"]
           and w["images"] == 1 and w["kernels"] == 3, label)
    d = env.traced("run", cache, prog_direct(env, "ptx75.fatbin"))
    env.expect_hit(d)
    # Warm again: already cached, nothing added.
    out, _ = env.warm(0, "--cache", cache, fb)
    expect(re.search(r"^  cached +\S*ptx75.fatbin .*already in the cache", out, re.M), out)
    expect("0 warmed, 1 already cached" in out and "cache +0 entries" in out, out)
    # A hit slower than the preload's hit bound (a busy machine; here the
    # simulated hit takes 50 ms): the cache did not change and had room, so it
    # is still "cached", not a failure.
    out, _ = env.warm(0, "--cache", cache, fb,
                      env=env.env(JITSTALL_SIM_JIT_US_PER_KB="3200000"))
    expect("0 warmed, 1 already cached, 0 not warmed" in out, out)
    # Without warm, the same run is a miss: the hit above is warm's doing.
    d = env.traced("cold", env.path("cold-cache"), prog_direct(env, "ptx75.fatbin"))
    expect(env.jit_caches(d) == ["miss_stored"], env.jit_caches(d))


@case
def test_library(env):
    cache = env.path("cache")
    lib = os.environ["JST_WARM_LIB"]
    out, _ = env.warm(0, "--cache", cache, lib)
    expect(re.search(r"^  warmed +%s @0x[0-9a-f]+ \[compute_75\]: 3 kernels" % re.escape(lib),
                     out, re.M), out)
    d = env.traced("run", cache, prog_direct(env, "ptx75.fatbin"))
    env.expect_hit(d)
    # A directory is walked: the library inside it is found again (now cached).
    libdir = env.path("libdir")
    os.makedirs(libdir)
    shutil.copy(lib, libdir)
    out, _ = env.warm(0, "--cache", cache, libdir)
    expect("0 warmed, 1 already cached" in out, out)
    # The same image in two files is loaded once.
    out, _ = env.warm(0, "--cache", cache, lib, libdir)
    expect(re.search(r"^  cached .*\n  duplicate +%s/\S+ @0x[0-9a-f]+ \[compute_75\]: 3 kernels, "
                     r"same image as one above$" % re.escape(libdir), out, re.M), out)
    expect("1 image needs the JIT: 0 warmed, 1 already cached" in out, out)


@case
def test_ptx_text(env):
    prog = os.environ["JST_PROG_PTXTEXT"]
    # scan sees the PTX string in the program's data.
    doc = json.loads(env.cli_run(0, "scan", "--arch", "sm_90", "--json", prog))
    imgs = doc["files"][0]["images"]
    expect(len(imgs) == 1, imgs)
    i = imgs[0]
    expect(i["origin"] == "data" and i["verdict"] == "ptx_jit" and i["jit_from"] == "compute_75"
           and i["kernels"] == ["warm_text_kernel"], i)
    expect(i["fix"] == "load a cubin for sm_90 instead of the PTX string in prog_ptxtext (nvcc "
           "-cubin -arch=sm_90), or fill the JIT cache first with jitstall warm prog_ptxtext",
           i["fix"])
    expect([e["kind"] for e in i["entries"]] == ["ptx"], i)
    text = env.cli_run(0, "scan", "--arch", "sm_90", prog)
    expect(re.search(r"image @0x[0-9a-f]+ \[compute_75, PTX text in data\]: ptx_jit from "
                     r"compute_75", text), text)
    expect("1 kernel would JIT from compute_75" in text and "warm_text_kernel" in text, text)
    doc = json.loads(env.cli_run(0, "scan", "--arch", "sm_75", "--json", prog))
    expect(doc["files"][0]["images"][0]["verdict"] == "ptx_jit", doc)
    # warm loads it; the program's own load is then a hit.
    cache = env.path("cache")
    out, _ = env.warm(0, "--cache", cache, prog)
    expect(re.search(r"^  warmed +\S+ @0x[0-9a-f]+ \[compute_75, PTX text in data\]: 1 kernel,",
                     out, re.M), out)
    d = env.traced("run", cache, [prog])
    env.expect_hit(d)


# ---- output, JSON and exit codes ----

@case
def test_json(env):
    cache = env.path("cache")
    f = lambda n: os.path.join(env.fix, n)
    out, _ = env.warm(0, "--cache", cache, "--json", f("ptx75.fatbin"), f("sm90.fatbin"),
                      f("hostonly.o"), f("sm100f.fatbin"), f("k75.ptx"), f("ptx75.fatbin"))
    doc = json.loads(out)
    expect(doc["cache"]["path"] == cache and doc["cache"]["entries_before"] == 0
           and doc["cache"]["entries_after"] == 2 and doc["cache"]["maxsize_needed"] is None,
           doc["cache"])
    expect(doc["device"]["cc"] == 90 and doc["device"]["driver_version"] == 13000, doc["device"])
    st = [(os.path.basename(i["path"]), i["status"], i["kernels"]) for i in doc["images"]]
    # ptx75.fatbin given twice is one file (visited once); k75.ptx is other PTX.
    expect(st == [("ptx75.fatbin", "warmed", 3), ("k75.ptx", "warmed", 3)], st)
    for i in doc["images"]:
        for k in ("offset", "origin", "jit_from", "ptx_size", "reason", "load_ms",
                  "entries_added", "bytes_added"):
            expect(k in i, f"image key {k}: {i}")
    s = doc["summary"]
    expect((s["need_jit"], s["warmed"], s["cached"], s["not_warmed"], s["kernels"], s["sass"],
            s["empty"], s["cannot_run"]) == (2, 2, 0, 0, 6, 1, 1, 1), s)


@case
def test_other_gpus_with_ptx(env):
    # scan's rule: in a file with sm_90 code, cuBLAS's variants whose PTX is
    # for a newer GPU are for other GPUs, not images that cannot run; a file
    # with nothing for sm_90 still cannot run.
    mk = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scan", "mkfatbin.py")
    lt, solo = env.path("lt.fatbin"), env.path("solo.fatbin")
    subprocess.run([sys.executable, mk, lt, "sm_90", "sm_120,compute_120",
                    "sm_100,compute_120,sm_120", "sm_89,sm_120f,compute_120"], check=True)
    subprocess.run([sys.executable, mk, solo, "sm_120,compute_120"], check=True)
    out, _ = env.warm(0, "--cache", env.path("cache"), "--json", lt, solo)
    s = json.loads(out)["summary"]
    expect((s["sass"], s["other_gpus"], s["cannot_run"], s["need_jit"]) == (1, 3, 1, 0), s)


@case
def test_exit_codes(env):
    fb = os.path.join(env.fix, "ptx75.fatbin")
    cache = env.path("cache")
    _, err = env.warm(2, "--cache", cache)
    expect(err == "jitstall warm: no PATH given (see 'jitstall warm --help')\n", err)
    _, err = env.warm(2, "--cache", cache, "--device", "x", fb)
    expect(err == "jitstall warm: bad --device 'x' (want a GPU ordinal: 0, 1, ...)\n", err)
    _, err = env.warm(2, "--cache", cache, "--device", "3", fb)
    expect(err == "jitstall warm: --device 3: there is 1 GPU\n", err)
    _, err = env.warm(2, "--cache", cache, env.path("nope"))
    expect(err.startswith("jitstall warm: cannot stat "), err)
    e = env.env()
    e["LD_LIBRARY_PATH"] = env.path("no-driver-here")
    r = subprocess.run([env.cli, "warm", "--cache", cache, fb], capture_output=True, text=True,
                       env=e)
    expect(r.returncode == 2 and r.stderr.startswith("jitstall warm: no NVIDIA driver")
           and r.stderr.count("\n") == 1, f"{r.returncode} {r.stderr!r}")
    _, err = env.warm(2, fb, env=env.env(JITSTALL_SIM_DEVICES="0"))
    expect(err.startswith("jitstall warm: the driver found no usable GPU"), err)
    # Nothing needs the JIT: success, nothing written.
    out, _ = env.warm(0, "--cache", cache, os.path.join(env.fix, "sm90.fatbin"))
    expect("0 images need the JIT" in out, out)
    expect(not os.path.exists(os.path.join(cache, "jitstall-warm.json")), "no label")


@case
def test_cannot_warm(env):
    fb = os.path.join(env.fix, "ptx75.fatbin")
    cache = env.path("cache")
    out, _ = env.warm(1, fb, env=env.env(cache, CUDA_CACHE_DISABLE="1"))
    expect(re.search(r"^  not_stored .*ptx75.fatbin .*CUDA_CACHE_DISABLE is set", out, re.M), out)
    expect("0 warmed, 0 already cached, 1 not warmed" in out, out)
    # A cache too small for the set: warm says which CUDA_CACHE_MAXSIZE holds it.
    out, _ = env.warm(1, fb, env=env.env(cache, CUDA_CACHE_MAXSIZE="4096"))
    expect("cache too small: the set needs about 16.0 KiB, CUDA_CACHE_MAXSIZE is 4.0 KiB: set "
           "CUDA_CACHE_MAXSIZE=1048576 when warming and when running" in out, out)
    expect(re.search(r"^  not_stored .*driver stored nothing \(too_small\)", out, re.M), out)
    out, _ = env.warm(0, fb, env=env.env(cache, CUDA_CACHE_MAXSIZE="1048576"))
    expect("1 warmed" in out, out)
    # CUDA_DISABLE_PTX_JIT: the driver would refuse the JIT, so nothing is warmed.
    out, _ = env.warm(1, "--cache", env.path("c2"), fb,
                      env=env.env(CUDA_DISABLE_PTX_JIT="1"))
    expect(re.search(r"^  skipped .*CUDA_DISABLE_PTX_JIT", out, re.M), out)


# ---- report: a cache warmed for another GPU ----

@case
def test_report_mismatch(env):
    cache = env.path("cache")
    fb = os.path.join(env.fix, "ptx75.fatbin")
    env.warm(0, fb, env=env.env(cache, JITSTALL_SIM_CC="80"))
    d = env.traced("run", cache, prog_direct(env, "ptx75.fatbin"))
    expect(env.jit_caches(d) == ["miss_stored"], env.jit_caches(d))
    out = env.cli_run(0, "report", d)
    want = (f"the cache {cache} was warmed for the CUDA 13.0 driver on sm_80; this run is the "
            f"CUDA 13.0 driver on sm_90: warm it again when building the image "
            f"(jitstall warm --cache {cache} ...)")
    expect(want in out, out)
    doc = json.loads(env.cli_run(0, "report", "--json", d))
    kinds = [f["kind"] for f in doc["fixes"]]
    expect("cache_rewarm" in kinds, kinds)
    # The same cache also warmed for this GPU (with other PTX): a miss there is
    # not the label's fault, and the message goes.
    cache2 = env.path("cache2")
    env.warm(0, fb, env=env.env(cache2, JITSTALL_SIM_CC="80"))
    env.warm(0, os.path.join(env.fix, "k75.ptx"), env=env.env(cache2))
    label = json.load(open(os.path.join(cache2, "jitstall-warm.json")))
    expect([w["cc"] for w in label["warmed_for"]] == [90, 80], label)
    d = env.traced("run2", cache2, prog_direct(env, "ptx75.fatbin"))
    expect(env.jit_caches(d) == ["miss_stored"], env.jit_caches(d))
    out = env.cli_run(0, "report", d)
    expect("was warmed for" not in out, out)


@case
def test_report_driver_release(env):
    # Same CUDA version and GPU, another driver build: only the kernel
    # module's release (driver_release on the device record) tells them apart.
    cache = env.path("cache")
    os.makedirs(cache)
    json.dump({"jitstall_warm": 1, "warmed_for": [
        {"driver_version": 13000, "driver": "580.65.06", "gpu": "NVIDIA H200", "cc": 90,
         "images": 1, "kernels": 3, "when": "2026-01-01T00:00:00Z"}]},
        open(os.path.join(cache, "jitstall-warm.json"), "w"))

    def trace(name, release):
        spec = (f'process pid=7 ppid=1 exe=/opt/app/prog host=ci realtime=1700000000s mono=1000ms '
                f'proc_start=1000ms version=0.1.0\n'
                f'device device=0 cc_major=9 cc_minor=0 dev_name="NVIDIA H200" '
                f'driver_version=13000 driver_release="{release}"\n'
                f'cache phase=0 cache_path="{cache}" exists=1 writable=1 entries=1 '
                f'size_bytes=16384 max_bytes=1073741824\n'
                f'call call=cuInit start=1010ms dur=100ms result=0\n'
                f'call call=cuModuleLoadData start=1200ms dur=900ms result=0 image_kind=fatbin '
                f'image_hash=0xabc verdict=ptx_jit jit_from=compute_75 target_cc=90 '
                f'load_device=0 kernel=k cache=miss_stored cache_reason=none ptx_size=5000\n'
                f'end exit_status=0 end_reason=exit\n')
        d = env.path(name)
        os.makedirs(d)
        r = subprocess.run([os.environ["JST_GEN_TRACE"], os.path.join(d, "t.jst")], input=spec,
                           capture_output=True, text=True)
        expect(r.returncode == 0, r.stderr)
        return d

    out = env.cli_run(0, "report", trace("other", "580.159.04"))
    want = (f"the cache {cache} was warmed for driver 580.65.06 (CUDA 13.0) on sm_90; this run is "
            f"driver 580.159.04 (CUDA 13.0) on sm_90: warm it again")
    expect(want in out, out)
    out = env.cli_run(0, "report", trace("same", "580.65.06"))
    expect("was warmed for" not in out, out)


# ---- warm --run --bundle: every cache filled by running the program ----

def bundle_run(env, rc, bundle, argv, libs=None, pre=(), post=(), **extra):
    """`warm [pre] --run --bundle BUNDLE [post] -- argv` under the simulated
    driver (the preload runs the program, so not in a sanitizer build)."""
    if os.environ.get("JST_SANITIZE") == "1":
        raise Skip("the preload is built with sanitizers")
    e = env.env(**extra)
    e["LD_LIBRARY_PATH"] = ":".join(([libs] if libs else []) +
                                    [os.environ["JST_SIMDIR"], os.environ["JST_FAKERTC_DIR"]])
    for k in ("TRITON_CACHE_DIR", "TORCHINDUCTOR_CACHE_DIR", "JAX_COMPILATION_CACHE_DIR",
              "CUPY_CACHE_DIR", "NUMBA_CACHE_DIR", "TORCH_EXTENSIONS_DIR"):
        if k not in extra:
            e.pop(k, None)
    r = subprocess.run([env.cli, "warm", *pre, "--run", "--bundle", bundle, *post, "--", *argv],
                       capture_output=True, text=True, env=e, timeout=120)
    expect(r.returncode == rc, f"warm --run: exit {r.returncode}, want {rc}\n"
           f"stdout: {r.stdout}\nstderr: {r.stderr}")
    return r.stdout, r.stderr


def check(env, rc, bundle, *opts, **extra):
    e = env.env(**extra)
    r = subprocess.run([env.cli, "warm", "--check", bundle, *opts], capture_output=True,
                       text=True, env=e, timeout=60)
    expect(r.returncode == rc, f"warm --check: exit {r.returncode}, want {rc}\n"
           f"stdout: {r.stdout}\nstderr: {r.stderr}")
    return r.stdout, r.stderr


@case
def test_bundle_ptx_hits(env):
    b = env.path("bundle")
    out, err = bundle_run(env, 0, b, prog_direct(env, "ptx75.fatbin"),
                          TRITON_CACHE_DIR=env.path("mine"))
    # Every cache into the bundle, but the user's own setting wins, said so.
    expect(f"CUDA_CACHE_PATH={b}/cuda\n" in out and f"JAX_COMPILATION_CACHE_DIR={b}/jax\n" in out
           and "CUDA_CACHE_MAXSIZE=4294967296\n" in out
           and "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=-1\n" in out, out)
    expect(f"TRITON_CACHE_DIR={env.path('mine')} is your own setting and is kept: Triton's "
           "cache is not in the bundle" in out, out)
    # The second run's one compile, the driver's JIT of the PTX, is a hit;
    # under qemu-user a hit can be slower than the preload's hit bound and is
    # "unknown" (the cache did not change), as in expect_hit.
    slow = os.environ.get("JITSTALL_EMULATED") == "1" and re.search(
        r"^  unknown +driver PTX JIT: add_one, .*too slow to prove a hit$", out, re.M)
    expect(slow or re.search(r"^  hit +driver PTX JIT: add_one, .*\(prog_direct, pid \d+", out,
                             re.M), out)
    expect("result: every compile of the second run was served by the bundle (" +
           ("0 hits, some unproven)" if slow else "1 hit)") in out, out)
    env.expect_hit(os.path.join(b, "jitstall-traces", "hit"))
    expect(env.jit_caches(os.path.join(b, "jitstall-traces", "fill")) == ["miss_stored"],
           "the first run filled the cache")
    m = json.load(open(os.path.join(b, "jitstall-bundle.json")))
    expect(m["jitstall_bundle"] == 1 and m["device"]["driver_version"] == 13000
           and m["device"]["cc"] == 90 and m["device"]["cuda"] == "13.0"
           and "simulated" in m["device"]["name"], m["device"])
    caches = {c["name"]: c for c in m["caches"]}
    expect(caches["cuda"]["path"] == "cuda" and caches["cuda"]["in_bundle"]
           and caches["cuda"]["entries"] >= 1 and caches["cuda"]["bytes"] >= 16384,
           caches["cuda"])
    expect(not caches["triton"]["in_bundle"] and caches["triton"]["path"] == env.path("mine"),
           caches["triton"])
    expect(m["second_run"] == {"compiles": 1, "hits": 1, "compiled_again": 0}, m)
    # The driver's cache is labelled with what it was filled on.
    label = json.load(open(os.path.join(b, "cuda", "jitstall-warm.json")))
    expect(label["warmed_for"][0]["cc"] == 90, label)
    # A third process on the bundle: a hit.
    d = env.traced("third", os.path.join(b, "cuda"), prog_direct(env, "ptx75.fatbin"))
    env.expect_hit(d)


@case
def test_bundle_settings(env):
    b = env.path("bundle")
    bundle_run(env, 0, b, prog_direct(env, "ptx75.fatbin"), TRITON_DEBUG="1",
               XLA_FLAGS="--xla_gpu_autotune_level=0", TRITON_CACHE_DIR=f"{b}/triton")
    m = json.load(open(os.path.join(b, "jitstall-bundle.json")))
    # Key-relevant settings only: not the cache locations warm set.
    expect(m["settings"] == {"TRITON_DEBUG": "1", "XLA_FLAGS": "--xla_gpu_autotune_level=0"},
           m["settings"])
    cuda = os.path.join(b, "cuda")
    out, _ = check(env, 0, b, CUDA_CACHE_PATH=cuda, TRITON_DEBUG="1",
                   XLA_FLAGS="--xla_gpu_autotune_level=0")
    expect("result: the bundle can hit on this machine" in out, out)
    out, _ = check(env, 1, b, CUDA_CACHE_PATH=cuda, TRITON_DEBUG="0", TORCHINDUCTOR_FX="1")
    for want in ("setting: TRITON_DEBUG was '1' when the bundle was made and is '0' here",
                 "setting: XLA_FLAGS was '--xla_gpu_autotune_level=0' when the bundle was made "
                 "and is unset here",
                 "setting: TORCHINDUCTOR_FX is '1' here and was unset when the bundle was made",
                 "result: 3 differences will make the bundle miss"):
        expect(want in out, out)


@case
def test_bundle_compiles_again(env):
    # The driver's cache disabled by the user: the second run JITs again.
    out, _ = bundle_run(env, 1, env.path("b1"), prog_direct(env, "ptx75.fatbin"),
                        CUDA_CACHE_DISABLE="1")
    expect(re.search(r"^  miss_not_stored driver PTX JIT: add_one, .*: the driver's cache is "
                     r"disabled \(CUDA_CACHE_DISABLE\)", out, re.M), out)
    expect("result: 1 of 1 compile of the second run compiled again" in out, out)
    # An NVRTC program has no cache of its own: it compiles on every start.
    out, _ = bundle_run(env, 1, env.path("b2"), [os.environ["JST_PROG_RTC"], env.fix, "0",
                                                 "module", "sm90.fatbin"], JST_FAKE_RTC_MS="5")
    expect(re.search(r"^  compiled +NVRTC: kernels\.cu \(prog_rtc_direct, pid \d+, [0-9.]+ ms\): an "
                     r"NVRTC program with no cache of its own: it compiles on every start", out,
                     re.M), out)
    m = json.load(open(env.path("b2", "jitstall-bundle.json")))
    expect(m["second_run"]["compiled_again"] == 2, m["second_run"])
    # Compiler children that write outside the bundle: their output is not kept.
    bindir = env.path("bin")
    os.makedirs(bindir)
    for n in ("ptxas", "nvcc"):
        os.symlink(os.environ["JST_FAKE_CC"], os.path.join(bindir, n))
    path = bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin")
    outside = env.path("objs")
    out, _ = bundle_run(env, 1, env.path("b3"), [os.environ["JST_PROG_SPAWN"], bindir, outside],
                        PATH=path)
    expect(re.search(r"^  compiled +ptxas \(subprocess\): %s/fork.cubin \(prog_spawn, pid \d+, "
                     r"[0-9.]+ ms\): a build that writes outside the bundle \(%s/fork.cubin\)"
                     % (re.escape(outside), re.escape(outside)), out, re.M), out)
    # Inside the bundle, it is only a compiler that ran again.
    inside = env.path("b4", "torch_extensions", "objs")
    out, _ = bundle_run(env, 1, env.path("b4"), [os.environ["JST_PROG_SPAWN"], bindir, inside],
                        PATH=path)
    expect("outside the bundle" not in out and
           f": a compiler child ran again, writing {inside}/fork.cubin" in out, out)
    # A JAX-like compile (an XlaCompile range, 300 ms) that writes no entry
    # into the bundle's JAX cache. With warm's thresholds (keep every
    # entry), the cache was not on for it; with the user's 1 s minimum, that
    # minimum, named.
    xla = [sys.executable, os.path.join(os.environ["JST_PY_COMPILERS"], "py_xla.py"), env.fix,
           os.environ["JST_PY_XLA"], "300"]
    head = r"^  miss +XLA compile: jit_foo \(python3[.0-9]*, pid \d+, [0-9.]+ ms\): "
    out, _ = bundle_run(env, 1, env.path("b5"), xla)
    expect(re.search(head + r"JAX did not keep jit_foo although its thresholds keep every entry: "
                     r"the cache was not on when it compiled", out, re.M), out)
    out, _ = bundle_run(env, 1, env.path("b6"), xla, JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="1")
    expect(re.search(head + r"JAX did not keep jit_foo \(0\.[0-9]+ s\): it keeps compiles of at "
                     r"least JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS \(1\.00 s here\); set it "
                     r"to 0", out, re.M), out)

@case
def test_bundle_json_hit(env):
    # --json: one object on stdout, nothing else there; the program's own
    # stdout (prog_direct prints "done, exit 0") and the progress on stderr.
    b = env.path("bundle")
    out, err = bundle_run(env, 0, b, prog_direct(env, "ptx75.fatbin"), pre=["--json"],
                          TRITON_CACHE_DIR=env.path("mine"),
                          JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="5")
    j = json.loads(out)
    expect(err.count("done, exit 0\n") == 2 and "jitstall warm: second run of" in err, err)
    expect(j["bundle"] == os.path.realpath(b) and
           j["manifest"] == os.path.join(os.path.realpath(b), "jitstall-bundle.json"), j)
    slow = os.environ.get("JITSTALL_EMULATED") == "1" and j["compiles"][0]["outcome"] == "unknown"
    expect(j["processes"] == 1 and len(j["compiles"]) == 1, j)
    k = j["compiles"][0]
    expect(k["outcome"] == ("unknown" if slow else "hit") and k["again"] is False and
           k["reason"] is None and k["compiler"] == "driver PTX JIT" and
           k["what"].startswith("add_one") and k["program"] == "prog_direct" and
           k["pid"] > 0 and k["dur_ns"] > 0, k)
    expect(j["counts"] == {"compiles": 1, "hits": 0 if slow else 1, "unknown": 1 if slow else 0,
                           "compiled_again": 0}, j["counts"])
    expect(j["covered"] is True and j["result"] == "every compile of the second run was served "
           "by the bundle (" + ("0 hits, some unproven)" if slow else "1 hit)"), j)
    caches = {c["name"]: c for c in j["caches"]}
    expect(list(caches) == ["cuda", "triton", "inductor", "jax", "cupy", "numba",
                            "torch_extensions"], caches)
    cuda = caches["cuda"]
    expect(cuda["env"] == "CUDA_CACHE_PATH" and cuda["path"] == os.path.join(
        os.path.realpath(b), "cuda") and cuda["in_bundle"] and not cuda["user_set"] and
        cuda["files"] >= 1 and cuda["bytes"] >= 16384, cuda)
    expect(caches["triton"]["path"] == env.path("mine") and caches["triton"]["user_set"] and
           not caches["triton"]["in_bundle"], caches["triton"])
    keep = {s["env"]: s for s in j["keep_all"]}
    expect(keep["CUDA_CACHE_MAXSIZE"] == {"env": "CUDA_CACHE_MAXSIZE", "value": "4294967296",
                                          "user_set": False, "bundle_value": "4294967296"}, keep)
    expect(keep["JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"] == {
        "env": "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "value": "5", "user_set": True,
        "bundle_value": "-1"}, keep)
    expect(j["device"] == {"name": "jitstall simulated GPU (sm_90)", "cc": 90,
                           "driver_version": 13000, "driver_release": None}, j["device"])
    expect(j["frameworks"] == [], j["frameworks"])
    # The manifest is the one the text run writes.
    m = json.load(open(os.path.join(b, "jitstall-bundle.json")))
    expect(m["second_run"] == {"compiles": 1, "hits": j["counts"]["hits"], "compiled_again": 0},
           m)
    # --json after --bundle DIR is warm's too.
    out, _ = bundle_run(env, 0, env.path("b2"), prog_direct(env, "ptx75.fatbin"), post=["--json"])
    expect(json.loads(out)["counts"]["compiles"] == 1, out)
    # After --, --json is the program's (prog_direct takes it for an image it
    # cannot read, and fails): warm stays in text.
    out, err = bundle_run(env, 2, env.path("b3"), prog_direct(env, "--json"))
    expect(out.startswith("bundle ") and "exited with status" in err, out + err)


@case
def test_bundle_json_compiles_again(env):
    # The driver's cache disabled: the second run JITs again, exit 1, the
    # reason in the object.
    out, _ = bundle_run(env, 1, env.path("b1"), prog_direct(env, "ptx75.fatbin"), pre=["--json"],
                        CUDA_CACHE_DISABLE="1")
    j = json.loads(out)
    k = j["compiles"][0]
    expect(len(j["compiles"]) == 1 and k["outcome"] == "miss_not_stored" and k["again"] is True
           and k["reason"].startswith("the driver's cache is disabled (CUDA_CACHE_DISABLE)"), k)
    expect(j["counts"] == {"compiles": 1, "hits": 0, "unknown": 0, "compiled_again": 1}, j)
    expect(j["covered"] is False and j["result"] == "1 of 1 compile of the second run compiled "
           "again: the bundle does not cover them", j)
    # A program with no cache: outcome "compiled", its reason.
    out, _ = bundle_run(env, 1, env.path("b2"), [os.environ["JST_PROG_RTC"], env.fix, "0",
                                                 "module", "sm90.fatbin"], post=["--json"],
                        JST_FAKE_RTC_MS="5")
    j = json.loads(out)
    rtc = [k for k in j["compiles"] if k["compiler"] == "NVRTC"]
    expect(rtc and rtc[0]["outcome"] == "compiled" and rtc[0]["what"] == "kernels.cu" and
           rtc[0]["reason"].startswith("an NVRTC program with no cache of its own"), j)
    expect(j["counts"]["compiled_again"] == 2 == len(j["compiles"]), j["counts"])


@case
def test_bundle_json_errors(env):
    # With --json an error (exit 2) leaves stdout empty and says why in one
    # line on stderr: --json is read, the error is the real one.
    r = subprocess.run([env.cli, "warm", "--json", "--run", "--", "true"], capture_output=True,
                       text=True, env=env.env(), timeout=60)
    expect(r.returncode == 2 and r.stdout == "" and
           r.stderr == "jitstall warm: --run needs --bundle DIR\n", r)
    r = subprocess.run([env.cli, "warm", "--run", "--bundle", env.path("b"), "--json"],
                       capture_output=True, text=True, env=env.env(), timeout=60)
    expect(r.returncode == 2 and r.stdout == "" and r.stderr == "jitstall warm: no COMMAND "
           "given (see 'jitstall warm --help')\n", r)
    if os.environ.get("JST_SANITIZE") == "1":
        return
    # A program that fails (it prints on stdout first): nothing on stdout.
    out, err = bundle_run(env, 2, env.path("b3"), prog_direct(env, "ptx75.fatbin")[:1] +
                          [env.fix, "3", "module", "ptx75.fatbin"], pre=["--json"])
    expect(out == "" and "exited with status 3 in the first run" in err and
           "done, exit 3\n" in err, out + err)
    # No trace of the second run: nothing on stdout.
    out, err = bundle_run(env, 2, env.path("b4"), ["true"], post=["--json"])
    expect(out == "" and "no trace of the second run" in err, out + err)


@case
def test_bundle_check_driver(env):
    b = env.path("bundle")
    bundle_run(env, 0, b, prog_direct(env, "ptx75.fatbin"))
    cuda = os.path.join(b, "cuda")
    out, _ = check(env, 0, b, CUDA_CACHE_PATH=cuda)
    expect("same: driver (CUDA 13.0" in out and "same: GPU architecture sm_90" in out, out)
    # Another driver: read through libcuda (cuDriverGetVersion), named.
    out, _ = check(env, 1, b, CUDA_CACHE_PATH=cuda, JITSTALL_SIM_DRIVER_VERSION="12080")
    expect("miss: driver: the bundle was made on the CUDA 13.0 driver (13000); this machine's "
           "is CUDA 12.8 (12080)" in out, out)
    expect("result: 1 difference will make the bundle miss" in out, out)
    # Another GPU architecture.
    out, _ = check(env, 1, b, CUDA_CACHE_PATH=cuda, JITSTALL_SIM_CC="80")
    expect("miss: GPU: the bundle was made on sm_90" in out and "this GPU is sm_80" in out, out)
    # The cache variable must point at the bundle's cache, which must fit.
    out, _ = check(env, 1, b)
    expect(f"miss: CUDA_CACHE_PATH is unset: the bundle's cuda cache" in out, out)
    out, _ = check(env, 1, b, CUDA_CACHE_PATH=cuda, CUDA_CACHE_MAXSIZE="4096")
    expect("miss: CUDA_CACHE_MAXSIZE is 4096 bytes" in out, out)
    # No GPU visible: the driver is still read, the architecture not checked.
    out, _ = check(env, 0, b, CUDA_CACHE_PATH=cuda, JITSTALL_SIM_DEVICES="0")
    expect("note: the GPU architecture is not checked: no GPU 0 visible" in out, out)
    # --json: the same lines, as arrays of one object, and the same exit codes.
    out, _ = check(env, 1, b, "--json", CUDA_CACHE_PATH=cuda, JITSTALL_SIM_DRIVER_VERSION="12080")
    j = json.loads(out)
    expect(j["can_hit"] is False and j["bundle"] == os.path.realpath(b) and j["created"], j)
    expect(len(j["differences"]) == 1 and j["differences"][0].startswith(
        "driver: the bundle was made on the CUDA 13.0 driver (13000)"), j)
    expect("GPU architecture sm_90" in j["same"], j)
    out, _ = check(env, 0, b, "--json", CUDA_CACHE_PATH=cuda, JITSTALL_SIM_DEVICES="0")
    j = json.loads(out)
    expect(j["can_hit"] is True and j["differences"] == [] and
           j["notes"] == ["the GPU architecture is not checked: no GPU 0 visible"], j)


@case
def test_bundle_framework_version(env):
    # A framework's version: from the shared objects the program mapped (here
    # the runtime compiler stands in for one of Triton's, in a site-packages
    # tree) and the dist-info directory beside its package.
    site = env.path("py", "lib", "site-packages")
    c = os.path.join(site, "triton", "_C")
    os.makedirs(c)
    os.makedirs(os.path.join(site, "triton-3.1.0.dist-info"))
    os.makedirs(os.path.join(site, "triton_kernels-0.1.dist-info"))
    shutil.copy(os.path.join(os.environ["JST_FAKERTC_DIR"], "libnvrtc.so.13"), c)
    b = env.path("bundle")
    out, _ = bundle_run(env, 1, b, [os.environ["JST_PROG_RTC"], env.fix, "0", "module",
                                    "sm90.fatbin"], JST_FAKE_RTC_MS="1", libs=c)
    expect(f"framework triton 3.1.0 ({site})\n" in out, out)
    m = json.load(open(os.path.join(b, "jitstall-bundle.json")))
    expect(m["frameworks"] == [{"name": "triton", "version": "3.1.0", "site": site}],
           m["frameworks"])
    out, _ = check(env, 0, b)
    expect("same: triton 3.1.0" in out, out)
    os.rename(os.path.join(site, "triton-3.1.0.dist-info"),
              os.path.join(site, "triton-3.2.0.dist-info"))
    out, _ = check(env, 1, b)
    expect(f"miss: framework: triton was 3.1.0 when the bundle was made and is 3.2.0 here "
           f"({site})" in out, out)
    shutil.rmtree(os.path.join(site, "triton-3.2.0.dist-info"))
    out, _ = check(env, 1, b)
    expect(f"miss: framework: triton 3.1.0 was imported from {site}; it is not installed there "
           "now" in out, out)
    shutil.rmtree(env.path("py"))
    out, _ = check(env, 0, b)
    expect(f"note: triton is not checked: {site} is not here" in out, out)


@case
def test_bundle_report_other_gpu(env):
    # A bundle made on sm_80, used on sm_90: report says why the load missed.
    b = env.path("bundle")
    bundle_run(env, 0, b, prog_direct(env, "ptx75.fatbin"), JITSTALL_SIM_CC="80")
    cuda = os.path.join(b, "cuda")
    d = env.traced("run", cuda, prog_direct(env, "ptx75.fatbin"))
    expect(env.jit_caches(d) == ["miss_stored"], env.jit_caches(d))
    out = env.cli_run(0, "report", d)
    expect(f"the cache {cuda} was warmed for the CUDA 13.0 driver on sm_80; this run is the "
           f"CUDA 13.0 driver on sm_90" in out, out)


@case
def test_bundle_errors(env):
    def warm2(*args, **extra):
        r = subprocess.run([env.cli, "warm", *args], capture_output=True, text=True,
                           env=env.env(**extra), timeout=60)
        expect(r.returncode == 2 and r.stderr.count("\n") == 1,
               f"{args}: {r.returncode} {r.stdout!r} {r.stderr!r}")
        return r.stderr
    expect(warm2("--run", "--", "true") == "jitstall warm: --run needs --bundle DIR\n", "")
    expect("no COMMAND given" in warm2("--run", "--bundle", env.path("b")), "")
    expect(warm2("--check") == "jitstall warm: --check needs a directory\n", "")
    expect("--check " in warm2("--check", env.path("nope")), "")
    os.makedirs(env.path("bad"))
    open(env.path("bad", "jitstall-bundle.json"), "w").write('{"jitstall_bundle": 1, "x": [}')
    expect("not a jitstall bundle manifest" in warm2("--check", env.path("bad")), "")
    open(env.path("bad", "jitstall-bundle.json"), "w").write('{"jitstall_bundle": 7}')
    expect("manifest version 7 is newer" in warm2("--check", env.path("bad")), "")
    # Fields of the wrong type are ignored, never trusted: no crash, no false miss.
    open(env.path("bad", "jitstall-bundle.json"), "w").write(
        '{"jitstall_bundle": 1, "device": "x", "settings": [1, 2], "caches": {"a": 1}}')
    out, _ = check(env, 0, env.path("bad"))
    expect("note: the manifest records no device" in out and "miss:" not in out, out)
    open(env.path("bad", "jitstall-bundle.json"), "w").write(
        '{"jitstall_bundle": 1, "device": {"cc": "90", "driver_version": -5}, '
        '"settings": {"TRITON_X": 3}, "caches": [7, {"env": 1}]}')
    check(env, 0, env.path("bad"))
    # A program that fails: no bundle can be judged from it.
    if os.environ.get("JST_SANITIZE") != "1":
        out, err = bundle_run(env, 2, env.path("b3"), prog_direct(env, "ptx75.fatbin")[:1] +
                              [env.fix, "3", "module", "ptx75.fatbin"])
        expect("exited with status 3 in the first run" in err, err)
        # A program that makes no CUDA call leaves no trace to judge.
        out, err = bundle_run(env, 2, env.path("b4"), ["true"])
        expect("no trace of the second run: true made no CUDA driver call" in err, err)


if __name__ == "__main__":
    sys.exit(run_cases(sys.argv, Env))
