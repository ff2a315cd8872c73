/*
 * Calls cut short: the BEGIN record a load, link step or runtime compile
 * writes before it calls the real function, and the progress thread that
 * keeps the trace's last timestamp current while such a call runs.
 *
 * Why a thread. A process killed during a 10-minute JIT (a liveness probe,
 * `timeout`, an OOM kill) writes nothing after its BEGIN: no signal handler
 * runs on SIGKILL, and the thread stuck in the driver cannot write either. So
 * "how long had it run" can only come from something else that writes while
 * the call runs. While any call is in flight, one background thread writes a
 * tiny flushed PROGRESS record every JITSTALL_PROGRESS_MS (default 1000) ms;
 * a reader takes the time of the last record as the end of what the trace
 * saw, so a call in flight has run at least (last record - its start), short
 * by at most one period. The thread:
 *  - is created at the first BEGIN of a call that may compile (a load whose
 *    image has no SASS for the device, or could not be inspected; a link
 *    step; a runtime compile), not before: a program that never loads, or
 *    loads only SASS, never gets it (creating a thread costs about 0.1 ms);
 *  - runs with every signal blocked, so the program's signals go to its own
 *    threads exactly as before;
 *  - sleeps on a semaphore while nothing is in flight (no periodic wakeups);
 *  - never allocates and takes no lock but the trace writer's, which it holds
 *    only to compress and write(2) one small record; a program thread waits
 *    on that lock only inside a jitstall hook, never in its own code;
 *  - is created again after fork, in the child, when the child needs it.
 * The same thread hosts the preload's other periodic work (interpose/ready.c,
 * jst_live_tick: the file: and after: forms of JITSTALL_READY, the live
 * metrics file of JITSTALL_PROM_DIR). Only when such work is configured, it
 * is also started once the driver is in use (the first DEVICE record), and
 * then wakes as often as that work asks even with nothing in flight; that
 * work may allocate and write its own files, never on a program thread.
 * JITSTALL_PROGRESS_MS=0 turns the progress records off (an in-flight call then ends at the
 * last record the process wrote for another reason). The driver facts behind
 * this: docs/DRIVER.md, "A long call leaves nothing behind when the process
 * is killed"; the records: docs/FORMAT.md, `begin` and `progress`.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "cost.h"
#include "state.h"
#include "event.h"
#include "inflight.h"
#include "ready.h"

#define JST_PROGRESS_DEFAULT_MS 1000
#define JST_PROGRESS_MAX_MS 3600000

static _Atomic int inflight_n;       /* calls between BEGIN and return */
static _Atomic int progress_started; /* 0 none, 1 running (or failed for good) */
static sem_t progress_wake;
static pthread_once_t progress_once = PTHREAD_ONCE_INIT;
static uint64_t progress_ns; /* period; 0: no thread */

/* JITSTALL_PROGRESS_MS: a whole number of ms, 0 to turn the thread off. */
static void progress_config(void)
{
    const char *v = getenv("JITSTALL_PROGRESS_MS");
    uint64_t ms = JST_PROGRESS_DEFAULT_MS;
    if (v && *v) {
        char *end = NULL;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (!errno && end && *end == '\0' && v[0] != '-' && n <= JST_PROGRESS_MAX_MS)
            ms = n;
        else
            jst_dbg("JITSTALL_PROGRESS_MS=%s is not 0-%d; using %d", v, JST_PROGRESS_MAX_MS,
                    JST_PROGRESS_DEFAULT_MS);
    }
    progress_ns = ms * 1000000ull;
    sem_init(&progress_wake, 0, 0);
}

/* One PROGRESS record, flushed. Written straight to the writer: a writer
 * finished at exit refuses it quietly, where jst_emit would turn tracing off
 * and say so on the program's stderr. */
static void progress_write(int n)
{
    if (atomic_load(&jst_state) != JST_ST_ON)
        return;
    struct jst_writer *w = jst_trace();
    if (!w)
        return;
    uint8_t buf[64];
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof buf, JST_REC_PROGRESS);
    jst_rec_u64(&r, JST_F_START_NS, jst_now_ns());
    jst_rec_u64(&r, JST_F_IN_FLIGHT, (uint64_t)n);
    jst_writer_emit(w, &r, 1);
}

