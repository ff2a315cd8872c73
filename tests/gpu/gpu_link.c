/*
 * cuLink test program for tests/gpu/part_inflight.sh: reads a PTX file,
 * JIT-links it with cuLinkCreate / cuLinkAddData / cuLinkComplete (as
 * NVIDIA's ptxjit sample and hashcat do), loads the linked cubin with
 * cuModuleLoadData, launches heavy_3 and prints a checksum. Timings go to
 * stderr so stdout can be compared with and without the preload.
 * Exit: 0 ok, 2 usage or unreadable file, 3 a driver call failed.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The whole file, NUL-terminated (PTX text is given with its terminator). */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? calloc(1, (size_t)n + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = buf ? (size_t)n + 1 : 0;
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
        fprintf(stderr, "usage: gpu_link PTX_FILE\n");
        return 2;
    }
    size_t len = 0;
    char *ptx = read_file(argv[1], &len);
    if (!ptx) {
        perror(argv[1]);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUlinkState link;
    CUmodule mod;
    CUfunction fn;
    void *cubin = NULL;
    size_t cubin_size = 0;
    CHECK(cuInit(0));
    CHECK(cuDeviceGet(&dev, 0));
    CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK(cuCtxSetCurrent(ctx));
    double t0 = now_ms();
    CHECK(cuLinkCreate(0, NULL, NULL, &link));
    CHECK(cuLinkAddData(link, CU_JIT_INPUT_PTX, ptx, len, "heavy.ptx", 0, NULL, NULL));
    double t1 = now_ms();
    CHECK(cuLinkComplete(link, &cubin, &cubin_size));
    CHECK(cuModuleLoadData(&mod, cubin));
    CHECK(cuLinkDestroy(link));
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
    printf("heavy_3 checksum %.1f (linked)\n", sum);
    fprintf(stderr, "gpu_link: add %.1f ms, complete and load %.1f ms\n", t1 - t0, t2 - t1);
    cuMemFree(d);
    free(ptx);
    return 0;
}
