/*
 * End-to-end program for the versioned variants of cuCtxCreate, whose
 * signatures all differ: v4 by its linked symbol, v2/v3/v4 by dlsym, and the
 * variants cuGetProcAddress returns for CUDA 3.2, 11.4 and 12.5. Each context
 * is made on device 1 (the sim runs with two devices), and the program prints
 * the device the new current context belongs to, so a wrapper that passed an
 * argument in the wrong place shows up in the output.
 * Usage: prog_ctx_versions EXIT_CODE
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef CUresult (*ctx_v2_fn)(CUcontext *, unsigned int, CUdevice);
typedef CUresult (*ctx_v3_fn)(CUcontext *, CUexecAffinityParam *, int, unsigned int, CUdevice);
typedef CUresult (*ctx_v4_fn)(CUcontext *, CUctxCreateParams *, unsigned int, CUdevice);

static void report(const char *what, CUresult r, CUcontext made)
{
    const char *name = NULL;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS)
        name = "?";
    CUcontext cur = NULL;
    CUdevice dev = -1;
    cuCtxGetCurrent(&cur);
    if (r == CUDA_SUCCESS)
        cuCtxGetDevice(&dev);
    printf("%s: %s, current %s, device %d\n", what, name,
           r == CUDA_SUCCESS && made && cur == made ? "new" : "-",
           r == CUDA_SUCCESS ? (int)dev : -1);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s EXIT_CODE\n", argv[0]);
        return 2;
    }
    const CUdevice dev = 1;
    CUcontext c = NULL;
    report("cuInit", cuInit(0), NULL);

    CUresult r = cuCtxCreate(&c, NULL, 0, dev); /* cuda.h maps it to cuCtxCreate_v4 */
    report("direct cuCtxCreate_v4", r, c);

    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    ctx_v2_fn d2 = (ctx_v2_fn)dlsym(h, "cuCtxCreate_v2");
    ctx_v3_fn d3 = (ctx_v3_fn)dlsym(h, "cuCtxCreate_v3");
    ctx_v4_fn d4 = (ctx_v4_fn)dlsym(h, "cuCtxCreate_v4");
    if (!d2 || !d3 || !d4) {
        printf("dlsym of a cuCtxCreate variant failed\n");
        return 95;
    }
    r = d2(&c, 0, dev);
    report("dlsym cuCtxCreate_v2", r, c);
    r = d3(&c, NULL, 0, 0, dev);
    report("dlsym cuCtxCreate_v3", r, c);
    r = d4(&c, NULL, 0, dev);
    report("dlsym cuCtxCreate_v4", r, c);

    __typeof__(&cuGetProcAddress) gpa =
        (__typeof__(&cuGetProcAddress))dlsym(h, "cuGetProcAddress_v2");
    if (!gpa) {
        printf("dlsym cuGetProcAddress_v2 failed\n");
        return 93;
    }
    void *p2 = NULL, *p3 = NULL, *p4 = NULL;
    CUdriverProcAddressQueryResult st;
    gpa("cuCtxCreate", &p2, 3020, CU_GET_PROC_ADDRESS_DEFAULT, &st);
    gpa("cuCtxCreate", &p3, 11040, CU_GET_PROC_ADDRESS_DEFAULT, &st);
    gpa("cuCtxCreate", &p4, 12050, CU_GET_PROC_ADDRESS_DEFAULT, &st);
    if (!p2 || !p3 || !p4) {
        printf("cuGetProcAddress of a cuCtxCreate version failed\n");
        return 94;
    }
    r = ((ctx_v2_fn)p2)(&c, 0, dev);
    report("procaddr cuCtxCreate@3020", r, c);
    r = ((ctx_v3_fn)p3)(&c, NULL, 0, 0, dev);
    report("procaddr cuCtxCreate@11040", r, c);
    r = ((ctx_v4_fn)p4)(&c, NULL, 0, dev);
    report("procaddr cuCtxCreate@12050", r, c);
    return atoi(argv[1]);
}
