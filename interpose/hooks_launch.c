/*
 * The hooked launches: cuLaunchKernel, cuLaunchKernelEx and their _ptsz
 * variants. The first launch of each function is timed and recorded (the
 * slow path); every later one goes straight to the driver (the fast path:
 * launch_x86_64.S, launch_aarch64.S, else the C below). Each wrapper has the exact
 * signature of the variant it stands for, calls the real function exactly
 * once with the same arguments, and returns its result unchanged.
 */
#include <errno.h>
#include <stdint.h>

#include "state.h"
#include "hooks_wrap.h"
#include "launch.h"
#include "sampler.h"

/* The first launch of f (claimed in the seen set): timed and recorded. Later
 * launches never get here: the wrappers below return straight to the driver. */
static void launch_record(struct jst_event *ev, CUresult r, CUfunction f)
{
    uint8_t buf[1536];
    struct jst_rec rec;
    ev->seq = jst_next_seq(); /* known here: the sampled frames before it name it */
    jst_event_record(ev, &rec, buf, sizeof buf, r);
    jst_rec_u64(&rec, JST_F_FUNC, (uint64_t)(uintptr_t)f);
    jst_func_describe((uintptr_t)f, &rec);
    jst_emit(&rec, 1);
    jst_sampler_first_launch(ev->seq);
    jst_event_end(ev);
}

/* The slow path of a launch variant (P: its parameters, in parentheses):
 * only the first caller for f records. */
#define JST_LAUNCH_SLOW(name, fn_t, P, ARGS)                                                       \
    __attribute__((noinline)) static CUresult name(struct jst_hook *h, int route, JST_ARGS P)      \
    {                                                                                              \
        JST_HOOK_RUN(fn_t, ARGS,                                                                   \
                     jst_seen_claim((uintptr_t)f) && jst_event_begin_stack(&ev, h, route));        \
        launch_record(&ev, r, f);                                                                  \
        return r;                                                                                  \
    }

#define JST_LAUNCH_P                                                                               \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,            \
     unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                       \
     unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
#define JST_LAUNCH_A                                                                               \
    (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,    \
     kernelParams, extra)
typedef CUresult(*launch_fn) JST_LAUNCH_P;
JST_LAUNCH_SLOW(h_launch_slow, launch_fn, JST_LAUNCH_P, JST_LAUNCH_A)

#define JST_LAUNCHEX_P                                                                             \
    (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
#define JST_LAUNCHEX_A (config, f, kernelParams, extra)
typedef CUresult(*launchex_fn) JST_LAUNCHEX_P;
JST_LAUNCH_SLOW(h_launchex_slow, launchex_fn, JST_LAUNCHEX_P, JST_LAUNCHEX_A)

/* The launch path after a function's first launch: one load of the real
 * pointer, one probe of the seen set, then a tail jump into the driver. No
 * lock, no allocation, no record, and the arguments are never touched.
 *
 * Each wrapper enters its slow path through a function of the same signature.
 * On x86-64 and aarch64 the fast path is a few lines of assembly
 * (launch_x86_64.S, which says why, and launch_aarch64.S); elsewhere it is
 * the C below. */

/* Real pointers for the assembly: [2*i] DIRECT/PROCADDR, [2*i+1] DLSYM, for
 * cuLaunchKernel, _ptsz, cuLaunchKernelEx, _ptsz. */
void *_Atomic jst_launch_real[8];
static const int launch_hooks[4] = {JST_H_cuLaunchKernel, JST_H_cuLaunchKernel_ptsz,
                                    JST_H_cuLaunchKernelEx, JST_H_cuLaunchKernelEx_ptsz};

void jst_launch_sync(void)
{
    for (int i = 0; i < 4; i++) {
        atomic_store(&jst_launch_real[2 * i], atomic_load(&jst_hooks[launch_hooks[i]].real));
        atomic_store(&jst_launch_real[2 * i + 1], atomic_load(&jst_hooks[launch_hooks[i]].real_dl));
    }
}

#define JST_HIDDEN __attribute__((visibility("hidden")))
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(JST_NO_ASM)
/* The fast path is interpose/launch_x86_64.S or launch_aarch64.S; here only
 * the declaration. */
#define JST_LAUNCH_FAST(attr, fname, idx, P, A, fn_t) attr CUresult fname P;
#else
#define JST_LAUNCH_FAST(attr, fname, idx, P, A, fn_t)                                              \
    attr CUresult fname P                                                                          \
    {                                                                                              \
        fn_t real = (fn_t)atomic_load_explicit(&jst_launch_real[idx], memory_order_relaxed);       \
        if (JST_LIKELY(real != NULL && jst_seen_has((uintptr_t)f)))                                \
            return real A;                                                                         \
        return jst_slow_##fname A;                                                                 \
    }
#endif

/* One wrapper of variant v for route: its slow path jst_slow_<fname>, and its
 * fast path, which reads the real pointer at jst_launch_real[idx]. */
#define JST_LAUNCH_WRAP1(attr, fname, v, route, idx, P, A, slow, fn_t)                             \
    __attribute__((noinline, cold)) CUresult jst_slow_##fname P;                                   \
    __attribute__((noinline, cold)) CUresult jst_slow_##fname P                                    \
    {                                                                                              \
        return slow(&jst_hooks[JST_H_##v], route, JST_ARGS A);                                     \
    }                                                                                              \
    JST_LAUNCH_FAST(attr, fname, idx, P, A, fn_t)
/* The three wrappers of launch variant v, whose real pointers are at
 * jst_launch_real[i] (DIRECT, PROCADDR) and [i + 1] (DLSYM). */
#define JST_LAUNCH_WRAP(v, i, P, A, slow, fn_t)                                                    \
    JST_LAUNCH_WRAP1(JST_EXPORT, v, v, JST_ROUTE_DIRECT, i, P, A, slow, fn_t)                      \
    JST_LAUNCH_WRAP1(JST_HIDDEN, jst_l_##v, v, JST_ROUTE_DLSYM, i + 1, P, A, slow, fn_t)           \
    JST_LAUNCH_WRAP1(JST_HIDDEN, jst_p_##v, v, JST_ROUTE_PROCADDR, i, P, A, slow, fn_t)            \
    JST_WRAPS(v)

JST_LAUNCH_WRAP(cuLaunchKernel, 0, JST_LAUNCH_P, JST_LAUNCH_A, h_launch_slow, launch_fn)
JST_LAUNCH_WRAP(cuLaunchKernel_ptsz, 2, JST_LAUNCH_P, JST_LAUNCH_A, h_launch_slow, launch_fn)
JST_LAUNCH_WRAP(cuLaunchKernelEx, 4, JST_LAUNCHEX_P, JST_LAUNCHEX_A, h_launchex_slow, launchex_fn)
JST_LAUNCH_WRAP(cuLaunchKernelEx_ptsz, 6, JST_LAUNCHEX_P, JST_LAUNCHEX_A, h_launchex_slow,
                launchex_fn)
