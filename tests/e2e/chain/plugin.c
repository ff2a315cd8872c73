/*
 * libchainplugin.so: a library the plugin program dlopens, whose function
 * makes the driver call, so that the stack has a frame in an object that
 * appeared after the initial module map (JST_MOD_DLOPEN).
 */
#include <cuda.h>
#include <stdio.h>

int plugin_open_shard(const char *image)
{
    CUmodule mod;
    CUresult r = cuModuleLoadData(&mod, image); /* chain-call */
    printf("plugin cuModuleLoadData: %d\n", (int)r);
    if (r != CUDA_SUCCESS)
        return 1;
    cuModuleUnload(mod);
    return 0;
}
