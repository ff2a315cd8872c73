# A program whose first call waits for a build tool, as
# torch.utils.cpp_extension.load_inline waits for ninja: a script of another
# name (MYBUILD) runs stand-in nvcc and ptxas in parallel, then c++, in
# BUILDDIR; before the build a short child (uname) runs, whose output the
# program prints. Then the built kernel's first launch.
#   python py_build.py FIXTURES MYBUILD BUILDDIR [LAUNCHER]
# With LAUNCHER (a program the preload cannot enter, as a static one) the
# build runs under it: LAUNCHER MYBUILD BUILDDIR.
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import cudasim  # noqa: E402

fixtures, mybuild, builddir = sys.argv[1:4]
launcher = sys.argv[4] if len(sys.argv) > 4 else None
cudasim.setup()
cudasim.load_and_launch("fill", fixtures + "/sm90.cubin")
print("uname:", subprocess.run(["uname", "-s"], capture_output=True, text=True).stdout.strip())
cmd = [mybuild, builddir]
if launcher:
    cmd = [launcher] + cmd
out = subprocess.run(cmd, cwd=builddir, stdout=subprocess.PIPE, check=True).stdout  # as ninja
print("build:", out.decode().strip())
cudasim.load_and_launch("kernel", fixtures + "/sm90.cubin")
print("done")
