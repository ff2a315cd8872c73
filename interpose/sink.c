/*
 * The sink of the preload: configuration, the trace file (created at the
 * first hooked driver call, not in the constructor: a process that never
 * touches CUDA, such as a shell in a pipeline or a compiler started by a
 * build, leaves no file behind; a process forked by a traced one creates its
 * own at the first compiler it runs, as a pool's worker does) with its first
 * records (PROCESS, CACHE_STATE, module map, devices), the records every
 * hook emits, event numbers and thread ids, which records end their block at
 * once, the children the process reaped (REAP), turning tracing off on
 * failure, and the signal-safe debug print. The lifecycle (constructor,
 * exit, exec, fork) is interpose/init.c; it asks the sink through
 * interpose/sink.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backtrace.h"
#include "cost.h"
#include "ext.h"
#include "metrics.h"
#include "jitcache.h"
#include "sink.h"
#include "state.h"
#include "argv.h"
#include "real.h"
#include "nvtx.h"
#include "startenv.h"

#ifndef JITSTALL_VERSION
#define JITSTALL_VERSION "0"
#endif

extern char **environ;

JST_START_DATA _Atomic int jst_state;
JST_START_DATA int jst_debug_on;
__thread int jst_guard __attribute__((tls_model("initial-exec")));

static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;
JST_START_DATA static int cfg_disabled; /* JITSTALL_DISABLE=1 */
static char cfg_dir[PATH_MAX];          /* trace directory ("" = cwd) */
static size_t cfg_dir_toolong;          /* length of a JITSTALL_DIR that does not fit, else 0 */
static uint32_t cfg_seen_limit;         /* JITSTALL_SEEN_LIMIT, for tests; 0: the default */
static char cfg_exe[PATH_MAX];

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
/* The writer; read by every hook without a lock, so atomic. */
static struct jst_writer *_Atomic g_writer;
/* Writers after END (one per failed exec, and the last): never freed, as
 * another thread may still hold one, and kept reachable so a leak checker in
 * the program does not report them. */
#define JST_DONE_MAX 8
static struct jst_writer *_Atomic g_writer_done[JST_DONE_MAX];
static _Atomic unsigned g_n_done;
static _Atomic uint32_t g_open_tid; /* thread creating the file (may emit meanwhile) */
static _Atomic uint64_t g_seq;
static _Atomic int g_end_done;
static _Atomic int g_trace_pid; /* process that owns the open trace */
/* This process was forked by a process whose trace was open (or by such a
 * child): it records the compilers it runs, in a trace of its own. */
static _Atomic int g_forked_traced;
static char g_trace_path[PATH_MAX + 256];    /* its file */
static char g_cont_note[PATH_MAX * 2 + 512]; /* for the next file, after a failed exec */

static void reaps_atfork_child(void);

/* ---- small helpers ---- */

uint64_t jst_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return 0;
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t jst_next_seq(void)
{
    return atomic_fetch_add_explicit(&g_seq, 1, memory_order_relaxed) + 1;
}

uint32_t jst_tid(void)
{
    return (uint32_t)syscall(SYS_gettid);
}

const char *jst_exe_path(void)
{
    return cfg_exe;
}

void jst_write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t k = write(fd, s, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return;
        s += k;
        n -= (size_t)k;
    }
}

void jst_say(const char *s, size_t n)
{
    int saved = errno;
    struct stat st;
    const struct jst_file_id *id = jst_start_stderr();
    if (id && fstat(2, &st) == 0 && st.st_dev == id->dev && st.st_ino == id->ino)
        jst_write_all(2, s, n);
    errno = saved;
}

