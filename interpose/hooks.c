/*
 * The hooked driver functions: one wrapper per exact variant and route, the
 * table that serves all three routes (exported symbol, dlsym, cuGetProcAddress),
 * and what each family records. Each wrapper has the exact signature of the
 * variant it stands for, calls the real function exactly once with the same
 * arguments, and returns its result unchanged.
 */
#include <cuda.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "backtrace.h"
#include "cost.h"
#include "state.h"
#include "hooks.h"
#include "event.h"
#include "real.h"
#include "procaddr.h"
#include "load.h"
#include "inflight.h"
#include "launch.h"

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

/* What a wrapper returns when no real function exists to call (the driver
 * could not be found, so the program could not have called it either). */
#define JST_NO_REAL CUDA_ERROR_NOT_INITIALIZED

#define JST_ARGS(...) __VA_ARGS__

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
    }

/* ---- events ---- */

void *jst_hook_real(struct jst_hook *h, int route)
{
    void *f = route == JST_ROUTE_DLSYM ? atomic_load(&h->real_dl) : atomic_load(&h->real);
    if (!f && route != JST_ROUTE_DLSYM) {
        jst_driver();
        f = atomic_load(&h->real);
    }
    return f;
}

static int phdr_counts(struct dl_phdr_info *info, size_t size, void *data)
{
    unsigned long long *c = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c[0] = info->dlpi_adds;
        c[1] = info->dlpi_subs;
    }
    return 1; /* the counters are the same in every entry: one is enough */
}

/* Keeps the module map current without wrapping dlopen: the loader counts
 * every object added and removed, so a change since the last event means a
 * dlopen or dlclose happened in between (Python loads CUDA libraries late). */
static void modmap_check(void)
{
    static _Atomic unsigned long long seen_adds, seen_subs;
    unsigned long long c[2] = {0, 0};
    dl_iterate_phdr(phdr_counts, c);
    unsigned long long a = atomic_exchange(&seen_adds, c[0]);
    unsigned long long s = atomic_exchange(&seen_subs, c[1]);
    if (a && (a != c[0] || s != c[1]))
        jst_modmap_refresh(a != c[0] ? JST_MOD_DLOPEN : JST_MOD_DLCLOSE);
}

int jst_event_begin(struct jst_event *ev, const struct jst_hook *h, int route)
{
    if (jst_guard || atomic_load_explicit(&jst_state, memory_order_relaxed) == JST_ST_OFF)
        return 0;
    int saved = errno;
    jst_guard++;
    uint64_t t0 = jst_now_ns();
    if (!jst_trace()) {
        jst_guard--;
        errno = saved;
        return 0;
    }
    modmap_check();
    ev->hook = h;
    ev->route = route;
    ev->saved_errno = saved;
    ev->start_ns = ev->dur_ns = 0;
    ev->stack_id = 0;
    ev->tid = jst_tid();
    ev->seq = 0;
    ev->in_flight = 0;
    ev->self_t0 = t0;
    return 1;
}

/* Own time of ev so far: since jst_event_begin, less the real call. */
static uint64_t event_self_ns(const struct jst_event *ev)
{
    uint64_t t = jst_now_ns() - ev->self_t0;
    return t > ev->dur_ns ? t - ev->dur_ns : 0;
}

void jst_event_end(struct jst_event *ev)
{
    jst_cost_add(JST_COST_EVENTS, event_self_ns(ev));
    jst_guard--;
    errno = ev->saved_errno;
}

void jst_event_record(const struct jst_event *ev, struct jst_rec *r, void *buf, size_t cap,
                      int result)
{
    jst_rec_begin(r, buf, cap, JST_REC_CALL);
    jst_rec_u64(r, JST_F_SEQ, ev->seq ? ev->seq : jst_next_seq());
    jst_rec_u64(r, JST_F_CALL_ID, ev->hook->call_id);
    jst_rec_str(r, JST_F_CALL, ev->hook->name);
    jst_rec_u64(r, JST_F_ROUTE, (uint64_t)ev->route);
    jst_rec_u64(r, JST_F_TID, ev->tid);
    jst_rec_u64(r, JST_F_START_NS, ev->start_ns);
    jst_rec_u64(r, JST_F_DUR_NS, ev->dur_ns);
    jst_rec_u64(r, JST_F_RESULT, (uint64_t)(unsigned)result);
    if (ev->stack_id)
        jst_rec_u64(r, JST_F_STACK_ID, ev->stack_id);
    jst_rec_u64(r, JST_F_SELF_NS, event_self_ns(ev));
}

