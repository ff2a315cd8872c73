/*
 * Loads a shared library by path with dlopen and calls its
 * acct_load_embedded (embedded.c): a library the user did not build, found
 * wherever the test copied it. Prints the load's result.
 * Usage: prog_dlload LIBRARY
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: prog_dlload LIBRARY\n");
        return 2;
    }
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "prog_dlload: %s\n", dlerror());
        return 2;
    }
    int (*load)(void) = (int (*)(void))dlsym(h, "acct_load_embedded");
    int r = load ? load() : -2;
    printf("cuModuleLoadData: %d\n", r);
    return r == 0 ? 0 : 1;
}