void jst_dbg(const char *fmt, ...)
{
    if (!jst_debug_on)
        return;
    int saved = errno;
    char buf[512];
    int n = snprintf(buf, sizeof buf, "jitstall[%d]: ", (int)getpid());
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    va_end(ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    jst_say(buf, len);
    errno = saved;
}

void jst_disable(const char *reason)
{
    int saved = errno;
    int prev = atomic_exchange(&jst_state, JST_ST_OFF);
    if (prev != JST_ST_OFF) {
        char buf[512];
        int n = snprintf(buf, sizeof buf, "jitstall: tracing disabled: %s\n", reason);
        if (n > 0)
            jst_say(buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
    }
    errno = saved;
}

/* ---- configuration ---- */

JST_IDLE_TEXT int jst_secure_exec(void)
{
    return getauxval(AT_SECURE) != 0;
}

JST_START_DATA static int cfg_early_done;

JST_START_RODATA static const char name_debug[] = "JITSTALL_DEBUG";
JST_START_RODATA static const char name_disable[] = "JITSTALL_DISABLE";

/* Set, and not "0". */
JST_IDLE_TEXT static int env_on(const char *v)
{
    return v && *v && !(v[0] == '0' && v[1] == '\0');
}

/* What the constructor needs, read once: whether this process is traced at
 * all, and JITSTALL_DEBUG. Everything else waits for cfg_read. */
JST_IDLE_TEXT int jst_config_early(void)
{
    if (cfg_early_done)
        return !cfg_disabled;
    cfg_early_done = 1;
    if (jst_secure_exec()) {
        /* setuid, setgid or file capabilities: the environment belongs to a
         * less privileged user. Trace nothing and say nothing (the program's
         * stderr is not ours to write to); no path or behaviour comes from
         * JITSTALL_* in such a process (docs/jitstall-run.1.md). */
        cfg_disabled = 1;
        atomic_store(&jst_state, JST_ST_OFF);
        return 0;
    }
    jst_debug_on = env_on(getenv(name_debug));
    cfg_disabled = env_on(getenv(name_disable));
    if (cfg_disabled)
        atomic_store(&jst_state, JST_ST_OFF);
    return !cfg_disabled;
}

/* The rest of the configuration, at the first call that may trace
 * (a driver call, a cu* lookup, NVTX): a process that makes none never pays
 * for it (docs/PERFORMANCE.md, "Idle cost"). */
static void cfg_read(void)
{
    if (!jst_config_early())
        return;
    jst_metrics_init();
    const char *dir = getenv("JITSTALL_DIR");
    if (dir && *dir && strlen(dir) < sizeof cfg_dir)
        strcpy(cfg_dir, dir);
    else if (dir && *dir)
        cfg_dir_toolong = strlen(dir); /* refused when the trace would be opened */
    const char *sl = getenv("JITSTALL_SEEN_LIMIT");
    if (sl && *sl)
        cfg_seen_limit = (uint32_t)strtoul(sl, NULL, 10);
    ssize_t n = readlink("/proc/self/exe", cfg_exe, sizeof cfg_exe - 1);
    cfg_exe[n > 0 ? n : 0] = '\0';
    jst_lifecycle_arm();
    jst_dbg("config: dir=%s exe=%s", cfg_dir[0] ? cfg_dir : ".", cfg_exe);
}

int jst_config(void)
{
    pthread_once(&cfg_once, cfg_read);
    return !cfg_disabled;
}

uint32_t jst_seen_limit_override(void)
{
    jst_config();
    return cfg_seen_limit;
}

/* ---- the PROCESS record ---- */

/* Process start on the CLOCK_MONOTONIC scale, from /proc/self/stat starttime
 * (clock ticks since boot, on the CLOCK_BOOTTIME scale). */
static uint64_t stat_start(char *buf, size_t n);

static uint64_t proc_start_mono(void)
{
    enum { cap = 2048 };
    char *buf = malloc(cap); /* not on the stack: the first call may be on a small one */
    int fd = buf ? open("/proc/self/stat", O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0) {
        free(buf);
        return 0;
    }
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    uint64_t t = n > 0 ? stat_start(buf, (size_t)n) : 0;
    free(buf);
    return t;
}

/* proc_start_mono's parse of the n bytes of /proc/self/stat in buf. */
static uint64_t stat_start(char *buf, size_t n)
{
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* comm may hold spaces and parens */
    if (!p)
        return 0;
    p++;
    /* After ")": field 3 (state) ... field 22 (starttime). */
    for (int field = 3; field < 22 && *p; field++) {
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++;
    }
    unsigned long long ticks = strtoull(p, NULL, 10);
    long hz = sysconf(_SC_CLK_TCK);
    if (hz <= 0)
        return 0;
    uint64_t boot_ns = ticks * (1000000000ull / (uint64_t)hz);
    uint64_t b = clock_ns(CLOCK_BOOTTIME), m = clock_ns(CLOCK_MONOTONIC);
    uint64_t off = b > m ? b - m : 0; /* time spent suspended */
    return boot_ns > off ? boot_ns - off : 0;
}

/* Adds a string field when it fits, keeping room for the rest of the record. */
static void add_str_room(struct jst_rec *r, uint16_t key, const char *s, size_t n)
{
    if (n > 4096)
        n = 4096;
    if (r->len + n + 64 + 8192 > r->cap)
        return;
    jst_rec_strn(r, key, s, n);
}

static void emit_process(struct jst_writer *w, uint64_t rt, uint64_t mono, const char *host)
{
    size_t cap = 256 * 1024;
    uint8_t *buf = malloc(cap);
    if (!buf)
        return;
    struct jst_rec r;
    jst_rec_begin(&r, buf, cap, JST_REC_PROCESS);
    jst_rec_u64(&r, JST_F_PID, (uint64_t)getpid());
    jst_rec_u64(&r, JST_F_PPID, (uint64_t)getppid());
    jst_rec_str(&r, JST_F_HOST, host);
    jst_rec_str(&r, JST_F_EXE, cfg_exe);
    jst_rec_u64(&r, JST_F_REALTIME_NS, rt);
    jst_rec_u64(&r, JST_F_MONO_NS, mono);
    jst_rec_u64(&r, JST_F_PROC_START_NS, proc_start_mono());
    jst_rec_str(&r, JST_F_JST_VERSION, JITSTALL_VERSION);
    char *cwd = getcwd(NULL, 0);
    if (cwd)
        jst_rec_str(&r, JST_F_CWD, cwd);
    free(cwd);
    /* argv as the kernel has it, credentials redacted (argv.c) */
    int fd = jst_argv_wanted() ? open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        char *cl = malloc(65536 + 4096);
        char *red = cl ? cl + 65536 : NULL;
        ssize_t n = cl ? read(fd, cl, 65535) : -1;
        int next_secret = 0;
        if (n > 0) {
            size_t i = 0;
            while (i < (size_t)n) {
                size_t l = strnlen(cl + i, (size_t)n - i);
                size_t m = jst_arg_redact(cl + i, l, &next_secret, red, 4096);
                add_str_room(&r, JST_F_ARG, red, m);
                i += l + 1;
            }
        }
        free(cl);
        close(fd);
    }
    for (char **e = environ; e && *e; e++)
        if (strncmp(*e, "CUDA_", 5) == 0 || strncmp(*e, "JITSTALL_", 9) == 0)
            add_str_room(&r, JST_F_ENV, *e, strlen(*e));
    if (jst_writer_emit(w, &r, 1) == 0)
        jst_metrics_observe(&r);
    free(buf);
}

/* The walk at start, which exit reuses while the index is unchanged. */
static struct jst_cache_snap g_cache_start;

/* CACHE_STATE at start (phase 0) and at exit (phase 1). */
static void emit_cache_state(int phase)
{
    /* The snapshot and the record on the heap: exit may run on a small stack. */
    enum { rec_cap = 4096 + 512 };
    struct jst_cache_snap *s = malloc(sizeof *s + rec_cap);
    if (!s)
        return;
    uint8_t *buf = (uint8_t *)(s + 1);
    if (phase == 0) {
        jst_cache_snapshot(s, 1);
        g_cache_start = *s;
    } else if (jst_cache_snapshot_exit(&g_cache_start, s)) {
        jst_dbg("cache at exit: index unchanged since start, entries not walked again");
    }
    struct jst_rec r;
    jst_rec_begin(&r, buf, rec_cap, JST_REC_CACHE_STATE);
    jst_rec_u64(&r, JST_F_PHASE, (uint64_t)phase);
    jst_rec_u64(&r, JST_F_START_NS, jst_now_ns());
    jst_rec_str(&r, JST_F_CACHE_PATH, s->path);
    jst_rec_u64(&r, JST_F_CACHE_PATH_ENV, (uint64_t)s->from_env);
    jst_rec_u64(&r, JST_F_EXISTS, (uint64_t)s->exists);
    jst_rec_u64(&r, JST_F_WRITABLE, (uint64_t)s->writable);
    jst_rec_u64(&r, JST_F_SIZE_BYTES, s->size_bytes);
    jst_rec_u64(&r, JST_F_ENTRIES, s->entries);
    jst_rec_u64(&r, JST_F_MAX_BYTES, s->max_bytes);
    jst_rec_u64(&r, JST_F_DISABLED, (uint64_t)s->disabled);
    jst_emit(&r, 1);
    free(s);
}

/* A note record (level 0 info, 1 warning): a message from jitstall itself. */
void jst_note(int level, const char *msg)
{
    size_t cap = JST_REC_HDR_SIZE + strlen(msg) + 64;
    uint8_t *buf = malloc(cap); /* not on the stack: a hook may run on a small one */
    struct jst_rec r;
    jst_rec_begin(&r, buf, buf ? cap : 0, JST_REC_NOTE);
    jst_rec_u64(&r, JST_F_LEVEL, (uint64_t)level);
    jst_rec_str(&r, JST_F_MESSAGE, msg);
    jst_emit(&r, 1);
    free(buf);
}

/* ---- opening the trace ---- */

/* JITSTALL_DIR and its missing parents are created, mode 0700 (a trace holds
 * the command line and the environment's CUDA_* variables), as heaptrack and
 * nsys create their output directories. Existing directories are left as they
 * are. Stack memory only. */
static void make_trace_dir(const char *dir)
{
    size_t n = strlen(dir);
    char *buf = n && n < PATH_MAX ? strdup(dir) : NULL; /* heap: a small stack */
    if (!buf)
        return;
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0')
            continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST) {
            jst_dbg("cannot create %s: %s", buf, strerror(errno));
            break;
        }
        buf[i] = c;
    }
    free(buf);
}

