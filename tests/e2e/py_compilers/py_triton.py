# A Triton-like first call on the simulated driver: a trivial first kernel
# (the fill), then a kernel compiled by the stand-in triton package (lowering
# in Python, ptxas in a subprocess), loaded and launched.
#   python py_triton.py FIXTURES PTXAS OUTDIR LOWER_N
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cudasim  # noqa: E402
from triton.backends.nvidia import compiler  # noqa: E402

fixtures, ptxas, outdir, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
cudasim.setup()
cudasim.load_and_launch("fill", fixtures + "/sm90.cubin")
compiler.make_cubin(ptxas, os.path.join(outdir, "k.ptx"), os.path.join(outdir, "k.cubin"), n)
cudasim.load_and_launch("kernel", fixtures + "/sm90.cubin")
print("done")
