# An Inductor-like parent: its compile runs in a worker child process (a
# Python process of its own, as Inductor's compile workers are), which runs
# the stand-in Triton compile with ptxas; then the parent loads and launches.
#   python py_inductor.py FIXTURES PTXAS OUTDIR
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import cudasim  # noqa: E402

fixtures, ptxas, outdir = sys.argv[1:4]
cudasim.setup()
cudasim.load_and_launch("fill", fixtures + "/sm90.cubin")
subprocess.run([sys.executable, os.path.join(here, "compile_worker.py"), ptxas, outdir], check=True)
cudasim.load_and_launch("kernel", fixtures + "/sm90.cubin")
print("done")
