"""Benchmark: what reading Python frames adds to a recorded load.

Loads a SASS cubin (no JIT) through ctypes DEPTH+3 Python frames deep, many
times, and prints the best per-load time. Run it under the preload on the
simulated driver, with and without JITSTALL_PYTHON=0, and compare:

  for p in 0 1; do JITSTALL_PYTHON=$p JITSTALL_DIR=/tmp/t \\
    LD_PRELOAD=$PWD/build/libjitstall.so LD_LIBRARY_PATH=$PWD/build/simdriver \\
    python3 tests/bench/bench_pyframes.py tests/fixtures/sm90.cubin 30; done
"""
import ctypes
import sys
import time

cuda = ctypes.CDLL("libcuda.so.1")
image = open(sys.argv[1], "rb").read()
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 3
ctx, dev = ctypes.c_void_p(), ctypes.c_int()
cuda.cuInit(0)
cuda.cuDeviceGet(ctypes.byref(dev), 0)
cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
cuda.cuCtxSetCurrent(ctx)


def load(n):
    t = time.perf_counter()
    for _ in range(n):
        mod = ctypes.c_void_p()
        cuda.cuModuleLoadData(ctypes.byref(mod), image)
        cuda.cuModuleUnload(mod)
    return time.perf_counter() - t


def nest(d, n):
    return nest(d - 1, n) if d else load(n)


nest(depth, 50)
best = min(nest(depth, 200) for _ in range(5))
print(f"{depth + 3} Python frames: {best / 200 * 1e6:.1f} us per load")
