/*
 * End-to-end program, route 2: dlopen("libcuda.so.1") and dlsym() of every
 * entry point by its exported name (what PyTorch, CuPy and hashcat do). The
 * steps are in e2e_common.h.
 */
#include <dlfcn.h>

#include "e2e_common.h"

int main(int argc, char **argv)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen libcuda.so.1 failed\n");
        return 92;
    }
    struct e2e_api a;
#define E2E_DLSYM(name) a.name = (__typeof__(a.name))dlsym(h, E2E_XSTR(name));
    E2E_FUNCS(E2E_DLSYM)
#undef E2E_DLSYM
    return e2e_run(&a, argc, argv);
}
