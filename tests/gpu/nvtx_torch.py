"""PyTorch with NVTX ranges under the preload (tests/gpu/part_nvtx.sh): a
"warmup" range that starts CUDA, then "query1", whose first op loads a
PTX-only module for compute_75 through ctypes (the driver JIT-compiles it on
the GPU, inside the query) and then runs a matmul. Prints only values that do
not depend on timing, so stdout can be compared with and without the preload.

usage: nvtx_torch.py PTX_FILE"""
import ctypes
import sys

import torch

with torch.cuda.nvtx.range("warmup"):
    torch.manual_seed(0)
    a = torch.randn(256, 256, device="cuda")
    torch.cuda.synchronize()

with torch.cuda.nvtx.range("query1"):
    cu = ctypes.CDLL("libcuda.so.1")
    ctx = ctypes.c_void_p()
    cu.cuCtxGetCurrent(ctypes.byref(ctx))
    if not ctx.value:  # torch's primary context, current on this thread
        dev = ctypes.c_int()
        cu.cuDeviceGet(ctypes.byref(dev), torch.cuda.current_device())
        cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
        cu.cuCtxSetCurrent(ctx)
    mod = ctypes.c_void_p()
    with open(sys.argv[1], "rb") as f:
        ptx = f.read() + b"\0"
    r = cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(ptx))
    print("cuModuleLoadData", r)
    b = a @ a
    torch.cuda.synchronize()
    print("matmul", round(b.double().abs().sum().item(), 0))

with torch.cuda.nvtx.range("query1"):  # again: the report numbers it query1#2
    print("sum", round((a + 1).double().sum().item(), 0))
