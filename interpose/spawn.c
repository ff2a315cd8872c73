/*
 * Compiler children: a traced process that runs ptxas, nvcc, cicc, nvlink,
 * fatbinary or a host C compiler as a child process waits for it, and that
 * wait is part of its first call (Triton runs ptxas and gcc, Inductor ptxas).
 * Each such child becomes a COMPILE record in the parent's trace, written
 * when the parent's wait call reaps it (docs/FORMAT.md, `compile`).
 *
 * How the parent learns what the child ran:
 *  - posix_spawn(p): the wrapper (exec.c) knows the program and arguments,
 *    and the parent's stack is captured right there.
 *  - fork or vfork, then exec: only the child sees the exec. The exec
 *    wrapper (exec.c) writes pid, time, program and arguments into a slot of
 *    a table shared with the parent: after vfork every write is the
 *    parent's memory anyway; after fork the table must be a shared mapping
 *    made before the fork (made when the trace opens). In the child nothing
 *    is allocated, locked or captured: after vfork the child runs on the
 *    parent's stack and heap, and may only write plain memory and make
 *    system calls. The parent's stack for such a child is the one of the
 *    wait call that reaps it: for Python's subprocess, the same caller.
 * The wait wrappers run in every process (a shell's waits): when no table
 * exists they only call the real function.
 *
 * Any wait call may run in a signal handler (a SIGCHLD handler that reaps
 * with waitpid(-1, &st, WNOHANG)). So a wait wrapper only marks the child's
 * slot ended (status, time, thread), with atomics and system calls, and
 * writes the record itself only when the thread cannot be in a handler
 * (context_normal); else the record waits for the next call that cannot be
 * one: a driver call, posix_spawn, system, popen, a fork outside a handler,
 * the end of the trace. Children the kernel reaps (SIGCHLD ignored) never
 * come back from a wait: waitid with WNOWAIT finds them gone.
 *
 * system and popen run a shell, which shares no memory with this process:
 * their command line says what compiler runs (see shell_words).
 *
 * Build tools and descendants: a traced process follows every child, not
 * only compilers (ninja, make, a build script, `sh -c`): each gets a COMPILE
 * record of compiler "build" from the parent's table, whatever the child is
 * (the slot is written before its exec, so a program the preload cannot
 * enter still counts, by its name). Its descendants are followed too: a
 * process learns that an ancestor is traced from a marker file in
 * JITSTALL_DIR named after its pid, made by itself just before its exec or
 * by its parent right after a posix_spawn, never from the environment; or
 * from its parent's marker (a followed process marks itself at start, so
 * that a shell's children see it). A traced process has no marker: a shell
 * of its system() or popen() is not followed (the command line says what
 * compiler it runs). A followed process records its own children the same
 * way, so its trace joins the run by parent pid (docs/FORMAT.md,
 * "Descendants"). A shell's `-c` command that runs a compiler is recorded
 * as that compiler (ninja runs each command through /bin/sh -c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "argv.h"
#include "backtrace.h"
#include "cost.h"
#include "sampler.h"
#include "sink.h"
#include "fwcache.h"
#include "real.h"
#include "children.h"
#include "startenv.h"
#include "state.h"

#define SPAWN_SLOTS 32
#define SPAWN_TEXT 1536
#define SPAWN_MAX_ARGS 64
#define SPAWN_FULL 16
#define SPAWN_CWD 256

/* A slot's life: FREE, WRITING (claimed, being filled), READY (the child
 * runs), then TAKEN (one party changes it) and ENDED (the child is gone, the
 * record is due), and TAKEN again while it is written, then FREE. Every
 * change is a compare-and-swap: a signal handler may end a slot while the
 * same thread, interrupted, was writing another. */
enum {
    SLOT_FREE = 0,
    SLOT_WRITING = 1,
    SLOT_READY = 2,
    SLOT_TAKEN = 3,
    SLOT_ENDED = 4,
};

/* How an ENDED slot's child ended. */
enum {
    END_WAIT = 1, /* a wait call of this process returned it, with its status */
    END_GONE = 2, /* found gone: the kernel (SIGCHLD ignored) or an unseen wait reaped it */
};

/* One compiler child, from its exec (or posix_spawn) until its record. */
struct spawn_slot {
    _Atomic int state;
    int pid, ppid;
    uint16_t how, nargs;
    uint16_t kind; /* JST_CC_*: JST_CC_BUILD for any other program */
    uint32_t len;  /* bytes of text used: program NUL, then each argument NUL */
    uint32_t tid;  /* posix_spawn, system, popen: the spawning thread */
    uint64_t start_ns;
    uint64_t stack_id; /* posix_spawn, popen: the parent's stack */
    /* Set when it ends (SLOT_ENDED), in whatever context that is. */
    int status, end_how;
    uint32_t end_tid;
    uint64_t end_ns, wait_t0;
    char text[SPAWN_TEXT];
    char cwd[SPAWN_CWD]; /* a build tool's working directory, "" if unknown */
};

/* Children that found every slot taken, counted per parent. */
struct spawn_full {
    _Atomic int ppid;
    _Atomic uint32_t n;
};

struct spawn_table {
    struct spawn_slot slot[SPAWN_SLOTS];
    struct spawn_full full[SPAWN_FULL];
};

/* The table, shared with children (MAP_SHARED); NULL until made. */
JST_START_DATA static struct spawn_table *_Atomic spawn_tab;
/* Slots this process ended and has not written yet (process-local). */
static _Atomic unsigned spawn_pending;
/* The note about children found gone, once per trace file. */
static _Atomic int spawn_gone_noted;

typedef pid_t (*waitpid_fn)(pid_t, int *, int);
typedef pid_t (*wait4_fn)(pid_t, int *, int, struct rusage *);
typedef int (*waitid_fn)(idtype_t, id_t, siginfo_t *, int);
JST_START_DATA static void *_Atomic real_waitpid, *_Atomic real_wait4, *_Atomic real_waitid;
JST_START_RODATA static const char name_waitpid[] = "waitpid";
JST_START_RODATA static const char name_wait4[] = "wait4";
JST_START_RODATA static const char name_waitid[] = "waitid";

JST_IDLE_TEXT static void *spawn_real(void *_Atomic *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_relaxed);
    if (!f) {
        f = jst_real_dlsym(RTLD_NEXT, name);
        atomic_store_explicit(slot, f, memory_order_relaxed);
    }
    return f;
}

