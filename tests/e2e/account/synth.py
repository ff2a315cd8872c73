#!/usr/bin/env python3
"""Where the PTX came from, on hand-made traces (no driver needed): races and their limits,
and the fix by where the PTX came from for paths the simulated driver cannot
stage (a Debian package, a conda env, the CUDA toolkit).

usage: synth.py JITSTALL_CLI WORKDIR    (exit 0 when every check passes)

The traces are written uncompressed (header flag bit 0 clear), as
docs/FORMAT.md allows, with the key numbers of include/jitstall/format.h.
"""
import json
import os
import struct
import subprocess
import sys

CLI, WORK = sys.argv[1], sys.argv[2]
MS, S = 10**6, 10**9
# record types and keys (include/jitstall/format.h)
PROCESS, DEVICE, CALL, CACHE, END = 1, 2, 3, 4, 9
U64, I64, STR = 1, 2, 3
K = dict(tid=1, start_ns=2, dur_ns=3, result=4, call_id=5, call=6, seq=7, pid=20, exe=23,
         realtime_ns=26, mono_ns=27, proc_start_ns=28, device=40, cc_major=41, cc_minor=42,
         image_kind=60, image_size=61, image_hash=62, path=63, source=67, verdict=80,
         jit_from=82, reason=85, cache=86, entry=88, target_cc=89, phase=100, cache_path=101,
         exists=103, writable=104, max_bytes=107, exit_status=160, jit_input=69,
         rtc_ptx_hash=200, rtc_ptx_hash_t=201, stack_id=8, ips=120, mod_event=121,
         mod_path=122, mod_bias=123, mod_start=127, mod_end=128)
CALL_LOAD_DATA, CALL_LAUNCH = 5, 17
PTX_JIT, MISS_STORED, HIT = 2, 2, 1
failures = []


def field(key, val):
    k = K[key]
    if isinstance(val, bytes):
        return struct.pack("<HBI", k, 4, len(val)) + val
    if isinstance(val, str):
        b = val.encode()
        return struct.pack("<HBI", k, STR, len(b)) + b
    if val < 0:
        return struct.pack("<HBq", k, I64, val)
    return struct.pack("<HBQ", k, U64, val)


def rec(rtype, **fields):
    body = b"".join(field(k, v) for k, v in fields.items())
    return struct.pack("<HHI", rtype, 0, len(body)) + body


def trace(path, pid, loads, cache_dir="/root/.nv/ComputeCache", realtime=1767225600 * S, pre=()):
    """loads: dicts with start, dur, hash, source, cache (times in ns, mono)."""
    out = [rec(PROCESS, pid=pid, exe="/opt/app/bin/serve", realtime_ns=realtime,
               mono_ns=1000 * S, proc_start_ns=1000 * S),
           rec(CACHE, phase=0, cache_path=cache_dir, exists=0, writable=1, max_bytes=1 << 30),
           rec(DEVICE, device=0, cc_major=9, cc_minor=0)] + list(pre)
    seq = 0
    for ld in loads:
        seq += 1
        if "rtc" in ld:  # an nvrtcCompileProgram record with the PTX hashes
            out.append(rec(CALL, seq=seq, tid=100, call_id=21, call="nvrtcCompileProgram",
                           start_ns=ld["start"], dur_ns=ld["dur"], result=0,
                           rtc_ptx_hash=ld["rtc"][0], rtc_ptx_hash_t=ld["rtc"][1]))
            continue
        where = dict(path=ld["path"]) if "path" in ld else \
            dict(source=ld["source"]) if ld.get("source") else {}
        if "jit_input" in ld:
            where["jit_input"] = ld["jit_input"]
        if "stack_id" in ld:
            where["stack_id"] = ld["stack_id"]
        out.append(rec(CALL, seq=seq, tid=ld.get("tid", 100), call_id=ld.get("call_id", CALL_LOAD_DATA),
                       call=ld.get("call", "cuModuleLoadData"), start_ns=ld["start"],
                       dur_ns=ld["dur"], result=0, image_kind=ld.get("kind", 2),
                       image_size=5600000, image_hash=ld["hash"], **where, verdict=PTX_JIT,
                       jit_from="compute_75", reason="PTX compute_75 only; GPU is sm_90",
                       entry=ld.get("entry", "ptx compute_75 zstd"), target_cc=90,
                       cache=ld.get("cache", MISS_STORED)))
    seq += 1
    last = max(ld["start"] + ld["dur"] for ld in loads)
    out.append(rec(CALL, seq=seq, tid=100, call_id=CALL_LAUNCH, call="cuLaunchKernel",
                   start_ns=last + MS, dur_ns=4000, result=0))
    out.append(rec(END, exit_status=0))
    hdr = b"JSTRACE\0" + struct.pack("<HHIIIQ", 1, 1, 0x0A0B0C0D, 32, 0, 0)
    with open(path, "wb") as f:
        f.write(hdr + b"".join(out))


