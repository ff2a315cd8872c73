/*
 * The cuGetProcAddress route. cudart finds cuGetProcAddress_v2 by dlsym, asks
 * it for "cuGetProcAddress" again, and resolves everything else through the
 * pointer it got, so every pointer the resolver hands out (the resolver itself
 * included) must be our wrapper of the exact variant the driver chose.
 *
 * The variant is known by comparing the returned pointer with the driver's
 * exported versioned symbols (cuCtxCreate, _v2, _v3, _v4; cuLaunchKernel and
 * _ptsz ...), which fixes the signature. A pointer that matches none of them is
 * returned unwrapped: a wrapper of the wrong signature would break the program.
 *
 * cuGetProcAddress itself is hooked here too (cuGetProcAddress, _v2,
 * _v2_ptsz), with the same wrappers as every other hook (hooks_wrap.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "cost.h"
#include "image.h"
#include "state.h"
#include "hooks_wrap.h"
#include "procaddr.h"
#include "real.h"

/* Hooks by name: cudart asks the resolver for hundreds of symbols at start,
 * most of them not hooked; comparing each with every hook's two names cost
 * about 120 strcmp a call. An open-addressed table of hook indices, each
 * under the hash of its base name and of its exact name. */
#define PA_SLOTS 512               /* a power of two, over twice the entries */
static uint16_t pa_slot[PA_SLOTS]; /* hook index + 1; 0: empty */
static pthread_once_t pa_once = PTHREAD_ONCE_INIT;

static uint32_t pa_hash(const char *s)
{
    return (uint32_t)jst_hash64(s, strlen(s));
}

static void pa_put(const char *key, int i)
{
    uint32_t j = pa_hash(key) & (PA_SLOTS - 1);
    while (pa_slot[j])
        j = (j + 1) & (PA_SLOTS - 1);
    pa_slot[j] = (uint16_t)(i + 1);
}

static void pa_build(void)
{
    _Static_assert(2 * JST_H_COUNT < PA_SLOTS, "PA_SLOTS too small");
    for (int i = 0; i < JST_H_COUNT; i++) {
        pa_put(jst_hooks[i].base, i);
        if (strcmp(jst_hooks[i].name, jst_hooks[i].base) != 0)
            pa_put(jst_hooks[i].name, i);
    }
}

void *jst_procaddr_map(const char *symbol, void *fn)
{
    jst_driver();
    pthread_once(&pa_once, pa_build);
    size_t n = strlen(symbol);
    /* Every hook whose base or exact name is symbol lies on this probe run. */
    for (uint32_t j = pa_hash(symbol) & (PA_SLOTS - 1); pa_slot[j]; j = (j + 1) & (PA_SLOTS - 1)) {
        struct jst_hook *h = &jst_hooks[pa_slot[j] - 1];
        /* symbol is a base name ("cuCtxCreate"); accept an exact variant too */
        if (strcmp(h->base, symbol) != 0 && strcmp(h->name, symbol) != 0)
            continue;
        void *real = atomic_load(&h->real);
        if (!real)
            continue;
        /* A driver that takes its own exported address through its GOT hands
         * out our export: that is the same variant. */
        if (fn == real || fn == h->wrap[JST_ROUTE_DIRECT]) {
            jst_dbg("cuGetProcAddress(%s) -> %s (wrapped)", symbol, h->name);
            return h->wrap[JST_ROUTE_PROCADDR];
        }
    }
    if (n > 2 && symbol[0] == 'c' && symbol[1] == 'u')
        jst_dbg("cuGetProcAddress(%s) -> %p (not hooked)", symbol, fn);
    return fn;
}

/* Replaces the pointer the real resolver returned by our wrapper of the same
 * exact variant. Nothing when tracing is switched off by JITSTALL_DISABLE. */
static void gpa_map(const char *symbol, void **pfn)
{
    if (!symbol || !pfn || !*pfn || !jst_config())
        return;
    int saved = errno;
    uint64_t t0 = jst_now_ns();
    *pfn = jst_procaddr_map(symbol, *pfn);
    jst_cost_add(JST_COST_LOOKUP, jst_now_ns() - t0);
    errno = saved;
}

/* A resolver call: the driver's own calls pass straight through; the
 * program's run under the guard (the resolver may call back into hooked
 * functions), and what they return is wrapped. Nothing is recorded. */
#define JST_GPA_RUN(args)                                                                          \
    if (jst_guard)                                                                                 \
        return real args;                                                                          \
    jst_guard++;                                                                                   \
    CUresult r = real args;                                                                        \
    jst_guard--;                                                                                   \
    if (r == CUDA_SUCCESS)                                                                         \
        gpa_map(symbol, pfn);                                                                      \
    return r

#define JST_GPA1_P (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
#define JST_GPA1_A (symbol, pfn, cudaVersion, flags)
typedef CUresult(*gpa1_fn) JST_GPA1_P;
static CUresult h_gpa1(struct jst_hook *h, int route, JST_UNPAREN(JST_GPA1_P))
{
    JST_HOOK_REAL(gpa1_fn);
    JST_GPA_RUN(JST_GPA1_A);
}
JST_WRAP(cuGetProcAddress, JST_GPA1_P, JST_GPA1_A, h_gpa1)

#define JST_GPA2_P                                                                                 \
    (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,                            \
     CUdriverProcAddressQueryResult *symbolStatus)
#define JST_GPA2_A (symbol, pfn, cudaVersion, flags, symbolStatus)
typedef CUresult(*gpa2_fn) JST_GPA2_P;
static CUresult h_gpa2(struct jst_hook *h, int route, JST_UNPAREN(JST_GPA2_P))
{
    gpa2_fn real = (gpa2_fn)jst_hook_real(h, route);
    if (!real && h == &jst_hooks[JST_H_cuGetProcAddress_v2_ptsz]) {
        /* A driver without the _ptsz export: what cuda.h's inline does. */
        real = (gpa2_fn)jst_hook_real(&jst_hooks[JST_H_cuGetProcAddress_v2], JST_ROUTE_DIRECT);
        if ((flags & (CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                      CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)) == 0)
            flags |= CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    }
    if (!real)
        return JST_NO_REAL;
    JST_GPA_RUN(JST_GPA2_A);
}
JST_WRAP(cuGetProcAddress_v2, JST_GPA2_P, JST_GPA2_A, h_gpa2)
JST_WRAP(cuGetProcAddress_v2_ptsz, JST_GPA2_P, JST_GPA2_A, h_gpa2)
