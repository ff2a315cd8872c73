# A generated Python function of LINES lines whose end loads a cubin,
# launches its kernel and unloads it, REPS times (a driver call from each of
# three lines of one long function). Prints the loop's time, in seconds, on
# stderr; stdout is the same with and without the preload.
#   python py_lines.py LINES REPS CUBIN
# Used by e2e.pylines and tests/bench/bench_pylines.sh.
import ctypes
import sys
import time

lines, reps, cubin = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
cuda = ctypes.CDLL("libcuda.so.1")
ctx, dev = ctypes.c_void_p(), ctypes.c_int()
assert cuda.cuInit(0) == 0
assert cuda.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cuda.cuCtxSetCurrent(ctx) == 0

src = ["def big(cuda, cubin, reps):", "    x = 0"]
src += [f"    x += {i % 7}" for i in range(lines)]
src += [
    "    for _ in range(reps):",
    "        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()",
    "        assert cuda.cuModuleLoad(ctypes.byref(mod), cubin) == 0",
    "        assert cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b'add_one') == 0",
    "        assert cuda.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, None, None) == 0",
    "        assert cuda.cuModuleUnload(mod) == 0",
    "    return x",
]
scope = {"ctypes": ctypes}
exec(compile("\n".join(src) + "\n", "generated.py", "exec"), scope)
t = time.perf_counter()
x = scope["big"](cuda, cubin, reps)
print(f"{time.perf_counter() - t:.3f}", file=sys.stderr)
print(f"{lines} lines, {reps} rounds: {x}")
