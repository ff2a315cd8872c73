// libextra.so: x = x * k on the GPU. With KERNEL_PTX_ONLY=ON it ships only
// PTX for compute_75, so the driver JIT-compiles it on a newer GPU.
#include <cuda_runtime.h>

__global__ void scale_kernel(float *x, int n, float k)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= k;
}

extern "C" cudaError_t extra_scale(float *x, int n, float k)
{
    scale_kernel<<<(n + 255) / 256, 256>>>(x, n, k);
    return cudaGetLastError();
}
