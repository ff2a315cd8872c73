# Framework events and subinterpreters: the stand-ins imported and compiling
# in two subinterpreters (whose objects jitstall must never touch), then in
# the main one. Prints what the subinterpreters see of Triton's listener slot;
# exits 77 when this Python has no subinterpreter module.
#   python py_subinterp.py
import os
import sys

site = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages")
sys.path.insert(0, site)

try:
    import _xxsubinterpreters as interpreters
except ImportError:
    try:
        import _interpreters as interpreters
    except ImportError:
        sys.exit(77)

code = f"""
import sys
sys.path.insert(0, {site!r})
import triton, jax, numba.core.event, torch._dynamo
triton.compiler.compile("sub_kernel", False, 20)
jax._src.compiler.jit("sub_jit", False, 20)
torch._dynamo.callback.compile(False, 20)
print("subinterpreter: Triton's listener", triton.knobs.compilation.listener)
"""
import triton  # noqa: E402  (the main interpreter imports the frameworks first)
import jax  # noqa: E402

for _ in range(2):
    interp = interpreters.create()
    interpreters.run_string(interp, code)
    interpreters.destroy(interp)
triton.compiler.compile("main_kernel", False, 20)
jax._src.compiler.jit("main_jit", False, 20)
print("main interpreter: done")