def report(d, *opts, env=None):
    p = subprocess.run([CLI, "report", "--json", *opts, d], capture_output=True, text=True,
                       env=dict(os.environ, NO_COLOR="1", **(env or {})))
    if p.returncode != 0:
        failures.append(f"{d}: report exited {p.returncode}: {p.stderr}")
        return {"races": [], "fixes": [], "processes": []}
    return json.loads(p.stdout)


def case(name, procs):
    """procs: list of (pid, loads); returns the report of one directory of them."""
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    for pid, loads in procs:
        trace(os.path.join(d, f"p{pid}.jst"), pid, loads)
    return report(d)


def expect(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg, file=sys.stderr)


LIB = "/opt/app/lib/libkern.so"
T0 = 1000 * S + 300 * MS


def load(start, dur=12 * S, h=0xABC, src=LIB, **kw):
    return dict(start=start, dur=dur, hash=h, source=src, **kw)


# Four ranks, one cold cache, overlapping compiles: one race.
r = case("race4", [(100 + i, [load(T0 + i * 50 * MS)]) for i in range(4)])
expect(len(r["races"]) == 1, f"race4: one race, got {r['races']}")
if r["races"]:
    x = r["races"][0]
    expect(x["compiles"] == 4 and x["processes"] == 4 and x["pids"] == [100, 101, 102, 103],
           f"race4: {x}")
    expect(x["jit_ns"] == 48 * S and x["saves_ns"] == 36 * S, f"race4: times {x}")
    expect(x["image_hash"] == "0000000000000abc" and x["source"] == LIB, f"race4: {x}")
    want = (f"{LIB}: compiled 4 times at once in 4 processes, 48.00 s in all: warm the cache "
            f"before starting them (jitstall warm --cache /root/.nv/ComputeCache {LIB})")
    expect(x["fix"] == want, f"race4: fix text {x['fix']!r}")
    rf = [f for f in r["fixes"] if f["kind"] == "race"]
    expect(len(rf) == 1 and rf[0]["text"] == want and rf[0]["loads"] == 4, f"race4: {rf}")

# One after the other: no overlap, no race.
r = case("sequential", [(200 + i, [load(T0 + i * 13 * S)]) for i in range(4)])
expect(r["races"] == [], f"sequential: {r['races']}")
# Overlapping, but three were cache hits: one compile is no race.
r = case("hits", [(300, [load(T0)])] + [(301 + i, [load(T0 + MS, 30 * MS, cache=HIT)])
                                        for i in range(3)])
expect(r["races"] == [], f"hits: {r['races']}")
# Overlapping, different images: no race.
r = case("images", [(400 + i, [load(T0, h=0x100 + i)]) for i in range(3)])
expect(r["races"] == [], f"images: {r['races']}")
# Two threads of one process: not several processes.
r = case("threads", [(500, [load(T0, tid=1), load(T0 + MS, tid=2)])])
expect(r["races"] == [], f"threads: {r['races']}")
# Two waves of two: one finding for the image, both waves in it.
r = case("waves", [(600, [load(T0)]), (601, [load(T0 + S)]),
                   (602, [load(T0 + 60 * S)]), (603, [load(T0 + 61 * S)])])
expect(len(r["races"]) == 1 and r["races"][0]["compiles"] == 4
       and r["races"][0]["processes"] == 4, f"waves: {r['races']}")
