/*
 * Kernels with enough code that the driver's PTX JIT takes a measurable time
 * (about a second per module on an H200), shared by the GPU test programs.
 * Each kernel writes a checksum of its index so programs can check results.
 */
#ifndef JST_GPU_HEAVY_CUH
#define JST_GPU_HEAVY_CUH

#ifndef HEAVY_UNROLL
#define HEAVY_UNROLL 256
#endif

template <int K>
__device__ __forceinline__ float heavy_step(float x, float y)
{
#pragma unroll
    for (int i = 0; i < HEAVY_UNROLL; i++) {
        x = __sinf(x * (1.0001f + K * 1e-4f) + y) * 0.5f + __cosf(y + i * 1e-3f);
        y = fmaf(y, 0.999f, x * (0.25f + K * 1e-5f));
    }
    return x + y;
}

#define HEAVY_KERNEL(K)                                                                           \
    extern "C" __global__ void heavy_##K(float *out, int n)                                      \
    {                                                                                             \
        int t = blockIdx.x * blockDim.x + threadIdx.x;                                            \
        if (t < n)                                                                                \
            out[t] = heavy_step<K>((float)t, (float)K);                                           \
    }

#endif
