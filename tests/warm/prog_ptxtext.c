/*
 * A driver-API program that carries its kernel as a PTX string in its
 * read-only data and hands it to cuModuleLoadData itself (as NVIDIA's
 * matrixMulDynlinkJIT sample does): scan must see the PTX, and warm must make
 * this load a cache hit. Prints "ptxtext ok" and exits 0 on success.
 */
#include <cuda.h>
#include <stdio.h>

static const char ptx_text[] = "//\n"
                               "// PTX for jitstall's warm test, as nvcc -ptx writes it\n"
                               "//\n"
                               "\n"
                               ".version 8.0\n"
                               ".target sm_75\n"
                               ".address_size 64\n"
                               "\n"
                               "\t// .globl\twarm_text_kernel\n"
                               ".visible .entry warm_text_kernel(\n"
                               "\t.param .u64 warm_text_kernel_param_0\n"
                               ")\n"
                               "{\n"
                               "\tret;\n"
                               "}\n";

static int check(CUresult rc, const char *what)
{
    if (rc != CUDA_SUCCESS)
        fprintf(stderr, "prog_ptxtext: %s failed: %d\n", what, (int)rc);
    return rc != CUDA_SUCCESS;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUdeviceptr p = 0;
    void *args[] = {&p};
    if (check(cuInit(0), "cuInit") || check(cuDeviceGet(&dev, 0), "cuDeviceGet") ||
        check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
        check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") ||
        check(cuModuleLoadData(&mod, ptx_text), "cuModuleLoadData") ||
        check(cuModuleGetFunction(&fn, mod, "warm_text_kernel"), "cuModuleGetFunction") ||
        check(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel"))
        return 1;
    cuModuleUnload(mod);
    printf("ptxtext ok\n");
    return 0;
}
