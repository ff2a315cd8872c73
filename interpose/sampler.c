/*
 * What no hook explains: the Python work of a slow first call (Numba's
 * typing, Inductor's passes, Triton's lowering) happens between hooked calls,
 * so a thread of the preload samples the Python frames of the threads that
 * call CUDA from Python, about every JITSTALL_SAMPLE_MS (default 10) ms. No
 * signal is sent and the GIL is not taken: the frame reader (pyframes.c)
 * reads the other thread's frame chain through its checked copy, and a chain
 * that changes under it just gives no sample.
 *
 * Bounded: at most SMP_THREADS threads, each with a table of at most
 * SMP_STACKS distinct stacks (the innermost SMP_FRAMES frames) and their
 * counts, since that thread's last first launch. At the thread's next first
 * launch the table is written as SAMPLE records when compile work happened
 * on the thread in between (a compile child reaped, a runtime compile, a load
 * or link step, an XLA NVTX range), and dropped otherwise. A thread that made
 * no recorded call for SMP_IDLE_NS is not sampled (a steady-state loop that
 * only launches), and its table starts afresh when it is sampled again.
 *
 * The thread is started at the first recorded call from a Python thread,
 * never in a process that does not call CUDA from Python; JITSTALL_SAMPLE=0
 * turns it off. Its time counts in END's self_ns. The launch path after a
 * first launch is not touched.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "cost.h"
#include "pyframes.h"
#include "sampler.h"
#include "state.h"

#define SMP_THREADS 8
#define SMP_STACKS 256
#define SMP_FRAMES 8
#define SMP_TEXT (96u << 10)
#define SMP_IDLE_NS (10ull * 1000000000ull)
#define SMP_DEFAULT_MS 10
/* A sample stands for the time since the thread's previous sample, at most
 * this many periods: a read that did not check out (the chain changed under
 * it) or a late tick leaves its time to the next sample, not to nothing. */
#define SMP_MAX_GAP 10
#define SMP_MAX_MS 1000

/* One distinct stack of a window. */
struct smp_stack {
    uint64_t hash;
    uint32_t off, len; /* its packed frames in text[] (pyframes.h layout) */
    uint32_t nframes;
    uint64_t first, last, count, ns;
};

/* One sampled thread. */
struct smp_thread {
    uint32_t tid;
    unsigned long pthread_id;
    uintptr_t ts;
    _Atomic uint64_t active_ns; /* its last recorded call */
    _Atomic int compiled;       /* compile work since the window began */
    pthread_mutex_t lock;       /* the window below */
    uint64_t last_sample, window_ns;
    uint64_t window_start; /* the window began (registration, last first launch) */
    uint64_t cost_ns;      /* the sampler's own time on this thread in the window */
    int resumed;
    size_t n, text_len;
    struct smp_stack st[SMP_STACKS];
    uint8_t text[SMP_TEXT];
};

static struct smp_thread *_Atomic smp_tab[SMP_THREADS];
static _Atomic int smp_n;
static _Atomic int smp_config; /* 0 unread, 1 on, 2 off */
static uint64_t smp_period_ns;
static _Atomic int smp_started;
/* This thread's entry; checked: registration was tried. */
static __thread struct smp_thread *smp_self __attribute__((tls_model("initial-exec")));
static __thread int smp_checked __attribute__((tls_model("initial-exec")));

static int smp_on(void)
{
    int c = atomic_load(&smp_config);
    if (c)
        return c == 1;
    const char *v = getenv("JITSTALL_SAMPLE");
    const char *ms = getenv("JITSTALL_SAMPLE_MS");
    long p = ms && *ms ? atol(ms) : SMP_DEFAULT_MS;
    if (p <= 0 || p > SMP_MAX_MS)
        p = SMP_DEFAULT_MS;
    smp_period_ns = (uint64_t)p * 1000000ull;
    c = v && v[0] == '0' && !v[1] ? 2 : 1;
    atomic_store(&smp_config, c);
    return c == 1;
}

