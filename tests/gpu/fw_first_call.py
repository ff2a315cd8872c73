# The first call of a framework's kernel, measured by the program itself, for
# tests/gpu/part_compilers.sh. A trivial first kernel runs first (a fill), as
# in real programs; then the timed first call (it compiles), then a second.
#   python3 fw_first_call.py MODE [--cprofile]
# MODE: triton, compile (torch.compile), jax, numba; for tests/gpu/part_table.sh
# also mlp (torch.compile of a 4-layer MLP), autotune (max-autotune-no-cudagraphs
# of a matmul+relu), reduceoh (reduce-overhead MLP, three calls), numbac (Numba
# cache=True), cupy (a RawKernel), ext (load_inline), nvcc (nvcc -cubin, then
# cuModuleLoad), graphs (64 torch CUDA graphs, then a first kernel). Prints
#   FIRST_CALL_NS n / SECOND_CALL_NS n / FIRST_CALL_MONO start end, and with --cprofile the first call
#   under cProfile: CPROFILE_CAUSE c (the class of function with the most own
#   time) and the top functions.
import cProfile
import io
import os
import pstats
import sys
import time

mode = sys.argv[1]
prof = "--cprofile" in sys.argv[2:]


def setup_triton():
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def add_kernel(x, y, out, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(out + i, tl.load(x + i, mask=m) * 2.0 + tl.load(y + i, mask=m), mask=m)

    x = torch.ones(4096, device="cuda")
    y, out = torch.ones_like(x), torch.empty_like(x)
    torch.cuda.synchronize()

    def call():
        add_kernel[(4,)](x, y, out, 4096, BLOCK=1024)
        torch.cuda.synchronize()
    return call


def setup_compile():
    import torch

    def f(a):
        return torch.sin(a) * 2.0 + torch.cos(a)
    g = torch.compile(f)
    x = torch.ones(4096, device="cuda")
    torch.cuda.synchronize()

    def call():
        g(x)
        torch.cuda.synchronize()
    return call


def setup_jax():
    import jax
    import jax.numpy as jnp
    x = jnp.ones(4096)
    x.block_until_ready()
    f = jax.jit(lambda a: jnp.sin(a) * 2.0 + jnp.cos(a))

    def call():
        f(x).block_until_ready()
    return call


def setup_numba(cached=False):
    # cached: @cuda.jit(cache=True), the second process loads the kernel
    # from NUMBA_CACHE_DIR
    import numpy as np
    from numba import cuda
    arr = cuda.to_device(np.ones(4096, dtype=np.float32))
    cuda.synchronize()

    @cuda.jit(cache=cached)
    def k(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * 2.0 + 1.0

    def call():
        k[16, 256](arr)
        cuda.synchronize()
    return call


def setup_mlp(compile_mode=None, calls=1):
    import torch
    layers = []
    for _ in range(4):
        layers += [torch.nn.Linear(256, 256), torch.nn.LayerNorm(256), torch.nn.GELU()]
    m = torch.nn.Sequential(*layers).cuda()
    g = torch.compile(m, mode=compile_mode)
    x = torch.randn(64, 256, device="cuda")
    torch.cuda.synchronize()

    def call():
        # reduce-overhead: the first call warms up, the second records the
        # CUDA graph, the third replays it; the three are the cold start
        with torch.no_grad():
            for _ in range(calls):
                g(x)
        torch.cuda.synchronize()
    return call


def setup_autotune():
    import torch

    def f(a, b):
        return torch.relu(a @ b)
    g = torch.compile(f, mode="max-autotune-no-cudagraphs")
    a = torch.randn(512, 512, device="cuda")
    b = torch.randn(512, 512, device="cuda")
    torch.cuda.synchronize()

    def call():
        g(a, b)
        torch.cuda.synchronize()
    return call


def setup_cupy():
    # a RawKernel compiled by NVRTC; CuPy keeps it in CUPY_CACHE_DIR
    import cupy as cp
    x = cp.arange(4096, dtype=cp.float32)
    y = cp.ones(4096, dtype=cp.float32)
    cp.cuda.Device().synchronize()
    src = r"""
extern "C" __global__ void ffc_saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""

    def call():
        k = cp.RawKernel(src, "ffc_saxpy")
        k((16,), (256,), (cp.float32(2.0), x, y, cp.int32(4096)))
        cp.cuda.Device().synchronize()
    return call


def setup_ext():
    # a CUDA op built on first use (ninja runs nvcc, cicc, ptxas and g++);
    # TORCH_EXTENSIONS_DIR keeps the build
    import torch
    from torch.utils.cpp_extension import load_inline
    cuda_src = r"""
__global__ void ffc_add_one_k(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
void ffc_add_one(torch::Tensor x) {
    int n = x.numel();
    ffc_add_one_k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), n);
}
"""
    x = torch.zeros(1024, device="cuda")
    torch.cuda.synchronize()

    def call():
        mod = load_inline("ffc_add_one", cpp_sources="void ffc_add_one(torch::Tensor x);",
                          cuda_sources=cuda_src, functions=["ffc_add_one"], verbose=False)
        mod.ffc_add_one(x)
        torch.cuda.synchronize()
    return call


def setup_nvcc():
    # writes CUDA source, runs nvcc -cubin and loads the cubin through the
    # driver API; the cubin is kept in FFC_NVCC_DIR by the source's hash, so a
    # second process loads it without compiling
    import ctypes
    import hashlib
    import os
    import subprocess
    cu = ctypes.CDLL("libcuda.so.1")
    assert cu.cuInit(0) == 0
    dev, ctx = ctypes.c_int(), ctypes.c_void_p()
    assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cu.cuCtxSetCurrent(ctx) == 0
    mj, mn = ctypes.c_int(), ctypes.c_int()
    cu.cuDeviceGetAttribute(ctypes.byref(mj), 75, dev)
    cu.cuDeviceGetAttribute(ctypes.byref(mn), 76, dev)
    arch = f"sm_{mj.value}{mn.value}"
    src = "extern \"C\" __global__ void ffc_nvcc_k(float *x) { x[threadIdx.x] += 1.0f; }\n"
    d = os.environ.get("FFC_NVCC_DIR") or "/tmp/ffc_nvcc"
    os.makedirs(d, exist_ok=True)
    h = hashlib.sha256((arch + src).encode()).hexdigest()[:16]
    buf = ctypes.c_void_p()
    assert cu.cuMemAlloc_v2(ctypes.byref(buf), ctypes.c_size_t(1024)) == 0

    def call():
        cubin = os.path.join(d, h + ".cubin")
        if not os.path.exists(cubin):
            with open(os.path.join(d, h + ".cu"), "w") as f:
                f.write(src)
            subprocess.run(["nvcc", "-cubin", "-arch=" + arch, "-o", cubin,
                            os.path.join(d, h + ".cu")], check=True)
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        assert cu.cuModuleLoad(ctypes.byref(mod), cubin.encode()) == 0
        assert cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"ffc_nvcc_k") == 0
        arg = ctypes.c_void_p(buf.value)
        args = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(arg), ctypes.c_void_p))
        assert cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, args, None) == 0
        assert cu.cuCtxSynchronize() == 0
    return call


def setup_graphs():
    # 64 CUDA graphs, one per batch size, after an eager warm-up (as a server
    # does at start), then the first request: a kernel not launched before
    import torch
    m = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(),
                            torch.nn.Linear(256, 256)).cuda()
    xs = [torch.randn(b, 256, device="cuda") for b in range(1, 65)]
    with torch.no_grad():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for x in xs:
                m(x)
        torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    keep = []

    def call():
        with torch.no_grad():
            for x in xs:
                g = torch.cuda.CUDAGraph()
                c0 = time.perf_counter_ns()
                with torch.cuda.graph(g):
                    y = m(x)
                CAPTURE[0] += time.perf_counter_ns() - c0
                keep.append((g, y))
            keep[-1][0].replay()
            torch.tanh(keep[-1][1])
        torch.cuda.synchronize()
    return call


# The program's own clock around its graph captures (graphs): cProfile
# cannot tell the work done inside a capture from the same work outside one.
CAPTURE = [0]


# The class of a cProfile row, named as the report's blame causes are.
def cause_of(file, func):
    f = (file or "") + ":" + (func or "")
    # a wait for work elsewhere (another thread's or process's compile):
    # cProfile sees the wait, not the work
    if any(s in f for s in ("method 'acquire' of '_thread", "threading.py:wait",
                            "_base.py:result", "Condition.wait")) or \
            func in ("wait", "acquire") and "threading" in (file or ""):
        return "wait"
    if any(s in f for s in ("capture_begin", "capture_end", "CUDAGraph", "/torch/cuda/graphs.py")):
        return "graph_capture"
    if "/cupy/cuda/compiler" in f or "cupy_backends" in f and "nvrtc" in f:
        return "runtime_compiler"
    if any(s in f for s in ("posix.read", "posix.waitpid", "select.poll", "fork_exec",
                            "subprocess.py", "posix.wait", "select.select")):
        return "subprocess"
    if "backend_compile" in f or "compile_and_load" in f:
        return "framework_compile"
    # the frameworks' own compile code: what their compile events cover
    # (docs/framework-events.md), as the report's framework compiles do
    if any(s in f for s in ("/triton/compiler/", "/triton/backends/", "/triton/runtime/",
                            "/torch/_dynamo/", "/torch/_inductor/", "/torch/fx/",
                            "/jax/_src/interpreters/", "/jax/_src/compiler", "/jax/_src/pjit",
                            "/numba/core/", "/numba_cuda/", "/numba/cuda/", "/llvmlite/")):
        return "framework_compile"
    if any(s in f for s in ("nvvm", "nvJitLink", "nvjitlink", "nvrtc", "ptxcompiler")):
        return "runtime_compiler"
    if "cuModuleLoad" in f or "cuLibraryLoad" in f:
        return "module_load"
    return "python"


call = {"triton": setup_triton, "compile": setup_compile, "jax": setup_jax,
        "numba": setup_numba, "mlp": setup_mlp,
        "autotune": setup_autotune,
        "reduceoh": lambda: setup_mlp("reduce-overhead", 3),
        "numbac": lambda: setup_numba(True), "cupy": setup_cupy, "ext": setup_ext,
        "nvcc": setup_nvcc, "graphs": setup_graphs}[mode]()
if prof:
    pr = cProfile.Profile()
    t0 = time.perf_counter_ns()
    pr.enable()
    call()
    pr.disable()
    t1 = time.perf_counter_ns()
    if os.environ.get("FFC_PSTATS"):  # for tests/gpu/table.py
        pr.dump_stats(os.environ["FFC_PSTATS"])
    if CAPTURE[0]:
        print(f"GRAPH_CAPTURE_NS {CAPTURE[0]}")
    st = pstats.Stats(pr)
    by = {}
    rows = []
    for (file, line, func), (cc, nc, tt, ct, callers) in st.stats.items():
        c = cause_of(file, func)
        by[c] = by.get(c, 0.0) + tt
        rows.append((tt, f"{func} ({file}:{line})", c))
    rows.sort(reverse=True)
    total = sum(by.values())
    print(f"FIRST_CALL_NS {t1 - t0}")
    print("CPROFILE_CAUSE " + max(by, key=by.get))
    for c, v in sorted(by.items(), key=lambda kv: -kv[1]):
        print(f"CPROFILE_CLASS {c} {v:.3f}s {100 * v / max(total, 1e-9):.0f}%")
    for tt, name, c in rows[:8]:
        print(f"CPROFILE_TOP {tt:.3f}s {c} {name}")
else:
    # time.monotonic_ns() is CLOCK_MONOTONIC, the trace's clock
    t0 = time.monotonic_ns()
    call()
    t1 = time.monotonic_ns()
    call()
    t2 = time.monotonic_ns()
    print(f"FIRST_CALL_NS {t1 - t0}")
    print(f"SECOND_CALL_NS {t2 - t1}")
    print(f"FIRST_CALL_MONO {t0} {t1}")