/* ---- which programs are compilers (runs at every exec: start-up pages) ---- */

JST_START_RODATA static const char cc_nv[] = "ptxas\0nvcc\0cicc\0nvlink\0fatbinary\0";
JST_START_RODATA static const char cc_host[] = "gcc\0cc\0g++\0c++\0clang\0clang++\0";

/* Is s[0..n) one of the NUL-separated names in list? */
JST_IDLE_TEXT static int in_list(const char *list, const char *s, size_t n)
{
    for (const char *p = list; *p; p += strlen(p) + 1)
        if (strlen(p) == n && memcmp(p, s, n) == 0)
            return 1;
    return 0;
}

JST_IDLE_TEXT int jst_compiler_kind(const char *path)
{
    if (!path)
        return JST_CC_NONE;
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strlen(b);
    if (n == 0 || n > 64)
        return JST_CC_NONE;
    if (in_list(cc_nv, b, n)) {
        switch (b[0]) {
        case 'p':
            return JST_CC_PTXAS;
        case 'n':
            return b[2] == 'c' ? JST_CC_NVCC : JST_CC_NVLINK;
        case 'c':
            return JST_CC_CICC;
        default:
            return JST_CC_FATBINARY;
        }
    }
    /* A version after the name: gcc-12, clang++-17, gcc-12.2 */
    size_t m = n;
    size_t k = m;
    while (k > 0 && ((b[k - 1] >= '0' && b[k - 1] <= '9') || b[k - 1] == '.'))
        k--;
    if (k < m && k > 0 && b[k - 1] == '-')
        m = k - 1;
    /* A target before the name: x86_64-linux-gnu-gcc */
    size_t s = m;
    while (s > 0 && b[s - 1] != '-')
        s--;
    return in_list(cc_host, b + s, m - s) ? JST_CC_HOST : JST_CC_NONE;
}

/* ---- descendants of a traced process (runs at every exec and process
 * start: start-up pages, system calls and plain memory only) ---- */

/* "<JITSTALL_DIR>/.jst-follow-<host>-": a marker is this and a pid. Made
 * by the constructor; empty when JITSTALL_DIR is unset (nothing followed:
 * a marker may only go where the traces go). */
#define FOLLOW_PREFIX 448
static char follow_prefix[FOLLOW_PREFIX]; /* not start-up data: touched only when set */
JST_START_DATA static size_t follow_len;
/* This process descends from a traced one (its marker or its parent's). */
JST_START_DATA static _Atomic int spawn_follow;
/* The program is a Python interpreter (its executable's name): read after
 * vfork, where nothing may be looked up. */
JST_START_DATA static _Atomic int spawn_py;
JST_START_RODATA static const char follow_env[] = "JITSTALL_DIR=";
JST_START_RODATA static const char follow_mid[] = "/.jst-follow-";
JST_START_RODATA static const char name_self_exe[] = "/proc/self/exe";
JST_START_RODATA static const char name_python[] = "python";

/* The marker's path for pid into buf (FOLLOW_PREFIX + 16 bytes). */
JST_IDLE_TEXT static const char *follow_path(char *buf, int pid)
{
    char digits[12];
    size_t n = 0;
    unsigned v = pid > 0 ? (unsigned)pid : 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < sizeof digits);
    memcpy(buf, follow_prefix, follow_len);
    for (size_t i = 0; i < n; i++)
        buf[follow_len + i] = digits[n - 1 - i];
    buf[follow_len + n] = '\0';
    return buf;
}

JST_IDLE_TEXT static int follow_marked(int pid)
{
    char buf[FOLLOW_PREFIX + 16];
    if (!follow_len || pid <= 1)
        return 0;
    int saved = errno;
    int r = access(follow_path(buf, pid), F_OK) == 0;
    errno = saved;
    return r;
}

JST_IDLE_TEXT void jst_spawn_follow_mark(int pid)
{
    char buf[FOLLOW_PREFIX + 16];
    if (!follow_len || pid <= 1)
        return;
    int saved = errno;
    int fd = open(follow_path(buf, pid), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd >= 0)
        close(fd);
    errno = saved;
}

/* The child pid is gone (a wait reaped it, or it was found gone): its
 * marker has served, and a later process given the same pid must not find
 * it. unlink(2) only: this may run in a signal handler. */
JST_IDLE_TEXT static void follow_unmark(int pid)
{
    char buf[FOLLOW_PREFIX + 16];
    if (!follow_len || pid <= 1)
        return;
    int saved = errno;
    (void)unlink(follow_path(buf, pid));
    errno = saved;
}

JST_IDLE_TEXT int jst_spawn_following(void)
{
    int st = atomic_load(&jst_state);
    if (!follow_len || st == JST_ST_OFF)
        return 0;
    if (atomic_load(&spawn_follow) || st == JST_ST_ON || jst_sink_forked_traced())
        return 1;
    return atomic_load(&spawn_py);
}

static struct spawn_table *spawn_table(void);
static void spawn_arm(void);

JST_IDLE_TEXT void jst_spawn_start(void)
{
    const char *d = jst_start_dir();
    size_t el = sizeof follow_env - 1, ml = sizeof follow_mid - 1;
    if (strncmp(d, follow_env, el) != 0 || d[el] != '/')
        return; /* unset, or relative: a marker would land in each process's cwd */
    d += el;
    char host[128];
    if (gethostname(host, sizeof host) != 0)
        host[0] = '\0';
    host[sizeof host - 1] = '\0';
    size_t dl = strlen(d), hl = strlen(host);
    if (dl + ml + hl + 2 > FOLLOW_PREFIX)
        return; /* no marker fits: nothing followed */
    memcpy(follow_prefix, d, dl);
    memcpy(follow_prefix + dl, follow_mid, ml);
    for (size_t i = 0; i < hl; i++)
        follow_prefix[dl + ml + i] = host[i] == '/' ? '_' : host[i];
    follow_prefix[dl + ml + hl] = '-';
    follow_len = dl + ml + hl + 1;
    /* No lookup here (the constructor must not touch the heap): the name */
    char exe[256];
    ssize_t n = readlink(name_self_exe, exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        const char *b = strrchr(exe, '/');
        b = b ? b + 1 : exe;
        atomic_store(&spawn_py, !strncmp(b, name_python, sizeof name_python - 1));
    }
    if (atomic_load(&spawn_py))
        (void)spawn_table(); /* its fork children (not only vfork's) write to it */
    int me = (int)getpid();
    if (!follow_marked(me) && !follow_marked((int)getppid()))
        return;
    atomic_store(&spawn_follow, 1);
    jst_spawn_follow_mark(me); /* for children that look at their parent's */
    (void)spawn_table();       /* before any fork: the children write to it */
    /* spawn_arm (lookups, fork handlers) later, from a normal context: the
     * constructor must not touch the heap */
}

