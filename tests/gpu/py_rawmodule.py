"""CuPy RawModule(path=...) of a PTX file, for tests/gpu/part_python.sh: the
driver's cuModuleLoad runs with the GIL released, and the report must name
this file and one of the lines marked "load:" below (CuPy may load at either) as its
call site."""
import sys

import cupy as cp


def load_kernels(path):
    mod = cp.RawModule(path=path)  # load: rawmodule
    return mod.get_function("add_one")  # load: rawmodule


def main():
    add_one = load_kernels(sys.argv[1])
    x = cp.zeros(256, dtype=cp.int32)
    add_one((1,), (256,), (x,))
    print("sum", int(x.sum()))


main()
