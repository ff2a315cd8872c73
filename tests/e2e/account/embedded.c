/*
 * An image held in this object's own read-only data, loaded with
 * cuModuleLoadData: the preload then names this object as the image's
 * source. Built into prog_ptxdata (PTX text in a program's data, as NVIDIA's
 * matrixMulDynlinkJIT sample carries it) and into libacct_ptxonly.so (a
 * PTX-only fatbin in a shared library, copied under a fake site-packages tree
 * by test_account_e2e.sh). ACCT_IMAGE is the file to embed.
 */
#include <cuda.h>
#include "embedded.h"

#define ACCT_STR2(x) #x
#define ACCT_STR(x) ACCT_STR2(x)

/* The bytes of ACCT_IMAGE, then a NUL so that PTX text is a C string. */
__asm__(".section .rodata\n"
        ".balign 16\n"
        "acct_image:\n"
        ".incbin \"" ACCT_STR(ACCT_IMAGE) "\"\n"
                                          ".byte 0\n"
                                          ".previous\n");
extern const char acct_image[];

int acct_load_embedded(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return -1;
    CUresult r = cuModuleLoadData(&mod, acct_image);
    if (r == CUDA_SUCCESS)
        cuModuleUnload(mod);
    return (int)r;
}
