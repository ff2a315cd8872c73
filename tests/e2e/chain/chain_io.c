/*
 * Plumbing shared by the chain programs: reading the PTX file and making a
 * context current. Not part of the call chain under test.
 */
#include <stdio.h>
#include <stdlib.h>

#include "chain.h"

char *chain_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    char chunk[4096];
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (len + n + 1 > cap) {
            cap = (len + n + 1) * 2;
            char *nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb;
        }
        for (size_t i = 0; i < n; i++)
            buf[len + i] = chunk[i];
        len += n;
    }
    fclose(f);
    if (buf)
        buf[len] = '\0';
    return buf;
}

int chain_driver_setup(void)
{
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return 1;
    return 0;
}
