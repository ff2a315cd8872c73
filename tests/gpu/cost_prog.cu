/*
 * Cost of tracing on the real GPU (tests/gpu/part_cost.sh), built with SASS
 * for the GPU so that nothing is JIT-compiled:
 *   cost_prog start      : runtime init, one empty kernel, exit (warm start);
 *   cost_prog launch N   : N launches of an empty kernel after the first,
 *                          timed in-program; ns per launch on stderr.
 * stdout is the same with and without the preload.
 */
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void cost_empty()
{
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: cost_prog start | launch N\n");
        return 2;
    }
    cost_empty<<<1, 1>>>();
    if (cudaDeviceSynchronize() != cudaSuccess) {
        std::printf("first launch failed: %s\n", cudaGetErrorString(cudaGetLastError()));
        return 3;
    }
    if (std::strcmp(argv[1], "launch") == 0) {
        long n = argc > 2 ? std::atol(argv[2]) : 100000;
        auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < n; i++)
            cost_empty<<<1, 1>>>();
        auto t1 = std::chrono::steady_clock::now();
        cudaDeviceSynchronize();
        double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / (double)n;
        std::fprintf(stderr, "launch_ns %.1f\n", ns);
    }
    std::printf("ok\n");
    return 0;
}