# Same image in a second process started an hour later on another clock anchor:
# overlapping monotonic times but not wall-clock times: no race.
d = os.path.join(WORK, "anchors")
os.makedirs(d, exist_ok=True)
trace(os.path.join(d, "a.jst"), 700, [load(T0)])
trace(os.path.join(d, "b.jst"), 701, [load(T0)], realtime=1767225600 * S + 3600 * S)
expect(report(d)["races"] == [], "anchors: compiles an hour apart reported as a race")


def fix_of(name, src, env=None):
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    trace(os.path.join(d, "t.jst"), 900, [load(T0, src=src)])
    rep = report(d, env=env)
    return [f for f in rep["fixes"] if f["kind"] not in ("cache_volume",)]


# A system library named by dpkg's file list (JITSTALL_DPKG_DIR).
dpkg = os.path.join(WORK, "dpkg")
os.makedirs(dpkg, exist_ok=True)
sys_lib = "/usr/lib/x86_64-linux-gnu/libkernels.so.2"
with open(os.path.join(dpkg, "libother1:amd64.list"), "w") as f:
    f.write("/.\n/usr/lib/x86_64-linux-gnu/libother.so.1\n")
with open(os.path.join(dpkg, "libkernels2:amd64.list"), "w") as f:
    f.write("/.\n/usr/lib/x86_64-linux-gnu\n" + sys_lib + "\n")
fx = fix_of("dpkg", sys_lib, env={"JITSTALL_DPKG_DIR": dpkg})
expect(len(fx) == 1 and fx[0]["kind"] == "third_party" and fx[0]["text"].startswith(
    f"{sys_lib} is third-party (libkernels2:amd64 (Debian package), a system library "
    "directory): upgrade to a build with SASS for sm_90"), f"dpkg: {fx}")
# The merged /usr: dpkg lists /lib/..., the process mapped /usr/lib/...
with open(os.path.join(dpkg, "libkernels2:amd64.list"), "w") as f:
    f.write(sys_lib[4:] + "\n")
fx = fix_of("dpkg_merged", sys_lib, env={"JITSTALL_DPKG_DIR": dpkg})
expect(fx and "(libkernels2:amd64 (Debian package)," in fx[0]["text"], f"dpkg merged /usr: {fx}")
fx = fix_of("dpkg_none", sys_lib, env={"JITSTALL_DPKG_DIR": os.path.join(WORK, "nodpkg")})
expect(fx and "is third-party (a system library directory)" in fx[0]["text"], f"no dpkg: {fx}")
for name, src, where in [("conda", "/opt/conda/envs/ml/lib/libkern.so", "a conda environment"),
                         ("miniforge", "/home/u/miniforge3/lib/libkern.so", "a conda environment"),
                         ("toolkit", "/usr/local/cuda-13.0/lib64/libcufft.so.12", "the CUDA toolkit"),
                         ("usrbin", "/usr/bin/hashcat", "a system program directory")]:
    fx = fix_of(name, src, env={"JITSTALL_DPKG_DIR": os.path.join(WORK, "nodpkg")})
    expect(fx and fx[0]["kind"] == "third_party" and f"is third-party ({where})" in fx[0]["text"],
           f"{name}: {fx}")
# A conda env: the package whose conda-meta record lists the file.
env = os.path.join(WORK, "miniconda3", "envs", "ml")
os.makedirs(os.path.join(env, "conda-meta"), exist_ok=True)
with open(os.path.join(env, "conda-meta", "other-1.0-h0_0.json"), "w") as f:
    json.dump({"name": "other", "files": ["lib/libother.so"]}, f)
with open(os.path.join(env, "conda-meta", "kern-pkg-2.1.0-h1a2b_3.json"), "w") as f:
    json.dump({"name": "kern-pkg", "files": ["include/k.h", "lib/libkern.so.2"]}, f)
fx = fix_of("conda_pkg", os.path.join(env, "lib", "libkern.so.2"),
            env={"JITSTALL_DPKG_DIR": os.path.join(WORK, "nodpkg")})
