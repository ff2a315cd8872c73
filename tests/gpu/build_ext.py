# One CUDA op built on first use with torch.utils.cpp_extension.load_inline
# (ninja runs nvcc, cicc, ptxas and g++), then its first call; prints the
# program's own time around the build and the first call, in ms:
#   first_call_ms <N>
# Used by tests/gpu/part_build.sh with TORCH_EXTENSIONS_DIR set.
import time

import torch
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
__global__ void add_one_k(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
void add_one(torch::Tensor x) {
    int n = x.numel();
    add_one_k<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), n);
}
"""
cpp_src = "void add_one(torch::Tensor x);"
x = torch.zeros(1024, device="cuda")
torch.cuda.synchronize()
t0 = time.perf_counter()
mod = load_inline("jst_add_one", cpp_sources=cpp_src, cuda_sources=cuda_src,
                  functions=["add_one"], verbose=False)
mod.add_one(x)
torch.cuda.synchronize()
print(f"first_call_ms {1000 * (time.perf_counter() - t0):.1f}")
assert float(x[0]) == 1.0
