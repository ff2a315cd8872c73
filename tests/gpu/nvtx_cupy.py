"""CuPy with cupyx.profiler.time_range under the preload (tests/gpu/part_nvtx.sh):
a RawKernel compiled by NVRTC inside the range "cupy_query". Prints only values
that do not depend on timing."""
import cupy as cp
from cupyx.profiler import time_range

src = r'''
extern "C" __global__ void twice(float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * y[i];
}
'''
with time_range("cupy_query"):
    k = cp.RawKernel(src, "twice")
    n = 1 << 12
    y = cp.ones(n, dtype=cp.float32)
    k(((n + 255) // 256,), (256,), (y, cp.int32(n)))
    print("twice-sum", float(y.sum()))
