/*
 * exec and posix_spawn wrappers: a program that builds a fresh environment for
 * its children (as many launchers do) would drop LD_PRELOAD and JITSTALL_DIR,
 * and its CUDA children would go untraced. As uftrace does, the wrappers put
 * back the values this process started with when the new environment lacks
 * them, and change nothing else, but for NVTX_INJECTION64_PATH when this
 * process set it (interpose/nvtx.c): a traced child sets its own. No heap:
 * safe after vfork. A program may exec from a thread whose whole stack is
 * PTHREAD_STACK_MIN (16 KiB), so no large buffer on the stack either: a
 * rebuilt environment of more than JST_ENV_STACK bytes goes to pages
 * mapped for the call.
 *
 * An exec also ends this process's trace: END with end_reason "exec" is
 * written just before the real call (never in a vfork child, which shares the
 * parent's trace). The call returns only when it failed: the process goes on
 * and the next hooked call opens a new trace file (init.c). glibc's execl,
 * execlp and execle call execve inside libc, out of our reach, so they are
 * wrapped here too.
 */
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "state.h"
#include "real.h"
#include "nvtx.h"
#include "startenv.h"
#include "children.h"
#include "bigstack.h"
#include "sink.h"

extern char **environ;

#define JST_ENV_MAX 4096

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

/* The real functions, looked up at their first call (a lookup in the
 * constructor would cost every process, most of which never exec). */
JST_START_DATA static void *_Atomic real_execve, *_Atomic real_execvpe, *_Atomic real_spawn,
    *_Atomic real_spawnp, *_Atomic real_fexecve, *_Atomic real_execveat;

JST_IDLE_TEXT static void *real_fn(void *_Atomic *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_relaxed);
    if (!f) {
        f = jst_real_dlsym(RTLD_NEXT, name);
        atomic_store_explicit(slot, f, memory_order_relaxed);
    }
    return f;
}

JST_IDLE_TEXT static const char *env_find(char *const envp[], const char *name, size_t n)
{
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
            return envp[i];
    return NULL;
}

/* This file runs in processes that never call the driver (a shell, make):
 * its code is in the start-up pages and its strings beside the start-up
 * data (state.h). */
JST_START_RODATA static const char name_preload[] = "LD_PRELOAD";
JST_START_RODATA static const char name_dir[] = "JITSTALL_DIR";
JST_START_RODATA static const char name_execve[] = "execve";
JST_START_RODATA static const char name_execvpe[] = "execvpe";
JST_START_RODATA static const char name_spawn[] = "posix_spawn";
JST_START_RODATA static const char name_spawnp[] = "posix_spawnp";
JST_START_RODATA static const char name_fexecve[] = "fexecve";
JST_START_RODATA static const char name_execveat[] = "execveat";

/* A rebuilt environment: the array and a rebuilt LD_PRELOAD entry, in one
 * block. Small ones live on the caller's stack (VLA of at most
 * JST_ENV_STACK bytes: a program may exec from a thread of PTHREAD_STACK_MIN
 * bytes); larger ones in pages mapped for the call, never the heap, which is
 * not safe to touch after vfork. */
#define JST_ENV_STACK 1024

struct env_plan {
    const char *pre;  /* the program's LD_PRELOAD entry, NULL if none */
    const char *nvtx; /* ours, left out */
    int need_pre, need_dir;
    size_t n;     /* entries in envp */
    size_t bytes; /* the block's size; 0 when envp is used as it is */
};

/* Decides what the child's environment lacks, and the room that takes. */
JST_IDLE_TEXT static void env_plan(char *const envp[], struct env_plan *p)
{
    const char *saved_preload = jst_start_preload(), *saved_dir = jst_start_dir();
    const char *self_path = jst_self_path();
    p->bytes = 0;
    if (!saved_preload[0] || !jst_config_early() || !self_path[0])
        return;
    const char *base = strrchr(self_path, '/');
    base = base ? base + 1 : self_path;
    p->pre = env_find(envp, name_preload, sizeof name_preload - 1);
    p->need_pre = !p->pre || !strstr(p->pre, base);
    p->need_dir = saved_dir[0] && !env_find(envp, name_dir, sizeof name_dir - 1);
    p->nvtx = jst_nvtx_env_entry(envp);
    if (!p->need_pre && !p->need_dir && !p->nvtx)
        return;
    p->n = 0;
    while (envp && envp[p->n])
        p->n++;
    size_t pre_len = 0;
    if (p->need_pre && p->pre) { /* "LD_PRELOAD=" self ":" theirs */
        pre_len = strlen(self_path) + strlen(p->pre) + 2;
        if (pre_len > JST_ENV_MAX)
            return;
    }
    p->bytes = (p->n + 3) * sizeof(char *) + pre_len;
}

