/*
 * Inside the preload: the table of hooked functions (interpose/hooks.c; the
 * wrappers and handlers are in hooks_*.c and procaddr.c, hooks_wrap.h).
 */
#ifndef JST_INTERPOSE_HOOKS_H
#define JST_INTERPOSE_HOOKS_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include "state.h"

/* Routes index the per-route wrappers (enum jst_route values 1..3). */
#define JST_NROUTES 4

struct jst_hook {
    const char *name;      /* exact variant, e.g. "cuCtxCreate_v3" */
    const char *base;      /* name the program asks cuGetProcAddress for, e.g. "cuCtxCreate" */
    uint16_t call_id;      /* enum jst_call, 0 for cuGetProcAddress */
    void *const *wrap;     /* [route]: wrapper of this exact variant */
    void *_Atomic real;    /* the driver's exported symbol: DIRECT and PROCADDR routes */
    void *_Atomic real_dl; /* what dlsym returned: DLSYM route */
};

/* X(variant, base, call id) for every hooked variant. */
#define JST_HOOK_LIST(X)                                                                           \
    X(cuInit, cuInit, JST_CALL_cuInit)                                                             \
    X(cuCtxCreate, cuCtxCreate, JST_CALL_cuCtxCreate)                                              \
    X(cuCtxCreate_v2, cuCtxCreate, JST_CALL_cuCtxCreate)                                           \
    X(cuCtxCreate_v3, cuCtxCreate, JST_CALL_cuCtxCreate)                                           \
    X(cuCtxCreate_v4, cuCtxCreate, JST_CALL_cuCtxCreate)                                           \
    X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, JST_CALL_cuDevicePrimaryCtxRetain)       \
    X(cuModuleLoad, cuModuleLoad, JST_CALL_cuModuleLoad)                                           \
    X(cuModuleLoadData, cuModuleLoadData, JST_CALL_cuModuleLoadData)                               \
    X(cuModuleLoadDataEx, cuModuleLoadDataEx, JST_CALL_cuModuleLoadDataEx)                         \
    X(cuModuleLoadFatBinary, cuModuleLoadFatBinary, JST_CALL_cuModuleLoadFatBinary)                \
    X(cuLibraryLoadData, cuLibraryLoadData, JST_CALL_cuLibraryLoadData)                            \
    X(cuLibraryLoadFromFile, cuLibraryLoadFromFile, JST_CALL_cuLibraryLoadFromFile)                \
    X(cuModuleGetFunction, cuModuleGetFunction, JST_CALL_cuModuleGetFunction)                      \
    X(cuLibraryGetKernel, cuLibraryGetKernel, JST_CALL_cuLibraryGetKernel)                         \
    X(cuKernelGetFunction, cuKernelGetFunction, JST_CALL_cuKernelGetFunction)                      \
    X(cuLinkCreate, cuLinkCreate, JST_CALL_cuLinkCreate)                                           \
    X(cuLinkCreate_v2, cuLinkCreate, JST_CALL_cuLinkCreate)                                        \
    X(cuLinkAddData, cuLinkAddData, JST_CALL_cuLinkAddData)                                        \
    X(cuLinkAddData_v2, cuLinkAddData, JST_CALL_cuLinkAddData)                                     \
    X(cuLinkAddFile, cuLinkAddFile, JST_CALL_cuLinkAddFile)                                        \
    X(cuLinkAddFile_v2, cuLinkAddFile, JST_CALL_cuLinkAddFile)                                     \
    X(cuLinkComplete, cuLinkComplete, JST_CALL_cuLinkComplete)                                     \
    X(cuModuleUnload, cuModuleUnload, JST_CALL_cuModuleUnload)                                     \
    X(cuLibraryUnload, cuLibraryUnload, JST_CALL_cuLibraryUnload)                                  \
    X(cuLaunchKernel, cuLaunchKernel, JST_CALL_cuLaunchKernel)                                     \
    X(cuLaunchKernel_ptsz, cuLaunchKernel, JST_CALL_cuLaunchKernel)                                \
    X(cuLaunchKernelEx, cuLaunchKernelEx, JST_CALL_cuLaunchKernelEx)                               \
    X(cuLaunchKernelEx_ptsz, cuLaunchKernelEx, JST_CALL_cuLaunchKernelEx)                          \
    X(cuStreamBeginCapture, cuStreamBeginCapture, JST_CALL_cuStreamBeginCapture)                   \
    X(cuStreamBeginCapture_ptsz, cuStreamBeginCapture, JST_CALL_cuStreamBeginCapture)              \
    X(cuStreamBeginCapture_v2, cuStreamBeginCapture, JST_CALL_cuStreamBeginCapture)                \
    X(cuStreamBeginCapture_v2_ptsz, cuStreamBeginCapture, JST_CALL_cuStreamBeginCapture)           \
    X(cuStreamBeginCaptureToGraph, cuStreamBeginCaptureToGraph, JST_CALL_cuStreamBeginCapture)     \
    X(cuStreamBeginCaptureToGraph_ptsz, cuStreamBeginCaptureToGraph,                               \
      JST_CALL_cuStreamBeginCapture)                                                               \
    X(cuStreamEndCapture, cuStreamEndCapture, JST_CALL_cuStreamEndCapture)                         \
    X(cuStreamEndCapture_ptsz, cuStreamEndCapture, JST_CALL_cuStreamEndCapture)                    \
    X(cuGraphInstantiate, cuGraphInstantiate, JST_CALL_cuGraphInstantiate)                         \
    X(cuGraphInstantiate_v2, cuGraphInstantiate, JST_CALL_cuGraphInstantiate)                      \
    X(cuGraphInstantiateWithFlags, cuGraphInstantiate, JST_CALL_cuGraphInstantiate)                \
    X(cuGraphInstantiateWithParams, cuGraphInstantiateWithParams, JST_CALL_cuGraphInstantiate)     \
    X(cuGraphInstantiateWithParams_ptsz, cuGraphInstantiateWithParams,                             \
      JST_CALL_cuGraphInstantiate)                                                                 \
    X(cuGetProcAddress, cuGetProcAddress, 0)                                                       \
    X(cuGetProcAddress_v2, cuGetProcAddress, 0)                                                    \
    X(cuGetProcAddress_v2_ptsz, cuGetProcAddress, 0)

#define JST_HOOK_ENUM(v, b, c) JST_H_##v,
enum { JST_HOOK_LIST(JST_HOOK_ENUM) JST_H_COUNT };
#undef JST_HOOK_ENUM

/* The wrappers of each variant by route (JST_WRAPS, next to the handler). */
#define JST_HOOK_WRAPS(v, b, c) extern void *const jst_wraps_##v[JST_NROUTES];
JST_HOOK_LIST(JST_HOOK_WRAPS)
#undef JST_HOOK_WRAPS

extern struct jst_hook jst_hooks[JST_H_COUNT];
/* The hook of an exact variant name, or NULL. */
struct jst_hook *jst_hook_by_name(const char *name);
/* The real function a wrapper of route must call, resolving it on first use. */
void *jst_hook_real(struct jst_hook *h, int route);

#endif
