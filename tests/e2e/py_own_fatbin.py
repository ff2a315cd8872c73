# For e2e.toolkits: a Python program that reads its own fatbin and loads it
# through ctypes (libffi and _ctypes make the call on its behalf).
#   python py_own_fatbin.py FATBIN
import ctypes
import sys

cu = ctypes.CDLL("libcuda.so.1")
image = open(sys.argv[1], "rb").read() + b"\0"
dev, ctx, mod = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p()
assert cu.cuInit(0) == 0
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
print("load", cu.cuModuleLoadData(ctypes.byref(mod), image))
