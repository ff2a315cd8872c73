# First calls of four frameworks that publish their compile events, on the
# simulated driver: each compiles (stand-in packages beside this file, Python
# work with the frameworks' own events around it), then loads and launches
# its kernel. With "hit" the caches hit: short compiles that say so; "own"
# sets Triton's listener itself (STANDIN_TRITON_LISTENER=1: a plugin set it
# before jitstall could); "odd" calls every listener with
# arguments no framework gives (they must not raise); "numbacuda" is
# numba-cuda's copy of Numba's events, with its own names. At the end it prints
# the framework modules loaded: the preload imports none of its own.
#   python py_fwevents.py FIXTURES miss|hit|own|odd MS [framework...]
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "py_compilers"))  # cudasim
# the stand-ins, where frameworks live (before py_compilers' own triton)
sys.path.insert(0, os.path.join(here, "site-packages"))

fixtures, mode, ms = sys.argv[1], sys.argv[2], float(sys.argv[3])
which = sys.argv[4:] or ["triton", "torch", "jax", "numba"]
hit = mode == "hit"
if "triton" in which:
    import triton
if "torch" in which:
    import torch._dynamo
if "jax" in which:
    import jax
if "numba" in which:
    import numba.core.event
if "numbacuda" in which:
    import numba.cuda.core.event
import cudasim  # noqa: E402  (after the frameworks, as a program imports its own code)

if mode == "own":  # after jitstall's: the program's replaces it
    def own(*a, **k):
        print("the program's own listener:", k.get("src").name, "hit" if k.get("cache_hit") else "miss")
    triton.knobs.compilation.listener = own

cudasim.setup()
cudasim.load_and_launch("fill", fixtures + "/sm90.cubin")


def my_kernel():
    pass


def odd():
    """What no framework passes: every listener gets it and says nothing."""
    if "triton" in which and triton.knobs.compilation.listener:
        triton.knobs.compilation.listener("x", None, None, object(), "yes")
        triton.knobs.compilation.listener()
    if "torch" in which:
        for cb in torch._dynamo.callback.callback_handler.end + torch._dynamo.callback.callback_handler.start:
            cb(object(), 1, 2)
        for cb in torch._dynamo.callback.callback_handler.end:
            cb()
    if "jax" in which:
        for cb in jax._src.monitoring._durations:
            cb("/jax/core/compile/backend_compile_duration", "not a number")
            cb("/jax/core/compile/backend_compile_duration", -5.0, fun_name=object())
        for cb in jax._src.monitoring._events:
            cb(None)
    print("odd calls: ok")


if mode == "odd":
    odd()
for fw in which:
    if fw == "triton":
        triton.compiler.compile("add_kernel", hit, ms)
    elif fw == "torch":
        torch._dynamo.callback.compile(hit, ms)
    elif fw == "jax":
        jax._src.compiler.jit("jit_step", hit, ms)
    elif fw == "numba":
        numba.core.event.compile(my_kernel, ms)
    elif fw == "numbacuda":  # a hit loads from the cache under the lock
        if hit:
            numba.cuda.core.event.load_cached(ms)
        else:
            numba.cuda.core.event.compile(my_kernel, ms)
    cudasim.load_and_launch(fw, fixtures + "/sm90.cubin")
print("done", mode, sorted(m for m in sys.modules if m.split(".")[0] in ("triton", "torch", "jax", "numba")))
