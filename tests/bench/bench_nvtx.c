/*
 * The cost of a recorded NVTX range: N push/pop pairs of nvtxRangePushA /
 * nvtxRangePop (nvtx3, header-only) after cuInit (through dlopen of
 * libcuda.so.1, the simulated one in tests) has opened the trace, printing
 * ns per pair. Without the preload NVTX has no tool and a pair costs a few ns.
 *
 *   B=build; export LD_LIBRARY_PATH=$B/simdriver
 *   $B/tests/bench/bench_nvtx 1000000
 *   LD_PRELOAD=$B/libjitstall.so JITSTALL_DIR=/tmp $B/tests/bench/bench_nvtx 1000000
 *
 * Instructions per pair (stable, unlike times): callgrind with
 * --toggle-collect=bench_loop, with and without the preload, Ir / N.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

__attribute__((noinline)) static void bench_loop(long n)
{
    for (long i = 0; i < n; i++) {
        nvtxRangePushA("step");
        nvtxRangePop();
    }
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    CUresult (*init)(unsigned) = cuda ? (CUresult(*)(unsigned))dlsym(cuda, "cuInit") : NULL;
    if (!init || init(0) != CUDA_SUCCESS) {
        fprintf(stderr, "bench_nvtx: no libcuda.so.1 (set LD_LIBRARY_PATH to the simulated one)\n");
        return 1;
    }
    bench_loop(1000); /* NVTX's own start-up, and warm caches */
    double t0 = now_ns();
    bench_loop(n);
    double t1 = now_ns();
    printf("%ld push/pop pairs: %.1f ns per pair\n", n, (t1 - t0) / (double)n);
    return 0;
}
