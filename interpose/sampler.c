/*
 * What no hook explains: the Python work of a slow first call (Numba's
 * typing, Inductor's passes, Triton's lowering) happens between hooked calls,
 * so a thread of the preload samples the Python frames of the threads that
 * call CUDA from Python, about every JITSTALL_SAMPLE_MS (default 10) ms. No
 * signal is sent and the GIL is not taken: the frame reader (pyframes.c)
 * reads the other thread's frame chain through its checked copy, and a chain
 * that changes under it just gives no sample. The sampler thread never
 * creates, closes or writes a descriptor: the reader's one descriptor is
 * taken in a hook (pyread.c).
 *
 * Bounded: at most SMP_THREADS threads at a time, each with a table of at
 * most SMP_STACKS distinct stacks (the innermost SMP_FRAMES frames) and their
 * counts, since that thread's last first launch. At the thread's next first
 * launch the table is written as SAMPLE records when compile work happened
 * on the thread in between (a compile child reaped, a runtime compile, a load
 * or link step, an XLA NVTX range), and dropped otherwise. A thread that made
 * no recorded call for SMP_IDLE_NS is not sampled (a steady-state loop that
 * only launches), and its table starts afresh when it is sampled again. A
 * thread's slot is freed when it ends (a thread-specific key's destructor),
 * and an idle thread's slot may be taken by another: a process may run any
 * number of Python threads over its life.
 *
 * The thread runs only while there is something to sample: it is started at
 * a recorded driver (or runtime compiler) call from a Python thread, never in
 * a process that made none, and it ends when no registered thread has made a
 * recorded call for SMP_IDLE_NS; the next such call starts it again. It is
 * never started under a seccomp filter (a filter may kill the process for
 * the clone): a note says so. JITSTALL_SAMPLE=0 turns it off. Its time
 * counts in END's self_ns. The launch path after a first launch is not
 * touched.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

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

/* One slot for a sampled thread. gen is odd while a thread holds the slot
 * and changes at every take and release, so a holder (and the sampler, which
 * reads outside the lock) can tell the slot is still the one it had. */
struct smp_thread {
    _Atomic uint32_t gen;
    pthread_mutex_t lock; /* gen changes and everything below */
    uint32_t tid;
    unsigned long pthread_id;
    uintptr_t ts;
    _Atomic uint64_t active_ns; /* its last recorded call */
    _Atomic int compiled;       /* compile work since the window began */
    uint64_t last_sample, window_ns;
    uint64_t window_start; /* the window began (registration, last first launch) */
    uint64_t cost_ns;      /* the sampler's own time on this thread in the window */
    int resumed;
    size_t n, text_len;
    struct smp_stack st[SMP_STACKS];
    uint8_t text[SMP_TEXT];
};

static struct smp_thread *_Atomic smp_tab[SMP_THREADS];
static _Atomic unsigned smp_frees; /* slots released so far */
static _Atomic int smp_config;     /* 0 unread, 1 on, 2 off */
static uint64_t smp_period_ns;
static _Atomic int smp_running; /* a sampler thread runs, or is being started */
static _Atomic int smp_refused; /* no sampler thread in this process, ever */
static pthread_key_t smp_key;
static pthread_once_t smp_key_once = PTHREAD_ONCE_INIT;
static int smp_key_ok;

/* This thread's registration: SMP_MINE with smp_self's gen in smp_gen;
 * SMP_NO_SLOT: all were taken at smp_tried_ns, when smp_frees was
 * smp_seen_frees (tried again after a release, or SMP_IDLE_NS later, when an
 * idle thread's slot may be taken). */
enum { SMP_UNTRIED = 0, SMP_MINE, SMP_NO_PY, SMP_NO_SLOT };
static __thread int smp_reg __attribute__((tls_model("initial-exec")));
static __thread struct smp_thread *smp_self __attribute__((tls_model("initial-exec")));
static __thread uint32_t smp_gen __attribute__((tls_model("initial-exec")));
static __thread unsigned smp_seen_frees __attribute__((tls_model("initial-exec")));
static __thread uint64_t smp_tried_ns __attribute__((tls_model("initial-exec")));

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

/* Adds one sample (frames py, taken at now) to t's window, unless the slot
 * changed hands since the sample was taken (gen). */