static struct jst_writer *open_file_in(const char *host, uint64_t rt, char *path, size_t pathsz);

static struct jst_writer *open_file(const char *host, uint64_t rt)
{
    struct jst_writer *w = open_file_in(host, rt, g_trace_path, sizeof g_trace_path);
    if (!w)
        g_trace_path[0] = '\0';
    return w;
}

/* open_file, building the candidate names in path (n bytes: g_trace_path,
 * which holds the name of the file that was made; never the stack, which
 * may be a small thread's). */
static struct jst_writer *open_file_in(const char *host, uint64_t rt, char *path, size_t pathsz)
{
    const char *dir = cfg_dir[0] ? cfg_dir : ".";
    if (cfg_dir[0])
        make_trace_dir(cfg_dir);
    unsigned long long secs = (unsigned long long)(rt / 1000000000ull);
    for (int attempt = 0; attempt < 100; attempt++) {
        int n;
        if (attempt == 0)
            n = snprintf(path, pathsz, "%s/jitstall-%s-%d-%llu.jst", dir, host, (int)getpid(),
                         secs);
        else /* same pid and second: a program that exec'd itself */
            n = snprintf(path, pathsz, "%s/jitstall-%s-%d-%llu.%d.jst", dir, host, (int)getpid(),
                         secs, attempt);
        if (n < 0 || (size_t)n >= pathsz) {
            errno = ENAMETOOLONG;
            return NULL;
        }
        struct jst_writer *w = jst_writer_open(path);
        if (w) {
            jst_dbg("trace file %s", path);
            return w;
        }
        if (errno != EEXIST)
            return NULL;
    }
    return NULL;
}

