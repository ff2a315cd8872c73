/*
 * End-to-end program for the link flow, reached by dlsym like CuPy and hashcat:
 * cuLinkCreate, cuLinkAddData of PTX text, cuLinkComplete, then
 * cuModuleLoadData of the linked cubin.
 * Usage: prog_link FIXTURES_DIR EXIT_CODE PTX_FILE
 */
#include <dlfcn.h>

#include "e2e_common.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s FIXTURES_DIR EXIT_CODE PTX_FILE\n", argv[0]);
        return 2;
    }
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen libcuda.so.1 failed\n");
        return 92;
    }
    struct e2e_api a;
#define E2E_DLSYM(name) a.name = (__typeof__(a.name))dlsym(h, E2E_XSTR(name));
    E2E_FUNCS(E2E_DLSYM)
#undef E2E_DLSYM
    char *args[] = {argv[0], argv[1], argv[2], "link", argv[3], NULL};
    return e2e_run(&a, 5, args);
}
