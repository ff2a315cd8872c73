/*
 * Benchmark: what the preload adds to each cuGetProcAddress call, the route
 * by which cudart resolves every driver function at start (hundreds of
 * names, most of them not hooked). Resolves a list of driver names ROUNDS
 * times through the cuGetProcAddress_v2 that dlsym hands out (the preload's
 * wrapper when preloaded) and prints the time per call. Run it with and
 * without LD_PRELOAD=libjitstall.so; the difference is jitstall's share.
 * Works on the simulated driver (names it lacks fail, and cost nothing) and
 * on a real one.
 *
 * usage: bench_procaddr [ROUNDS]        Exit: 0, or 1 if the driver is missing.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t,
                           CUdriverProcAddressQueryResult *);

/* A sample of what cudart asks for: hooked and not hooked alike. */
static const char *const names[] = {
    "cuInit",
    "cuDriverGetVersion",
    "cuDeviceGet",
    "cuDeviceGetCount",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuDeviceTotalMem",
    "cuDevicePrimaryCtxRetain",
    "cuDevicePrimaryCtxRelease",
    "cuCtxGetCurrent",
    "cuCtxSetCurrent",
    "cuCtxCreate",
    "cuCtxSynchronize",
    "cuMemAlloc",
    "cuMemFree",
    "cuMemcpyHtoD",
    "cuMemcpyDtoH",
    "cuStreamCreate",
    "cuStreamSynchronize",
    "cuEventCreate",
    "cuEventRecord",
    "cuModuleLoadData",
    "cuModuleLoadDataEx",
    "cuModuleGetFunction",
    "cuModuleUnload",
    "cuLibraryLoadData",
    "cuLibraryGetKernel",
    "cuKernelGetFunction",
    "cuLaunchKernel",
    "cuLaunchKernelEx",
    "cuLinkCreate",
    "cuLinkAddData",
    "cuLinkComplete",
    "cuFuncGetAttribute",
    "cuGetErrorString",
    "cuGetErrorName",
    "cuPointerGetAttribute",
    "cuMemGetInfo",
};
#define NNAMES (sizeof names / sizeof names[0])

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    gpa_fn gpa = h ? (gpa_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
    if (!gpa) {
        fprintf(stderr, "bench_procaddr: no libcuda.so.1 with cuGetProcAddress_v2\n");
        return 1;
    }
    void *fn;
    CUdriverProcAddressQueryResult st;
    long found = 0;
    for (size_t i = 0; i < NNAMES; i++)
        found += gpa(names[i], &fn, 12000, 0, &st) == CUDA_SUCCESS;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long r = 0; r < rounds; r++)
        for (size_t i = 0; i < NNAMES; i++)
            gpa(names[i], &fn, 12000, 0, &st);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns =
        ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (rounds * (double)NNAMES);
    printf("cuGetProcAddress_v2: %.1f ns per call (%zu names, %ld resolved, %ld rounds)\n", ns,
           NNAMES, found, rounds);
    return 0;
}
