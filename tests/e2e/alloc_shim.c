/*
 * Test double for e2e.smallstack, preloaded before libjitstall.so: counts the
 * allocations made while the program's execv or posix_spawn call runs, that
 * is, by whatever is behind them (libjitstall.so's wrappers, then the C
 * library). At exit it writes "exec N" and "spawn N" to the file named by
 * JST_ALLOC_SHIM_OUT. The C library's own allocation functions do the work.
 */
#include <dlfcn.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static __thread int counting; /* 1: in execv, 2: in posix_spawn */
static long counted[3];

static void note(void)
{
    if (counting)
        __atomic_add_fetch(&counted[counting], 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
    note();
    return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    note();
    return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    note();
    return __libc_realloc(p, n);
}

int execv(const char *path, char *const argv[])
{
    int (*next)(const char *, char *const[]) =
        (int (*)(const char *, char *const[]))dlsym(RTLD_NEXT, "execv");
    counting = 1;
    int rc = next(path, argv);
    counting = 0;
    return rc;
}

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    spawn_fn next = (spawn_fn)dlsym(RTLD_NEXT, "posix_spawn");
    counting = 2;
    int rc = next(pid, path, fa, attr, argv, envp);
    counting = 0;
    return rc;
}

__attribute__((destructor)) static void report(void)
{
    const char *out = getenv("JST_ALLOC_SHIM_OUT");
    FILE *f = out ? fopen(out, "w") : NULL;
    if (!f)
        return;
    fprintf(f, "exec %ld\nspawn %ld\n", counted[1], counted[2]);
    fclose(f);
}