/* ---- the table ---- */

/* The table, made on first use (a plain system call: safe after vfork,
 * where the mapping is the parent's too). NULL when none can be had. */
static struct spawn_table *spawn_table(void)
{
    struct spawn_table *t = atomic_load(&spawn_tab);
    if (t)
        return t;
    void *m = mmap(NULL, sizeof(struct spawn_table), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    struct spawn_table *expected = NULL;
    if (!atomic_compare_exchange_strong(&spawn_tab, &expected, (struct spawn_table *)m)) {
        munmap(m, sizeof(struct spawn_table));
        return expected;
    }
    return (struct spawn_table *)m;
}

/* A child that no wait of ours reaped (its parent used a raw system call,
 * or died) leaves its slot behind: after this long it may be taken again. */
#define SPAWN_STALE_NS (600ull * 1000000000ull)

/* Claims a free slot, else a stale one; NULL when all are in use. */
static struct spawn_slot *slot_claim(struct spawn_table *t)
{
    for (int i = 0; i < SPAWN_SLOTS; i++) {
        int e = SLOT_FREE;
        if (atomic_compare_exchange_strong(&t->slot[i].state, &e, SLOT_WRITING))
            return &t->slot[i];
    }
    uint64_t now = jst_now_ns();
    for (int i = 0; i < SPAWN_SLOTS; i++) {
        int e = SLOT_READY;
        if (now - t->slot[i].start_ns > SPAWN_STALE_NS &&
            atomic_compare_exchange_strong(&t->slot[i].state, &e, SLOT_WRITING))
            return &t->slot[i];
    }
    return NULL;
}

/* A compiler child of ppid found no slot: count it for its parent's note.
 * Plain atomics on the shared table: safe after vfork and fork. */
static void full_count(struct spawn_table *t, int ppid)
{
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < SPAWN_FULL; i++) {
            int e = pass ? 0 : ppid;
            if (pass ? atomic_compare_exchange_strong(&t->full[i].ppid, &e, ppid)
                     : atomic_load(&t->full[i].ppid) == ppid) {
                atomic_fetch_add(&t->full[i].n, 1);
                return;
            }
        }
}

/* Fills s with the program and arguments (as many as fit). */
static void slot_fill(struct spawn_slot *s, const char *path, char *const argv[])
{
    size_t at = 0, n = strlen(path);
    if (n >= SPAWN_TEXT)
        n = SPAWN_TEXT - 1;
    memcpy(s->text, path, n);
    s->text[n] = '\0';
    at = n + 1;
    s->nargs = 0;
    for (size_t i = 0; argv && argv[i] && i < SPAWN_MAX_ARGS; i++) {
        size_t l = strlen(argv[i]);
        if (at + l + 1 > SPAWN_TEXT && i >= 1 && argv[i - 1][0] == '-' &&
            strchr(argv[i - 1], 'c') && at + 1 < SPAWN_TEXT) {
            /* a long command after "-c" (sh -c, as ninja runs a step): its start */
            l = SPAWN_TEXT - at - 1;
            memcpy(s->text + at, argv[i], l);
            s->text[at + l] = '\0';
            at += l + 1;
            s->nargs++;
            break;
        }
        if (at + l + 1 > SPAWN_TEXT)
            break;
        memcpy(s->text + at, argv[i], l + 1);
        at += l + 1;
        s->nargs++;
    }
    s->len = (uint32_t)at;
}

/* In the child, before the real exec: no allocation, no lock, no capture
 * (after vfork this runs on the parent's stack and heap). */
void *jst_spawn_exec_note(int kind, const char *path, char *const argv[])
{
    int saved = errno;
    struct spawn_table *t = spawn_table();
    struct spawn_slot *s = t ? slot_claim(t) : NULL;
    if (s) {
        s->pid = (int)getpid();
        s->ppid = (int)getppid();
        s->how = JST_SPAWN_EXEC;
        s->kind = (uint16_t)kind;
        s->cwd[0] = '\0';
        if (kind == JST_CC_BUILD && syscall(SYS_getcwd, s->cwd, sizeof s->cwd) <= 0)
            s->cwd[0] = '\0';
        s->tid = 0;
        s->stack_id = 0;
        s->start_ns = jst_now_ns();
        slot_fill(s, path, argv);
        atomic_store_explicit(&s->state, SLOT_READY, memory_order_release);
    } else if (t) {
        full_count(t, (int)getppid());
    }
    errno = saved;
    return s;
}

void jst_spawn_exec_failed(void *slot)
{
    struct spawn_slot *s = slot;
    int e = SLOT_READY;
    if (s)
        atomic_compare_exchange_strong(&s->state, &e, SLOT_FREE);
}

/* Should this process record its compiler children? When its trace is open,
 * or when it runs Python (Inductor's compile workers may spawn ptxas
 * before their first driver call); a build (make running gcc) does not. */
static int spawn_wanted(void)
{
    if (jst_guard || atomic_load(&jst_state) == JST_ST_OFF || !jst_config())
        return 0;
    if (atomic_load(&jst_state) == JST_ST_ON || jst_sink_forked_traced() ||
        atomic_load(&spawn_follow))
        return 1;
    return jst_fwcache_python();
}

/* ---- ending a slot: only plain memory and system calls, as a signal
 * handler may run it (STYLE: signal context) ---- */

/* Slot s (in state from) ended: what is known now, then ENDED. 1 if it
 * was this call that ended it. */
static int slot_end(struct spawn_slot *s, int from, int how, int status, uint64_t wait_t0)
{
    int e = from;
    if (!atomic_compare_exchange_strong(&s->state, &e, SLOT_TAKEN))
        return 0;
    s->status = status;
    s->end_how = how;
    s->end_ns = jst_now_ns();
    s->wait_t0 = wait_t0;
    s->end_tid = jst_tid();
    atomic_store_explicit(&s->state, SLOT_ENDED, memory_order_release);
    atomic_fetch_add(&spawn_pending, 1);
    return 1;
}

