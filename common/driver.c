/*
 * The NVIDIA kernel module's version ("580.159.04"), which names the driver
 * build that JIT cache entries belong to: cuDriverGetVersion only gives the
 * CUDA version (13000), shared by many driver builds. Read by the preload
 * (once, when it records the devices) and by `jitstall warm`, with plain
 * open/read into the caller's buffer: no allocation, no stdio.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include "jitcache.h"

void jst_driver_release_parse(const char *text, size_t len, char *buf, size_t n)
{
    /* "NVRM version: NVIDIA UNIX [Open ]Kernel Module [for x86_64 ] 580.159.04  Release ..." */
    static const char key[] = "Kernel Module";
    if (n)
        buf[0] = 0;
    const char *end = text + len, *nl = memchr(text, '\n', len);
    if (nl)
        end = nl;
    const char *m = memmem(text, (size_t)(end - text), key, sizeof(key) - 1);
    if (!m || !n)
        return;
    for (const char *t = m + sizeof(key) - 1; t < end;) {
        while (t < end && (*t == ' ' || *t == '\t'))
            t++;
        const char *w = t;
        while (t < end && *t != ' ' && *t != '\t')
            t++;
        size_t wl = (size_t)(t - w);
        /* The first word that starts with a digit and holds a dot. */
        if (wl && w[0] >= '0' && w[0] <= '9' && memchr(w, '.', wl)) {
            size_t c = wl < n - 1 ? wl : n - 1;
            memcpy(buf, w, c);
            buf[c] = 0;
            return;
        }
    }
}

void jst_driver_release(char *buf, size_t n)
{
    char text[512];
    if (n)
        buf[0] = 0;
    int fd = open("/proc/driver/nvidia/version", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t got = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (got > 0)
        jst_driver_release_parse(text, (size_t)got, buf, n);
}
