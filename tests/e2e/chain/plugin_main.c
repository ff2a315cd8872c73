/*
 * The plugin program of the chain test: dlopens PLUGIN (a bare name, found
 * along this program's RUNPATH, as libraries find their neighbours), calls its
 * plugin_open_shard on a PTX-only image, dlcloses it and loads the image once
 * more itself; then checks that a failing dlopen still leaves the loader's
 * message for dlerror(). Usage: chain_plugin PTX_FILE PLUGIN.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: chain_plugin PTX_FILE PLUGIN_SO\n");
        return 2;
    }
    char *image = chain_read_file(argv[1]);
    if (!image || chain_driver_setup() != 0) {
        fprintf(stderr, "chain_plugin: no image or no device\n");
        return 1;
    }
    void *h = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "chain_plugin: %s\n", dlerror());
        return 1;
    }
    int (*open_shard_fn)(const char *) = (int (*)(const char *))dlsym(h, "plugin_open_shard");
    int rc = open_shard_fn ? open_shard_fn(image) : 1; /* chain-call */
    printf("dlclose: %d\n", dlclose(h));
    CUmodule mod;
    CUresult r = cuModuleLoadData(&mod, image); /* after-dlclose */
    printf("cuModuleLoadData after dlclose: %d\n", (int)r);
    if (r == CUDA_SUCCESS)
        cuModuleUnload(mod);
    free(image);

    void *none = dlopen("/nonexistent/libjst-none.so", RTLD_NOW);
    const char *msg = dlerror();
    printf("failing dlopen: %s, dlerror %s\n", none ? "handle" : "NULL",
           msg && strstr(msg, "libjst-none.so") ? "names the file" : "LOST");
    printf("dlerror again: %s\n", dlerror() ? "set" : "NULL");
    return rc;
}