/* Creates the file and writes the records that open it. Called with
 * open_lock held and the guard taken. */
static void trace_open_locked(void)
{
    char host[256];
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "unknown");
    host[sizeof host - 1] = '\0';
    for (char *p = host; *p; p++)
        if (*p == '/')
            *p = '_';
    if (cfg_dir_toolong) {
        /* Never fall back to the current directory: that is not where the
         * user looks, and may be a directory they did not mean to write. */
        char why[160];
        snprintf(why, sizeof why, "JITSTALL_DIR is %zu bytes long, more than PATH_MAX (%d)",
                 cfg_dir_toolong, PATH_MAX - 1);
        jst_disable(why);
        return;
    }
    uint64_t rt = clock_ns(CLOCK_REALTIME), mono = jst_now_ns();
    uint64_t t0 = mono;
    struct jst_writer *w = open_file(host, rt);
    if (!w) {
        int err = errno;
        char *why = NULL; /* heap: the first call may be on a small stack */
        int k = err == EMFILE
                    ? asprintf(&why, "file descriptors are scarce (ulimit -n): no trace rather "
                                     "than take one the program needs")
                    : asprintf(&why, "cannot create trace file in %s: %s",
                               cfg_dir[0] ? cfg_dir : "current directory", strerror(err));
        if (k < 0)
            why = NULL;
        jst_disable(why ? why : "cannot create the trace file");
        free(why);
        return;
    }
    atomic_store(&g_writer, w);
    atomic_store(&g_trace_pid, (int)getpid());
    atomic_store(&g_open_tid, jst_tid());
    atomic_store(&jst_state, JST_ST_OPENING);
    emit_process(w, rt, mono, host);
    if (g_cont_note[0]) {
        jst_note(1, g_cont_note);
        g_cont_note[0] = '\0';
    }
    if (jst_lazylib_missing())
        jst_note(1, jst_lazylib_missing());
    uint64_t t1 = jst_now_ns();
    jst_cost_add(JST_COST_OPEN, t1 - t0);
    emit_cache_state(0);
    uint64_t t2 = jst_now_ns();
    jst_cost_add(JST_COST_CACHE_START, t2 - t1);
    jst_modmap_initial();
    jst_cost_add(JST_COST_MODMAP, jst_now_ns() - t2);
    /* Not in a forked child: the driver it inherited is its parent's, and
     * the driver does not support calls in such a child; the devices are in
     * the parent's trace. */
    if (atomic_load(&jst_cuinit_ok) && !atomic_load(&g_forked_traced))
        jst_emit_devices();
    jst_nvtx_drain(w); /* NVTX ranges from before the file existed */
    jst_lifecycle_opened();
    atomic_store(&g_open_tid, 0);
    int expected = JST_ST_OPENING;
    atomic_compare_exchange_strong(&jst_state, &expected, JST_ST_ON);
}