expect(fx and fx[0]["kind"] == "third_party" and
       "is third-party (kern-pkg 2.1.0 (conda), a conda environment)" in fx[0]["text"],
       f"conda package: {fx}")
# The user's own build: the -gencode fix, not third-party.
fx = fix_of("own", "/home/u/build/libmine.so")
expect(fx and fx[0]["kind"] == "gencode" and fx[0]["text"].startswith(
    "rebuild /home/u/build/libmine.so with -gencode arch=compute_90,code=sm_90"), f"own: {fx}")

# Files given by path whose only entry is plain PTX: a .ptx file, unless the
# file is named as a fatbin.
for name, path, kind in [("file_ptx", "/data/kern.ptx", "ptx_file"),
                         ("file_fatbin", "/data/kern.fatbin", "fatbin_file")]:
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    trace(os.path.join(d, "t.jst"), 950, [dict(start=T0, dur=S, hash=1, path=path, kind=5,
                                               call_id=4, call="cuModuleLoad",
                                               entry="ptx compute_75 none")])
    fx = [f for f in report(d)["fixes"] if f["kind"] == kind]
    expect(len(fx) == 1 and path in fx[0]["text"], f"{name}: {report(d)['fixes']}")

# NVRTC output by hash: PTX text linked without its NUL matches the hash
# without the NUL; other PTX in memory after NVRTC ran is not NVRTC's.
for name, h, kind in [("rtc_link_match", 0xB0B, "nvrtc_ptx"), ("rtc_link_other", 0xC0C, "ptx_file")]:
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    trace(os.path.join(d, "t.jst"), 960, [
        dict(start=T0, dur=S, rtc=(0xA0A, 0xB0B)),
        dict(start=T0 + 2 * S, dur=S, hash=h, source=None, kind=3, call_id=14,
             call="cuLinkAddData_v2", jit_input=1, entry="ptx compute_90 none")])
    fx = [f for f in report(d)["fixes"] if f["kind"] in ("nvrtc_ptx", "ptx_file")]
    expect(len(fx) == 1 and fx[0]["kind"] == kind and "cuLinkAddData_v2" in fx[0]["text"],
           f"{name}: {fx}")
    expect(kind != "ptx_file" or "for the GPU and link the result" in fx[0]["text"],
           f"{name}: a link input's result is linked: {fx}")

# A third-party library that passes its PTX from memory (cuDNN does, under
# JAX): no source for the image, but the call's stack names the library that
# made the load, below libcuda; the fix is the library's (third-party).
cudnn = "/env/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn_graph.so.9"
base_cuda, base_lib = 0x7F0000000000, 0x7F1000000000
pre = [rec(6, mod_event=0, mod_path="/usr/lib/x86_64-linux-gnu/libcuda.so.1", mod_bias=base_cuda,
           mod_start=base_cuda, mod_end=base_cuda + 0x100000),
       rec(6, mod_event=0, mod_path=cudnn, mod_bias=base_lib, mod_start=base_lib,
           mod_end=base_lib + 0x100000),
       rec(5, stack_id=1, ips=struct.pack("<QQ", base_cuda + 0x1234, base_lib + 0x5678))]
for name, stack, kind in [("heap_by_lib", 1, "third_party"), ("heap_no_stack", None, "ptx_file")]:
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    ld = dict(start=T0, dur=S, hash=0xD0D, source=None, kind=3, entry="ptx compute_50 none")
    if stack:
        ld["stack_id"] = stack
    trace(os.path.join(d, "t.jst"), 970, [ld], pre=pre,
          cache_dir=os.path.join(WORK, "nocache"))
    fx = [f for f in report(d, env={"JITSTALL_DPKG_DIR": os.path.join(WORK, "nodpkg")})["fixes"]
          if f["kind"] in ("third_party", "ptx_file")]
    expect(len(fx) == 1 and fx[0]["kind"] == kind, f"{name}: {fx}")
    expect(kind != "third_party" or fx[0]["text"].startswith(f"{cudnn} is third-party"),
           f"{name}: the library named: {fx}")

print("synth: %d failure(s)" % len(failures))
sys.exit(1 if failures else 0)