static void smp_add(struct smp_thread *t, uint32_t gen, const struct jst_pyframes *py, uint64_t now)
{
    pthread_mutex_lock(&t->lock);
    if (atomic_load(&t->gen) != gen) {
        pthread_mutex_unlock(&t->lock);
        return;
    }
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

/* Does any slot's thread want samples (a recorded call within SMP_IDLE_NS)? */
static int smp_any_active(void)
{
    uint64_t now = jst_now_ns();
    for (int i = 0; i < SMP_THREADS; i++) {
        struct smp_thread *t = atomic_load(&smp_tab[i]);
        if (t && (atomic_load(&t->gen) & 1) && now - atomic_load(&t->active_ns) <= SMP_IDLE_NS)
            return 1;
    }
    return 0;
}

/* One tick: a sample of every active thread. 1 when any was active. */
static int smp_tick(struct jst_pyframes *py)
{
    int active = 0;
    for (int i = 0; i < SMP_THREADS; i++) {
        struct smp_thread *t = atomic_load(&smp_tab[i]);
        if (!t)
            continue;
        uint64_t now = jst_now_ns();
        pthread_mutex_lock(&t->lock);
        uint32_t gen = atomic_load(&t->gen);
        uintptr_t ts = t->ts;
        unsigned long id = t->pthread_id;
        int idle = now - atomic_load(&t->active_ns) > SMP_IDLE_NS;
        if ((gen & 1) && idle && !t->resumed) {
            smp_clear(t); /* paused: the window starts afresh when it is active again */
            t->resumed = 1;
        }
        pthread_mutex_unlock(&t->lock);
        if (!(gen & 1) || idle)
            continue;
        active = 1;
        jst_py_sample(ts, id, py, SMP_FRAMES);
        if (py->n)
            smp_add(t, gen, py, now);
        uint64_t spent = jst_now_ns() - now;
        pthread_mutex_lock(&t->lock);
        if (atomic_load(&t->gen) == gen)
            t->cost_ns += spent;
        pthread_mutex_unlock(&t->lock);
    }
    return active;
}

static void *smp_main(void *arg)
{
    (void)arg;
    jst_guard = 1; /* nothing this thread does is the program's */
    prctl(PR_SET_NAME, "jitstall-smp", 0, 0, 0);
    struct jst_pyframes *py = malloc(sizeof *py);
    for (;;) {
        struct timespec ts = {0, (long)smp_period_ns};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        if (!py || atomic_load(&jst_state) == JST_ST_OFF) {
            atomic_store(&smp_refused, 1); /* smp_running stays set: no restart */
            break;
        }
        uint64_t t0 = jst_now_ns();
        int active = smp_tick(py);
        jst_cost_add(JST_COST_SAMPLE, jst_now_ns() - t0);
        if (active)
            continue;
        /* Nothing to sample: end. A thread that became active meanwhile sees
         * smp_running 0 and starts a new sampler, unless this one goes on. */
        atomic_store(&smp_running, 0);
        int zero = 0;
        if (!smp_any_active() || !atomic_compare_exchange_strong(&smp_running, &zero, 1))
            break;
    }
    free(py);
    jst_dbg("sampler thread ends");
    return NULL;
}

/* The seccomp mode of the calling thread (a new thread gets its filters):
 * 0 none, 2 a filter, -1 unknown; *threads: the process's thread count (0
 * unknown). */
static int smp_seccomp(long *threads)
{
    enum { cap = 4096 };
    char *buf = malloc(cap); /* not on the stack: the hook may run on a small one */
    int fd = buf ? open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC) : -1;
    int mode = -1;
    *threads = 0;
    if (fd >= 0) {
        ssize_t n = read(fd, buf, cap - 1);
        close(fd);
        if (n > 0) {
            buf[n] = '\0';
            const char *p = strstr(buf, "\nSeccomp:");
            if (p)
                mode = atoi(p + 9);
            p = strstr(buf, "\nThreads:");
            if (p)
                *threads = atol(p + 9);
        }
    }
    free(buf);
    return mode;
}

/* Under a seccomp filter a new thread may be refused or kill the process, and
 * the filter cannot be read. A process that already runs more than one
 * thread has shown that its filter lets it create them (the driver starts
 * its own threads in cuInit, so a CUDA program in a container under the
 * usual default profile is such a process); a single-threaded one gets no
 * thread of jitstall's, for good, with one note. */
int jst_thread_allowed(void)
{
    static _Atomic int filtered;
    if (atomic_load(&filtered))
        return 0;
    long threads;
    if (smp_seccomp(&threads) <= 0 || threads > 1)
        return 1;
    if (!atomic_exchange(&filtered, 1)) { /* a filter is never lifted */
        static const char msg[] =
            "no thread of jitstall's started: the process runs under a seccomp filter with "
            "a single thread, and the filter may refuse a new thread or kill the process for "
            "it; Python frames are not sampled (those at recorded calls are still read), and "
            "a call in flight gets no progress records";
        jst_note(1, msg);
        jst_dbg("%s", msg);
    }
    return 0;
}

/* Starts the sampler thread; smp_running is already set. */
static void smp_start(void)
{
    if (!jst_thread_allowed()) {
        atomic_store(&smp_refused, 1);
        return;
    }
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
    if (rc == 0) {
        jst_dbg("sampler thread started");
    } else {
        atomic_store(&smp_refused, 1);
        jst_dbg("no sampler thread (error %d)", rc);
    }
}

/* Starts the sampler thread unless one runs. */
static void smp_wake(void)
{
    int zero = 0;
    if (atomic_load(&smp_running) || atomic_load(&smp_refused) ||
        !atomic_compare_exchange_strong(&smp_running, &zero, 1))
        return;
    smp_start();
}