/* A wait call that began at wait_t0 returned child pid with status. */
static void spawn_ended(pid_t pid, int status, uint64_t wait_t0)
{
    jst_sink_reaped((int)pid, status); /* every child, for the REAP record */
    follow_unmark((int)pid);
    struct spawn_table *t = atomic_load(&spawn_tab);
    int me = (int)getpid();
    for (int i = 0; t && i < SPAWN_SLOTS; i++) {
        struct spawn_slot *s = &t->slot[i];
        int st = atomic_load_explicit(&s->state, memory_order_acquire);
        if ((st != SLOT_READY && st != SLOT_ENDED) || s->pid != (int)pid || s->ppid != me)
            continue;
        if (st == SLOT_READY) {
            slot_end(s, SLOT_READY, END_WAIT, status, wait_t0);
            continue;
        }
        /* Found gone by another thread's sweep between the kernel's reap and
         * this: the status is known after all. */
        int e = SLOT_ENDED;
        if (s->end_how == END_GONE && atomic_compare_exchange_strong(&s->state, &e, SLOT_TAKEN)) {
            s->status = status;
            s->wait_t0 = wait_t0;
            s->end_how = END_WAIT;
            atomic_store_explicit(&s->state, SLOT_ENDED, memory_order_release);
        }
    }
}

/* Is child pid gone, reaped without a wait of ours returning it? A child
 * that runs, or has ended and waits to be reaped, is still ours: waitid
 * with WNOWAIT says so without reaping it. */
static int child_gone(pid_t pid)
{
    waitid_fn f = (waitid_fn)atomic_load(&real_waitid);
    if (!f || pid <= 0)
        return 0;
    siginfo_t si;
    si.si_pid = 0;
    int saved = errno;
    int r = f(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT | __WALL);
    int gone = r < 0 && errno == ECHILD;
    errno = saved;
    return gone;
}

/* The children of this process whose slots are READY but who are gone:
 * the kernel reaped them (SIGCHLD ignored, SA_NOCLDWAIT) or a wait we do
 * not see did. Their slots end without a status. */
static void spawn_sweep(void)
{
    struct spawn_table *t = atomic_load(&spawn_tab);
    int me = (int)getpid();
    for (int i = 0; t && i < SPAWN_SLOTS; i++) {
        struct spawn_slot *s = &t->slot[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) == SLOT_READY && s->ppid == me &&
            child_gone(s->pid) && slot_end(s, SLOT_READY, END_GONE, 0, 0))
            follow_unmark(s->pid);
    }
}

/* Is this thread surely not running a signal handler? A handler runs with
 * its signal blocked (unless SA_NODEFER): so when no signal is blocked here
 * but ignored ones, and no handler has SA_NODEFER, none is running. Only
 * system calls. A "no" costs nothing but the record's stack: the record is
 * then written later, from a call that cannot be in a handler. */
static int context_normal(void)
{
    sigset_t cur;
    if (sigprocmask(SIG_BLOCK, NULL, &cur) != 0)
        return 0;
    for (int sig = 1; sig < NSIG; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP)
            continue;
        struct sigaction sa;
        if (sigaction(sig, NULL, &sa) != 0)
            continue;
        if (sa.sa_handler == SIG_IGN)
            continue;
        if (sigismember(&cur, sig) == 1)
            return 0; /* blocked: its handler may be running (or reset, SA_RESETHAND) */
        if (sa.sa_handler != SIG_DFL && (sa.sa_flags & SA_NODEFER))
            return 0;
    }
    return 1;
}

int jst_handler_running(void)
{
    sigset_t cur;
    if (sigprocmask(SIG_BLOCK, NULL, &cur) != 0)
        return 1;
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction sa;
        if (sigismember(&cur, sig) == 1 && sigaction(sig, NULL, &sa) == 0 &&
            sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)
            return 1;
    }
    return 0;
}

/* ---- the record, from a normal context only ---- */

static void spawn_record(struct spawn_slot *s, uint64_t stack);
static void spawn_notes(void);

/* Writes the records of this process's ENDED slots. trusted: called from a
 * function that no signal handler may call (a driver call, posix_spawn,
 * system, exit); else only when context_normal(). A slot that this thread
 * ended at or after here_t0 (nonzero) was ended by the calling function
 * itself: its record gets this stack, the wait's. */
static void spawn_drain(int trusted, uint64_t here_t0)
{
    struct spawn_table *t = atomic_load(&spawn_tab);
    if (!t || !atomic_load(&spawn_pending) || jst_guard)
        return;
    if (!trusted && !context_normal())
        return;
    int saved = errno;
    if (atomic_load(&spawn_follow))
        spawn_arm(); /* a followed process: not in a handler here */
    atomic_store(&spawn_pending, 0);
    int me = (int)getpid(), wanted = -1;
    uint32_t tid = jst_tid();
    for (int i = 0; i < SPAWN_SLOTS; i++) {
        struct spawn_slot *s = &t->slot[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_ENDED || s->ppid != me)
            continue;
        int e = SLOT_ENDED;
        if (!atomic_compare_exchange_strong(&s->state, &e, SLOT_TAKEN))
            continue;
        if (wanted < 0)
            wanted = spawn_wanted();
        if (wanted) {
            uint64_t t0 = jst_now_ns();
            int here = here_t0 && s->end_tid == tid && s->end_ns >= here_t0;
            if (s->end_tid == tid)
                jst_sampler_event(1); /* compile work on this thread (sampler.c) */
            jst_guard++;
            uint64_t stack = s->stack_id ? s->stack_id : here ? jst_bt_capture() : 0;
            spawn_record(s, stack);
            jst_cost_add(JST_COST_EVENTS, jst_now_ns() - t0);
            jst_guard--;
        }
        atomic_store(&s->state, SLOT_FREE);
    }
    errno = saved;
}

void jst_spawn_hooked(void)
{
    if (atomic_load_explicit(&spawn_pending, memory_order_relaxed))
        spawn_drain(1, 0);
}

void jst_spawn_flush(void)
{
    if (!atomic_load(&spawn_tab) || jst_guard)
        return;
    spawn_sweep();
    spawn_drain(1, 0);
    if (spawn_wanted()) {
        jst_guard++;
        spawn_notes();
        jst_guard--;
    }
}

