/*
 * A "database" that answers its first query slowly: its kernels ship as PTX
 * only (kernels.ptx), so the driver JIT-compiles them inside cuModuleLoadData.
 * Run it under `jitstall run` to see where the time goes.
 *
 * build: cc query.c -o query -I/usr/local/cuda/include -lcuda
 * run:   ./query [kernels.ptx]
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *read_ptx(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = calloc(1, (size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

static int fail(const char *what, CUresult r)
{
    const char *name = "?";
    cuGetErrorName(r, &name);
    fprintf(stderr, "query: %s failed: %s\n", what, name);
    return 1;
}

/* Loads the query engine's kernels: this is where the first query stalls. */
static CUresult load_engine(CUmodule *mod, const char *ptx)
{
    return cuModuleLoadData(mod, ptx);
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "kernels.ptx";
    char *ptx = read_ptx(path);
    if (!ptx) {
        perror(path);
        return 1;
    }
    CUresult r;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction scan;
    CUdeviceptr buf;
    int n = 4096;
    if ((r = cuInit(0)) || (r = cuDeviceGet(&dev, 0)) || (r = cuDevicePrimaryCtxRetain(&ctx, dev)) ||
        (r = cuCtxSetCurrent(ctx)))
        return fail("driver init", r);
    if ((r = cuMemAlloc(&buf, n * sizeof(float))))
        return fail("cuMemAlloc", r);
    for (int q = 1; q <= 3; q++) {
        double t0 = now_ms();
        if (q == 1 && (r = load_engine(&mod, ptx)))
            return fail("cuModuleLoadData", r);
        if ((r = cuModuleGetFunction(&scan, mod, "scan_rows")))
            return fail("cuModuleGetFunction", r);
        void *args[] = {&buf, &n};
        if ((r = cuLaunchKernel(scan, n / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL)) ||
            (r = cuCtxSynchronize()))
            return fail("query", r);
        printf("query %d: done\n", q);
        fprintf(stderr, "query %d took %.1f ms\n", q, now_ms() - t0);
    }
    cuMemFree(buf);
    free(ptx);
    return 0;
}
