/*
 * The heavy libraries of the preload, loaded only by a process that reaches
 * the driver. libjitstall.so has no DT_NEEDED on libunwind (which would pull
 * liblzma in too): an idle preloaded process (a shell, a compiler started by
 * `jitstall run -- make test`) maps nothing of it. libunwind is dlopen'ed,
 * RTLD_LOCAL, just before the trace file is opened. zstd and lz4 are linked
 * in as static PIC copies with hidden symbols (interpose/CMakeLists.txt):
 * they cost nothing until used and never interpose on the program's own.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "cost.h"
#include "state.h"

typedef int (*jst_unw_bt_fn)(void **, int);

/* Set once libunwind is loaded; read lock-free by jst_unw_backtrace(). */
static jst_unw_bt_fn _Atomic unw_bt;
static _Atomic int unw_tried;
/* Why libunwind is missing, for the trace's first note: written once, by
 * the thread that claims it, and read once published. */
static char unw_why[512];
static _Atomic int unw_why_claimed, unw_why_published;

/* Why no pthread_once: a hook called from another library's constructor runs
 * with the loader's lock held; a second thread inside the once routine would
 * wait for that lock, and the first for the once routine. Two threads that
 * both dlopen just take two references to the same library. */
void jst_lazylib_load(void)
{
    if (atomic_load_explicit(&unw_tried, memory_order_acquire))
        return;
    uint64_t t0 = jst_now_ns();
    /* JITSTALL_UNWIND_LIB: another libunwind (unusual installs, tests). */
    const char *lib = getenv("JITSTALL_UNWIND_LIB");
    void *h;
    if (lib && *lib) {
        h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    } else {
        lib = "libunwind.so.8";
        h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            h = dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
    }
    jst_unw_bt_fn f = h ? (jst_unw_bt_fn)dlsym(h, "unw_backtrace") : NULL;
    if (f) {
        atomic_store_explicit(&unw_bt, f, memory_order_release);
    } else {
        const char *e = dlerror();
        if (!atomic_exchange(&unw_why_claimed, 1)) {
            snprintf(unw_why, sizeof unw_why,
                     "%.300s could not be loaded (%.150s): this trace has no call stacks", lib,
                     e ? e : "no unw_backtrace");
            atomic_store_explicit(&unw_why_published, 1, memory_order_release);
            jst_dbg("%s", unw_why);
        }
    }
    atomic_store_explicit(&unw_tried, 1, memory_order_release);
    jst_cost_add(JST_COST_LIBS, jst_now_ns() - t0);
}

const char *jst_lazylib_missing(void)
{
    return atomic_load_explicit(&unw_why_published, memory_order_acquire) ? unw_why : NULL;
}

int jst_unw_backtrace(void **buf, int n)
{
    jst_unw_bt_fn f = atomic_load_explicit(&unw_bt, memory_order_acquire);
    return f ? f(buf, n) : 0;
}
