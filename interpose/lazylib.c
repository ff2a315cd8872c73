/*
 * The heavy libraries of the preload, loaded only when they pay off.
 * libjitstall.so has no DT_NEEDED on libunwind (which would pull liblzma in
 * too): an idle preloaded process (a shell, a compiler started by
 * `jitstall run -- make test`) maps nothing of it. zstd and lz4 are linked
 * in as static PIC copies with hidden symbols (interpose/CMakeLists.txt):
 * they cost nothing until used and never interpose on the program's own.
 *
 * Stacks: the first captures of a process use glibc's backtrace(), which
 * needs nothing of ours loaded (its unwinder, libgcc_s, is already there in
 * any C++ or Python program) and finds each frame's unwind table without a
 * system call, but costs about 3 us a capture. libunwind costs 0.2 us a
 * capture once warm, but loading it and its first capture cost about 0.4
 * ms, with two rt_sigprocmask per frame not seen before. So after
 * JITSTALL_UNWIND_AFTER captures (default 128, about where the two meet)
 * libunwind is dlopen'ed (RTLD_LOCAL) and used from then on; a program with
 * a few loads never pays for it (docs/PERFORMANCE.md, "Start-up and exit").
 * Where libunwind cannot be loaded, glibc's backtrace() goes on, and a note
 * says so.
 */
#include <dlfcn.h>
#include <execinfo.h>
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
static char unw_why[640];
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
                     "%.300s could not be loaded (%.150s): call stacks come from glibc's "
                     "backtrace(), about 3 us a capture instead of 0.2 us",
                     lib, e ? e : "no unw_backtrace");
            atomic_store_explicit(&unw_why_published, 1, memory_order_release);
            jst_dbg("%s", unw_why);
            /* Loaded at a capture: the trace is open, say it now. Loaded
             * before the trace opens (JITSTALL_UNWIND_AFTER=0): the opening
             * writes it as its first note (jst_lazylib_missing). */
            if (atomic_load(&jst_state) == JST_ST_ON)
                jst_note(1, unw_why);
        }
    }
    atomic_store_explicit(&unw_tried, 1, memory_order_release);
    jst_cost_add(JST_COST_LIBS, jst_now_ns() - t0);
}

const char *jst_lazylib_missing(void)
{
    return atomic_load_explicit(&unw_why_published, memory_order_acquire) ? unw_why : NULL;
}

#define JST_UNWIND_AFTER_DEFAULT 128
#define JST_UNWIND_AFTER_MAX 1000000

/* Captures left for glibc's backtrace(); -1 until JITSTALL_UNWIND_AFTER is read. */
static _Atomic long glibc_left = -1;

static long glibc_count(void)
{
    long v = atomic_load(&glibc_left);
    if (v < 0) {
        const char *e = getenv("JITSTALL_UNWIND_AFTER");
        char *end = NULL;
        long want = e && *e ? strtol(e, &end, 10) : JST_UNWIND_AFTER_DEFAULT;
        if (e && *e && (*end || want < 0 || want > JST_UNWIND_AFTER_MAX))
            want = JST_UNWIND_AFTER_DEFAULT;
        atomic_compare_exchange_strong(&glibc_left, &v, want);
        v = atomic_load(&glibc_left);
    }
    return v;
}

/* Takes one of the captures glibc's backtrace() makes: 1, or 0 when they
 * are used up and libunwind's turn has come. */
static int glibc_take(void)
{
    long v = glibc_count();
    while (v > 0)
        if (atomic_compare_exchange_weak(&glibc_left, &v, v - 1))
            return 1;
    return 0;
}

void jst_lazylib_prepare(void)
{
    if (glibc_count() > 0) {
        /* glibc loads its unwinder (libgcc_s) at the first backtrace(): here,
         * so that the library is in the initial module map and the first
         * capture of a load does not pay for it. */
        void *b[2];
        uint64_t t0 = jst_now_ns();
        backtrace(b, 2);
        jst_cost_add(JST_COST_LIBS, jst_now_ns() - t0);
    } else {
        jst_lazylib_load();
    }
}

int jst_unw_backtrace(void **buf, int n)
{
    jst_unw_bt_fn f = atomic_load_explicit(&unw_bt, memory_order_acquire);
    if (f)
        return f(buf, n);
    if (atomic_load_explicit(&unw_tried, memory_order_acquire))
        return backtrace(buf, n); /* no libunwind: glibc's for good */
    if (glibc_take()) {
        int got = backtrace(buf, n);
        if (got > 0)
            return got;
    }
    jst_lazylib_load();
    f = atomic_load_explicit(&unw_bt, memory_order_acquire);
    return f ? f(buf, n) : backtrace(buf, n);
}