/* Records a finished call with at most one handle and one device. */
static void emit_simple(struct jst_event *ev, CUresult r, uint16_t key, uint64_t v, int flush)
{
    uint8_t buf[512];
    struct jst_rec rec;
    jst_event_record(ev, &rec, buf, sizeof buf, r);
    if (key)
        jst_rec_u64(&rec, key, v);
    jst_emit(&rec, flush);
}

/* What every handler does first: find the real function (JST_NO_REAL when
 * there is none), begin the event (or, when tracing is off or the call is
 * the driver's own, pass straight through) and time the real call into r. */
#define JST_HOOK_PROLOGUE(fn_t, args)                                                              \
    fn_t real = (fn_t)jst_hook_real(h, route);                                                     \
    if (!real)                                                                                     \
        return JST_NO_REAL;                                                                        \
    struct jst_event ev;                                                                           \
    if (!jst_event_begin(&ev, h, route))                                                           \
        return real args;                                                                          \
    CUresult r;                                                                                    \
    JST_TIMED(ev, r, real args)

/* ---- cuInit, contexts ---- */

typedef CUresult (*init_fn)(unsigned int);
static CUresult h_init(struct jst_hook *h, int route, unsigned int flags)
{
    JST_HOOK_PROLOGUE(init_fn, (flags));
    emit_simple(&ev, r, 0, 0, 1);
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
        name##_fn real = (name##_fn)jst_hook_real(h, route);                                       \
        if (!real)                                                                                 \
            return JST_NO_REAL;                                                                    \
        struct jst_event ev;                                                                       \
        if (!jst_event_begin(&ev, h, route))                                                       \
            return real args;                                                                      \
        CUresult r;                                                                                \
        JST_TIMED(ev, r, real args);                                                               \
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

JST_CTX_HANDLER(h_ctx_v2, (CUcontext * pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev))
JST_CTX_HANDLER(h_ctx_v3,
                (CUcontext * pctx, CUexecAffinityParam *pa, int np, unsigned int flags,
                 CUdevice dev),
                (pctx, pa, np, flags, dev))
JST_CTX_HANDLER(h_ctx_v4,
                (CUcontext * pctx, CUctxCreateParams *cp, unsigned int flags, CUdevice dev),
                (pctx, cp, flags, dev))
JST_CTX_HANDLER(h_retain, (CUcontext * pctx, CUdevice dev), (pctx, dev))

JST_WRAP(cuCtxCreate, (CUcontext * pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev),
         h_ctx_v2)
JST_WRAP(cuCtxCreate_v2, (CUcontext * pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev),
         h_ctx_v2)
JST_WRAP(cuCtxCreate_v3,
         (CUcontext * pctx, CUexecAffinityParam *paramsArray, int numParams, unsigned int flags,
          CUdevice dev),
         (pctx, paramsArray, numParams, flags, dev), h_ctx_v3)
JST_WRAP(cuCtxCreate_v4,
         (CUcontext * pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags, CUdevice dev),
         (pctx, ctxCreateParams, flags, dev), h_ctx_v4)
JST_WRAP(cuDevicePrimaryCtxRetain, (CUcontext * pctx, CUdevice dev), (pctx, dev), h_retain)

/* ---- loads ---- */

/* Fields of a BEGIN record beyond the call's and the load's. */
struct begin_extra {
    uint64_t handle;
    int has_input;
    CUjitInputType input;
    const char *name;
};

/* Writes ev's BEGIN record: what is known before the real call (the load's
 * description when ld is active, extra fields when x is given). */
static void begin_with(struct jst_event *ev, struct jst_load *ld, const struct begin_extra *x)
{
    size_t cap = ld && ld->active ? 256 * 1024 : 2048;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return;
    struct jst_rec rec;
    jst_inflight_open(ev, &rec, buf, cap);
    if (x && x->handle)
        jst_rec_u64(&rec, JST_F_HANDLE, x->handle);
    if (x && x->has_input)
        jst_rec_u64(&rec, JST_F_JIT_INPUT, (uint64_t)x->input);
    if (x && x->name)
        jst_rec_strn(&rec, JST_F_NAME, x->name, strnlen(x->name, 1024));
    if (ld && ld->active)
        jst_load_describe(ld, &rec);
    /* A load that carries SASS for the device returns in milliseconds; only
     * one that may compile (or one we could not inspect) needs the progress
     * thread. */
    jst_inflight_emit(ev, &rec, !ld || !ld->active || ld->jit);
    free(buf);
}

/* Starts a load event: stack, inspection and verdict before the real call. */
static int load_begin(struct jst_event *ev, struct jst_load *ld, const struct jst_hook *h,
                      int route, const void *image, const char *path, int cache)
{
    if (!jst_event_begin(ev, h, route))
        return 0;
    ev->stack_id = jst_bt_capture();
    if (path)
        jst_load_pre_file(ld, path, cache);
    else
        jst_load_pre_mem(ld, image, 0, cache);
    begin_with(ev, ld, NULL);
    return 1;
}

/* Ends a load event: verdict, cache outcome and the record, on disk before
 * the hook returns. */
static CUresult load_finish(struct jst_event *ev, struct jst_load *ld, CUresult r, uint64_t handle)
{
    size_t cap = 256 * 1024;
    uint8_t *buf = malloc(cap);
    if (buf) {
        struct jst_rec rec;
        jst_event_record(ev, &rec, buf, cap, r);
        if (handle)
            jst_rec_u64(&rec, JST_F_HANDLE, handle);
        jst_load_post(ld, &rec, ev->dur_ns, r);
        jst_emit(&rec, 1);
        free(buf);
    }
    jst_inflight_close(ev);
    jst_load_free(ld);
    jst_event_end(ev);
    return r;
}

#define JST_OUT(p) ((r == CUDA_SUCCESS && (p)) ? (uint64_t)(uintptr_t) * (p) : 0)

/* Every load: the variants differ in their arguments, in where the image is
 * (image: a pointer to it, or NULL for a file; path: the file, or NULL) and
 * in which argument receives the handle (out). */
#define JST_LOAD_HANDLER(name, params, args, image, path, out)                                     \
    typedef CUresult(*name##_fn) params;                                                           \
    static CUresult name(struct jst_hook *h, int route, JST_ARGS params)                           \
    {                                                                                              \
        name##_fn real = (name##_fn)jst_hook_real(h, route);                                       \
        if (!real)                                                                                 \
            return JST_NO_REAL;                                                                    \
        struct jst_event ev;                                                                       \
        struct jst_load ld;                                                                        \
        if (!load_begin(&ev, &ld, h, route, image, path, 1))                                       \
            return real args;                                                                      \
        CUresult r;                                                                                \
        JST_TIMED(ev, r, real args);                                                               \
        return load_finish(&ev, &ld, r, JST_OUT(out));                                             \
    }

JST_LOAD_HANDLER(h_mload, (CUmodule * module, const char *fname), (module, fname), NULL,
                 fname ? fname : "", module)
JST_WRAP(cuModuleLoad, (CUmodule * module, const char *fname), (module, fname), h_mload)

JST_LOAD_HANDLER(h_mdata, (CUmodule * module, const void *image), (module, image), image, NULL,
                 module)
JST_WRAP(cuModuleLoadData, (CUmodule * module, const void *image), (module, image), h_mdata)
JST_WRAP(cuModuleLoadFatBinary, (CUmodule * module, const void *fatCubin), (module, fatCubin),
         h_mdata)

JST_LOAD_HANDLER(h_mdataex,
                 (CUmodule * module, const void *image, unsigned int n, CUjit_option *opt,
                  void **val),
                 (module, image, n, opt, val), image, NULL, module)
JST_WRAP(cuModuleLoadDataEx,
         (CUmodule * module, const void *image, unsigned int numOptions, CUjit_option *options,
          void **optionValues),
         (module, image, numOptions, options, optionValues), h_mdataex)

JST_LOAD_HANDLER(h_ldata,
                 (CUlibrary * lib, const void *code, CUjit_option *jo, void **jv, unsigned int jn,
                  CUlibraryOption *lo, void **lv, unsigned int ln),
                 (lib, code, jo, jv, jn, lo, lv, ln), code, NULL, lib)
JST_WRAP(cuLibraryLoadData,
         (CUlibrary * library, const void *code, CUjit_option *jitOptions, void **jitOptionsValues,
          unsigned int numJitOptions, CUlibraryOption *libraryOptions, void **libraryOptionValues,
          unsigned int numLibraryOptions),
         (library, code, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
          libraryOptionValues, numLibraryOptions),
         h_ldata)

JST_LOAD_HANDLER(h_lfile,
                 (CUlibrary * lib, const char *path, CUjit_option *jo, void **jv, unsigned int jn,
                  CUlibraryOption *lo, void **lv, unsigned int ln),
                 (lib, path, jo, jv, jn, lo, lv, ln), NULL, path ? path : "", lib)
JST_WRAP(cuLibraryLoadFromFile,
         (CUlibrary * library, const char *fileName, CUjit_option *jitOptions,
          void **jitOptionsValues, unsigned int numJitOptions, CUlibraryOption *libraryOptions,
          void **libraryOptionValues, unsigned int numLibraryOptions),
         (library, fileName, jitOptions, jitOptionsValues, numJitOptions, libraryOptions,
          libraryOptionValues, numLibraryOptions),
         h_lfile)

/* ---- function and kernel lookups (not flushed: frequent and cheap) ---- */

/* A function or kernel looked up by name in a module or library: the
 * variants differ only in their handle types. */
#define JST_LOOKUP_HANDLER(name, out_t, parent_t)                                                  \
    typedef CUresult (*name##_fn)(out_t *, parent_t, const char *);                                \
    static CUresult name(struct jst_hook *h, int route, out_t *out, parent_t parent,               \
                         const char *fname)                                                        \
    {                                                                                              \
        name##_fn real = (name##_fn)jst_hook_real(h, route);                                       \
        if (!real)                                                                                 \
            return JST_NO_REAL;                                                                    \
        struct jst_event ev;                                                                       \
        if (!jst_event_begin(&ev, h, route))                                                       \
            return real(out, parent, fname);                                                       \
        CUresult r;                                                                                \
        JST_TIMED(ev, r, real(out, parent, fname));                                                \
        lookup_record(&ev, r, (uintptr_t)parent, JST_OUT(out), fname);                             \
        return r;                                                                                  \
    }

/* The record of a lookup, and the function noted for its first launch. */
static void lookup_record(struct jst_event *ev, CUresult r, uintptr_t parent, uint64_t fn,
                          const char *name)
{
    uint8_t buf[1536];
    struct jst_rec rec;
    jst_event_record(ev, &rec, buf, sizeof buf, r);
    jst_rec_u64(&rec, JST_F_PARENT, (uint64_t)parent);
    if (fn)
        jst_rec_u64(&rec, JST_F_FUNC, fn);
    if (name)
        jst_rec_strn(&rec, JST_F_NAME, name, strnlen(name, 1024));
    jst_emit(&rec, 0);
    if (fn)
        jst_func_note((uintptr_t)fn, parent, name);
    jst_event_end(ev);
}

JST_LOOKUP_HANDLER(h_getfunc, CUfunction, CUmodule)
JST_WRAP(cuModuleGetFunction, (CUfunction * hfunc, CUmodule hmod, const char *name),
         (hfunc, hmod, name), h_getfunc)

JST_LOOKUP_HANDLER(h_getkernel, CUkernel, CUlibrary)
JST_WRAP(cuLibraryGetKernel, (CUkernel * pKernel, CUlibrary library, const char *name),
         (pKernel, library, name), h_getkernel)

typedef CUresult (*kfunc_fn)(CUfunction *, CUkernel);
static CUresult h_kfunc(struct jst_hook *h, int route, CUfunction *f, CUkernel k)
{
    JST_HOOK_PROLOGUE(kfunc_fn, (f, k));
    uint64_t fn = JST_OUT(f);
    if (fn)
        jst_func_alias((uintptr_t)fn, (uintptr_t)k);
    uint8_t buf[1536];
    struct jst_rec rec;
    jst_event_record(&ev, &rec, buf, sizeof buf, r);
    jst_rec_u64(&rec, JST_F_HANDLE, (uint64_t)(uintptr_t)k);
    if (fn)
        jst_rec_u64(&rec, JST_F_FUNC, fn);
    jst_func_describe((uintptr_t)k, &rec);
    jst_emit(&rec, 0);
    jst_event_end(&ev);
    return r;
}
JST_WRAP(cuKernelGetFunction, (CUfunction * pFunc, CUkernel kernel), (pFunc, kernel), h_kfunc)

/* ---- unloads: forget the functions so a reused address is new again ---- */

typedef CUresult (*unload_fn)(void *);
static CUresult h_unload(struct jst_hook *h, int route, void *handle)
{
    JST_HOOK_PROLOGUE(unload_fn, (handle));
    emit_simple(&ev, r, JST_F_HANDLE, (uint64_t)(uintptr_t)handle, 1);
    if (r == CUDA_SUCCESS)
        jst_func_forget_parent((uintptr_t)handle);
    jst_event_end(&ev);
    return r;
}
static CUresult h_munload(struct jst_hook *h, int route, CUmodule m)
{
    return h_unload(h, route, (void *)m);
}
static CUresult h_lunload(struct jst_hook *h, int route, CUlibrary l)
{
    return h_unload(h, route, (void *)l);
}
JST_WRAP(cuModuleUnload, (CUmodule hmod), (hmod), h_munload)
JST_WRAP(cuLibraryUnload, (CUlibrary library), (library), h_lunload)

/* ---- the linker ---- */

typedef CUresult (*lcreate_fn)(unsigned int, CUjit_option *, void **, CUlinkState *);
static CUresult h_lcreate(struct jst_hook *h, int route, unsigned int n, CUjit_option *o, void **v,
                          CUlinkState *st)
{
    lcreate_fn real = (lcreate_fn)jst_hook_real(h, route);
    if (!real)
        return JST_NO_REAL;
    struct jst_event ev;
    if (!jst_event_begin(&ev, h, route))
        return real(n, o, v, st);
    ev.stack_id = jst_bt_capture();
    CUresult r;
    JST_TIMED(ev, r, real(n, o, v, st));
    emit_simple(&ev, r, JST_F_HANDLE, JST_OUT(st), 1);
    jst_event_end(&ev);
    return r;
}
JST_WRAP(cuLinkCreate,
         (unsigned int numOptions, CUjit_option *options, void **optionValues,
          CUlinkState *stateOut),
         (numOptions, options, optionValues, stateOut), h_lcreate)
JST_WRAP(cuLinkCreate_v2,
         (unsigned int numOptions, CUjit_option *options, void **optionValues,
          CUlinkState *stateOut),
         (numOptions, options, optionValues, stateOut), h_lcreate)

/* Inputs whose bytes jitstall understands. */
static int link_input_known(CUjitInputType t)
{
    return t == CU_JIT_INPUT_PTX || t == CU_JIT_INPUT_CUBIN || t == CU_JIT_INPUT_FATBINARY;
}

/* Ends a link-input event: what was added, its verdict, on disk now. */
static CUresult link_add_finish(struct jst_event *ev, struct jst_load *ld, CUresult r,
                                CUlinkState st, CUjitInputType t, const char *name)
{
    size_t cap = 256 * 1024;
    uint8_t *buf = malloc(cap);
    if (buf) {
        struct jst_rec rec;
        jst_event_record(ev, &rec, buf, cap, r);
        jst_rec_u64(&rec, JST_F_HANDLE, (uint64_t)(uintptr_t)st);
        jst_rec_u64(&rec, JST_F_JIT_INPUT, (uint64_t)t);
        if (name)
            jst_rec_strn(&rec, JST_F_NAME, name, strnlen(name, 1024));
        if (ld->active)
            jst_load_post(ld, &rec, ev->dur_ns, r);
        jst_emit(&rec, 1);
        free(buf);
    }
    jst_inflight_close(ev);
    jst_load_free(ld);
    jst_event_end(ev);
    return r;
}

/* PTX added to a link is compiled in the call and cached like a load's
 * (docs/DRIVER.md, "Link steps use the JIT cache"): the same cache snapshots
 * around it give the same outcome. */
typedef CUresult (*ladd_fn)(CUlinkState, CUjitInputType, void *, size_t, const char *, unsigned int,
                            CUjit_option *, void **);
static CUresult h_ladd(struct jst_hook *h, int route, CUlinkState st, CUjitInputType t, void *data,
                       size_t size, const char *name, unsigned int n, CUjit_option *o, void **v)
{
    ladd_fn real = (ladd_fn)jst_hook_real(h, route);
    if (!real)
        return JST_NO_REAL;
    struct jst_event ev;
    struct jst_load ld;
    memset(&ld, 0, sizeof ld);
    if (!jst_event_begin(&ev, h, route))
        return real(st, t, data, size, name, n, o, v);
    ev.stack_id = jst_bt_capture();
    if (data && size && link_input_known(t))
        jst_load_pre_mem(&ld, data, size, 1);
    struct begin_extra x = {
        .handle = (uint64_t)(uintptr_t)st, .has_input = 1, .input = t, .name = name};
    begin_with(&ev, &ld, &x);
    CUresult r;
    JST_TIMED(ev, r, real(st, t, data, size, name, n, o, v));
    return link_add_finish(&ev, &ld, r, st, t, name);
}
JST_WRAP(cuLinkAddData,
         (CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
          unsigned int numOptions, CUjit_option *options, void **optionValues),
         (state, type, data, size, name, numOptions, options, optionValues), h_ladd)
JST_WRAP(cuLinkAddData_v2,
         (CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
          unsigned int numOptions, CUjit_option *options, void **optionValues),
         (state, type, data, size, name, numOptions, options, optionValues), h_ladd)

typedef CUresult (*lfileadd_fn)(CUlinkState, CUjitInputType, const char *, unsigned int,
                                CUjit_option *, void **);
static CUresult h_laddfile(struct jst_hook *h, int route, CUlinkState st, CUjitInputType t,
                           const char *path, unsigned int n, CUjit_option *o, void **v)
{
    lfileadd_fn real = (lfileadd_fn)jst_hook_real(h, route);
    if (!real)
        return JST_NO_REAL;
    struct jst_event ev;
    struct jst_load ld;
    memset(&ld, 0, sizeof ld);
    if (!jst_event_begin(&ev, h, route))
        return real(st, t, path, n, o, v);
    ev.stack_id = jst_bt_capture();
    if (path && link_input_known(t))
        jst_load_pre_file(&ld, path, 1);
    struct begin_extra x = {.handle = (uint64_t)(uintptr_t)st, .has_input = 1, .input = t};
    begin_with(&ev, &ld, &x);
    CUresult r;
    JST_TIMED(ev, r, real(st, t, path, n, o, v));
    return link_add_finish(&ev, &ld, r, st, t, NULL);
}
JST_WRAP(cuLinkAddFile,
         (CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,
          CUjit_option *options, void **optionValues),
         (state, type, path, numOptions, options, optionValues), h_laddfile)
JST_WRAP(cuLinkAddFile_v2,
         (CUlinkState state, CUjitInputType type, const char *path, unsigned int numOptions,
          CUjit_option *options, void **optionValues),
         (state, type, path, numOptions, options, optionValues), h_laddfile)

typedef CUresult (*lcomplete_fn)(CUlinkState, void **, size_t *);
static CUresult h_lcomplete(struct jst_hook *h, int route, CUlinkState st, void **cubin,
                            size_t *size)
{
    lcomplete_fn real = (lcomplete_fn)jst_hook_real(h, route);
    if (!real)
        return JST_NO_REAL;
    struct jst_event ev;
    if (!jst_event_begin(&ev, h, route))
        return real(st, cubin, size);
    ev.stack_id = jst_bt_capture();
    struct begin_extra x = {.handle = (uint64_t)(uintptr_t)st};
    begin_with(&ev, NULL, &x);
    CUresult r;
    JST_TIMED(ev, r, real(st, cubin, size));
    jst_inflight_close(&ev);
    uint8_t buf[512];
    struct jst_rec rec;
    jst_event_record(&ev, &rec, buf, sizeof buf, r);
    jst_rec_u64(&rec, JST_F_HANDLE, (uint64_t)(uintptr_t)st);
    if (r == CUDA_SUCCESS && size)
        jst_rec_u64(&rec, JST_F_CUBIN_SIZE, (uint64_t)*size);
    jst_emit(&rec, 1);
    jst_event_end(&ev);
    return r;
}
JST_WRAP(cuLinkComplete, (CUlinkState state, void **cubinOut, size_t *sizeOut),
         (state, cubinOut, sizeOut), h_lcomplete)

/* ---- launches ---- */

/* The first launch of f (claimed in the seen set): timed and recorded. Later
 * launches never get here: the wrappers below return straight to the driver. */
static void launch_record(struct jst_event *ev, CUresult r, CUfunction f)
{
    uint8_t buf[1536];
    struct jst_rec rec;
    jst_event_record(ev, &rec, buf, sizeof buf, r);
    jst_rec_u64(&rec, JST_F_FUNC, (uint64_t)(uintptr_t)f);
    jst_func_describe((uintptr_t)f, &rec);
    jst_emit(&rec, 1);
}

typedef CUresult (*launch_fn)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
                              unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
#define JST_LAUNCH_PLIST                                                                           \
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,             \
        unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                    \
        unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra
#define JST_LAUNCH_ALIST                                                                           \
    f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream,     \
        kernelParams, extra
#define JST_LAUNCH_PARAMS (JST_LAUNCH_PLIST)
#define JST_LAUNCH_ARGS (JST_LAUNCH_ALIST)

__attribute__((noinline)) static CUresult h_launch_slow(struct jst_hook *h, int route,
                                                        JST_LAUNCH_PLIST)
{
    launch_fn real = (launch_fn)jst_hook_real(h, route);
    if (!real)
        return JST_NO_REAL;
    struct jst_event ev;
    if (!jst_seen_claim((uintptr_t)f) || !jst_event_begin(&ev, h, route))
        return real JST_LAUNCH_ARGS;
    ev.stack_id = jst_bt_capture();
    CUresult r;
    JST_TIMED(ev, r, real JST_LAUNCH_ARGS);
    launch_record(&ev, r, f);
    jst_event_end(&ev);
    return r;
}

typedef CUresult (*launchex_fn)(const CUlaunchConfig *, CUfunction, void **, void **);
__attribute__((noinline)) static CUresult h_launchex_slow(struct jst_hook *h, int route,
                                                          const CUlaunchConfig *config,
                                                          CUfunction f, void **kernelParams,
                                                          void **extra)
{
    launchex_fn real = (launchex_fn)jst_hook_real(h, route);
    if (!real)
        return JST_NO_REAL;
    struct jst_event ev;
    if (!jst_seen_claim((uintptr_t)f) || !jst_event_begin(&ev, h, route))
        return real(config, f, kernelParams, extra);
    ev.stack_id = jst_bt_capture();
    CUresult r;
    JST_TIMED(ev, r, real(config, f, kernelParams, extra));
    launch_record(&ev, r, f);
    jst_event_end(&ev);
    return r;
}

/* The launch path after a function's first launch: one load of the real
 * pointer, one probe of the seen set, then a tail jump into the driver. No
 * lock, no allocation, no record, and the arguments are never touched.
 *
 * Each wrapper enters its slow path through a function of the same signature.
 * On x86-64 the fast path is a few lines of assembly (launch_x86_64.S, which
 * says why); elsewhere it is the C below. */

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
#if defined(__x86_64__) && !defined(JST_NO_ASM)
/* The fast path is interpose/launch_x86_64.S; here only the declaration. */
#define JST_LAUNCH_FAST(attr, vis, fname, v, slot, idx, freg, PARAMS, ARGS, fn_t)                  \
    attr CUresult fname PARAMS;
#else
#define JST_LAUNCH_FAST(attr, vis, fname, v, slot, idx, freg, PARAMS, ARGS, fn_t)                  \
    attr CUresult fname PARAMS                                                                     \
    {                                                                                              \
        fn_t real = (fn_t)atomic_load_explicit(&jst_launch_real[idx], memory_order_relaxed);       \
        if (JST_LIKELY(real != NULL && jst_seen_has((uintptr_t)f)))                                \
            return real ARGS;                                                                      \
        return jst_slow_##fname ARGS;                                                              \
    }
#endif

#define JST_LAUNCH_WRAP1(attr, vis, fname, v, route, slot, idx)                                    \
    __attribute__((noinline, cold)) CUresult jst_slow_##fname JST_LAUNCH_PARAMS;                   \
    __attribute__((noinline, cold)) CUresult jst_slow_##fname JST_LAUNCH_PARAMS                    \
    {                                                                                              \
        return h_launch_slow(&jst_hooks[JST_H_##v], route, JST_LAUNCH_ALIST);                      \
    }                                                                                              \
    JST_LAUNCH_FAST(attr, vis, fname, v, slot, idx, "%rdi", JST_LAUNCH_PARAMS, JST_LAUNCH_ARGS,    \
                    launch_fn)
#define JST_LAUNCH_WRAP(v, i)                                                                      \
    JST_LAUNCH_WRAP1(JST_EXPORT, ".globl", v, v, JST_ROUTE_DIRECT, real, i)                        \
    JST_LAUNCH_WRAP1(JST_HIDDEN, ".hidden", jst_l_##v, v, JST_ROUTE_DLSYM, real_dl, i + 1)         \
    JST_LAUNCH_WRAP1(JST_HIDDEN, ".hidden", jst_p_##v, v, JST_ROUTE_PROCADDR, real, i)

JST_LAUNCH_WRAP(cuLaunchKernel, 0)
JST_LAUNCH_WRAP(cuLaunchKernel_ptsz, 2)

#define JST_LAUNCHEX_PARAMS                                                                        \
    (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
#define JST_LAUNCHEX_ARGS (config, f, kernelParams, extra)
#define JST_LAUNCHEX_WRAP1(attr, vis, fname, v, route, slot, idx)                                  \
    __attribute__((noinline, cold)) CUresult jst_slow_##fname JST_LAUNCHEX_PARAMS;                 \
    __attribute__((noinline, cold)) CUresult jst_slow_##fname JST_LAUNCHEX_PARAMS                  \
    {                                                                                              \
        return h_launchex_slow(&jst_hooks[JST_H_##v], route, config, f, kernelParams, extra);      \
    }                                                                                              \
    JST_LAUNCH_FAST(attr, vis, fname, v, slot, idx, "%rsi", JST_LAUNCHEX_PARAMS,                   \
                    JST_LAUNCHEX_ARGS, launchex_fn)
#define JST_LAUNCHEX_WRAP(v, i)                                                                    \
    JST_LAUNCHEX_WRAP1(JST_EXPORT, ".globl", v, v, JST_ROUTE_DIRECT, real, i)                      \
    JST_LAUNCHEX_WRAP1(JST_HIDDEN, ".hidden", jst_l_##v, v, JST_ROUTE_DLSYM, real_dl, i + 1)       \
    JST_LAUNCHEX_WRAP1(JST_HIDDEN, ".hidden", jst_p_##v, v, JST_ROUTE_PROCADDR, real, i)

JST_LAUNCHEX_WRAP(cuLaunchKernelEx, 4)
JST_LAUNCHEX_WRAP(cuLaunchKernelEx_ptsz, 6)

/* ---- cuGetProcAddress: wraps what it returns, itself included ---- */

typedef CUresult (*gpa1_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*gpa2_fn)(const char *, void **, int, cuuint64_t,
                            CUdriverProcAddressQueryResult *);

/* Replaces the pointer the real resolver returned by our wrapper of the same
 * exact variant. Nothing when tracing is switched off by JITSTALL_DISABLE. */
static void gpa_map(const char *symbol, void **pfn)
{
    if (!symbol || !pfn || !*pfn || !jst_config())
        return;
    int saved = errno;
    *pfn = jst_procaddr_map(symbol, *pfn);
    errno = saved;
}

static CUresult h_gpa1(struct jst_hook *h, int route, const char *symbol, void **pfn, int ver,
                       cuuint64_t flags)
{
    gpa1_fn real = (gpa1_fn)jst_hook_real(h, route);
    if (!real)
        return JST_NO_REAL;
    if (jst_guard)
        return real(symbol, pfn, ver, flags);
    jst_guard++;
    CUresult r = real(symbol, pfn, ver, flags);
    jst_guard--;
    if (r == CUDA_SUCCESS)
        gpa_map(symbol, pfn);
    return r;
}
JST_WRAP(cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags),
         (symbol, pfn, cudaVersion, flags), h_gpa1)

static CUresult h_gpa2(struct jst_hook *h, int route, const char *symbol, void **pfn, int ver,
                       cuuint64_t flags, CUdriverProcAddressQueryResult *status)
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
    if (jst_guard)
        return real(symbol, pfn, ver, flags, status);
    jst_guard++;
    CUresult r = real(symbol, pfn, ver, flags, status);
    jst_guard--;
    if (r == CUDA_SUCCESS)
        gpa_map(symbol, pfn);
    return r;
}
JST_WRAP(cuGetProcAddress_v2,
         (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
          CUdriverProcAddressQueryResult *symbolStatus),
         (symbol, pfn, cudaVersion, flags, symbolStatus), h_gpa2)
JST_WRAP(cuGetProcAddress_v2_ptsz,
         (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
          CUdriverProcAddressQueryResult *symbolStatus),
         (symbol, pfn, cudaVersion, flags, symbolStatus), h_gpa2)

/* ---- the table ---- */

#define JST_HOOK_ROW(v, b, c)                                                                      \
    [JST_H_##v] = {.name = #v,                                                                     \
                   .base = #b,                                                                     \
                   .call_id = c,                                                                   \
                   .wrap = {NULL, (void *)v, (void *)jst_l_##v, (void *)jst_p_##v}},
struct jst_hook jst_hooks[JST_H_COUNT] = {JST_HOOK_LIST(JST_HOOK_ROW)};

struct jst_hook *jst_hook_by_name(const char *name)
{
    if (!name || name[0] != 'c' || name[1] != 'u')
        return NULL;
    for (int i = 0; i < JST_H_COUNT; i++)
        if (strcmp(jst_hooks[i].name, name) == 0)
            return &jst_hooks[i];
    return NULL;
}
