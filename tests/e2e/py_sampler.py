# e2e.sampler: Python programs that the frame sampler must leave alone. Each
# mode prints what it saw; the traced run must print the same as the plain one.
#   python py_sampler.py MODE ARGS...
#   lowest SECONDS         open() keeps returning the lowest free descriptor
#   dup2 SECONDS DATA      close(3); dup2(data, 3); write(3): no error, and
#                          DATA holds exactly what was written
#   limit SECONDS          at the descriptor limit: closing two and opening
#                          two never gets EMFILE
#   takeover DATA          the program puts its own file on the number of
#                          every descriptor it did not open, then writes it
#   nocuda CC              runs `CC --version` and forks; no driver call
#   work CUBIN             a load, 300 ms of Python, a launch (no thread)
#   forked CUBIN           loads, forks; the child loads from in_child()
#   threads CUBIN CC MS    8 short-lived threads call cuInit, then the main
#                          thread loads, works MS ms in Python, runs the
#                          compiler CC and launches
# The driver is the simulated one (libcuda.so.1 on LD_LIBRARY_PATH).
import ctypes
import errno
import os
import resource
import subprocess
import sys
import threading
import time

cuda = None


def driver():
    global cuda
    if cuda is None:
        cuda = ctypes.CDLL("libcuda.so.1")
    return cuda


def setup():
    """cuInit, a context, and a first load from this (Python) thread, so that
    the sampler samples it from now on."""
    cu = driver()
    ctx, dev, mod = ctypes.c_void_p(), ctypes.c_int(), ctypes.c_void_p()
    assert cu.cuInit(0) == 0
    assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
    assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
    assert cu.cuCtxSetCurrent(ctx) == 0
    return cu


def load(cubin):
    cu, mod = driver(), ctypes.c_void_p()
    assert cu.cuModuleLoad(ctypes.byref(mod), cubin.encode()) == 0
    return mod


def launch(mod):
    cu, fn, buf = driver(), ctypes.c_void_p(), ctypes.c_uint64()
    assert cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"add_one") == 0
    assert cu.cuMemAlloc_v2(ctypes.byref(buf), 1024) == 0
    params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.byref(buf), ctypes.c_void_p))
    assert cu.cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, None, params, None) == 0


def spin(ms):
    """Pure Python work for about ms milliseconds."""
    end, n = time.monotonic() + ms / 1000, 0
    while time.monotonic() < end:
        n += sum(i * i for i in range(200))
    return n


def lowest(seconds):
    setup()
    want = os.open("/dev/null", os.O_RDONLY)
    os.close(want)
    others, n, end = 0, 0, time.monotonic() + seconds
    while time.monotonic() < end:
        fd = os.open("/dev/null", os.O_RDONLY)
        others += fd != want
        os.close(fd)
        n += 1
    print(f"lowest: {others} other descriptors in {'many' if n > 1000 else n} opens")


def dup2(seconds, path):
    setup()
    data = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    if data < 10:  # out of the way of 3
        data, old = os.dup2(data, 10), data
        os.close(old)
    os.dup2(data, 3)
    chunk = b"0123456789abcdef" * 4
    errs, wrote, end = {}, 0, time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            os.close(3)
        except OSError as e:
            errs[errno.errorcode[e.errno]] = errs.get(errno.errorcode[e.errno], 0) + 1
        try:
            os.dup2(data, 3)
            wrote += os.write(3, chunk)
        except OSError as e:
            errs[errno.errorcode[e.errno]] = errs.get(errno.errorcode[e.errno], 0) + 1
    os.close(data)
    with open(path, "rb") as f:
        got = f.read()
    ok = got == chunk * (len(got) // len(chunk)) and len(got) == wrote
    print(f"dup2: errors {sorted(errs.items())}, data {'intact' if ok else 'DAMAGED'}")


def limit(seconds):
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    setup()
    held = []

    def fill():
        while True:
            try:
                held.append(os.open("/dev/null", os.O_RDONLY))
            except OSError as e:
                assert e.errno == errno.EMFILE
                return

    fill()
    emfile, end = 0, time.monotonic() + seconds
    while time.monotonic() < end:
        os.close(held.pop())
        os.close(held.pop())
        sum(i * i for i in range(100))  # a moment with two numbers free
        for _ in range(2):
            try:
                held.append(os.open("/dev/null", os.O_RDONLY))
            except OSError as e:
                assert e.errno == errno.EMFILE
                emfile += 1
        fill()  # at the limit again, whatever happened
    print(f"limit: {emfile} EMFILE")


def takeover(path, cubin):
    setup()
    mod = load(cubin)
    mine = {0, 1, 2}
    data = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    mine.add(data)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in mine:
            try:
                os.dup2(data, fd)
            except OSError:
                pass
    os.write(data, b"mine\n")
    spin(300)  # sampled, or not, with the program's file where the reader's was
    launch(mod)
    load(cubin)
    with open(path, "rb") as f:
        print(f"takeover: data {f.read()!r}")


def nocuda(cc):
    out = subprocess.run([cc, "--version"], capture_output=True)
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    _, st = os.waitpid(pid, 0)
    print(f"nocuda: cc {out.returncode}, child {os.waitstatus_to_exitcode(st)}, "
          f"threads {len(os.listdir('/proc/self/task'))}")


def work(cubin):
    setup()
    mod = load(cubin)
    spin(300)
    launch(mod)
    print("work: done")


def work_threaded(cubin):
    # A thread of the program's own, alive through the work: the process has
    # shown that it may create threads.
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    work(cubin)
    stop.set()
    t.join()


def in_child(cubin):
    launch(load(cubin))


def forked(cubin):
    setup()
    load(cubin)
    pid = os.fork()
    if pid == 0:
        in_child(cubin)
        os._exit(0)
    _, st = os.waitpid(pid, 0)
    print(f"forked: child {os.waitstatus_to_exitcode(st)}")


def threads(cubin, cc, ms):
    def init():
        assert driver().cuInit(0) == 0

    for _ in range(8):
        t = threading.Thread(target=init)
        t.start()
        t.join()
    time.sleep(0.2)  # the threads' ends run after join returns
    setup()
    mod = load(cubin)
    spin(ms)
    subprocess.run([cc, "-o", os.devnull], check=True)
    launch(mod)
    print("threads: done")


mode = sys.argv[1]
args = sys.argv[2:]
if mode == "lowest":
    lowest(float(args[0]))
elif mode == "dup2":
    dup2(float(args[0]), args[1])
elif mode == "limit":
    limit(float(args[0]))
elif mode == "takeover":
    takeover(args[0], args[1])
elif mode == "nocuda":
    nocuda(args[0])
elif mode == "work":
    work(args[0])
elif mode == "work_threaded":
    work_threaded(args[0])
elif mode == "forked":
    forked(args[0])
elif mode == "threads":
    threads(args[0], args[1], float(args[2]))
else:
    sys.exit(f"unknown mode {mode}")
