/*
 * Compiles with NVVM the way Numba does: dlopen of libnvvm by its full path
 * (RTLD_LOCAL), dlsym of nvvmCompileProgram, a call with -arch=compute_90,
 * then a load and first launch on the simulated driver.
 *   prog_nvvm LIBNVVM_PATH FIXTURES_DIR
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*nvvm_compile_fn)(void *, int, const char **);

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    nvvm_compile_fn f = h ? (nvvm_compile_fn)dlsym(h, "nvvmCompileProgram") : NULL;
    if (!f) {
        printf("no nvvmCompileProgram: %s\n", dlerror());
        return 3;
    }
    const char *opts[] = {"-arch=compute_90", "-opt=3"};
    printf("cuInit: %d\n", (int)cuInit(0));
    printf("nvvmCompileProgram: %d\n", f((void *)0x1234, 2, opts));
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    cuDeviceGet(&dev, 0);
    cuDevicePrimaryCtxRetain(&ctx, dev);
    cuCtxSetCurrent(ctx);
    char path[4096];
    snprintf(path, sizeof path, "%s/sm90.cubin", argv[2]);
    printf("load: %d\n", (int)cuModuleLoad(&mod, path));
    printf("function: %d\n", (int)cuModuleGetFunction(&fn, mod, "add_one"));
    CUdeviceptr buf;
    cuMemAlloc(&buf, 1024);
    void *params[] = {&buf};
    printf("launch: %d\n", (int)cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    return 0;
}
