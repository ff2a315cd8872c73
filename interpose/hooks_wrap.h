/*
 * Inside the preload: how a hooked driver function is wrapped, shared by the
 * files that hold the handlers (hooks_ctx.c, hooks_load.c, hooks_func.c,
 * hooks_launch.c, hooks_graph.c, procaddr.c). A handler takes the hook and the route first,
 * then the exact arguments of the variant; every wrapper calls it.
 */
#ifndef JST_INTERPOSE_HOOKS_WRAP_H
#define JST_INTERPOSE_HOOKS_WRAP_H

#include <cuda.h>

#include "hooks.h"
#include "event.h"

/* cuda.h maps these names to their newest variants; here each name means
 * exactly the symbol of that name. */
#undef cuCtxCreate
#undef cuLinkCreate
#undef cuLinkAddData
#undef cuLinkAddFile
#undef cuGetProcAddress
#undef cuGetProcAddress_v2
#undef cuLaunchKernel
#undef cuLaunchKernelEx
#undef cuStreamBeginCapture
#undef cuStreamBeginCaptureToGraph
#undef cuStreamEndCapture
#undef cuGraphInstantiate
#undef cuGraphInstantiateWithParams

/* What a wrapper returns when no real function exists to call (the driver
 * could not be found, so the program could not have called it either). */
#define JST_NO_REAL CUDA_ERROR_NOT_INITIALIZED

/* A parenthesized list of parameters or arguments, without its parentheses:
 * JST_ARGS inside a macro's body, JST_UNPAREN for a macro that names one. */
#define JST_ARGS(...) __VA_ARGS__
#define JST_UNPAREN(list) JST_ARGS list

/* The wrappers of variant v by route, for its row of jst_hooks. */
#define JST_WRAPS(v)                                                                               \
    void *const jst_wraps_##v[JST_NROUTES] = {NULL, (void *)v, (void *)jst_l_##v,                  \
                                              (void *)jst_p_##v};

/* The three wrappers of variant v: exported (direct), for dlsym, and for
 * cuGetProcAddress. handler(hook, route, args...) does the work. */
#define JST_WRAP(v, params, args, handler)                                                         \
    JST_EXPORT CUresult v params                                                                   \
    {                                                                                              \
        return handler(&jst_hooks[JST_H_##v], JST_ROUTE_DIRECT, JST_ARGS args);                    \
    }                                                                                              \
    static CUresult jst_l_##v params                                                               \
    {                                                                                              \
        return handler(&jst_hooks[JST_H_##v], JST_ROUTE_DLSYM, JST_ARGS args);                     \
    }                                                                                              \
    static CUresult jst_p_##v params                                                               \
    {                                                                                              \
        return handler(&jst_hooks[JST_H_##v], JST_ROUTE_PROCADDR, JST_ARGS args);                  \
    }                                                                                              \
    JST_WRAPS(v)

/* The real function of a handler (parameters h and route), as real; the
 * handler returns JST_NO_REAL when there is none. */
#define JST_HOOK_REAL(fn_t)                                                                        \
    fn_t real = (fn_t)jst_hook_real(h, route);                                                     \
    do {                                                                                           \
        if (!real)                                                                                 \
            return JST_NO_REAL;                                                                    \
    } while (0)

/* What every handler (parameters h and route) does first: find the real
 * function (JST_NO_REAL when there is none), begin the event ev with begin,
 * an expression that says whether this call is recorded (or, when it says
 * no, pass straight through), and time the real call into r. */
#define JST_HOOK_RUN(fn_t, args, begin)                                                            \
    JST_HOOK_REAL(fn_t);                                                                           \
    struct jst_event ev;                                                                           \
    if (!(begin))                                                                                  \
        return real args;                                                                          \
    CUresult r;                                                                                    \
    JST_TIMED(ev, r, real args)

/* JST_HOOK_RUN for a call recorded without its stack. */
#define JST_HOOK_PROLOGUE(fn_t, args) JST_HOOK_RUN(fn_t, args, jst_event_begin(&ev, h, route))

/* The handle the call wrote to *p, once it returned r: 0 on failure. */
#define JST_OUT(p) ((r == CUDA_SUCCESS && (p)) ? (uint64_t)(uintptr_t) * (p) : 0)

#endif
