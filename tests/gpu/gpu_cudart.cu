/*
 * CUDA runtime test program for tests/gpu/run.sh, shaped like a database
 * answering queries: each "query" launches heavy kernels. Built PTX-only it
 * JITs inside the first query's launch (LAZY) or at init (EAGER). Results
 * go to stdout, timings to stderr.
 */
#include <chrono>
#include <cstdio>
#include "heavy.cuh"

HEAVY_KERNEL(0)
HEAVY_KERNEL(1)
HEAVY_KERNEL(2)
HEAVY_KERNEL(3)
HEAVY_KERNEL(4)
HEAVY_KERNEL(5)
HEAVY_KERNEL(6)
HEAVY_KERNEL(7)
#ifdef HEAVY_MANY
/* The "big" build: 32 kernels, so that the JIT dwarfs driver init the way a
 * real library's does (on an H200, 32 heavy kernels took 10-11 s). */
HEAVY_KERNEL(8) HEAVY_KERNEL(9) HEAVY_KERNEL(10) HEAVY_KERNEL(11) HEAVY_KERNEL(12)
HEAVY_KERNEL(13) HEAVY_KERNEL(14) HEAVY_KERNEL(15) HEAVY_KERNEL(16) HEAVY_KERNEL(17)
HEAVY_KERNEL(18) HEAVY_KERNEL(19) HEAVY_KERNEL(20) HEAVY_KERNEL(21) HEAVY_KERNEL(22)
HEAVY_KERNEL(23) HEAVY_KERNEL(24) HEAVY_KERNEL(25) HEAVY_KERNEL(26) HEAVY_KERNEL(27)
HEAVY_KERNEL(28) HEAVY_KERNEL(29) HEAVY_KERNEL(30) HEAVY_KERNEL(31)
#endif

static float *dev_out;
static const int N = 1024;

__attribute__((noinline)) static double run_query(int q)
{
    heavy_0<<<N / 256, 256>>>(dev_out, N);
    heavy_1<<<N / 256, 256>>>(dev_out, N);
    heavy_5<<<N / 256, 256>>>(dev_out, N);
    static float host[N];
    if (cudaMemcpy(host, dev_out, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) {
        std::printf("query %d: %s\n", q, cudaGetErrorString(cudaGetLastError()));
        return -1;
    }
    double sum = 0;
    for (int i = 0; i < N; i++)
        sum += host[i];
    return sum;
}

int main()
{
    auto t0 = std::chrono::steady_clock::now();
    if (cudaMalloc(&dev_out, N * sizeof(float)) != cudaSuccess) {
        std::printf("cudaMalloc: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 3;
    }
    for (int q = 1; q <= 3; q++) {
        auto a = std::chrono::steady_clock::now();
        double r = run_query(q);
        auto b = std::chrono::steady_clock::now();
        if (r < 0)
            return 3;
        std::printf("query %d checksum %.1f\n", q, r);
        std::fprintf(stderr, "gpu_cudart: query %d took %.1f ms\n", q,
                     std::chrono::duration<double, std::milli>(b - a).count());
    }
    std::fprintf(stderr, "gpu_cudart: total %.1f ms\n",
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                     .count());
    return 0;
}
