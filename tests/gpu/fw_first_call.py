# The first call of a framework's kernel, measured by the program itself, for
# tests/gpu/part_compilers.sh. A trivial first kernel runs first (a fill), as
# in real programs; then the timed first call (it compiles), then a second.
#   python3 fw_first_call.py MODE [--cprofile]
# MODE: triton, compile (torch.compile), jax, numba. Prints
#   FIRST_CALL_NS n / SECOND_CALL_NS n / FIRST_CALL_MONO start end, and with --cprofile the first call
#   under cProfile: CPROFILE_CAUSE c (the class of function with the most own
#   time) and the top functions.
import cProfile
import io
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


def setup_numba():
    import numpy as np
    from numba import cuda
    arr = cuda.to_device(np.ones(4096, dtype=np.float32))
    cuda.synchronize()

    @cuda.jit
    def k(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = a[i] * 2.0 + 1.0

    def call():
        k[16, 256](arr)
        cuda.synchronize()
    return call


# The class of a cProfile row, named as the report's blame causes are.
def cause_of(file, func):
    f = (file or "") + ":" + (func or "")
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
        "numba": setup_numba}[mode]()
if prof:
    pr = cProfile.Profile()
    t0 = time.perf_counter_ns()
    pr.enable()
    call()
    pr.disable()
    t1 = time.perf_counter_ns()
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