struct jst_writer *jst_trace(void)
{
    int st = atomic_load_explicit(&jst_state, memory_order_acquire);
    if (JST_LIKELY(st == JST_ST_ON))
        return atomic_load_explicit(&g_writer, memory_order_acquire);
    if (st == JST_ST_OFF)
        return NULL;
    if (st == JST_ST_OPENING && atomic_load(&g_open_tid) == jst_tid())
        return atomic_load(&g_writer); /* the records that open the file */
    if (!jst_config())
        return NULL;
    int saved = errno;
    jst_guard++;
    /* May dlopen, so never under open_lock (see below). */
    if (atomic_load(&jst_state) == JST_ST_NEW)
        jst_lazylib_prepare();
    pthread_mutex_lock(&open_lock);
    int opened = 0;
    if (atomic_load(&jst_state) == JST_ST_NEW) {
        trace_open_locked();
        opened = atomic_load(&jst_state) == JST_ST_ON;
    }
    pthread_mutex_unlock(&open_lock);
    /* These may dlopen (libcupti): never under open_lock, which a hook run
     * from a constructor inside the loader's lock could be waiting for. */
    static _Atomic int ext_started;
    if (opened && !atomic_exchange(&ext_started, 1)) {
        uint64_t t0 = jst_now_ns();
        jst_budget_install();
        jst_driver_report();
        jst_cupti_start();
        jst_cost_add(JST_COST_EXT, jst_now_ns() - t0);
    }
    jst_budget_warn();
    jst_guard--;
    errno = saved;
    return atomic_load(&jst_state) == JST_ST_ON ? atomic_load(&g_writer) : NULL;
}

