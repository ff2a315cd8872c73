/*
 * Test shim (LD_PRELOAD) for the "file changed while read" cases: when a file
 * whose name ends with $JST_SHRINK_SUFFIX is mapped, it is cut to its first
 * $JST_SHRINK_TO bytes (default 4096) right after the mapping is made, so the
 * next read of the mapping past that point faults (SIGBUS) every time, with
 * no race to win.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    static void *(*real)(void *, size_t, int, int, int, off_t);
    if (!real)
        real = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, "mmap");
    void *p = real(addr, len, prot, flags, fd, off);
    const char *suffix = getenv("JST_SHRINK_SUFFIX");
    if (p == MAP_FAILED || fd < 0 || !suffix || !*suffix)
        return p;
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return p;
    path[n] = '\0';
    size_t pl = (size_t)n, sl = strlen(suffix);
    if (pl >= sl && !strcmp(path + pl - sl, suffix)) {
        const char *to = getenv("JST_SHRINK_TO");
        if (truncate(path, to ? atol(to) : 4096) != 0)
            perror("shrink_preload: truncate");
    }
    return p;
}
