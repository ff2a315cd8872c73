/*
 * Innermost frame of the chain program: the driver call that JITs.
 */
#include <stdio.h>

#include "chain.h"

int open_shard(const char *image)
{
    CUmodule mod;
    CUresult r = cuModuleLoadData(&mod, image); /* chain-call */
    printf("cuModuleLoadData: %d\n", (int)r);
    if (r != CUDA_SUCCESS)
        return 1;
    cuModuleUnload(mod);
    return 0;
}