/* ---- children reaped ---- */

/* The wait wrappers (interpose/spawn.c) may run in a signal handler (a
 * SIGCHLD handler that reaps): a child's end is noted in a fixed slot there,
 * with atomics and system calls only, and written as a REAP record with the
 * next record the process emits (at the latest its END). */
#define REAP_SLOTS 64
enum { REAP_FREE = 0, REAP_WRITING, REAP_READY, REAP_TAKEN };
struct reap_slot {
    _Atomic int state;
    int pid, status;
    uint32_t tid;
    uint64_t t_ns;
};
static struct reap_slot g_reaps[REAP_SLOTS];
static _Atomic int g_reaps_ready;
static _Atomic uint64_t g_reaps_lost;

void jst_sink_reaped(int pid, int status)
{
    if (atomic_load(&jst_state) != JST_ST_ON || atomic_load(&g_trace_pid) != (int)getpid())
        return;
    int saved = errno;
    for (int i = 0; i < REAP_SLOTS; i++) {
        struct reap_slot *s = &g_reaps[i];
        int e = REAP_FREE;
        if (!atomic_compare_exchange_strong(&s->state, &e, REAP_WRITING))
            continue;
        s->pid = pid;
        s->status = status;
        s->tid = jst_tid();
        s->t_ns = jst_now_ns();
        atomic_store_explicit(&s->state, REAP_READY, memory_order_release);
        atomic_store(&g_reaps_ready, 1);
        errno = saved;
        return;
    }
    atomic_fetch_add(&g_reaps_lost, 1);
    errno = saved;
}

/* Writes the noted reaps into w (not flushed: the record that follows is). */
static void reaps_write(struct jst_writer *w)
{
    if (!atomic_exchange(&g_reaps_ready, 0))
        return;
    for (int i = 0; i < REAP_SLOTS; i++) {
        struct reap_slot *s = &g_reaps[i];
        int e = REAP_READY;
        if (!atomic_compare_exchange_strong_explicit(&s->state, &e, REAP_TAKEN,
                                                     memory_order_acquire, memory_order_relaxed))
            continue;
        uint8_t buf[128];
        struct jst_rec r;
        jst_rec_begin(&r, buf, sizeof buf, JST_REC_REAP);
        jst_rec_u64(&r, JST_F_CHILD_PID, (uint64_t)s->pid);
        jst_rec_u64(&r, JST_F_WAIT_STATUS, (uint64_t)(unsigned)s->status);
        jst_rec_u64(&r, JST_F_TID, s->tid);
        jst_rec_u64(&r, JST_F_START_NS, s->t_ns);
        jst_writer_emit(w, &r, 0);
        atomic_store(&s->state, REAP_FREE);
    }
}

/* A forked child has none of its parent's reaps to write. */
static void reaps_atfork_child(void)
{
    for (int i = 0; i < REAP_SLOTS; i++)
        atomic_store(&g_reaps[i].state, REAP_FREE);
    atomic_store(&g_reaps_ready, 0);
    atomic_store(&g_reaps_lost, 0);
}

int jst_sink_forked_traced(void)
{
    return atomic_load(&g_forked_traced);
}

/* Records that are rare and that a reader must not lose when the process is
 * killed, or calls _exit, right after (docs/FORMAT.md, "Blocks"): compiles,
 * loads (flushed by their hooks already), failures, notes, reaps, and the
 * records that open and end a trace. Each ends its block. */
static int rec_urgent(const struct jst_rec *r)
{
    if (r->len < JST_REC_HDR_SIZE)
        return 0;
    struct jst_record rec = {(uint16_t)(r->buf[0] | r->buf[1] << 8), 0,
                             (uint32_t)(r->len - JST_REC_HDR_SIZE), r->buf + JST_REC_HDR_SIZE};
    uint64_t res = 0;
    switch (rec.type) {
    case JST_REC_CALL:
        return jst_rec_get_u64(&rec, JST_F_RESULT, &res) && res != 0;
    case JST_REC_STACK:
    case JST_REC_MODMAP:
    case JST_REC_RANGE:
    case JST_REC_SAMPLE:
        return 0;
    default:
        return 1;
    }
}

