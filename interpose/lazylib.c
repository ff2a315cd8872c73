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

#include "cost.h"
#include "state.h"

typedef int (*jst_unw_bt_fn)(void **, int);

/* Set once libunwind is loaded; read lock-free by jst_unw_backtrace(). */
static jst_unw_bt_fn _Atomic unw_bt;
static _Atomic int unw_tried;

/* Why no pthread_once: a hook called from another library's constructor runs
 * with the loader's lock held; a second thread inside the once routine would
 * wait for that lock, and the first for the once routine. Two threads that
 * both dlopen just take two references to the same library. */
void jst_lazylib_load(void)
{
    if (atomic_load_explicit(&unw_tried, memory_order_acquire))
        return;
    uint64_t t0 = jst_now_ns();
    void *h = dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        h = dlopen("libunwind.so", RTLD_NOW | RTLD_LOCAL);
    jst_unw_bt_fn f = h ? (jst_unw_bt_fn)dlsym(h, "unw_backtrace") : NULL;
    if (f)
        atomic_store_explicit(&unw_bt, f, memory_order_release);
    else
        jst_dbg("libunwind not loaded (%s): no stacks in this trace",
                jst_debug_on ? dlerror() : "");
    atomic_store_explicit(&unw_tried, 1, memory_order_release);
    jst_cost_add(JST_COST_LIBS, jst_now_ns() - t0);
}

int jst_unw_backtrace(void **buf, int n)
{
    jst_unw_bt_fn f = atomic_load_explicit(&unw_bt, memory_order_acquire);
    return f ? f(buf, n) : 0;
}
