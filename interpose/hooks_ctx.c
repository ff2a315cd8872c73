/*
 * The hooked calls that set the driver up: cuInit (which also writes the
 * devices, once) and every context creation, recorded with the device and
 * the context made. Each wrapper has the exact signature of the variant it
 * stands for, calls the real function exactly once with the same arguments,
 * and returns its result unchanged.
 */
#include <errno.h>
#include <stdint.h>

#include "state.h"
#include "hooks_wrap.h"
#include "real.h"

typedef CUresult (*init_fn)(unsigned int);
static CUresult h_init(struct jst_hook *h, int route, unsigned int flags)
{
    JST_HOOK_PROLOGUE(init_fn, (flags));
    jst_event_emit_simple(&ev, r, 0, 0, 1);
    if (r == CUDA_SUCCESS && !atomic_exchange(&jst_cuinit_ok, 1))
        jst_emit_devices();
    jst_event_end(&ev);
    return r;
}
JST_WRAP(cuInit, (unsigned int Flags), (Flags), h_init)

/* Every context creation: the variants differ only in their middle arguments. */
#define JST_CTX_HANDLER(name, params, args)                                                        \
    typedef CUresult(*name##_fn) params;                                                           \
    static CUresult name(struct jst_hook *h, int route, JST_ARGS params)                           \
    {                                                                                              \
        JST_HOOK_PROLOGUE(name##_fn, args);                                                        \
        uint8_t buf[512];                                                                          \
        struct jst_rec rec;                                                                        \
        jst_event_record(&ev, &rec, buf, sizeof buf, r);                                           \
        jst_rec_u64(&rec, JST_F_DEVICE, (uint64_t)dev);                                            \
        if (r == CUDA_SUCCESS && pctx)                                                             \
            jst_rec_u64(&rec, JST_F_CTX, (uint64_t)(uintptr_t)*pctx);                              \
        jst_emit(&rec, 1);                                                                         \
        jst_event_end(&ev);                                                                        \
        return r;                                                                                  \
    }

#define JST_CTX_V2_P (CUcontext * pctx, unsigned int flags, CUdevice dev)
#define JST_CTX_V2_A (pctx, flags, dev)
#define JST_CTX_V3_P                                                                               \
    (CUcontext * pctx, CUexecAffinityParam * paramsArray, int numParams, unsigned int flags,       \
     CUdevice dev)
#define JST_CTX_V3_A (pctx, paramsArray, numParams, flags, dev)
#define JST_CTX_V4_P                                                                               \
    (CUcontext * pctx, CUctxCreateParams * ctxCreateParams, unsigned int flags, CUdevice dev)
#define JST_CTX_V4_A (pctx, ctxCreateParams, flags, dev)
#define JST_RETAIN_P (CUcontext * pctx, CUdevice dev)
#define JST_RETAIN_A (pctx, dev)

JST_CTX_HANDLER(h_ctx_v2, JST_CTX_V2_P, JST_CTX_V2_A)
JST_CTX_HANDLER(h_ctx_v3, JST_CTX_V3_P, JST_CTX_V3_A)
JST_CTX_HANDLER(h_ctx_v4, JST_CTX_V4_P, JST_CTX_V4_A)
JST_CTX_HANDLER(h_retain, JST_RETAIN_P, JST_RETAIN_A)

JST_WRAP(cuCtxCreate, JST_CTX_V2_P, JST_CTX_V2_A, h_ctx_v2)
JST_WRAP(cuCtxCreate_v2, JST_CTX_V2_P, JST_CTX_V2_A, h_ctx_v2)
JST_WRAP(cuCtxCreate_v3, JST_CTX_V3_P, JST_CTX_V3_A, h_ctx_v3)
JST_WRAP(cuCtxCreate_v4, JST_CTX_V4_P, JST_CTX_V4_A, h_ctx_v4)
JST_WRAP(cuDevicePrimaryCtxRetain, JST_RETAIN_P, JST_RETAIN_A, h_retain)
