"""One program with every cache of a warm bundle, for tests/gpu/part_bundle.sh:
a Triton kernel, torch.compile, jax.jit and a CuPy RawKernel (each skipped,
with a SKIP line, when its framework is absent), then the PTX-only cudart
program given as argv[1] as a child process. Prints, per framework,
  FIRST name ms      the first call (its compile, or its cache hit)
  SECOND name ms     the second call
measured by the program itself on CLOCK_MONOTONIC.
    python3 bundle_prog.py [CUDART_PROG]
"""
import os
import subprocess
import sys
import time

# JAX and PyTorch share the GPU here: JAX must not take most of its memory.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")


def timed(name, setup):
    try:
        call = setup()
    except ImportError as e:
        print(f"SKIP {name} {e}", flush=True)
        return
    t0 = time.monotonic_ns()
    call()
    t1 = time.monotonic_ns()
    call()
    t2 = time.monotonic_ns()
    print(f"FIRST {name} {(t1 - t0) / 1e6:.1f}", flush=True)
    print(f"SECOND {name} {(t2 - t1) / 1e6:.1f}", flush=True)


def setup_triton():
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def bundle_add(x, y, out, n, BLOCK: tl.constexpr):
        i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = i < n
        tl.store(out + i, tl.load(x + i, mask=m) * 3.0 + tl.load(y + i, mask=m), mask=m)

    x = torch.ones(4096, device="cuda")
    y, out = torch.ones_like(x), torch.empty_like(x)
    torch.cuda.synchronize()

    def call():
        bundle_add[(4,)](x, y, out, 4096, BLOCK=1024)
        torch.cuda.synchronize()
    return call


def setup_compile():
    import torch
    g = torch.compile(lambda a: torch.sin(a) * 3.0 + torch.cos(a))
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
    f = jax.jit(lambda a: jnp.sin(a) * 3.0 + jnp.cos(a))

    def call():
        f(x).block_until_ready()
    return call


def setup_cupy():
    import cupy as cp
    src = r'''
extern "C" __global__ void bundle_saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
'''
    n = 1 << 16
    x = cp.arange(n, dtype=cp.float32)
    y = cp.ones(n, dtype=cp.float32)
    cp.cuda.Device().synchronize()

    def call():
        # A new RawKernel each time: the second call finds it in CuPy's caches.
        k = cp.RawKernel(src, "bundle_saxpy")
        k(((n + 255) // 256,), (256,), (cp.float32(2.0), x, y, cp.int32(n)))
        cp.cuda.Device().synchronize()
    return call


for name, setup in (("triton", setup_triton), ("torch.compile", setup_compile),
                    ("jax.jit", setup_jax), ("cupy", setup_cupy)):
    timed(name, setup)
if len(sys.argv) > 1:
    t0 = time.monotonic_ns()
    r = subprocess.run([sys.argv[1]], stdout=subprocess.DEVNULL)
    print(f"FIRST cudart_ptx {(time.monotonic_ns() - t0) / 1e6:.1f}", flush=True)
    sys.exit(r.returncode)
