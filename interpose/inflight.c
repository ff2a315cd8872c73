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
 * tiny flushed PROGRESS record; a reader takes the time of the last record as
 * the end of what the trace saw, so a call in flight has run at least (last
 * record - its start), short by at most one period. The period adapts: a
 * tenth of the time since the latest BEGIN, at least 50 ms and at most
 * JITSTALL_PROGRESS_MS (default 1000), so that past 500 ms what is lost is
 * under 10% of the time a reader shows, and a 10-minute JIT still costs one
 * record a second. The thread:
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
 * last record the process wrote for another reason).
 *
 * SIGTERM and SIGINT (a `timeout`, a scheduler, Ctrl-C) can be seen, where
 * SIGKILL cannot. While a call is in flight and the thread runs, each of the
 * two whose disposition is the default (terminate) gets a handler of ours;
 * one the program handles or ignores is left alone. The handler only notes
 * the signal and its time in a fixed slot, wakes the thread (sem_post), waits
 * at most 200 ms for it to write a PROGRESS record carrying the signal, puts
 * the default disposition back and raises the signal again: the process ends
 * by it exactly as it would have. All of it is async-signal-safe; the record
 * is written by the thread, which holds the writer's lock, never by the
 * handler. When the last call in flight returns, the default disposition is
 * put back (unless the program set its own meanwhile). The driver facts behind
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
#include <unistd.h>

#include "cost.h"
#include "sampler.h"
#include "state.h"
#include "event.h"
#include "inflight.h"
#include "ready.h"

#define JST_PROGRESS_DEFAULT_MS 1000
#define JST_PROGRESS_MAX_MS 3600000
#define JST_PROGRESS_MIN_NS 50000000ull /* the adaptive period's floor: 50 ms */
#define JST_SIGNAL_WAIT_MS 200          /* how long a fatal signal waits for its record */

static _Atomic int inflight_n;       /* calls between BEGIN and return */
static _Atomic int progress_started; /* 0 none, 1 running (or failed for good) */
static sem_t progress_wake;
static pthread_once_t progress_once = PTHREAD_ONCE_INIT;
static uint64_t progress_ns;           /* the longest period; 0: no thread */
static _Atomic uint64_t last_begin_ns; /* start of the latest BEGIN */

/* The fatal-signal slot (see the top): the first signal caught, its time,
 * and whether the thread wrote its record. */
static _Atomic int sig_no;
static _Atomic uint64_t sig_ns;
static _Atomic int sig_written;
static _Atomic int sig_owner; /* pid of the process whose thread writes for it */
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static const int sig_caught[2] = {SIGTERM, SIGINT};
static int sig_ours[2]; /* our handler is installed for sig_caught[i] (under sig_lock) */

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
static void progress_write(int n, uint64_t t, int sig)
{
    if (atomic_load(&jst_state) != JST_ST_ON)
        return;
    struct jst_writer *w = jst_trace();
    if (!w)
        return;
    uint8_t buf[64];
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof buf, JST_REC_PROGRESS);
    jst_rec_u64(&r, JST_F_START_NS, t);
    jst_rec_u64(&r, JST_F_IN_FLIGHT, (uint64_t)n);
    if (sig)
        jst_rec_u64(&r, JST_F_SIGNAL, (uint64_t)sig);
    jst_writer_emit(w, &r, 1);
}

/* The handler caught a signal whose record is not written yet. */
static int signal_pending(void)
{
    return atomic_load(&sig_no) && !atomic_load(&sig_written);
}

/* A fatal signal's record, once, when the handler asked for it. */
static void signal_write(void)
{
    int sig = atomic_load(&sig_no);
    if (!sig || atomic_load(&sig_written))
        return;
    progress_write(atomic_load(&inflight_n), atomic_load(&sig_ns), sig);
    atomic_store(&sig_written, 1);
}

/* The next period: a tenth of the time since the latest BEGIN, within
 * [JST_PROGRESS_MIN_NS, progress_ns]. */
