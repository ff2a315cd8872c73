/*
 * Lifecycle of the preload: the constructor (configuration only), the END
 * record at exit (on_exit, and a destructor for _exit-less ends), the end of
 * a trace at exec (and its continuation when exec fails), and fork, whose
 * child writes a file of its own. The trace itself, and every record, go
 * through the sink (interpose/sink.c, interface interpose/sink.h).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bigstack.h"
#include "cost.h"
#include "ext.h"
#include "metrics.h"
#include "sink.h"
#include "state.h"
#include "launch.h"
#include "inflight.h"
#include "nvtx.h"
#include "startenv.h"
#include "children.h"
#include "sampler.h"
#include "fwcache.h"
#include "pyevents.h"

/* ---- exit ---- */

/* The reader of a trace must know that first launches are missing. */
static void note_dropped(uint64_t dropped)
{
    char msg[256];
    snprintf(msg, sizeof msg,
             "%llu launches of functions not checked for a first launch: too many functions "
             "were loaded at once; their first launches are missing",
             (unsigned long long)dropped);
    jst_note(1, msg);
}

static void end_here(const char *reason, int status, int have_status, const char *exec_path)
{
    int saved = errno;
    jst_spawn_flush(); /* compiler children still due (spawn.c) */
    jst_guard++;
    uint64_t t0 = jst_now_ns();
    jst_cupti_flush();
    uint64_t t1 = jst_now_ns();
    jst_sink_cache_state(1);
    jst_cost_add(JST_COST_CACHE_EXIT, jst_now_ns() - t1);
    uint64_t dropped = jst_seen_dropped();
    if (dropped)
        note_dropped(dropped);
    /* On the heap: exit and exec may run on a thread with a small stack.
     * Without it the END record overflows and is not written. */
    size_t cap = 256 + PATH_MAX;
    uint8_t *buf = malloc(cap);
    struct jst_rec r;
    jst_rec_begin(&r, buf, buf ? cap : 0, JST_REC_END);
    if (dropped)
        jst_rec_u64(&r, JST_F_DROPPED, dropped);
    jst_rec_u64(&r, JST_F_START_NS, jst_now_ns());
    if (have_status)
        jst_rec_i64(&r, JST_F_EXIT_STATUS, status);
    jst_rec_u64(&r, JST_F_EVENTS, jst_sink_events());
    jst_rec_str(&r, JST_F_END_REASON, reason);
    if (exec_path)
        jst_rec_strn(&r, JST_F_EXEC_PATH, exec_path, strnlen(exec_path, PATH_MAX - 1));
    jst_cost_add(JST_COST_EXIT, jst_now_ns() - t0);
    /* Everything up to here; writing END and the final flush come after. */
    uint64_t self_ns = jst_cost_self_ns();
    jst_rec_u64(&r, JST_F_SELF_NS, self_ns);
    jst_emit(&r, 1);
    free(buf);
    jst_metrics_write(self_ns);
    jst_sink_close();
    jst_cost_print();
    jst_guard--;
    errno = saved;
}

struct end_args {
    const char *reason, *exec_path;
    int status, have_status;
};

static void end_run(void *p)
{
    struct end_args *e = p;
    end_here(e->reason, e->status, e->have_status, e->exec_path);
}

static void write_end(const char *reason, int status, int have_status, const char *exec_path)
{
    /* Nothing open, or a vfork child (exit() instead of _exit()): the trace
     * and the memory are its parent's, touch neither. */
    if (!jst_sink_owned() || !jst_sink_end_once())
        return;
    /* Exit and exec may come from a thread with a small stack, and the END
     * record goes deep (cache state, compressor, Prometheus file): on a
     * thread other than the main one it is written on a stack of its own; if
     * none can be mapped and the thread's is small, the trace goes without
     * its END record (its reader says it ended early) rather than risk the
     * program. */
    struct end_args e = {reason, exec_path, status, have_status};
    jst_big_stack_call(end_run, &e, 0);
}

static void on_exit_cb(int status, void *arg)
{
    (void)arg;
    write_end("exit", status, 1, NULL);
}

/* Runs in every process, at exit: the common case (no trace) is decided
 * here, before any code outside the start-up pages is touched. */
JST_IDLE_TEXT __attribute__((destructor)) static void jst_fini(void)
{
    if (atomic_load(&jst_state) == JST_ST_ON)
        write_end("destructor", 0, 0, NULL);
}

/* The library is linked without the C runtime's start files
 * (interpose/CMakeLists.txt): their code (_init, _fini, the TM clone and
 * __cxa_finalize calls, a flag written at exit) does nothing for a C library
 * that is never unloaded, and cost every process page faults. What they
 * defined that glibc's pthread_atfork needs is the object's handle. */
__attribute__((visibility("hidden"))) void *__dso_handle = &__dso_handle;

/* ---- exec ---- */

JST_IDLE_TEXT int jst_exec_end(const char *path)
{
    /* Only the process that owns the trace: a vfork child shares our memory
     * but must not end its parent's trace. No trace (the common case) is
     * seen without leaving the start-up pages. */
    if (atomic_load(&jst_state) != JST_ST_ON || !jst_sink_owned())
        return 0;
    write_end("exec", 0, 0, path ? path : "");
    return 1;
}

void jst_exec_failed(const char *path, int err)
{
    /* The process goes on, but its trace file is complete: the rest goes to
     * a new file, opened by the next hooked call, whose first note links the
     * two (docs/FORMAT.md, "exec"). */
    jst_sink_exec_failed(path, err);
}

/* ---- fork ---- */

/* The child writes its own file: forget the parent's writer without touching
 * it, and let the next event open a new one. */
static void atfork_child(void)
{
    jst_metrics_atfork_child();
    jst_cost_atfork_child();
    jst_sink_atfork_child();
    jst_launch_atfork_child();
    jst_inflight_atfork_child();
    jst_sampler_atfork_child();
}

void jst_lifecycle_arm(void)
{
    pthread_atfork(NULL, NULL, atfork_child);
}

/* ---- start ---- */

/* Every process the preload goes into runs this, and most never call the
 * driver: so no file, no heap, no symbol lookup and no fork handler here;
 * what tracing needs comes at the first call that may trace (cfg_read in
 * sink.c, the exec wrappers' lookups in exec.c). What cannot wait: the
 * environment as the process started (before the program changes it) and
 * NVTX's variable (before the program's first range). */
__attribute__((constructor)) static void jst_ctor(void)
{
    if (!jst_config_early())
        return;
    jst_startenv_save();
    jst_nvtx_start();
    jst_spawn_start();
}

/* Called by the sink once a trace file is open: the END record is written
 * at exit from then on. */
void jst_lifecycle_opened(void)
{
    jst_spawn_opened();
    if (jst_fwcache_python())
        jst_fwcache_once(); /* a Python process: the frameworks' caches as found */
    jst_pyevents_opened();
    static int registered;
    if (!registered) {
        registered = 1;
        on_exit(on_exit_cb, NULL);
    }
}
