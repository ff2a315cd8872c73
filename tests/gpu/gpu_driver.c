/*
 * Driver-API test program for tests/gpu/run.sh: loads one image file (PTX,
 * cubin or fatbin) with cuModuleLoadData, launches heavy_3 and prints a
 * checksum. Timings go to stderr so stdout can be compared with and without
 * the preload. Exit: 0 ok, 3 the load failed (error name on stdout).
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

static void *read_file(const char *path)
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

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        CUresult r_ = (x);                                                                         \
        if (r_ != CUDA_SUCCESS) {                                                                  \
            const char *n_ = "?";                                                                  \
            cuGetErrorName(r_, &n_);                                                               \
            printf("%s failed: %s\n", #x, n_);                                                     \
            return 3;                                                                              \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gpu_driver IMAGE\n");
        return 2;
    }
    void *image = read_file(argv[1]);
    if (!image) {
        perror(argv[1]);
        return 2;
    }
    double t0 = now_ms();
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    double t1 = now_ms();
    CHECK(cuModuleLoadData(&mod, image));
    double t2 = now_ms();
    CHECK(cuModuleGetFunction(&fn, mod, "heavy_3"));
    int n = 1024;
    CUdeviceptr d;
    CHECK(cuMemAlloc(&d, n * sizeof(float)));
    void *args[] = {&d, &n};
    CHECK(cuLaunchKernel(fn, n / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
    CHECK(cuCtxSynchronize());
    float host[1024];
    CHECK(cuMemcpyDtoH(host, d, sizeof host));
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += host[i];
    printf("heavy_3 checksum %.1f\n", sum);
    fprintf(stderr, "gpu_driver: init %.1f ms, load %.1f ms, total %.1f ms\n", t1 - t0, t2 - t1,
            now_ms() - t0);
    cuMemFree(d);
    return 0;
}