/* Before fork (a handler may call fork): children found gone, and the
 * records due when this is not a handler, so their slots are free for the
 * children to come. Only into a trace already open: opening one registers
 * fork handlers, which glibc does not allow while it runs them. */
static void spawn_prepare(void)
{
    if (!atomic_load(&spawn_tab))
        return;
    int saved = errno;
    spawn_sweep();
    errno = saved;
    if (atomic_load(&jst_state) == JST_ST_ON)
        spawn_drain(0, 0);
}

static void spawn_atfork_child(void)
{
    atomic_store(&spawn_pending, 0);
    atomic_store(&spawn_gone_noted, 0);
}

/* The wait functions looked up and the fork handlers registered: from the
 * call that opens the trace or the constructor, never first in a signal
 * handler (dlsym takes the loader's lock). */
static void spawn_arm(void)
{
    (void)spawn_real(&real_waitpid, name_waitpid);
    (void)spawn_real(&real_wait4, name_wait4);
    (void)spawn_real(&real_waitid, name_waitid);
    static _Atomic int armed;
    if (!atomic_exchange(&armed, 1))
        pthread_atfork(spawn_prepare, NULL, spawn_atfork_child);
}

void jst_spawn_opened(void)
{
    (void)spawn_table();
    spawn_arm();
    atomic_store(&spawn_gone_noted, 0);
}

void jst_spawn_posix(const char *path, char *const argv[], pid_t pid, uint64_t start_ns)
{
    int kind = jst_compiler_kind(path);
    if (!kind && jst_spawn_following())
        kind = JST_CC_BUILD;
    if (!kind || !spawn_wanted())
        return;
    if (atomic_load(&spawn_follow))
        spawn_arm();
    int saved = errno;
    /* Slots of children gone or due are written first: room for this one. */
    spawn_sweep();
    spawn_drain(1, 0);
    uint64_t t0 = jst_now_ns();
    jst_guard++;
    struct spawn_table *t = jst_trace() ? spawn_table() : NULL;
    struct spawn_slot *s = t ? slot_claim(t) : NULL;
    if (s) {
        s->pid = (int)pid;
        s->ppid = (int)getpid();
        s->how = JST_SPAWN_POSIX;
        s->kind = (uint16_t)kind;
        s->cwd[0] = '\0';
        if (kind == JST_CC_BUILD && !getcwd(s->cwd, sizeof s->cwd))
            s->cwd[0] = '\0';
        s->tid = jst_tid();
        s->start_ns = start_ns;
        s->stack_id = jst_bt_capture();
        slot_fill(s, path, argv);
        atomic_store_explicit(&s->state, SLOT_READY, memory_order_release);
    } else if (t) {
        full_count(t, (int)getpid());
    }
    jst_guard--;
    jst_cost_add(JST_COST_EVENTS, jst_now_ns() - t0);
    errno = saved;
}

/* ---- at the reap: the record ---- */

static const char *const cc_names[] = {
    [JST_CC_PTXAS] = "ptxas",   [JST_CC_NVCC] = "nvcc",           [JST_CC_CICC] = "cicc",
    [JST_CC_NVLINK] = "nvlink", [JST_CC_FATBINARY] = "fatbinary", [JST_CC_HOST] = "host_cc",
    [JST_CC_BUILD] = "build",
};

static size_t shell_words(const char *cmd, char *buf, size_t cap, char **argv, size_t max);

/* A shell's "-c COMMAND" whose first compiler command is the compiler
 * (ninja and make run each command so): a copy of build slot s as that
 * compiler with its words, else NULL. */
static struct spawn_slot *shell_compiler(const struct spawn_slot *s, const char *const *args,
                                         size_t nargs)
{
    const char *b = strrchr(s->text, '/');
    b = b ? b + 1 : s->text;
    if (strcmp(b, "sh") && strcmp(b, "bash") && strcmp(b, "dash"))
        return NULL;
    const char *cmd = NULL;
    for (size_t i = 1; i + 1 < nargs && !cmd; i++)
        if (args[i][0] == '-' && args[i][1] != '-' && strchr(args[i], 'c'))
            cmd = args[i + 1];
    char *buf = cmd ? malloc(SPAWN_TEXT) : NULL;
    struct spawn_slot *c = buf ? malloc(sizeof *c) : NULL;
    char *argv[SPAWN_MAX_ARGS + 1];
    if (c && shell_words(cmd, buf, SPAWN_TEXT, argv, SPAWN_MAX_ARGS + 1)) {
        memcpy(c, s, offsetof(struct spawn_slot, text));
        c->kind = (uint16_t)jst_compiler_kind(argv[0]);
        c->cwd[0] = '\0';
        slot_fill(c, argv[0], argv);
    } else {
        free(c);
        c = NULL;
    }
    free(buf);
    return c;
}

/* Does option a take the next argument as its value? (the options of
 * NVIDIA's tools and of gcc/clang whose value is a separate argument) */
static int takes_value(const char *a)
{
    static const char *const opts[] = {"-o",
                                       "--output-file",
                                       "-arch",
                                       "--gpu-name",
                                       "--gpu-architecture",
                                       "-gencode",
                                       "--generate-code",
                                       "-code",
                                       "-I",
                                       "-L",
                                       "-l",
                                       "-D",
                                       "-U",
                                       "-x",
                                       "-include",
                                       "-ccbin",
                                       "--compiler-bindir",
                                       "-Xcompiler",
                                       "-Xptxas",
                                       "-Xlinker",
                                       "-Xnvlink",
                                       "-MF",
                                       "-MT",
                                       "-MQ",
                                       "-isystem",
                                       "-idirafter",
                                       "-iquote",
                                       "-maxrregcount",
                                       "--maxrregcount",
                                       "-opt-level",
                                       "--opt-level",
                                       "-O",
                                       "--options-file",
                                       "-std",
                                       "--std",
                                       "-t",
                                       "--threads",
                                       "--entry",
                                       "-e",
                                       "-Xclang",
                                       "-target",
                                       "--target",
                                       "-rpath",
                                       "-T",
                                       "-imacros",
                                       "--include-path",
                                       "--library",
                                       "--library-path",
                                       "--define-macro",
                                       "--machine",
                                       "-m"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (strcmp(a, opts[i]) == 0)
            return 1;
    return 0;
}

/* The value of option key in a ("key=V" or "key" then V in next). */
static const char *opt_value(const char *a, const char *next, const char *key, int *used_next)
{
    size_t l = strlen(key);
    *used_next = 0;
    if (strncmp(a, key, l) != 0)
        return NULL;
    if (a[l] == '=')
        return a + l + 1;
    if (a[l] == '\0' && next) {
        *used_next = 1;
        return next;
    }
    return NULL;
}

/* The target: --gpu-name, -arch, --gpu-architecture, or code= of -gencode. */
static void find_target(const char *a, const char *next, char *out, size_t cap)
{
    static const char *const keys[] = {"--gpu-name", "-arch", "--gpu-architecture",
                                       "--generate-code", "-gencode"};
    if (out[0])
        return;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        int used;
        const char *v = opt_value(a, next, keys[k], &used);
        if (!v)
            continue;
        if (k >= 3) { /* arch=compute_90,code=sm_90 */
            const char *c = strstr(v, "code=");
            if (!c)
                continue;
            v = c + 5;
        }
        size_t n = strcspn(v, ",]\"");
        if (n >= cap)
            n = cap - 1;
        memcpy(out, v, n);
        out[n] = '\0';
        return;
    }
}