/* At the end of a thread that held a slot: the slot is free again. */
static void smp_release(void *v)
{
    struct smp_thread *t = v;
    if (!t || t != smp_self)
        return;
    pthread_mutex_lock(&t->lock);
    if (atomic_load(&t->gen) == smp_gen) {
        atomic_store(&t->gen, smp_gen + 1);
        atomic_fetch_add(&smp_frees, 1);
    }
    pthread_mutex_unlock(&t->lock);
    smp_self = NULL;
    smp_reg = SMP_NO_PY;
}

static void smp_key_make(void)
{
    smp_key_ok = pthread_key_create(&smp_key, smp_release) == 0;
}

/* Slot i, made on first use. */
static struct smp_thread *smp_slot(int i)
{
    struct smp_thread *t = atomic_load(&smp_tab[i]), *none = NULL;
    if (t)
        return t;
    t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    pthread_mutex_init(&t->lock, NULL);
    if (!atomic_compare_exchange_strong(&smp_tab[i], &none, t)) {
        free(t);
        t = none;
    }
    return t;
}

/* Takes a slot for the calling thread, state ts: a free one, else one whose
 * thread has been idle for SMP_IDLE_NS. NULL when all are busy. */
static struct smp_thread *smp_take(uintptr_t ts)
{
    uint64_t now = jst_now_ns();
    for (int steal = 0; steal < 2; steal++)
        for (int i = 0; i < SMP_THREADS; i++) {
            struct smp_thread *t = smp_slot(i);
            if (!t)
                return NULL;
            pthread_mutex_lock(&t->lock);
            uint32_t g = atomic_load(&t->gen);
            if ((g & 1) && !(steal && now - atomic_load(&t->active_ns) > SMP_IDLE_NS)) {
                pthread_mutex_unlock(&t->lock);
                continue;
            }
            g += (g & 1) ? 2 : 1;
            t->tid = jst_tid();
            t->pthread_id = (unsigned long)pthread_self();
            t->ts = ts;
            t->resumed = 0;
            smp_clear(t);
            atomic_store(&t->active_ns, now);
            atomic_store(&t->gen, g);
            smp_self = t;
            smp_gen = g;
            pthread_mutex_unlock(&t->lock);
            return t;
        }
    return NULL;
}

/* The calling thread's slot, registering it when it runs Python and has not
 * tried yet (or a slot was freed since it found none). */
static struct smp_thread *smp_mine(int may_register)
{
    struct smp_thread *t = smp_self;
    if (smp_reg == SMP_MINE && t && atomic_load_explicit(&t->gen, memory_order_relaxed) == smp_gen)
        return t;
    if (!may_register || smp_reg == SMP_NO_PY ||
        (smp_reg == SMP_NO_SLOT && smp_seen_frees == atomic_load(&smp_frees) &&
         jst_now_ns() - smp_tried_ns <= SMP_IDLE_NS))
        return NULL;
    /* Not tried, no slot before, or its slot was taken by another while it idled. */
    smp_self = NULL;
    if (!smp_on() || atomic_load(&smp_refused)) {
        smp_reg = SMP_NO_PY;
        return NULL;
    }
    uintptr_t ts = jst_py_self_state();
    if (!ts) {
        smp_reg = SMP_NO_PY;
        return NULL;
    }
    smp_seen_frees = atomic_load(&smp_frees);
    smp_tried_ns = jst_now_ns();
    t = smp_take(ts);
    if (!t) {
        smp_reg = SMP_NO_SLOT;
        return NULL;
    }
    smp_reg = SMP_MINE;
    pthread_once(&smp_key_once, smp_key_make);
    if (smp_key_ok)
        pthread_setspecific(smp_key, t);
    return t;
}

static void smp_mark(struct smp_thread *t, int compiles)
{
    atomic_store(&t->active_ns, jst_now_ns());
    if (compiles)
        atomic_store_explicit(&t->compiled, 1, memory_order_relaxed);
}

void jst_sampler_call(int compiles)
{
    struct smp_thread *t = smp_mine(1);
    if (!t)
        return;
    smp_mark(t, compiles);
    smp_wake();
}

void jst_sampler_event(int compiles)
{
    struct smp_thread *t = smp_mine(0);
    if (t)
        smp_mark(t, compiles);
}

void jst_sampler_first_launch(uint64_t seq)
{
    struct smp_thread *t = smp_mine(0);
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    if (atomic_load(&t->gen) != smp_gen) {
        pthread_mutex_unlock(&t->lock);
        return;
    }
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
    /* The child has none of the parent's threads: nothing to sample (the
     * parent's slots stay allocated, unused). */
    for (int i = 0; i < SMP_THREADS; i++)
        atomic_store(&smp_tab[i], NULL);
    atomic_store(&smp_frees, 0);
    atomic_store(&smp_running, 0);
    smp_self = NULL;
    smp_reg = SMP_UNTRIED;
    jst_py_atfork_child();
}
