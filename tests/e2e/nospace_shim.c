/*
 * Test double for a full disk (e2e.limits): preloaded before libjitstall.so,
 * it makes write(2) on a file whose name ends in ".jst" fail with ENOSPC
 * once the file holds JST_NOSPACE_AT bytes (default 8192), as a full file
 * system would. Every other write goes to the real one.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int is_trace(int fd)
{
    char link[64], path[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n < 4)
        return 0;
    path[n] = 0;
    return strcmp(path + n - 4, ".jst") == 0;
}

ssize_t write(int fd, const void *buf, size_t len)
{
    static ssize_t (*real)(int, const void *, size_t);
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (fd > 2 && is_trace(fd)) {
        const char *at = getenv("JST_NOSPACE_AT");
        off_t limit = at ? atol(at) : 8192;
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_size + (off_t)len > limit) {
            if (st.st_size >= limit) {
                errno = ENOSPC;
                return -1;
            }
            len = (size_t)(limit - st.st_size); /* a short write, then ENOSPC */
        }
    }
    return real(fd, buf, len);
}
