# The compile worker of py_inductor.py: compiles with the stand-in Triton.
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from triton.backends.nvidia import compiler  # noqa: E402

ptxas, outdir = sys.argv[1:3]
# A worker lives longer than a short helper: the report counts a child the
# parent waited for as a build from 100 ms on (JST_BUILD_MIN_NS), and this
# one's compile alone can take less on a fast machine.
time.sleep(0.15)
compiler.make_cubin(ptxas, os.path.join(outdir, "w.ptx"), os.path.join(outdir, "w.cubin"), 20000)
print("worker done")