/* Waits until a call is in flight, or ns have passed (0: no limit). */
static void progress_idle(uint64_t ns)
{
    if (!ns) {
        while (sem_wait(&progress_wake) != 0 && errno == EINTR)
            ;
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t t = (uint64_t)ts.tv_nsec + ns;
    ts.tv_sec += (time_t)(t / 1000000000ull);
    ts.tv_nsec = (long)(t % 1000000000ull);
    while (sem_timedwait(&progress_wake, &ts) != 0 && errno == EINTR)
        ;
}

static void *progress_main(void *arg)
{
    (void)arg;
    jst_guard = 1; /* nothing this thread does is the program's */
    /* Named from inside: one prctl, where pthread_setname_np on another
     * thread opens and writes /proc/self/task/TID/comm. */
    prctl(PR_SET_NAME, "jitstall-prog", 0, 0, 0);
    uint64_t due = 0; /* the next progress record, 0: none planned */
    for (;;) {
        uint64_t now = jst_now_ns();
        uint64_t live = jst_live_tick(now); /* ns until it wants to run again, 0: never */
        int n = atomic_load(&inflight_n);
        if (n <= 0 || !progress_ns) {
            due = 0;
            progress_idle(live);
            continue;
        }
        if (!due) {
            due = now + progress_ns;
        } else if (now >= due) {
            progress_write(n);
            jst_cost_add(JST_COST_PROGRESS, jst_now_ns() - now);
            due = now + progress_ns;
        }
        uint64_t nap = due > now ? due - now : 0;
        if (live && live < nap)
            nap = live;
        struct timespec ts = {(time_t)(nap / 1000000000ull), (long)(nap % 1000000000ull)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
    return NULL;
}

/* Starts the thread once per process (again in a forked child), with every
 * signal blocked: a new thread inherits the creator's mask. */
static void progress_start(int for_live)
{
    pthread_once(&progress_once, progress_config);
    if ((!progress_ns && !for_live) || atomic_exchange(&progress_started, 1))
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_t t;
    int rc = pthread_attr_init(&attr);
    if (rc == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        rc = pthread_create(&t, &attr, progress_main, NULL);
        pthread_attr_destroy(&attr);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) {
        jst_dbg("progress thread started");
    } else {
        jst_dbg("no progress thread (error %d): calls in flight end at the last record", rc);
    }
}

void jst_inflight_open(struct jst_event *ev, struct jst_rec *r, void *buf, size_t cap)
{
    ev->seq = jst_next_seq();
    jst_rec_begin(r, buf, cap, JST_REC_BEGIN);
    jst_rec_u64(r, JST_F_SEQ, ev->seq);
    jst_rec_u64(r, JST_F_CALL_ID, ev->hook->call_id);
    jst_rec_str(r, JST_F_CALL, ev->hook->name);
    jst_rec_u64(r, JST_F_ROUTE, (uint64_t)ev->route);
    jst_rec_u64(r, JST_F_TID, ev->tid);
    jst_rec_u64(r, JST_F_START_NS, jst_now_ns());
    if (ev->stack_id)
        jst_rec_u64(r, JST_F_STACK_ID, ev->stack_id);
}

void jst_inflight_emit(struct jst_event *ev, const struct jst_rec *r, int may_compile)
{
    jst_emit(r, 1);
    ev->in_flight = 1;
    if (may_compile && !atomic_load(&progress_started))
        progress_start(0);
    if (atomic_fetch_add(&inflight_n, 1) == 0 && atomic_load(&progress_started) && progress_ns)
        sem_post(&progress_wake);
}

void jst_inflight_close(struct jst_event *ev)
{
    if (!ev->in_flight)
        return;
    ev->in_flight = 0;
    atomic_fetch_sub(&inflight_n, 1);
}

void jst_inflight_host_start(void)
{
    if (!atomic_load(&progress_started))
        progress_start(1);
}

/* The child has no progress thread and no call in flight (the calls of the
 * parent's other threads do not exist in it). */
void jst_inflight_atfork_child(void)
{
    atomic_store(&inflight_n, 0);
    jst_ready_atfork_child();
    if (atomic_load(&progress_started)) {
        sem_init(&progress_wake, 0, 0);
        atomic_store(&progress_started, 0);
    }
}
