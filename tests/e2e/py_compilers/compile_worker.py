# The compile worker of py_inductor.py: compiles with the stand-in Triton.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from triton.backends.nvidia import compiler  # noqa: E402

ptxas, outdir = sys.argv[1:3]
compiler.make_cubin(ptxas, os.path.join(outdir, "w.ptx"), os.path.join(outdir, "w.cubin"), 20000)
print("worker done")
