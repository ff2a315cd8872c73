/*
 * exec and posix_spawn wrappers: a program that builds a fresh environment for
 * its children (as many launchers do) would drop LD_PRELOAD and JITSTALL_DIR,
 * and its CUDA children would go untraced. As uftrace does, the wrappers put
 * back the values this process started with when the new environment lacks
 * them, and change nothing else, but for NVTX_INJECTION64_PATH when this
 * process set it (interpose/nvtx.c): a traced child sets its own. Stack
 * memory only: safe after vfork.
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
#include <unistd.h>

#include "state.h"
#include "real.h"
#include "nvtx.h"
#include "startenv.h"

extern char **environ;

#define JST_ENV_MAX 4096

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

/* The real functions, looked up at their first call (a lookup in the
 * constructor would cost every process, most of which never exec). */
JST_START_DATA static void *_Atomic real_execve, *_Atomic real_execvpe, *_Atomic real_spawn,
    *_Atomic real_spawnp;

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

/* Fills out[] (room for cap pointers) with envp plus what is missing; uses
 * buf (JST_ENV_MAX bytes) for a rebuilt LD_PRELOAD. Returns envp itself when
 * nothing needs changing or anything does not fit. */
JST_IDLE_TEXT static char *const *env_fix(char *const envp[], char **out, size_t cap, char *buf)
{
    const char *saved_preload = jst_start_preload(), *saved_dir = jst_start_dir();
    const char *self_path = jst_self_path();
    if (!saved_preload[0] || !jst_config_early() || !self_path[0])
        return envp;
    const char *base = strrchr(self_path, '/');
    base = base ? base + 1 : self_path;
    const char *pre = env_find(envp, name_preload, sizeof name_preload - 1);
    int need_pre = !pre || !strstr(pre, base);
    int need_dir = saved_dir[0] && !env_find(envp, name_dir, sizeof name_dir - 1);
    const char *nvtx = jst_nvtx_env_entry(envp); /* ours: left out */
    if (!need_pre && !need_dir && !nvtx)
        return envp;
    size_t n = 0;
    while (envp && envp[n])
        n++;
    if (n + 3 > cap)
        return envp;
    const char *newpre = saved_preload;
    if (need_pre && pre) { /* the program set its own: keep it, ours first */
        if (strlen(self_path) + strlen(pre) + 2 > JST_ENV_MAX)
            return envp;
        strcpy(buf, "LD_PRELOAD=");
        strcat(buf, self_path);
        strcat(buf, ":");
        strcat(buf, pre + 11);
        newpre = buf;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!(need_pre && pre && envp[i] == pre) && envp[i] != nvtx)
            out[k++] = envp[i];
    if (need_pre)
        out[k++] = (char *)newpre;
    if (need_dir)
        out[k++] = (char *)saved_dir;
    out[k] = NULL;
    return out;
}

#define JST_ENVP_CAP 1024

/* Runs an exec: the END record, the real call, and the trace going on in a
 * new file if the call returns. errno is the exec's. */
JST_IDLE_TEXT static int exec_run(execve_fn fn, const char *path, char *const argv[],
                                  char *const envp[])
{
    char *out[JST_ENVP_CAP];
    char buf[JST_ENV_MAX];
    char *const *env = env_fix(envp, out, JST_ENVP_CAP, buf);
    int ended = jst_exec_end(path);
    int rc = fn(path, argv, env);
    if (ended) {
        int err = errno;
        jst_exec_failed(path, err);
        errno = err;
    }
    return rc;
}

/* The exec named name (execve or execvpe), through the real one in *slot. */
JST_IDLE_TEXT static int exec_named(void *_Atomic *slot, const char *name, const char *path,
                                    char *const argv[], char *const envp[])
{
    execve_fn fn = (execve_fn)real_fn(slot, name);
    if (!fn) {
        errno = ENOSYS;
        return -1;
    }
    return exec_run(fn, path, argv, envp);
}

JST_EXPORT JST_IDLE_TEXT int execve(const char *path, char *const argv[], char *const envp[])
{
    return exec_named(&real_execve, name_execve, path, argv, envp);
}

JST_EXPORT JST_IDLE_TEXT int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

JST_EXPORT JST_IDLE_TEXT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return exec_named(&real_execvpe, name_execvpe, file, argv, envp);
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

/* posix_spawn or posix_spawnp (name), through the real one in *slot, with
 * the environment put right. */
JST_IDLE_TEXT static int spawn_named(void *_Atomic *slot, const char *name, pid_t *pid,
                                     const char *path, const posix_spawn_file_actions_t *fa,
                                     const posix_spawnattr_t *attr, char *const argv[],
                                     char *const envp[])
{
    spawn_fn fn = (spawn_fn)real_fn(slot, name);
    if (!fn)
        return ENOSYS;
    char *out[JST_ENVP_CAP];
    char buf[JST_ENV_MAX];
    return fn(pid, path, fa, attr, argv, env_fix(envp, out, JST_ENVP_CAP, buf));
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
