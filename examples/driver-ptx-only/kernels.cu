/* The kernels of the driver-API example. Shipped as PTX only (kernels.ptx,
 * made by `nvcc -arch=compute_75 -ptx kernels.cu`), so every GPU newer than
 * sm_75 has to JIT-compile them when the module is loaded. */
#define STEPS 160

__device__ float mix(float x, float y)
{
#pragma unroll
    for (int i = 0; i < STEPS; i++) {
        x = __sinf(x * 1.0001f + y) * 0.5f + __cosf(y + i * 1e-3f);
        y = fmaf(y, 0.999f, x * 0.25f);
    }
    return x + y;
}

extern "C" __global__ void scan_rows(float *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n)
        out[t] = mix((float)t, 1.0f);
}

extern "C" __global__ void hash_join(float *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n)
        out[t] = mix(out[t], 2.0f);
}

namespace db {
template <typename T> __global__ void aggregate(T *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n)
        out[t] = (T)mix((float)out[t], 3.0f);
}
template __global__ void aggregate<float>(float *, int);
} // namespace db