int jst_emit(const struct jst_rec *r, int flush)
{
    if (r->overflow)
        return -1;
    struct jst_writer *w = jst_trace();
    if (!w)
        return -1;
    int saved = errno;
    if (JST_UNLIKELY(atomic_load_explicit(&g_reaps_ready, memory_order_relaxed))) {
        reaps_write(w);
        flush = 1;
    }
    if (!flush)
        flush = rec_urgent(r);
    int rc = jst_writer_emit(w, r, flush);
    if (rc == 0)
        jst_metrics_observe(r);
    char moved[256]; /* the program took the trace's descriptor: said once */
    if (jst_writer_notice(w, moved, sizeof moved))
        jst_dbg("%s", moved);
    if (rc != 0) {
        int err = errno;
        char why[256];
        switch (jst_writer_stopped(w)) {
        case JST_STOP_FILE_LIMIT:
            snprintf(why, sizeof why,
                     "cannot write the trace: %s (the file-size limit, ulimit -f): the trace "
                     "stops here",
                     strerror(EFBIG));
            break;
        case JST_STOP_NO_FDS:
            snprintf(why, sizeof why,
                     "file descriptors are scarce (ulimit -n): the trace stops here rather than "
                     "take one the program needs");
            break;
        default:
            snprintf(why, sizeof why, "cannot write the trace: %s", strerror(err));
        }
        jst_disable(why);
    }
    errno = saved;
    return rc;
}

/* ---- what the lifecycle (init.c) asks of the sink ---- */

int jst_sink_owned(void)
{
    return atomic_load(&jst_state) == JST_ST_ON && atomic_load(&g_trace_pid) == (int)getpid();
}

int jst_sink_end_once(void)
{
    return !atomic_exchange(&g_end_done, 1);
}

uint64_t jst_sink_events(void)
{
    return atomic_load(&g_seq);
}

void jst_sink_cache_state(int phase)
{
    emit_cache_state(phase);
}

void jst_sink_close(void)
{
    /* Nothing may write after END: stop first, then end the last block. */
    int expected = JST_ST_ON;
    if (!atomic_compare_exchange_strong(&jst_state, &expected, JST_ST_OFF))
        return;
    struct jst_writer *w = atomic_exchange(&g_writer, NULL);
    /* Another thread may still hold w from jst_trace(): end the stream but
     * never free it while the process lives. */
    if (w) {
        atomic_store(&g_writer_done[atomic_fetch_add(&g_n_done, 1) % JST_DONE_MAX], w);
        uint64_t t = jst_now_ns();
        jst_writer_finish(w);
        jst_cost_add(JST_COST_FLUSH, jst_now_ns() - t);
    }
}

void jst_sink_exec_failed(const char *path, int err)
{
    const char *base = strrchr(g_trace_path, '/');
    snprintf(g_cont_note, sizeof g_cont_note,
             "exec of %s failed (%s): this process's trace continues from %s", path ? path : "",
             strerror(err), base ? base + 1 : g_trace_path);
    atomic_store(&g_seq, 0);
    atomic_store(&g_end_done, 0);
    int expected = JST_ST_OFF;
    atomic_compare_exchange_strong(&jst_state, &expected, JST_ST_NEW);
}

void jst_sink_atfork_child(void)
{
    struct jst_writer *w = atomic_exchange(&g_writer, NULL);
    if (w)
        jst_writer_abandon(w);
    if (w || atomic_load(&jst_state) == JST_ST_ON || atomic_load(&jst_state) == JST_ST_OPENING)
        atomic_store(&g_forked_traced, 1);
    reaps_atfork_child();
    pthread_mutex_init(&open_lock, NULL);
    atomic_store(&g_open_tid, 0);
    atomic_store(&g_seq, 0);
    atomic_store(&g_end_done, 0);
    int st = atomic_load(&jst_state);
    if (st == JST_ST_ON || st == JST_ST_OPENING)
        atomic_store(&jst_state, JST_ST_NEW);
}
