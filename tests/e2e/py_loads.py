# The user's program of e2e.python: loads PTX through ctypes on the simulated
# driver, from user functions in this file. Each load line carries a marker
# comment ("load: NAME") that the test looks up to know the line the report
# must name.
#   python py_loads.py FIXTURES LIBDIR DELAYLIB
# LIBDIR holds fakelib.py, a stand-in for a library installed in
# site-packages, which makes the last load on the user's behalf. DELAYLIB
# (py_delay.c) calls a load after a delay.
import ctypes
import sys
import threading

fixtures, libdir, delaylib = sys.argv[1:4]
sys.path.insert(0, libdir)
import fakelib  # noqa: E402

# ctypes.CDLL releases the GIL around the call; ctypes.PyDLL keeps it.
released = ctypes.CDLL("libcuda.so.1")
held = ctypes.PyDLL("libcuda.so.1")
delay = ctypes.CDLL(delaylib)
image = open(fixtures + "/k75.ptx", "rb").read() + b"\0"


def check(what, r):
    print(f"{what}: {r}")
    if r != 0:
        sys.exit(3)


ctx = ctypes.c_void_p()


def setup():
    dev = ctypes.c_int()
    check("cuInit", released.cuInit(0))
    check("cuDeviceGet", released.cuDeviceGet(ctypes.byref(dev), 0))
    check("cuDevicePrimaryCtxRetain", released.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev))
    check("cuCtxSetCurrent", released.cuCtxSetCurrent(ctx))


def load_released():
    mod = ctypes.c_void_p()
    check("cdll", released.cuModuleLoadData(ctypes.byref(mod), image))  # load: cdll


def load_held():
    mod = ctypes.c_void_p()
    check("pydll", held.cuModuleLoadData(ctypes.byref(mod), image))  # load: pydll


def launch_first():
    mod, fn, buf = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint64()
    check("module", released.cuModuleLoadData(ctypes.byref(mod), image))
    check("function", released.cuModuleGetFunction(ctypes.byref(fn), mod, b"add_one"))
    check("alloc", released.cuMemAlloc_v2(ctypes.byref(buf), 1024))
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(buf), ctypes.c_void_p))
    grid = (1, 1, 1, 32, 1, 1, 0, None, params, None)
    check("launch", released.cuLaunchKernel(fn, *grid))  # launch: first


class Worker:
    def run(self):
        # The helper waits 200 ms with the GIL released before it loads, so
        # the main thread holds the GIL then: its frames must not show.
        mod = ctypes.c_void_p()
        released.cuCtxSetCurrent(ctx)
        load = released.cuModuleLoadData
        check("thread", delay.py_delay_load(load, ctypes.byref(mod), image, 200))  # load: thread


def spin(done):
    n = 0
    while not done.is_set():  # spin: main
        n += 1
    return n


def main():
    setup()
    load_released()  # caller: first
    load_released()  # caller: second
    load_released()  # caller: third
    load_held()
    done = threading.Event()
    def work():
        try:
            Worker().run()
        finally:
            done.set()

    t = threading.Thread(target=work)
    t.start()
    spin(done)
    t.join()
    fakelib.load(released, image)  # load: library
    launch_first()
    print("done")


main()
