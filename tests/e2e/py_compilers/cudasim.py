# Driver calls of the compile-capture tests, through ctypes on the simulated
# driver: set-up, and a module load plus its first launch.
import ctypes
import sys

cuda = ctypes.CDLL("libcuda.so.1")
_ctx = ctypes.c_void_p()


def check(what, r):
    print(f"{what}: {r}")
    if r != 0:
        sys.exit(3)


def setup():
    dev = ctypes.c_int()
    check("cuInit", cuda.cuInit(0))
    check("cuDeviceGet", cuda.cuDeviceGet(ctypes.byref(dev), 0))
    check("ctx", cuda.cuDevicePrimaryCtxRetain(ctypes.byref(_ctx), dev))
    check("current", cuda.cuCtxSetCurrent(_ctx))


def load_and_launch(what, cubin):
    mod, fn, buf = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64()
    check(what + " load", cuda.cuModuleLoad(ctypes.byref(mod), cubin.encode()))
    check(what + " function", cuda.cuModuleGetFunction(ctypes.byref(fn), mod, b"add_one"))
    check(what + " alloc", cuda.cuMemAlloc_v2(ctypes.byref(buf), 1024))
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(buf), ctypes.c_void_p))
    check(what + " launch", cuda.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, params, None))