static uint64_t smp_hash(const uint8_t *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Adds one sample (frames py, taken at now) to t's window. */
static void smp_add(struct smp_thread *t, const struct jst_pyframes *py, uint64_t now)
{
    pthread_mutex_lock(&t->lock);
    uint64_t w = t->last_sample && !t->resumed ? now - t->last_sample : smp_period_ns;
    if (w > SMP_MAX_GAP * smp_period_ns)
        w = SMP_MAX_GAP * smp_period_ns;
    if (w > now - t->window_start)
        w = now - t->window_start; /* never before the window began */
    t->last_sample = now;
    t->resumed = 0;
    t->window_ns += w;
    uint64_t h = smp_hash(py->buf, py->len);
    struct smp_stack *s = NULL;
    for (size_t i = 0; i < t->n; i++)
        if (t->st[i].hash == h && t->st[i].len == py->len &&
            memcmp(t->text + t->st[i].off, py->buf, py->len) == 0) {
            s = &t->st[i];
            break;
        }
    if (!s && t->n < SMP_STACKS && t->text_len + py->len <= SMP_TEXT) {
        s = &t->st[t->n++];
        *s = (struct smp_stack){.hash = h,
                                .off = (uint32_t)t->text_len,
                                .len = (uint32_t)py->len,
                                .nframes = (uint32_t)py->n,
                                .first = now - w}; /* the time this sample stands for */
        memcpy(t->text + t->text_len, py->buf, py->len);
        t->text_len += py->len;
    }
    if (s) {
        s->last = now;
        s->count++;
        s->ns += w;
    }
    pthread_mutex_unlock(&t->lock);
}

static void smp_clear(struct smp_thread *t)
{
    t->n = t->text_len = 0;
    t->window_ns = 0;
    t->cost_ns = 0;
    t->last_sample = 0;
    t->window_start = jst_now_ns();
    atomic_store(&t->compiled, 0);
}

static void *smp_main(void *arg)
{
    (void)arg;
    jst_guard = 1; /* nothing this thread does is the program's */
    prctl(PR_SET_NAME, "jitstall-smp", 0, 0, 0);
    struct jst_pyframes *py = malloc(sizeof *py);
    if (!py)
        return NULL;
    for (;;) {
        struct timespec ts = {0, (long)smp_period_ns};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        if (atomic_load(&jst_state) == JST_ST_OFF)
            break;
        uint64_t t0 = jst_now_ns();
        int n = atomic_load(&smp_n);
        for (int i = 0; i < n && i < SMP_THREADS; i++) {
            struct smp_thread *t = atomic_load(&smp_tab[i]);
            if (!t)
                continue;
            uint64_t now = jst_now_ns();
            if (now - atomic_load(&t->active_ns) > SMP_IDLE_NS) {
                if (!t->resumed) { /* paused: the window starts afresh when it is active again */
                    pthread_mutex_lock(&t->lock);
                    smp_clear(t);
                    t->resumed = 1;
                    pthread_mutex_unlock(&t->lock);
                }
                continue;
            }
            jst_py_sample(t->ts, t->pthread_id, py, SMP_FRAMES);
            if (py->n)
                smp_add(t, py, now);
            uint64_t spent = jst_now_ns() - now;
            pthread_mutex_lock(&t->lock);
            t->cost_ns += spent;
            pthread_mutex_unlock(&t->lock);
        }
        jst_cost_add(JST_COST_SAMPLE, jst_now_ns() - t0);
    }
    free(py);
    return NULL;
}

static void smp_start(void)
{
    if (atomic_exchange(&smp_started, 1))
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    pthread_t th;
    int rc = pthread_attr_init(&attr);
    if (rc == 0) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        rc = pthread_create(&th, &attr, smp_main, NULL);
        pthread_attr_destroy(&attr);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0)
        jst_dbg("sampler thread started");
    else
        jst_dbg("no sampler thread (error %d)", rc);
}

/* Registers the calling thread when it runs Python (once per thread). */
static void smp_register(void)
{
    smp_checked = 1;
    if (!smp_on())
        return;
    uintptr_t ts = jst_py_self_state();
    if (!ts || atomic_load(&smp_n) >= SMP_THREADS)
        return;
    struct smp_thread *t = calloc(1, sizeof *t);
    if (!t)
        return;
    t->tid = jst_tid();
    t->pthread_id = (unsigned long)pthread_self();
    t->ts = ts;
    pthread_mutex_init(&t->lock, NULL);
    t->window_start = jst_now_ns();
    atomic_store(&t->active_ns, jst_now_ns());
    int i = atomic_fetch_add(&smp_n, 1);
    if (i >= SMP_THREADS) {
        free(t);
        return;
    }
    atomic_store(&smp_tab[i], t);
    smp_self = t;
    smp_start();
}

void jst_sampler_event(int compiles)
{
    if (!smp_checked)
        smp_register();
    struct smp_thread *t = smp_self;
    if (!t)
        return;
    atomic_store_explicit(&t->active_ns, jst_now_ns(), memory_order_relaxed);
    if (compiles)
        atomic_store_explicit(&t->compiled, 1, memory_order_relaxed);
}

void jst_sampler_first_launch(uint64_t seq)
{
    struct smp_thread *t = smp_self;
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    if (atomic_load(&t->compiled) && t->n) {
        uint8_t *buf = malloc(8192);
        for (size_t i = 0; buf && i < t->n; i++) {
            const struct smp_stack *s = &t->st[i];
            struct jst_rec r;
            jst_rec_begin(&r, buf, 8192, JST_REC_SAMPLE);
            jst_rec_u64(&r, JST_F_TID, t->tid);
            jst_rec_u64(&r, JST_F_START_NS, s->first);
            jst_rec_u64(&r, JST_F_DUR_NS, s->last - s->first);
            jst_rec_u64(&r, JST_F_SAMPLES, s->count);
            jst_rec_u64(&r, JST_F_SAMPLE_NS, s->ns);
            jst_rec_u64(&r, JST_F_BEFORE_SEQ, seq);
            jst_rec_u64(&r, JST_F_PERIOD_NS, smp_period_ns);
            jst_rec_u64(&r, JST_F_WINDOW_NS, t->window_ns);
            jst_rec_u64(&r, JST_F_SAMPLER_NS, t->cost_ns);
            /* The packed frames: u32 native index, u16 length, text. */
            const uint8_t *p = t->text + s->off, *end = p + s->len;
            while (p + 6 <= end) {
                uint16_t l;
                memcpy(&l, p + 4, 2);
                if (p + 6 + l > end)
                    break;
                jst_rec_strn(&r, JST_F_PY_FRAME, (const char *)p + 6, l);
                p += 6 + l;
            }
            jst_emit(&r, 0);
        }
        free(buf);
    }
    smp_clear(t);
    pthread_mutex_unlock(&t->lock);
}

void jst_sampler_atfork_child(void)
{
    /* The child has none of the parent's threads: nothing to sample. */
    for (int i = 0; i < SMP_THREADS; i++)
        atomic_store(&smp_tab[i], NULL);
    atomic_store(&smp_n, 0);
    atomic_store(&smp_started, 0);
    smp_self = NULL;
    smp_checked = 0;
}