/* Fills blk (p->bytes) with envp plus what is missing. */
JST_IDLE_TEXT static char *const *env_build(char *const envp[], const struct env_plan *p, void *blk)
{
    char **out = blk;
    char *buf = (char *)(out + p->n + 3);
    const char *newpre = jst_start_preload();
    if (p->need_pre && p->pre) { /* the program set its own: keep it, ours first */
        size_t ls = strlen(jst_self_path());
        memcpy(buf, p->pre, 11); /* "LD_PRELOAD=" */
        memcpy(buf + 11, jst_self_path(), ls);
        buf[11 + ls] = ':';
        strcpy(buf + 12 + ls, p->pre + 11);
        newpre = buf;
    }
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        if (!(p->need_pre && p->pre && envp[i] == p->pre) && envp[i] != p->nvtx)
            out[k++] = envp[i];
    if (p->need_pre)
        out[k++] = (char *)newpre;
    if (p->need_dir)
        out[k++] = (char *)jst_start_dir();
    out[k] = NULL;
    return out;
}

/* Pages for a block too large for the stack; NULL when none can be had (the
 * environment then goes as the program gave it). */
JST_IDLE_TEXT static void *env_map(size_t bytes)
{
    void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

/* One exec call: which function, and what it was given. */
enum { EXEC_PATH = 0, EXEC_FD = 1, EXEC_AT = 2 };
struct exec_call {
    void *_Atomic *slot;
    const char *name;
    int how;          /* EXEC_PATH: execve, execvpe; EXEC_FD: fexecve; EXEC_AT: execveat */
    const char *path; /* the file as given (EXEC_FD: NULL) */
    int fd, flags;    /* fexecve's descriptor; execveat's directory and flags */
    char *const *argv, *const *envp;
    int rc, err;
};

typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

/* The real call of c with environment env. */
JST_IDLE_TEXT static int exec_call_real(const struct exec_call *c, void *fn, char *const *env)
{
    switch (c->how) {
    case EXEC_FD:
        return ((fexecve_fn)fn)(c->fd, c->argv, env);
    case EXEC_AT:
        return ((execveat_fn)fn)(c->fd, c->path, c->argv, env, c->flags);
    default:
        return ((execve_fn)fn)(c->path, c->argv, env);
    }
}

/* Runs an exec: the END record, the real call, and the trace going on in a
 * new file if the call returns. errno is the exec's. shown: the program as
 * the END record and the compiler check see it (for a descriptor, the file
 * it was opened from). */
JST_IDLE_TEXT static int exec_run(const struct exec_call *c, void *fn, const char *shown,
                                  char *const *env)
{
    int cc = jst_compiler_kind(shown), follow = jst_spawn_following();
    if (!cc && follow)
        cc = JST_CC_BUILD; /* any child of a followed process (spawn.c) */
    void *note = cc ? jst_spawn_exec_note(cc, shown, c->argv) : NULL; /* for the parent's wait */
    if (follow)
        jst_spawn_follow_mark((int)getpid()); /* the new program descends from a traced one */
    /* A signal handler may exec (it is async-signal-safe), but the END
     * record allocates and locks: from a handler the trace goes without it
     * (its reader says it ended early) rather than risk the program. */
    int ended = 0;
    if (atomic_load(&jst_state) == JST_ST_ON && jst_sink_owned() && !jst_handler_running())
        ended = jst_exec_end(shown);
    int rc = exec_call_real(c, fn, env);
    if (note)
        jst_spawn_exec_failed(note); /* it returned: it failed */
    if (ended) {
        int err = errno;
        jst_exec_failed(shown, err);
        errno = err;
    }
    return rc;
}

/* exec_run with the environment put right: the block on the stack when it
 * is small, else mapped (unmapped again when the exec returns; after vfork,
 * a successful exec leaves those pages to the parent, whose address space
 * the child shared). */
JST_IDLE_TEXT static int exec_fix(const struct exec_call *c, void *fn, const char *shown)
{
    struct env_plan p;
    char *const *envp = c->envp;
    env_plan(envp, &p);
    if (!p.bytes)
        return exec_run(c, fn, shown, envp);
    if (p.bytes <= JST_ENV_STACK) {
        void *blk[(JST_ENV_STACK + sizeof(void *) - 1) / sizeof(void *)];
        return exec_run(c, fn, shown, env_build(envp, &p, blk));
    }
    void *m = env_map(p.bytes);
    int rc = exec_run(c, fn, shown, m ? env_build(envp, &p, m) : envp);
    if (m) {
        int err = errno;
        munmap(m, p.bytes);
        errno = err;
    }
    return rc;
}

JST_START_RODATA static const char fd_dir[] = "/proc/self/fd/";

/* The file descriptor fd was opened from, into buf (cap bytes): what
 * /proc/self/fd shows, or that link's own name when it cannot be read or
 * is longer. A system call and plain memory: safe after vfork. */
JST_IDLE_TEXT static const char *fd_path(int fd, char *buf, size_t cap)
{
    char link[sizeof fd_dir + 12], digits[12];
    size_t n = 0;
    unsigned v = fd < 0 ? 0 : (unsigned)fd;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v && n < sizeof digits);
    memcpy(link, fd_dir, sizeof fd_dir - 1);
    for (size_t i = 0; i < n; i++)
        link[sizeof fd_dir - 1 + i] = digits[n - 1 - i];
    link[sizeof fd_dir - 1 + n] = '\0';
    ssize_t r = readlink(link, buf, cap - 1);
    if (r <= 0 || (size_t)r >= cap - 1 || buf[0] != '/') {
        size_t l = strlen(link);
        if (l >= cap)
            return "";
        memcpy(buf, link, l + 1);
        return buf;
    }
    buf[r] = '\0';
    return buf;
}

