/* Output files of the CLI, replaced whole or not at all (see outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* The descriptor a path such as /dev/stdout, /dev/fd/N or /proc/self/fd/N
 * names, or -1: such a path is the caller's own descriptor, written to as it
 * is (these are links, and a regular file behind them must not be replaced). */
static int outfile_fd_path(const char *path)
{
    static const char *const std[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(path, std[i]))
            return i;
    const char *n = NULL;
    if (!strncmp(path, "/dev/fd/", 8))
        n = path + 8;
    else if (!strncmp(path, "/proc/self/fd/", 14))
        n = path + 14;
    if (!n || !*n || strlen(n) > 6 || strspn(n, "0123456789") != strlen(n))
        return -1;
    return atoi(n);
}

/* o writes straight to fd (a descriptor of its own, -1 with errno set when
 * it could not get one), which path names: 0, or -1 said on stderr. */
static int write_through(struct jst_outfile *o, const char *cmd, const char *path, int fd)
{
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        jst_errorf(cmd, "%s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    o->path = path;
    o->direct = 1;
    return 0;
}

int jst_outfile_open(struct jst_outfile *o, const char *cmd, const char *path)
{
    o->f = stdout;
    o->path = NULL;
    o->tmp[0] = '\0';
    o->direct = 0;
    if (!path || !strcmp(path, "-"))
        return 0;
    int fd = outfile_fd_path(path);
    if (fd >= 0)
        return write_through(o, cmd, path, fcntl(fd, F_DUPFD_CLOEXEC, 3));
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            jst_errorf(cmd, "%s: is a symbolic link; not following it (name its target)", path);
            return -1;
        }
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            /* A device or a pipe is written through: replacing it by a
             * regular file would break it for everyone else. */
            fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
            struct stat now;
            if (fd >= 0 &&
                (fstat(fd, &now) != 0 || (now.st_mode & S_IFMT) != (st.st_mode & S_IFMT))) {
                close(fd);
                fd = -1;
                errno = EAGAIN;
            }
            return write_through(o, cmd, path, fd);
        }
        if (!S_ISREG(st.st_mode)) {
            jst_errorf(cmd, "%s: not a regular file, a character device or a FIFO", path);
            return -1;
        }
    }
    if (!(o->f = jst_outfile_create(o, path))) {
        o->tmp[0] = '\0';
        jst_errorf(cmd, "%s: %s", path, strerror(errno));
        return -1;
    }
    o->path = path;
    return 0;
}

int jst_outfile_probe(const char *cmd, const char *path)
{
    if (!path || !strcmp(path, "-") || outfile_fd_path(path) >= 0)
        return 0;
    struct stat st;
    if (lstat(path, &st) == 0) {
        if (S_ISLNK(st.st_mode)) {
            jst_errorf(cmd, "%s: is a symbolic link; not following it (name its target)", path);
            return -1;
        }
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            if (access(path, W_OK) != 0) {
                jst_errorf(cmd, "%s: %s", path, strerror(errno));
                return -1;
            }
            return 0;
        }
        if (!S_ISREG(st.st_mode)) {
            jst_errorf(cmd, "%s: not a regular file, a character device or a FIFO", path);
            return -1;
        }
    }
    struct jst_outfile o;
    FILE *f = jst_outfile_create(&o, path);
    if (!f) {
        jst_errorf(cmd, "%s: %s", path, strerror(errno));
        return -1;
    }
    fclose(f);
    unlink(o.tmp);
    return 0;
}

int jst_outfile_commit(struct jst_outfile *o, const char *cmd, int werr)
{
    if (!o->path) {
        if (werr || fflush(stdout) != 0 || ferror(stdout)) {
            jst_errorf(cmd, "cannot write to standard output");
            return -1;
        }
        return 0;
    }
    if (o->direct) {
        werr |= ferror(o->f);
        if ((fclose(o->f) != 0) | (werr != 0)) {
            jst_errorf(cmd, "%s: cannot write: %s", o->path, strerror(errno ? errno : EIO));
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
    werr |= ferror(o->f) ? -1 : 0;
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
