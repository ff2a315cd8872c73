/*
 * The hooked calls that name functions and kernels: lookups by name in a
 * module or library (noted, so that a first launch can say where its
 * function came from), cuKernelGetFunction, and the unloads, which forget
 * their functions so that a reused address is new again. Lookups are not
 * flushed: they are frequent and cheap. Each wrapper has the exact signature
 * of the variant it stands for, calls the real function exactly once with
 * the same arguments, and returns its result unchanged.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "state.h"
#include "hooks_wrap.h"
#include "launch.h"

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

/* A function or kernel looked up by name in a module or library: the
 * variants differ only in their handle types. */
#define JST_LOOKUP_HANDLER(name, out_t, parent_t)                                                  \
    typedef CUresult (*name##_fn)(out_t *, parent_t, const char *);                                \
    static CUresult name(struct jst_hook *h, int route, out_t *out, parent_t parent,               \
                         const char *fname)                                                        \
    {                                                                                              \
        JST_HOOK_PROLOGUE(name##_fn, (out, parent, fname));                                        \
        lookup_record(&ev, r, (uintptr_t)parent, JST_OUT(out), fname);                             \
        return r;                                                                                  \
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

/* ---- unloads ---- */

typedef CUresult (*unload_fn)(void *);
static CUresult h_unload(struct jst_hook *h, int route, void *handle)
{
    JST_HOOK_PROLOGUE(unload_fn, (handle));
    jst_event_emit_simple(&ev, r, JST_F_HANDLE, (uint64_t)(uintptr_t)handle, 1);
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