/* Appends argument a as a redacted STR field key. */
static void put_redacted(struct jst_rec *r, uint16_t key, const char *a, int *secret, char *tmp,
                         size_t cap)
{
    size_t n = jst_arg_redact(a, strlen(a), secret, tmp, cap - 1);
    tmp[n] = '\0';
    jst_rec_str(r, key, tmp);
}

/* The COMPILE record of ENDED slot s, with the parent's stack (0: none). */
static void spawn_record(struct spawn_slot *s, uint64_t stack)
{
    uint64_t t0 = jst_now_ns();
    const char *prog = s->text;
    int kind = s->kind ? s->kind : jst_compiler_kind(prog);
    if (!kind || !jst_trace())
        return;
    jst_fwcache_once();
    if (s->end_how == END_GONE && !atomic_exchange(&spawn_gone_noted, 1))
        jst_note(1, "compiler children ended without a wait call of this process returning them "
                    "(SIGCHLD ignored, SA_NOCLDWAIT, or a wait jitstall does not see): their exit "
                    "status is unknown and their end is when jitstall found them gone");
    /* The arguments, as pointers into the slot's text. */
    const char *args[SPAWN_MAX_ARGS];
    size_t nargs = 0, at = strlen(prog) + 1;
    while (nargs < s->nargs && at < s->len) {
        args[nargs++] = s->text + at;
        at += strlen(s->text + at) + 1;
    }
    if (kind == JST_CC_BUILD) {
        struct spawn_slot *cc = shell_compiler(s, args, nargs);
        if (cc) {
            spawn_record(cc, stack);
            free(cc);
            return;
        }
    }
    size_t cap = SPAWN_TEXT * 2 + SPAWN_CWD + 2048;
    uint8_t *buf = malloc(cap);
    char *tmp = malloc(SPAWN_TEXT);
    if (!buf || !tmp) {
        free(buf);
        free(tmp);
        return;
    }
    struct jst_rec r;
    jst_rec_begin(&r, buf, cap, JST_REC_COMPILE);
    jst_rec_u64(&r, JST_F_SEQ, jst_next_seq());
    jst_rec_str(&r, JST_F_COMPILER, cc_names[kind]);
    jst_rec_str(&r, JST_F_PROGRAM, prog);
    if (s->pid > 0)
        jst_rec_u64(&r, JST_F_CHILD_PID, (uint64_t)s->pid);
    jst_rec_u64(&r, JST_F_SPAWN_HOW, s->how);
    jst_rec_u64(&r, JST_F_TID, s->tid ? s->tid : s->end_tid);
    jst_rec_u64(&r, JST_F_START_NS, s->start_ns);
    uint64_t now = s->end_ns;
    jst_rec_u64(&r, JST_F_DUR_NS, now > s->start_ns ? now - s->start_ns : 0);
    if (s->end_how == END_WAIT) {
        /* The wait may have begun before the child's exec: count from the later. */
        uint64_t w0 = s->wait_t0 > s->start_ns ? s->wait_t0 : s->start_ns;
        jst_rec_u64(&r, JST_F_WAIT_NS, now > w0 ? now - w0 : 0);
        jst_rec_u64(&r, JST_F_WAIT_STATUS, (uint64_t)(unsigned)s->status);
    } else {
        jst_rec_u64(&r, JST_F_END_UNSEEN, 1);
    }
    if (stack)
        jst_rec_u64(&r, JST_F_STACK_ID, stack);
    int want_args = jst_argv_wanted(), secret = 0;
    char target[64] = "";
    const char *output = NULL;
    for (size_t i = 0; i < nargs; i++) {
        const char *a = args[i], *next = i + 1 < nargs ? args[i + 1] : NULL;
        if (want_args)
            put_redacted(&r, JST_F_ARG, a, &secret, tmp, SPAWN_TEXT);
        if (i == 0)
            continue;
        find_target(a, next, target, sizeof target);
        int used = 0;
        const char *o = opt_value(a, next, "-o", &used);
        if (!o)
            o = opt_value(a, next, "--output-file", &used);
        if (!o && a[0] == '-' && a[1] == 'o' && a[2] && a[2] != '=' && kind == JST_CC_HOST)
            o = a + 2; /* gcc -ofile */
        if (o && !output)
            output = o;
    }
    if (target[0])
        jst_rec_str(&r, JST_F_TARGET, target);
    if (want_args && kind == JST_CC_BUILD && s->cwd[0] == '/') {
        int sec = 0;
        put_redacted(&r, JST_F_CWD, s->cwd, &sec, tmp, SPAWN_TEXT);
    }
    if (want_args) {
        int sec = 0;
        for (size_t i = 1; i < nargs; i++) {
            const char *a = args[i];
            if (a[0] == '-') {
                if (takes_value(a))
                    i++;
                continue;
            }
            if (a[0])
                put_redacted(&r, JST_F_INPUT, a, &sec, tmp, SPAWN_TEXT);
        }
        if (output) {
            sec = 0;
            put_redacted(&r, JST_F_OUTPUT, output, &sec, tmp, SPAWN_TEXT);
        }
    }
    struct stat st;
    if (output && stat(output, &st) == 0 && S_ISREG(st.st_mode))
        jst_rec_u64(&r, JST_F_OUT_SIZE, (uint64_t)st.st_size);
    jst_rec_u64(&r, JST_F_SELF_NS, jst_now_ns() - t0);
    jst_emit(&r, 1);
    free(buf);
    free(tmp);
}

