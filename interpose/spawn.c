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
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "argv.h"
#include "backtrace.h"
#include "cost.h"
#include "sampler.h"
#include "fwcache.h"
#include "real.h"
#include "children.h"
#include "state.h"

#define SPAWN_SLOTS 32
#define SPAWN_TEXT 1536
#define SPAWN_MAX_ARGS 64

enum { SLOT_FREE = 0, SLOT_WRITING = 1, SLOT_READY = 2, SLOT_TAKEN = 3 };

/* One compiler child, from its exec (or posix_spawn) until its reap. */
struct spawn_slot {
    _Atomic int state;
    int pid, ppid;
    uint16_t how, nargs;
    uint32_t len; /* bytes of text used: program NUL, then each argument NUL */
    uint32_t tid; /* posix_spawn: the spawning thread */
    uint64_t start_ns;
    uint64_t stack_id; /* posix_spawn: the parent's stack */
    char text[SPAWN_TEXT];
};

/* The table, shared with children (MAP_SHARED); NULL until made. */
JST_START_DATA static struct spawn_slot *_Atomic spawn_tab;

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

/* ---- the table ---- */

/* The table, made on first use (a plain system call: safe after vfork,
 * where the mapping is the parent's too). NULL when none can be had. */
static struct spawn_slot *spawn_table(void)
{
    struct spawn_slot *t = atomic_load(&spawn_tab);
    if (t)
        return t;
    void *m = mmap(NULL, sizeof(struct spawn_slot) * SPAWN_SLOTS, PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    struct spawn_slot *expected = NULL;
    if (!atomic_compare_exchange_strong(&spawn_tab, &expected, (struct spawn_slot *)m)) {
        munmap(m, sizeof(struct spawn_slot) * SPAWN_SLOTS);
        return expected;
    }
    return (struct spawn_slot *)m;
}

void jst_spawn_opened(void)
{
    (void)spawn_table();
}

/* A child that no wait of ours reaped (its parent used a raw system call,
 * or died) leaves its slot behind: after this long it may be taken again. */
#define SPAWN_STALE_NS (600ull * 1000000000ull)

/* Claims a free slot, else a stale one; NULL when all are in use. */
static struct spawn_slot *slot_claim(struct spawn_slot *t)
{
    for (int i = 0; i < SPAWN_SLOTS; i++) {
        int e = SLOT_FREE;
        if (atomic_compare_exchange_strong(&t[i].state, &e, SLOT_WRITING))
            return &t[i];
    }
    uint64_t now = jst_now_ns();
    for (int i = 0; i < SPAWN_SLOTS; i++) {
        int e = SLOT_READY;
        if (now - t[i].start_ns > SPAWN_STALE_NS &&
            atomic_compare_exchange_strong(&t[i].state, &e, SLOT_WRITING))
            return &t[i];
    }
    return NULL;
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
    (void)kind;
    int saved = errno;
    struct spawn_slot *t = spawn_table();
    struct spawn_slot *s = t ? slot_claim(t) : NULL;
    if (s) {
        s->pid = (int)getpid();
        s->ppid = (int)getppid();
        s->how = JST_SPAWN_EXEC;
        s->tid = 0;
        s->stack_id = 0;
        s->start_ns = jst_now_ns();
        slot_fill(s, path, argv);
        atomic_store_explicit(&s->state, SLOT_READY, memory_order_release);
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
    if (atomic_load(&jst_state) == JST_ST_ON)
        return 1;
    return jst_fwcache_python();
}

void jst_spawn_posix(const char *path, char *const argv[], pid_t pid, uint64_t start_ns)
{
    if (!jst_compiler_kind(path) || !spawn_wanted())
        return;
    int saved = errno;
    uint64_t t0 = jst_now_ns();
    jst_guard++;
    struct spawn_slot *t = jst_trace() ? spawn_table() : NULL;
    struct spawn_slot *s = t ? slot_claim(t) : NULL;
    if (s) {
        s->pid = (int)pid;
        s->ppid = (int)getpid();
        s->how = JST_SPAWN_POSIX;
        s->tid = jst_tid();
        s->start_ns = start_ns;
        s->stack_id = jst_bt_capture();
        slot_fill(s, path, argv);
        atomic_store_explicit(&s->state, SLOT_READY, memory_order_release);
    }
    jst_guard--;
    jst_cost_add(JST_COST_EVENTS, jst_now_ns() - t0);
    errno = saved;
}

/* ---- at the reap: the record ---- */

static const char *const cc_names[] = {
    [JST_CC_PTXAS] = "ptxas",   [JST_CC_NVCC] = "nvcc",           [JST_CC_CICC] = "cicc",
    [JST_CC_NVLINK] = "nvlink", [JST_CC_FATBINARY] = "fatbinary", [JST_CC_HOST] = "host_cc",
};

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

/* The COMPILE record of slot s, reaped with status at now after a wait call
 * that began at wait_t0. */
static void spawn_record(struct spawn_slot *s, int status, uint64_t wait_t0, uint64_t now)
{
    uint64_t t0 = jst_now_ns();
    const char *prog = s->text;
    int kind = jst_compiler_kind(prog);
    if (!kind || !jst_trace())
        return;
    jst_fwcache_once();
    /* The arguments, as pointers into the slot's text. */
    const char *args[SPAWN_MAX_ARGS];
    size_t nargs = 0, at = strlen(prog) + 1;
    while (nargs < s->nargs && at < s->len) {
        args[nargs++] = s->text + at;
        at += strlen(s->text + at) + 1;
    }
    uint64_t stack = s->stack_id ? s->stack_id : jst_bt_capture();
    size_t cap = SPAWN_TEXT * 2 + 2048;
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
    jst_rec_u64(&r, JST_F_CHILD_PID, (uint64_t)s->pid);
    jst_rec_u64(&r, JST_F_SPAWN_HOW, s->how);
    jst_rec_u64(&r, JST_F_TID, s->tid ? s->tid : jst_tid());
    jst_rec_u64(&r, JST_F_START_NS, s->start_ns);
    jst_rec_u64(&r, JST_F_DUR_NS, now > s->start_ns ? now - s->start_ns : 0);
    /* The wait may have begun before the child's exec: count from the later. */
    uint64_t w0 = wait_t0 > s->start_ns ? wait_t0 : s->start_ns;
    jst_rec_u64(&r, JST_F_WAIT_NS, now > w0 ? now - w0 : 0);
    jst_rec_u64(&r, JST_F_WAIT_STATUS, (uint64_t)(unsigned)status);
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

/* After a wait call returned pid with status: the slot of that child, if
 * any, becomes a record (or is dropped when this process does not record). */
static void spawn_reaped(pid_t pid, int status, uint64_t wait_t0)
{
    struct spawn_slot *t = atomic_load(&spawn_tab);
    uint64_t now = jst_now_ns();
    int me = (int)getpid();
    for (int i = 0; i < SPAWN_SLOTS; i++) {
        struct spawn_slot *s = &t[i];
        if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_READY ||
            s->pid != (int)pid || s->ppid != me)
            continue;
        int e = SLOT_READY;
        if (!atomic_compare_exchange_strong(&s->state, &e, SLOT_TAKEN))
            continue;
        int saved = errno;
        if (spawn_wanted()) {
            jst_sampler_event(1); /* compile work on this thread (sampler.c) */
            jst_guard++;
            spawn_record(s, status, wait_t0, now);
            jst_cost_add(JST_COST_EVENTS, jst_now_ns() - now);
            jst_guard--;
        }
        errno = saved;
        atomic_store(&s->state, SLOT_FREE);
    }
}

/* ---- the wait family (every process; only a table lookup when a child ends) ---- */

/* A child ended (not stopped or continued) and the table exists. */
#define SPAWN_ENDED(r, st)                                                                         \
    ((r) > 0 && atomic_load(&spawn_tab) && (WIFEXITED(st) || WIFSIGNALED(st)))

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
    if (SPAWN_ENDED(r, st))
        spawn_reaped(r, st, t0);
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
    if (SPAWN_ENDED(r, st))
        spawn_reaped(r, st, t0);
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
    if (r == 0 && info && info->si_pid > 0 && !(options & WNOWAIT) && atomic_load(&spawn_tab) &&
        (info->si_code == CLD_EXITED || info->si_code == CLD_KILLED ||
         info->si_code == CLD_DUMPED)) {
        int st = info->si_code == CLD_EXITED
                     ? (info->si_status & 0xff) << 8
                     : (info->si_status & 0x7f) | (info->si_code == CLD_DUMPED ? 0x80 : 0);
        spawn_reaped(info->si_pid, st, t0);
    }
    return r;
}

/* ---- for the live metrics file ---- */

size_t jst_spawn_running(unsigned *kind, uint64_t *start, size_t n)
{
    struct spawn_slot *t = atomic_load(&spawn_tab);
    size_t k = 0;
    int me = (int)getpid();
    for (int i = 0; t && i < SPAWN_SLOTS && k < n; i++) {
        if (atomic_load_explicit(&t[i].state, memory_order_acquire) != SLOT_READY ||
            t[i].ppid != me)
            continue;
        kind[k] = (unsigned)jst_compiler_kind(t[i].text);
        start[k] = t[i].start_ns;
        if (kind[k] != JST_CC_NONE)
            k++;
    }
    return k;
}