JST_IDLE_TEXT static void exec_go(void *p)
{
    struct exec_call *c = p;
    void *fn = real_fn(c->slot, c->name);
    if (!fn) {
        c->rc = -1;
        c->err = ENOSYS;
        return;
    }
    char buf[256];
    const char *shown = c->path;
    if (c->how == EXEC_FD || (c->how == EXEC_AT && c->path && !c->path[0]))
        shown = fd_path(c->fd, buf, sizeof buf);
    c->rc = exec_fix(c, fn, shown ? shown : "");
    c->err = errno;
}

/* The exec c, through the real one in *c->slot. On a thread other than
 * the main one, all of it (the lookup, the environment, the END record, the
 * exec itself) runs on a stack of its own (bigstack.c): the exec wrapper
 * needs no more of the program's stack than the exec does, and asks nothing
 * that allocates to find out. */
JST_IDLE_TEXT static int exec_named(struct exec_call *c)
{
    jst_big_stack_call(exec_go, c, JST_BIG_MUST_RUN);
    errno = c->err;
    return c->rc;
}

JST_IDLE_TEXT static int exec_path_call(void *_Atomic *slot, const char *name, const char *path,
                                        char *const argv[], char *const envp[])
{
    struct exec_call c = {slot, name, EXEC_PATH, path, -1, 0, argv, envp, -1, 0};
    return exec_named(&c);
}

JST_EXPORT JST_IDLE_TEXT int execve(const char *path, char *const argv[], char *const envp[])
{
    return exec_path_call(&real_execve, name_execve, path, argv, envp);
}

/* fexecve and execveat: glibc makes the system call inside libc, out of the
 * execve wrapper's reach, so they are wrapped themselves (Python's
 * os.execve(fd, ...) is fexecve). */
JST_EXPORT JST_IDLE_TEXT int fexecve(int fd, char *const argv[], char *const envp[])
{
    struct exec_call c = {&real_fexecve, name_fexecve, EXEC_FD, NULL, fd, 0, argv, envp, -1, 0};
    return exec_named(&c);
}

JST_EXPORT JST_IDLE_TEXT int execveat(int dirfd, const char *path, char *const argv[],
                                      char *const envp[], int flags)
{
    struct exec_call c = {&real_execveat, name_execveat, EXEC_AT, path, dirfd,
                          flags,          argv,          envp,    -1,   0};
    return exec_named(&c);
}

JST_EXPORT JST_IDLE_TEXT int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

JST_EXPORT JST_IDLE_TEXT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return exec_path_call(&real_execvpe, name_execvpe, file, argv, envp);
}

JST_EXPORT JST_IDLE_TEXT int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

/* The execl family: the arguments after arg0 up to NULL, as an argv on the
 * stack (as glibc does), then our execve or execvpe. */
#define JST_EXECL(call, last_is_envp)                                                              \
    do {                                                                                           \
        va_list ap, cp;                                                                            \
        va_start(ap, arg);                                                                         \
        va_copy(cp, ap);                                                                           \
        size_t n = 1; /* arg0 and the arguments before the NULL (arg is nonnull) */                \
        while (va_arg(cp, char *))                                                                 \
            n++;                                                                                   \
        va_end(cp);                                                                                \
        char *argv[n + 1];                                                                         \
        argv[0] = (char *)arg;                                                                     \
        for (size_t i = 1; i <= n; i++)                                                            \
            argv[i] = va_arg(ap, char *);                                                          \
        char *const *envp = environ;                                                               \
        if (last_is_envp)                                                                          \
            envp = va_arg(ap, char *const *);                                                      \
        va_end(ap);                                                                                \
        return call;                                                                               \
    } while (0)