/* At the end of the trace: a note for the compiler children of this
 * process that found every slot taken (they have no record). */
static void spawn_notes(void)
{
    struct spawn_table *t = atomic_load(&spawn_tab);
    if (!t || !jst_trace())
        return;
    int me = (int)getpid();
    uint32_t full = 0;
    for (int i = 0; i < SPAWN_FULL; i++)
        if (atomic_load(&t->full[i].ppid) == me) {
            full += atomic_exchange(&t->full[i].n, 0);
            int e = me;
            atomic_compare_exchange_strong(&t->full[i].ppid, &e, 0);
        }
    char msg[320];
    if (full) {
        snprintf(msg, sizeof msg,
                 "%u compiler children started while all %d slots of the child table were "
                 "taken: they have no compile record",
                 full, SPAWN_SLOTS);
        jst_note(1, msg);
    }
}

/* ---- the wait family (every process; only a table lookup when a child ends) ---- */

/* After a wait call that began at t0 returned r (errno err) with status st
 * (ended: the child ended, not stopped): note the child, then write what is
 * due if this is surely not a signal handler. */
JST_IDLE_TEXT static void spawn_after_wait(pid_t r, int ended, int st, uint64_t t0, int err)
{
    if (!atomic_load(&spawn_tab))
        return;
    int saved = errno;
    if (r > 0 && ended)
        spawn_ended(r, st, t0);
    else if (r < 0 && err == ECHILD)
        spawn_sweep(); /* children reaped by the kernel: SIGCHLD ignored */
    spawn_drain(0, t0);
    errno = saved;
}

JST_EXPORT JST_IDLE_TEXT pid_t waitpid(pid_t pid, int *status, int options)
{
    waitpid_fn f = (waitpid_fn)spawn_real(&real_waitpid, name_waitpid);
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    int st = 0;
    uint64_t t0 = atomic_load(&spawn_tab) ? jst_now_ns() : 0;
    pid_t r = f(pid, &st, options);
    if (status && r > 0)
        *status = st;
    spawn_after_wait(r, WIFEXITED(st) || WIFSIGNALED(st), st, t0, errno);
    return r;
}

JST_EXPORT JST_IDLE_TEXT pid_t wait(int *status)
{
    return waitpid(-1, status, 0);
}

JST_EXPORT JST_IDLE_TEXT pid_t wait4(pid_t pid, int *status, int options, struct rusage *ru)
{
    wait4_fn f = (wait4_fn)spawn_real(&real_wait4, name_wait4);
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    int st = 0;
    uint64_t t0 = atomic_load(&spawn_tab) ? jst_now_ns() : 0;
    pid_t r = f(pid, &st, options, ru);
    if (status && r > 0)
        *status = st;
    spawn_after_wait(r, WIFEXITED(st) || WIFSIGNALED(st), st, t0, errno);
    return r;
}

JST_EXPORT JST_IDLE_TEXT pid_t wait3(int *status, int options, struct rusage *ru)
{
    return wait4(-1, status, options, ru);
}

JST_EXPORT JST_IDLE_TEXT int waitid(idtype_t idtype, id_t id, siginfo_t *info, int options)
{
    waitid_fn f = (waitid_fn)spawn_real(&real_waitid, name_waitid);
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    uint64_t t0 = atomic_load(&spawn_tab) ? jst_now_ns() : 0;
    int r = f(idtype, id, info, options);
    int err = errno;
    int ended =
        r == 0 && info && info->si_pid > 0 && !(options & WNOWAIT) &&
        (info->si_code == CLD_EXITED || info->si_code == CLD_KILLED || info->si_code == CLD_DUMPED);
    int st = 0;
    if (ended)
        st = info->si_code == CLD_EXITED
                 ? (info->si_status & 0xff) << 8
                 : (info->si_status & 0x7f) | (info->si_code == CLD_DUMPED ? 0x80 : 0);
    spawn_after_wait(ended ? info->si_pid : r == 0 ? 0 : -1, ended, st, t0, err);
    return r;
}

/* ---- system and popen: a shell runs the command ----
 *
 * glibc's system and popen start /bin/sh with a posix_spawn and reap it
 * with a wait inside libc, out of the wrappers' reach, and the shell, a new
 * program, shares no memory with this process. So the command line itself
 * says what runs: the first simple command in it whose program is a
 * compiler (after variable assignments, exec, command or env) is recorded,
 * with its words as the arguments, from the call (system) or from popen to
 * pclose, with the status those return. Quotes and backslashes are undone
 * as the shell would; expansions ($VAR, globs) are not. */

typedef int (*system_fn)(const char *);
typedef FILE *(*popen_fn)(const char *, const char *);
typedef int (*pclose_fn)(FILE *);
JST_START_DATA static void *_Atomic real_system, *_Atomic real_popen, *_Atomic real_pclose;
JST_START_RODATA static const char name_system[] = "system";
JST_START_RODATA static const char name_popen[] = "popen";
JST_START_RODATA static const char name_pclose[] = "pclose";

/* Splits cmd into the words of its first compiler command: argv (at most
 * max - 1, NULL-terminated) points into buf (cap bytes). The number of
 * words, 0 when no command runs a compiler. */
