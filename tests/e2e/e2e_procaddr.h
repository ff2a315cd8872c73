/*
 * The cudart route to the driver, shared by prog_procaddr.c and
 * prog_cudart_like.c: dlopen("libcuda.so.1"), dlsym of cuGetProcAddress_v2
 * and nothing else by name, then cuGetProcAddress_v2("cuGetProcAddress") to
 * get the resolver again, and every other entry point through that pointer.
 */
#ifndef JST_E2E_PROCADDR_H
#define JST_E2E_PROCADDR_H

#include <dlfcn.h>

#include "e2e_common.h"

/* Returns 0, or an exit code after printing why. */
static inline int e2e_resolve_procaddr(struct e2e_api *a)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen libcuda.so.1 failed\n");
        return 92;
    }
    __typeof__(&cuGetProcAddress) first =
        (__typeof__(&cuGetProcAddress))dlsym(h, "cuGetProcAddress_v2");
    if (!first) {
        printf("dlsym cuGetProcAddress_v2 failed\n");
        return 93;
    }
    void *p = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = first("cuGetProcAddress", &p, E2E_CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st);
    if (r != CUDA_SUCCESS || !p || st != CU_GET_PROC_ADDRESS_SUCCESS) {
        printf("cuGetProcAddress self-lookup failed: %d\n", (int)r);
        return 94;
    }
    __typeof__(&cuGetProcAddress) gpa = (__typeof__(&cuGetProcAddress))p;
    memset(a, 0, sizeof *a);
#define E2E_PROC(name)                                                                             \
    p = NULL;                                                                                      \
    if (gpa(#name, &p, E2E_CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st) == CUDA_SUCCESS &&      \
        st == CU_GET_PROC_ADDRESS_SUCCESS)                                                         \
        a->name = (__typeof__(a->name))p;
    E2E_FUNCS(E2E_PROC)
#undef E2E_PROC
    return 0;
}

#endif
