/* Output files of the CLI, replaced whole or not at all (see outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* 12 unpredictable letters and digits for a temporary name. */
static void outfile_suffix(char *dst)
{
    static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    uint8_t rnd[12];
    if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        uint64_t x = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid() << 32 ^
                     (uint64_t)(uintptr_t)dst;
        for (size_t i = 0; i < sizeof rnd; i++, x = x * 6364136223846793005ull + 1)
            rnd[i] = (uint8_t)(x >> 56);
    }
    for (size_t i = 0; i < sizeof rnd; i++)
        dst[i] = set[rnd[i] % (sizeof set - 1)];
    dst[sizeof rnd] = '\0';
}

/* The temporary file beside path, created new: O_EXCL refuses any name that
 * exists, a planted symlink included, and O_NOFOLLOW says so again. A name
 * taken already is retried with another suffix. */
FILE *jst_outfile_create(struct jst_outfile *o, const char *path)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        char sfx[16];
        outfile_suffix(sfx);
        if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%s", path, sfx) >= sizeof o->tmp) {
            errno = ENAMETOOLONG;
            return NULL;
        }
        int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0) {
            if (errno == EEXIST || errno == ELOOP)
                continue;
            return NULL;
        }
        FILE *f = fdopen(fd, "w");
        if (!f) {
            int e = errno;
            close(fd);
            unlink(o->tmp);
            errno = e;
        }
        return f;
    }
    errno = EEXIST;
    return NULL;
}

int jst_outfile_open(struct jst_outfile *o, const char *cmd, const char *path)
{
    o->f = stdout;
    o->path = NULL;
    o->tmp[0] = '\0';
    if (!path || !strcmp(path, "-"))
        return 0;
    if (!(o->f = jst_outfile_create(o, path))) {
        o->tmp[0] = '\0';
        jst_errorf(cmd, "%s: %s", path, strerror(errno));
        return -1;
    }
    o->path = path;
    return 0;
}

int jst_outfile_commit(struct jst_outfile *o, const char *cmd, int werr)
{
    if (!o->path) {
        if (werr || fflush(stdout) != 0) {
            jst_errorf(cmd, "cannot write to standard output");
            return -1;
        }
        return 0;
    }
    if (jst_outfile_finish(o, o->path, werr) != 0) {
        jst_errorf(cmd, "%s: cannot write: %s", o->path, strerror(errno));
        return -1;
    }
    return 0;
}

int jst_outfile_finish(struct jst_outfile *o, const char *path, int werr)
{
    werr |= fclose(o->f) != 0 ? -1 : 0;
    if (!werr && rename(o->tmp, path) != 0)
        werr = -1;
    if (werr) {
        int e = errno;
        remove(o->tmp);
        errno = e ? e : EIO;
        return -1;
    }
    return 0;
}

int jst_outfile_write(const char *cmd, const char *path, size_t n_procs,
                      int (*fn)(FILE *f, void *ctx), void *ctx, const char *note)
{
    struct jst_outfile o;
    if (jst_outfile_open(&o, cmd, path) != 0)
        return JST_EXIT_USAGE;
    int werr = jst_outfile_commit(&o, cmd, fn(o.f, ctx));
    if (!werr && o.path)
        fprintf(stderr, "jitstall %s: wrote %s (%zu process%s)%s\n", cmd, o.path, n_procs,
                n_procs == 1 ? "" : "es", note ? note : "");
    return werr ? JST_EXIT_USAGE : JST_EXIT_OK;
}