static size_t shell_words(const char *cmd, char *buf, size_t cap, char **argv, size_t max)
{
    const char *p = cmd;
    size_t at = 0, n = 0;
    int skip_next = 0; /* the word after a redirection is its file */
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        int sep = !*p || strchr(";&|\n()", *p);
        if (sep) {
            /* The end of a simple command: is it a compiler's? */
            size_t k = 0;
            while (k < n && (strcmp(argv[k], "exec") == 0 || strcmp(argv[k], "command") == 0 ||
                             strcmp(argv[k], "env") == 0 ||
                             (strchr(argv[k], '=') && argv[k][0] != '=' &&
                              strcspn(argv[k], "=") == strspn(argv[k], "abcdefghijklmnopqrstuvwxyz"
                                                                       "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                                       "0123456789_"))))
                k++;
            if (k < n && jst_compiler_kind(argv[k])) {
                memmove(argv, argv + k, (n - k) * sizeof *argv);
                argv[n - k] = NULL;
                return n - k;
            }
            if (!*p)
                return 0;
            n = 0;
            at = 0;
            skip_next = 0;
            p++;
            continue;
        }
        if (*p == '<' || *p == '>') {
            while (*p == '<' || *p == '>' || *p == '&')
                p++;
            skip_next = *p == ' ' || *p == '\t' || !(*p >= '0' && *p <= '9');
            if (!skip_next) /* >&2 */
                while (*p >= '0' && *p <= '9')
                    p++;
            continue;
        }
        /* One word. */
        size_t w = at;
        while (*p && !strchr(" \t;&|\n()<>", *p)) {
            char c = *p++;
            if (c == '\'') {
                while (*p && *p != '\'') {
                    if (at + 1 < cap)
                        buf[at++] = *p;
                    p++;
                }
                if (*p)
                    p++;
                continue;
            }
            if (c == '"') {
                while (*p && *p != '"') {
                    if (*p == '\\' && p[1] && strchr("\"\\$`", p[1]))
                        p++;
                    if (at + 1 < cap)
                        buf[at++] = *p;
                    p++;
                }
                if (*p)
                    p++;
                continue;
            }
            if (c == '\\' && *p)
                c = *p++;
            if (at + 1 < cap)
                buf[at++] = c;
        }
        if (at + 1 >= cap) { /* no room left: the word is dropped */
            at = w;
            continue;
        }
        buf[at] = '\0';
        /* A file descriptor's number before a redirection: 2>/dev/null */
        int fdnum = (*p == '<' || *p == '>') && at > w && strspn(buf + w, "0123456789") == at - w;
        at++;
        if (skip_next || fdnum) {
            skip_next = 0;
            at = w;
            continue;
        }
        if (n + 1 < max)
            argv[n++] = buf + w;
    }
}

/* A slot of this process's own (never in the shared table) for the compiler
 * that cmd runs, from now; NULL when it runs none or nothing is recorded. */
static struct spawn_slot *shell_slot(const char *cmd, int how)
{
    if (!cmd || jst_guard || atomic_load(&jst_state) == JST_ST_OFF)
        return NULL;
    int saved = errno;
    struct spawn_slot *s = NULL;
    char *buf = malloc(SPAWN_TEXT);
    char *argv[SPAWN_MAX_ARGS + 1];
    if (buf && shell_words(cmd, buf, SPAWN_TEXT, argv, SPAWN_MAX_ARGS + 1) && spawn_wanted())
        s = calloc(1, sizeof *s);
    if (s) {
        jst_guard++;
        s->ppid = (int)getpid();
        s->how = (uint16_t)how;
        s->kind = (uint16_t)jst_compiler_kind(argv[0]);
        s->tid = jst_tid();
        s->start_ns = jst_now_ns();
        s->stack_id = jst_trace() ? jst_bt_capture() : 0; /* a Python process may open it here */
        slot_fill(s, argv[0], argv);
        jst_guard--;
    }
    free(buf);
    errno = saved;
    return s;
}

/* The shell of slot s returned status r (-1: unknown) after a call that
 * began at t0: its record, then whatever else is due. */
static void shell_end(struct spawn_slot *s, int r, uint64_t t0)
{
    int saved = errno;
    s->status = r;
    s->end_how = r == -1 ? END_GONE : END_WAIT;
    s->end_ns = jst_now_ns();
    s->wait_t0 = t0;
    s->end_tid = jst_tid();
    if (spawn_wanted()) {
        jst_sampler_event(1);
        jst_guard++;
        spawn_record(s, s->stack_id);
        jst_cost_add(JST_COST_EVENTS, jst_now_ns() - s->end_ns);
        jst_guard--;
    }
    free(s);
    spawn_drain(1, 0);
    errno = saved;
}

JST_EXPORT JST_IDLE_TEXT int system(const char *cmd)
{
    system_fn f = (system_fn)spawn_real(&real_system, name_system);
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    struct spawn_slot *s = shell_slot(cmd, JST_SPAWN_SYSTEM);
    int r = f(cmd);
    if (s)
        shell_end(s, r, s->start_ns);
    return r;
}

/* popen's slots until pclose, by stream. */
#define SPAWN_PIPES 16
static struct {
    _Atomic(void *) fp;
    struct spawn_slot *s;
} spawn_pipes[SPAWN_PIPES];

JST_EXPORT JST_IDLE_TEXT FILE *popen(const char *cmd, const char *mode)
{
    popen_fn f = (popen_fn)spawn_real(&real_popen, name_popen);
    if (!f) {
        errno = ENOSYS;
        return NULL;
    }
    struct spawn_slot *s = shell_slot(cmd, JST_SPAWN_POPEN);
    FILE *fp = f(cmd, mode);
    if (s) {
        int saved = errno;
        for (int i = 0; fp && i < SPAWN_PIPES; i++) {
            void *e = NULL;
            if (atomic_compare_exchange_strong(&spawn_pipes[i].fp, &e, (void *)1)) {
                spawn_pipes[i].s = s;
                atomic_store(&spawn_pipes[i].fp, (void *)fp);
                s = NULL;
                break;
            }
        }
        free(s); /* the call failed, or too many streams at once */
        errno = saved;
    }
    return fp;
}

JST_EXPORT JST_IDLE_TEXT int pclose(FILE *fp)
{
    pclose_fn f = (pclose_fn)spawn_real(&real_pclose, name_pclose);
    if (!f) {
        errno = ENOSYS;
        return -1;
    }
    struct spawn_slot *s = NULL;
    for (int i = 0; fp && i < SPAWN_PIPES; i++)
        if (atomic_load(&spawn_pipes[i].fp) == (void *)fp) {
            s = spawn_pipes[i].s;
            atomic_store(&spawn_pipes[i].fp, NULL);
            break;
        }
    uint64_t t0 = s ? jst_now_ns() : 0;
    int r = f(fp);
    if (s)
        shell_end(s, r, t0);
    return r;
}

/* ---- for the live metrics file ---- */

size_t jst_spawn_running(unsigned *kind, uint64_t *start, size_t n)
{
    struct spawn_table *t = atomic_load(&spawn_tab);
    size_t k = 0;
    int me = (int)getpid();
    for (int i = 0; t && i < SPAWN_SLOTS && k < n; i++) {
        struct spawn_slot *s = &t->slot[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_READY || s->ppid != me)
            continue;
        kind[k] = (unsigned)jst_compiler_kind(s->text);
        start[k] = s->start_ns;
        if (kind[k] != JST_CC_NONE)
            k++;
    }
    return k;
}
