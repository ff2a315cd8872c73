/*
 * GPU test program of tests/gpu/part_account.sh (where the PTX came from): compiles a
 * kernel with NVRTC for compute_90 PTX (as hashcat does), loads the PTX with
 * cuModuleLoadData, so the driver JIT-compiles it, launches it once and
 * prints a checksum. Exit 0 ok, 1 an NVRTC or CUDA error.
 */
#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

static const char src[] = "extern \"C\" __global__ void twice(int *p)\n"
                          "{ p[threadIdx.x] = 2 * (int)threadIdx.x + 1; }\n";

int main(void)
{
    nvrtcProgram prog;
    const char *opts[] = {"--gpu-architecture=compute_90"};
    size_t n = 0;
    if (nvrtcCreateProgram(&prog, src, "twice.cu", 0, NULL, NULL) != NVRTC_SUCCESS ||
        nvrtcCompileProgram(prog, 1, opts) != NVRTC_SUCCESS ||
        nvrtcGetPTXSize(prog, &n) != NVRTC_SUCCESS)
        return 1;
    char *ptx = malloc(n);
    if (!ptx || nvrtcGetPTX(prog, ptx) != NVRTC_SUCCESS)
        return 1;
    nvrtcDestroyProgram(&prog);
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUdeviceptr d;
    int h[64];
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
        cuModuleLoadData(&mod, ptx) != CUDA_SUCCESS ||
        cuModuleGetFunction(&f, mod, "twice") != CUDA_SUCCESS ||
        cuMemAlloc(&d, sizeof h) != CUDA_SUCCESS)
        return 1;
    void *args[] = {&d};
    if (cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS ||
        cuMemcpyDtoH(h, d, sizeof h) != CUDA_SUCCESS)
        return 1;
    long sum = 0;
    for (int i = 0; i < 64; i++)
        sum += h[i];
    printf("checksum %ld\n", sum);
    free(ptx);
    return 0;
}
