"""CuPy under the preload (tests/gpu/run.sh): a RawKernel compiled by NVRTC
and loaded with cuModuleLoadData, plus a built-in reduction."""
import cupy as cp

src = r'''
extern "C" __global__ void saxpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
'''
k = cp.RawKernel(src, "saxpy")
n = 1 << 16
x = cp.arange(n, dtype=cp.float32)
y = cp.ones(n, dtype=cp.float32)
k(((n + 255) // 256,), (256,), (cp.float32(2.0), x, y, cp.int32(n)))
print("saxpy-sum", float(y.sum()))
print("norm", round(float(cp.linalg.norm(x)), 1))
