/*
 * JITSTALL_READY: the moment a server says it is ready, so that every
 * compile after it can be called late (docs/FORMAT.md, `ready`; the forms:
 * common/readyspec.c).
 *
 *  - nvtx:NAME fires inside the program's own NVTX call (interpose/nvtx.c),
 *    on its thread: a mark, or the end of the first range named NAME.
 *  - file:PATH and after:SECONDS are never looked at on a program thread:
 *    the preload's background thread (interpose/inflight.c) polls them,
 *    which exists only once the driver is in use (the first DEVICE record,
 *    written once cuInit has succeeded).
 *
 * The same thread does the rest of the live work (jst_live_tick): the
 * metrics file rewritten every JITSTALL_LIVE_MS (interpose/metrics.c). One
 * thread for all periodic work: each more would cost every traced process.
 *
 * The READY record is flushed when written. Said before the trace file
 * exists, it waits here and is written when the file opens.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cost.h"
#include "inflight.h"
#include "metrics.h"
#include "ready.h"
#include "readyspec.h"
#include "state.h"

/* How often file: and after: are looked at. */
#define JST_READY_POLL_NS 200000000ull

static pthread_once_t ready_once = PTHREAD_ONCE_INIT;
static struct jst_ready_spec spec;
static char spec_text[JST_READY_ARG_MAX + 16]; /* the variable, copied */
static _Atomic int fired; /* 0 not yet, 1 being said, 2 said (time and thread set) */
static _Atomic int written;
static _Atomic uint64_t fired_ns;
static _Atomic uint32_t fired_tid;
static _Atomic uint64_t started_ns;
static _Atomic int driver_up; /* a DEVICE record was written: the driver is in use */

static void ready_child(void)
{
    atomic_store(&fired, 0);
    atomic_store(&written, 0);
    atomic_store(&fired_ns, 0);
    atomic_store(&started_ns, 0);
    atomic_store(&driver_up, 0);
}

static void ready_config(void)
{
    if (!jst_config_early())
        return; /* secure execution or JITSTALL_DISABLE: no JITSTALL_* is read */
    const char *v = getenv("JITSTALL_READY");
    if (!v || !*v)
        return;
    if (strlen(v) >= sizeof spec_text) {
        spec.kind = JST_READY_BAD;
        spec.why = "it is too long";
        snprintf(spec_text, sizeof spec_text, "%.60s...", v);
        return;
    }
    memcpy(spec_text, v, strlen(v) + 1);
    jst_ready_parse(spec_text, &spec);
}

static const struct jst_ready_spec *ready_spec(void)
{
    pthread_once(&ready_once, ready_config);
    return &spec;
}

int jst_ready_nvtx_is(const char *name)
{
    const struct jst_ready_spec *s = ready_spec();
    return s->kind == JST_READY_NVTX && name && !atomic_load(&fired) && !strcmp(name, s->arg);
}

uint64_t jst_ready_ns(void)
{
    return atomic_load(&fired) == 2 ? atomic_load(&fired_ns) : 0;
}

void jst_ready_started(uint64_t proc_start_ns)
{
    atomic_store(&started_ns, proc_start_ns);
}

/* The READY record's room: only the one caller that set `written` builds
 * it, so one static buffer serves (a path of 4 KiB is too much for the
 * stack of a program's thread). */
static uint8_t ready_buf[JST_READY_ARG_MAX + 128];

static void ready_record(struct jst_rec *r)
{
    jst_rec_begin(r, ready_buf, sizeof ready_buf, JST_REC_READY);
    jst_rec_u64(r, JST_F_START_NS, atomic_load(&fired_ns));
    jst_rec_u64(r, JST_F_TID, atomic_load(&fired_tid));
    jst_rec_str(r, JST_F_READY_SPEC, spec_text);
}

/* Writes the READY record once, when the trace is open; before it opens,
 * jst_ready_opened writes it with the opening records. */
