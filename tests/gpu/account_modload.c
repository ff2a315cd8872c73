/*
 * GPU test program of tests/gpu/part_account.sh (where the PTX came from): loads one
 * file with cuModuleLoad (a .ptx file, or the fatbin the report's fix makes
 * from it) and prints the result. Exit 0 ok, 3 the load failed.
 * Usage: account_modload FILE
 */
#include <cuda.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    if (argc != 2) {
        fprintf(stderr, "usage: account_modload FILE\n");
        return 2;
    }
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return 2;
    CUresult r = cuModuleLoad(&mod, argv[1]);
    printf("cuModuleLoad: %d\n", (int)r);
    if (r != CUDA_SUCCESS)
        return 3;
    cuModuleUnload(mod);
    return 0;
}
