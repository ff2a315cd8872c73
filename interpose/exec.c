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
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state.h"
#include "real.h"
#include "nvtx.h"

extern char **environ;

#define JST_ENV_MAX 4096

static char saved_preload[JST_ENV_MAX]; /* "LD_PRELOAD=..." at start, "" if none */
static char saved_dir[JST_ENV_MAX];     /* "JITSTALL_DIR=..." at start, "" if none */
static char self_path[JST_ENV_MAX];     /* this library's path */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);
static execve_fn real_execve, real_execvpe;
static spawn_fn real_spawn, real_spawnp;

static void save_env(char *dst, const char *name)
{
    const char *v = getenv(name);
    size_t n = strlen(name);
    if (v && *v && n + 1 + strlen(v) < JST_ENV_MAX) {
        memcpy(dst, name, n);
        dst[n] = '=';
        strcpy(dst + n + 1, v);
    }
}

__attribute__((constructor)) static void jst_exec_ctor(void)
{
    save_env(saved_preload, "LD_PRELOAD");
    save_env(saved_dir, "JITSTALL_DIR");
    Dl_info info;
    if (dladdr((void *)jst_exec_ctor, &info) && info.dli_fname &&
        strlen(info.dli_fname) < sizeof self_path)
        strcpy(self_path, info.dli_fname);
    real_execve = (execve_fn)jst_real_dlsym(RTLD_NEXT, "execve");
    real_execvpe = (execve_fn)jst_real_dlsym(RTLD_NEXT, "execvpe");
    real_spawn = (spawn_fn)jst_real_dlsym(RTLD_NEXT, "posix_spawn");
    real_spawnp = (spawn_fn)jst_real_dlsym(RTLD_NEXT, "posix_spawnp");
}

static const char *env_find(char *const envp[], const char *name, size_t n)
{
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], name, n) == 0 && envp[i][n] == '=')
            return envp[i];
    return NULL;
}

/* Fills out[] (room for cap pointers) with envp plus what is missing; uses
 * buf (JST_ENV_MAX bytes) for a rebuilt LD_PRELOAD. Returns envp itself when
 * nothing needs changing or anything does not fit. */
static char *const *env_fix(char *const envp[], char **out, size_t cap, char *buf)
{
    if (!saved_preload[0] || !jst_config() || !self_path[0])
        return envp;
    const char *base = strrchr(self_path, '/');
    base = base ? base + 1 : self_path;
    const char *pre = env_find(envp, "LD_PRELOAD", 10);
    int need_pre = !pre || !strstr(pre, base);
    int need_dir = saved_dir[0] && !env_find(envp, "JITSTALL_DIR", 12);
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
        out[k++] = saved_dir;
    out[k] = NULL;
    return out;
}

#define JST_ENVP_CAP 1024

/* Runs an exec: the END record, the real call, and the trace going on in a
 * new file if the call returns. errno is the exec's. */
static int exec_run(execve_fn fn, const char *path, char *const argv[], char *const envp[])
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

JST_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    if (!real_execve)
        real_execve = (execve_fn)jst_real_dlsym(RTLD_NEXT, "execve");
    if (!real_execve) {
        errno = ENOSYS;
        return -1;
    }
    return exec_run(real_execve, path, argv, envp);
}

JST_EXPORT int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

JST_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    if (!real_execvpe)
        real_execvpe = (execve_fn)jst_real_dlsym(RTLD_NEXT, "execvpe");
    if (!real_execvpe) {
        errno = ENOSYS;
        return -1;
    }
    return exec_run(real_execvpe, file, argv, envp);
}

JST_EXPORT int execvp(const char *file, char *const argv[])
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

JST_EXPORT int execl(const char *path, const char *arg, ...)
{
    JST_EXECL(execve(path, argv, envp), 0);
}

JST_EXPORT int execle(const char *path, const char *arg, ...)
{
    JST_EXECL(execve(path, argv, envp), 1);
}

JST_EXPORT int execlp(const char *file, const char *arg, ...)
{
    JST_EXECL(execvpe(file, argv, envp), 0);
}

JST_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                           const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    if (!real_spawn)
        real_spawn = (spawn_fn)jst_real_dlsym(RTLD_NEXT, "posix_spawn");
    char *out[JST_ENVP_CAP];
    char buf[JST_ENV_MAX];
    return real_spawn(pid, path, fa, attr, argv, env_fix(envp, out, JST_ENVP_CAP, buf));
}

JST_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                            const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    if (!real_spawnp)
        real_spawnp = (spawn_fn)jst_real_dlsym(RTLD_NEXT, "posix_spawnp");
    char *out[JST_ENVP_CAP];
    char buf[JST_ENV_MAX];
    return real_spawnp(pid, file, fa, attr, argv, env_fix(envp, out, JST_ENVP_CAP, buf));
}
