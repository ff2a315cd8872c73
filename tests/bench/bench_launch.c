/*
 * The cost of jitstall's launch path after a function's first launch.
 * Loads a tiny PTX module through the driver found by dlopen("libcuda.so.1")
 * (the simulated one in tests), then launches the same function N times
 * through the route asked for, and prints ns per launch.
 *
 * Instruction counts are the stable figure (docs/PERFORMANCE.md: budget 40 added
 * instructions per launch). Measure the delta with callgrind, counting only
 * the launch loop (bench_loop), with and without the preload:
 *
 *   B=build; export LD_LIBRARY_PATH=$B/simdriver
 *   valgrind --tool=callgrind --toggle-collect=bench_loop --callgrind-out-file=/tmp/cg.plain \
 *       $B/tests/bench/bench_launch 100000 direct
 *   LD_PRELOAD=$B/libjitstall.so valgrind --tool=callgrind --toggle-collect=bench_loop \
 *       --callgrind-out-file=/tmp/cg.pre $B/tests/bench/bench_launch 100000 direct
 *   (Ir of each / 100000, difference = instructions jitstall adds per launch)
 *
 * Routes: direct (the exported symbol, as -lcuda programs call it), dlsym
 * (dlsym(handle, "cuLaunchKernel")), procaddr (cuGetProcAddress_v2).
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char ptx[] = ".version 7.0\n.target sm_75\n.address_size 64\n"
                          ".visible .entry bench_kernel()\n{\n\tret;\n}\n";

typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                              unsigned int, unsigned int, unsigned int, CUstream, void **, void **);

/* Kept out of line so callgrind can count exactly this loop. */
__attribute__((noinline)) CUresult bench_loop(launch_fn launch, CUfunction f, long n)
{
    CUresult bad = CUDA_SUCCESS;
    for (long i = 0; i < n; i++) {
        CUresult r = launch(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
        if (r != CUDA_SUCCESS)
            bad = r;
    }
    return bad;
}

static void *sym(void *h, const char *name)
{
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "bench_launch: %s not found\n", name);
        exit(2);
    }
    return p;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    const char *route = argc > 2 ? argv[2] : "direct";
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "bench_launch: cannot load libcuda.so.1: %s\n", dlerror());
        return 2;
    }
    CUresult (*init)(unsigned int) = sym(h, "cuInit");
    CUresult (*devget)(CUdevice *, int) = sym(h, "cuDeviceGet");
    CUresult (*retain)(CUcontext *, CUdevice) = sym(h, "cuDevicePrimaryCtxRetain");
    CUresult (*setcur)(CUcontext) = sym(h, "cuCtxSetCurrent");
    CUresult (*load)(CUmodule *, const void *) = sym(h, "cuModuleLoadData");
    CUresult (*getfn)(CUfunction *, CUmodule, const char *) = sym(h, "cuModuleGetFunction");
    launch_fn launch;
    if (strcmp(route, "dlsym") == 0) {
        launch = (launch_fn)sym(h, "cuLaunchKernel");
    } else if (strcmp(route, "procaddr") == 0) {
        CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
            sym(h, "cuGetProcAddress_v2");
        CUdriverProcAddressQueryResult st;
        void *p = NULL;
        if (gpa("cuLaunchKernel", &p, 12000, 0, &st) != CUDA_SUCCESS || !p) {
            fprintf(stderr, "bench_launch: cuGetProcAddress failed\n");
            return 2;
        }
        launch = (launch_fn)p;
    } else {
        launch = (launch_fn)sym(RTLD_DEFAULT, "cuLaunchKernel"); /* the preload's export first */
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    if (init(0) || devget(&dev, 0) || retain(&ctx, dev) || setcur(ctx) || load(&mod, ptx) ||
        getfn(&f, mod, "bench_kernel")) {
        fprintf(stderr, "bench_launch: driver setup failed\n");
        return 2;
    }
    bench_loop(launch, f, 1); /* the first launch: recorded by jitstall */
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    CUresult r = bench_loop(launch, f, n);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n;
    printf("bench_launch: route %s, %ld launches, %.1f ns per launch, result %d\n", route, n, ns,
           (int)r);
    return r == CUDA_SUCCESS ? 0 : 1;
}