JST_EXPORT JST_IDLE_TEXT int execl(const char *path, const char *arg, ...)
{
    JST_EXECL(execve(path, argv, envp), 0);
}

JST_EXPORT JST_IDLE_TEXT int execle(const char *path, const char *arg, ...)
{
    JST_EXECL(execve(path, argv, envp), 1);
}

JST_EXPORT JST_IDLE_TEXT int execlp(const char *file, const char *arg, ...)
{
    JST_EXECL(execvpe(file, argv, envp), 0);
}

/* posix_spawn or posix_spawnp through fn, with the environment put right. */
JST_IDLE_TEXT static int spawn_fix(spawn_fn fn, pid_t *pid, const char *path,
                                   const posix_spawn_file_actions_t *fa,
                                   const posix_spawnattr_t *attr, char *const argv[],
                                   char *const envp[])
{
    struct env_plan p;
    env_plan(envp, &p);
    if (!p.bytes)
        return fn(pid, path, fa, attr, argv, envp);
    if (p.bytes <= JST_ENV_STACK) {
        void *blk[(JST_ENV_STACK + sizeof(void *) - 1) / sizeof(void *)];
        return fn(pid, path, fa, attr, argv, env_build(envp, &p, blk));
    }
    void *m = env_map(p.bytes);
    int rc = fn(pid, path, fa, attr, argv, m ? env_build(envp, &p, m) : envp);
    if (m)
        munmap(m, p.bytes);
    return rc;
}

struct spawn_call {
    void *_Atomic *slot;
    const char *name;
    pid_t *pid;
    const char *path;
    const posix_spawn_file_actions_t *fa;
    const posix_spawnattr_t *attr;
    char *const *argv, *const *envp;
    int rc, err;
};

JST_IDLE_TEXT static void spawn_go(void *p)
{
    struct spawn_call *c = p;
    spawn_fn fn = (spawn_fn)real_fn(c->slot, c->name);
    if (!fn) {
        c->rc = ENOSYS;
        return;
    }
    int follow = jst_spawn_following();
    uint64_t t0 = jst_compiler_kind(c->path) || follow ? jst_now_ns() : 0;
    c->rc = spawn_fix(fn, c->pid, c->path, c->fa, c->attr, c->argv, c->envp);
    c->err = errno; /* as the real call left it */
    if (follow && c->rc == 0 && c->pid)
        jst_spawn_follow_mark((int)*c->pid);
    if (t0 && c->rc == 0 && c->pid)
        jst_spawn_posix(c->path, c->argv, *c->pid, t0);
}

/* posix_spawn or posix_spawnp (name), through the real one in *slot, with
 * the environment put right; a compiler child is noted for the wait
 * (spawn.c). As exec_named, on a stack of its own; a compiler's spawn, whose
 * note captures the caller's stack, only when the thread's is small. */
JST_IDLE_TEXT static int spawn_named(void *_Atomic *slot, const char *name, pid_t *pid,
                                     const char *path, const posix_spawn_file_actions_t *fa,
                                     const posix_spawnattr_t *attr, char *const argv[],
                                     char *const envp[])
{
    struct spawn_call c = {slot, name, pid, path, fa, attr, argv, envp, ENOSYS, errno};
    jst_big_stack_call(
        spawn_go, &c,
        JST_BIG_MUST_RUN |
            (jst_compiler_kind(path) || jst_spawn_following() ? JST_BIG_OWN_STACK : 0));
    errno = c.err;
    return c.rc;
}

JST_EXPORT JST_IDLE_TEXT int posix_spawn(pid_t *pid, const char *path,
                                         const posix_spawn_file_actions_t *fa,
                                         const posix_spawnattr_t *attr, char *const argv[],
                                         char *const envp[])
{
    return spawn_named(&real_spawn, name_spawn, pid, path, fa, attr, argv, envp);
}

JST_EXPORT JST_IDLE_TEXT int posix_spawnp(pid_t *pid, const char *file,
                                          const posix_spawn_file_actions_t *fa,
                                          const posix_spawnattr_t *attr, char *const argv[],
                                          char *const envp[])
{
    return spawn_named(&real_spawnp, name_spawnp, pid, file, fa, attr, argv, envp);
}