static uint64_t progress_period(void)
{
    uint64_t now = jst_now_ns(), b = atomic_load(&last_begin_ns);
    uint64_t p = now > b ? (now - b) / 10 : 0;
    if (p < JST_PROGRESS_MIN_NS)
        p = JST_PROGRESS_MIN_NS;
    return p < progress_ns ? p : progress_ns;
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
        signal_write();
        uint64_t now = jst_now_ns();
        uint64_t live = jst_live_tick(now); /* ns until it wants to run again, 0: never */
        int n = atomic_load(&inflight_n);
        if ((n <= 0 || !progress_ns) && !signal_pending()) {
            due = 0;
            progress_idle(live);
            continue;
        }
        if (!due) {
            due = now + progress_period();
        } else if (now >= due && n > 0 && progress_ns) {
            progress_write(n, now, 0);
            jst_cost_add(JST_COST_PROGRESS, jst_now_ns() - now);
            due = now + progress_period();
        }
        uint64_t nap = due > now ? due - now : 0;
        if (live && live < nap)
            nap = live;
        /* sleep until then; only a fatal signal's sem_post ends it early (a
         * BEGIN's post that the idle wait did not take is no reason) */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t until = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + nap;
        ts.tv_sec = (time_t)(until / 1000000000ull);
        ts.tv_nsec = (long)(until % 1000000000ull);
        while (!signal_pending() &&
               (sem_clockwait(&progress_wake, CLOCK_MONOTONIC, &ts) == 0 || errno == EINTR))
            ;
    }
    return NULL;
}

/* Starts the thread once per process (again in a forked child), with every
 * signal blocked: a new thread inherits the creator's mask. */
static void progress_start(int for_live)
{
    pthread_once(&progress_once, progress_config);
    if ((!progress_ns && !for_live) || atomic_exchange(&progress_started, 1) ||
        !jst_thread_allowed())
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

/* The handler of a fatal signal whose disposition was the default: notes
 * it for the progress thread, gives the thread a moment to write it, then
 * ends the process by the same signal. Async-signal-safe only. */
static void on_fatal(int sig)
{
    int e = errno, none = 0;
    if (getpid() == atomic_load(&sig_owner) &&
        atomic_compare_exchange_strong(&sig_no, &none, sig)) {
        atomic_store(&sig_ns, jst_now_ns());
        sem_post(&progress_wake);
        for (int i = 0; i < JST_SIGNAL_WAIT_MS && !atomic_load(&sig_written); i++) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    errno = e;
    raise(sig); /* blocked until we return: then the default action, as before */
}

static int is_default(const struct sigaction *a)
{
    return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL;
}

static int is_ours(const struct sigaction *a)
{
    return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == on_fatal;
}

/* While calls are in flight: our handler for each caught signal whose
 * disposition is the default. A handler the program sets between the look
 * and the swap is put back at once. */
static void fatal_install(void)
{
    pthread_mutex_lock(&sig_lock);
    atomic_store(&sig_owner, (int)getpid());
    for (int i = 0; i < 2; i++) {
        struct sigaction cur, ours, old;
        if (sig_ours[i] || sigaction(sig_caught[i], NULL, &cur) != 0 || !is_default(&cur))
            continue;
        memset(&ours, 0, sizeof ours);
        ours.sa_handler = on_fatal;
        ours.sa_flags = SA_RESTART;
        sigemptyset(&ours.sa_mask);
        if (sigaction(sig_caught[i], &ours, &old) != 0)
            continue;
        if (is_default(&old))
            sig_ours[i] = 1;
        else
            sigaction(sig_caught[i], &old, NULL);
    }
    pthread_mutex_unlock(&sig_lock);
}

/* Nothing in flight: the default disposition back, where ours is still
 * there (the program may have set its own meanwhile: it is kept). */
static void fatal_uninstall(void)
{
    pthread_mutex_lock(&sig_lock);
    for (int i = 0; i < 2 && atomic_load(&inflight_n) <= 0; i++) {
        struct sigaction cur, dfl, old;
        if (!sig_ours[i])
            continue;
        sig_ours[i] = 0;
        if (sigaction(sig_caught[i], NULL, &cur) != 0 || !is_ours(&cur))
            continue;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        if (sigaction(sig_caught[i], &dfl, &old) == 0 && !is_ours(&old))
            sigaction(sig_caught[i], &old, NULL);
    }
    pthread_mutex_unlock(&sig_lock);
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
    atomic_store(&last_begin_ns, jst_now_ns());
    if (may_compile && !atomic_load(&progress_started))
        progress_start(0);
    int running = atomic_load(&progress_started) && progress_ns;
    if (atomic_fetch_add(&inflight_n, 1) == 0 && running) {
        fatal_install();
        sem_post(&progress_wake);
    }
}

void jst_inflight_close(struct jst_event *ev)
{
    if (!ev->in_flight)
        return;
    ev->in_flight = 0;
    if (atomic_fetch_sub(&inflight_n, 1) == 1)
        fatal_uninstall();
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
    pthread_mutex_init(&sig_lock, NULL); /* a parent's thread may have held it */
    fatal_uninstall();
    atomic_store(&sig_no, 0);
    atomic_store(&sig_written, 0);
    jst_ready_atfork_child();
    if (atomic_load(&progress_started)) {
        sem_init(&progress_wake, 0, 0);
        atomic_store(&progress_started, 0);
    }
}
