# e2e.limits: a program with several threads makes its first driver call
# (the simulated driver, through ctypes); prints the size of its descriptor
# table (FDSize) before and after, the trace's descriptor, and the soft limit.
#   python py_fdtable.py LIBCUDA
import ctypes
import os
import resource
import sys
import threading


def fdsize():
    for line in open("/proc/self/status"):
        if line.startswith("FDSize:"):
            return int(line.split()[1])
    return -1


stop = threading.Event()
threads = [threading.Thread(target=stop.wait) for _ in range(4)]
for t in threads:
    t.start()
before = fdsize()
cu = ctypes.CDLL(sys.argv[1])
rc = cu.cuInit(0)
after = fdsize()
trace_fd = -1
for name in os.listdir("/proc/self/fd"):
    try:
        if os.readlink(f"/proc/self/fd/{name}").endswith(".jst"):
            trace_fd = int(name)
    except OSError:
        pass
stop.set()
for t in threads:
    t.join()
soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
print(f"cuInit {rc} fdsize {before} {after} trace_fd {trace_fd} soft {soft}")
