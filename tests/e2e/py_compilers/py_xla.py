# An XLA-like first call: the compile runs in native code inside an NVTX
# range named as XLA names its compiles, then the result is loaded and
# launched.
#   python py_xla.py FIXTURES XLALIB MS
import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cudasim  # noqa: E402

fixtures, xlalib, ms = sys.argv[1], sys.argv[2], int(sys.argv[3])
xla = ctypes.CDLL(xlalib)


def backend_compile_and_load():
    return xla.py_xla_compile(ms)


cudasim.setup()
cudasim.load_and_launch("fill", fixtures + "/sm90.cubin")
backend_compile_and_load()
cudasim.load_and_launch("kernel", fixtures + "/sm90.cubin")
print("done")