static void ready_write(void)
{
    if (atomic_load(&fired) != 2 || atomic_load(&written))
        return;
    /* Another thread is opening the trace: jst_trace waits until it is
     * open (its opening records, jst_ready_opened, come first). */
    if (atomic_load(&jst_state) == JST_ST_OPENING)
        jst_trace();
    if (atomic_load(&jst_state) != JST_ST_ON || atomic_exchange(&written, 1))
        return;
    struct jst_rec r;
    ready_record(&r);
    jst_emit(&r, 1);
}

void jst_ready_fire(uint32_t tid)
{
    int no = 0;
    uint64_t now = jst_now_ns();
    if (!atomic_compare_exchange_strong(&fired, &no, 1))
        return;
    atomic_store(&fired_ns, now);
    atomic_store(&fired_tid, tid);
    atomic_store(&fired, 2);
    jst_dbg("ready (%s)", spec_text);
    ready_write();
}

void jst_ready_opened(struct jst_writer *w)
{
    const struct jst_ready_spec *s = ready_spec();
    if (s->kind == JST_READY_BAD) {
        char msg[160];
        uint8_t buf[512];
        struct jst_rec r;
        snprintf(msg, sizeof msg, "JITSTALL_READY=%.60s is not used: %s", spec_text, s->why);
        jst_rec_begin(&r, buf, sizeof buf, JST_REC_NOTE);
        jst_rec_str(&r, JST_F_MESSAGE, msg);
        jst_rec_u64(&r, JST_F_LEVEL, 1);
        jst_writer_emit(w, &r, 0);
    }
    if (atomic_load(&fired) == 2 && !atomic_exchange(&written, 1)) {
        struct jst_rec r;
        ready_record(&r);
        jst_writer_emit(w, &r, 1);
    }
}

/* The background thread is started here, not when the trace opens: a
 * Python process may open its trace for a compiler child before any driver
 * call (interpose/spawn.c), and a process that has not called the driver
 * gets no thread of ours. */
void jst_ready_driver_up(void)
{
    if (!atomic_exchange(&driver_up, 1) && jst_live_wanted())
        jst_inflight_host_start();
}

int jst_live_wanted(void)
{
    const struct jst_ready_spec *s = ready_spec();
    return s->kind == JST_READY_FILE || s->kind == JST_READY_AFTER || jst_metrics_live_ns();
}

/* file: and after:, looked at once; the ns until the next look, 0 when
 * there is nothing (more) to look for. */
static uint64_t ready_poll(uint64_t now)
{
    const struct jst_ready_spec *s = ready_spec();
    if (atomic_load(&fired) == 2) {
        ready_write(); /* in case the thread that said it could not write it yet */
        return atomic_load(&written) || atomic_load(&jst_state) == JST_ST_OFF ? 0
                                                                              : JST_READY_POLL_NS;
    }
    if (s->kind != JST_READY_FILE && s->kind != JST_READY_AFTER)
        return 0;
    struct stat sb;
    uint64_t t0 = atomic_load(&started_ns);
    if (s->kind == JST_READY_FILE ? stat(s->arg, &sb) == 0 : t0 && now >= t0 + s->after_ns) {
        jst_ready_fire(0);
        return atomic_load(&written) || atomic_load(&jst_state) == JST_ST_OFF ? 0
                                                                              : JST_READY_POLL_NS;
    }
    if (s->kind == JST_READY_AFTER && t0 && t0 + s->after_ns - now < JST_READY_POLL_NS)
        return t0 + s->after_ns - now;
    return JST_READY_POLL_NS;
}

uint64_t jst_live_tick(uint64_t now)
{
    uint64_t a = ready_poll(now);
    uint64_t b = jst_metrics_tick(now);
    jst_cost_add(JST_COST_PROGRESS, jst_now_ns() - now); /* the thread's own time */
    if (!a)
        return b;
    return b && b < a ? b : a;
}

void jst_ready_atfork_child(void)
{
    ready_child();
}
