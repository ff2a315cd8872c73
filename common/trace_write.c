/*
 * Trace writing: building records in caller buffers (jst_rec_*) and the
 * thread-safe writer that appends them to a file as checksummed blocks
 * (jst_writer_*, format version 2, docs/FORMAT.md "Blocks").
 *
 * The writer runs inside the host program (libjitstall.so), so it never
 * aborts, never prints, and leaves errno as it found it. Records collect in
 * memory; a record emitted with flush set ends the block, which is compressed
 * and write(2)-done before emit returns, so a process killed right after it
 * leaves a file that reads up to that record. Each block stands alone, so
 * damage to one loses only its records.
 *
 * The descriptor is the program's business too: it is moved to a high
 * number, and its identity (st_dev, st_ino) is checked before every write.
 * If the program closed or replaced it, the writer never touches that number
 * again and continues in the trace file reopened by path, or in a new file.
 * When descriptors are scarce (a low RLIMIT_NOFILE, or no free number high
 * enough), the writer holds none: the program's next open must not fail
 * because of the trace.
 *
 * The process's file-size limit (RLIMIT_FSIZE) is the program's too: a write
 * past it would kill the process with SIGXFSZ. The writer stops one block
 * short of the limit, with a note that says why (JST_F_TRACE_STOP), and
 * keeps SIGXFSZ blocked around its writes, consuming the one its own write
 * raised, should the limit have been lowered meanwhile. Any failed write
 * (EFBIG, ENOSPC, ...) stops the trace the same way, with that note when it
 * can still be written.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include "trace.h"

#define JST_ZSTD_LEVEL 3
/* Small match tables: level 3's defaults (a 2 MiB window, 768 KiB of hash
 * and chain tables) were cleared at the first record of every traced
 * process, most of its start-up cost; records are small and repeat within a
 * few KiB (docs/PERFORMANCE.md). */
#define JST_ZSTD_WINDOW_LOG 17
#define JST_ZSTD_TABLE_LOG 13
/* Blocks of fewer bytes of records are stored plain. Most blocks are the
 * few records flushed with one event (a load, its BEGIN, the module map):
 * zstd spent about 50,000 instructions on each (entropy tables built per
 * frame) to save a few hundred bytes, over a third of all the instructions
 * of a small traced process (docs/PERFORMANCE.md). */
#define JST_ZSTD_MIN_BLOCK 4096

/* ---- little-endian stores, independent of the host's byte order ---- */

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- records ---- */

void jst_rec_begin(struct jst_rec *r, void *buf, size_t cap, uint16_t type)
{
    r->buf = buf;
    r->cap = cap;
    r->len = 0;
    r->overflow = 0;
    if (!buf || cap < JST_REC_HDR_SIZE) {
        r->overflow = 1;
        return;
    }
    put_u16(r->buf, type);
    put_u16(r->buf + 2, 0);
    put_u32(r->buf + 4, 0);
    r->len = JST_REC_HDR_SIZE;
}

/* Reserves n bytes at the end of the record, keeping the header's payload
 * length current; NULL (and overflow set) when they do not fit. */
static uint8_t *rec_reserve(struct jst_rec *r, size_t n)
{
    if (r->overflow)
        return NULL;
    if (n > r->cap - r->len || r->len + n - JST_REC_HDR_SIZE > JST_REC_MAX_PAYLOAD) {
        r->overflow = 1;
        return NULL;
    }
    uint8_t *p = r->buf + r->len;
    r->len += n;
    put_u32(r->buf + 4, (uint32_t)(r->len - JST_REC_HDR_SIZE));
    return p;
}

static void rec_scalar(struct jst_rec *r, uint16_t key, uint8_t kind, uint64_t v)
{
    uint8_t *p = rec_reserve(r, 3 + 8);
    if (!p)
        return;
    put_u16(p, key);
    p[2] = kind;
    put_u64(p + 3, v);
}

static void rec_blob(struct jst_rec *r, uint16_t key, uint8_t kind, const void *data, size_t n)
{
    if (n > JST_REC_MAX_PAYLOAD) {
        r->overflow = 1;
        return;
    }
    uint8_t *p = rec_reserve(r, 3 + 4 + n);
    if (!p)
        return;
    put_u16(p, key);
    p[2] = kind;
    put_u32(p + 3, (uint32_t)n);
    if (n)
        memcpy(p + 7, data, n);
}

void jst_rec_u64(struct jst_rec *r, uint16_t key, uint64_t v)
{
    rec_scalar(r, key, JST_K_U64, v);
}

void jst_rec_i64(struct jst_rec *r, uint16_t key, int64_t v)
{
    rec_scalar(r, key, JST_K_I64, (uint64_t)v);
}

void jst_rec_str(struct jst_rec *r, uint16_t key, const char *s)
{
    if (s)
        rec_blob(r, key, JST_K_STR, s, strlen(s));
}

void jst_rec_strn(struct jst_rec *r, uint16_t key, const char *s, size_t n)
{
    if (s)
        rec_blob(r, key, JST_K_STR, s, n);
}

void jst_rec_bytes(struct jst_rec *r, uint16_t key, const void *p, size_t n)
{
    if (p || !n)
        rec_blob(r, key, JST_K_BYTES, p, n);
}

/* ---- the writer ---- */

/* Records collect in memory up to this many bytes (or one larger record);
 * a flush request, or the next record that does not fit, ends the block. */
#define JST_BLOCK_TARGET (128u << 10)
/* After this many lost descriptors the writer gives up (tracing stops). */
#define JST_MAX_RECOVERIES 8

struct jst_writer {
    pthread_mutex_t lock;
    int fd;   /* ours while fd_is_ours(); -1 once the program took it */
    int dead; /* a write or compression failed: refuse everything after */
    ZSTD_CCtx *cctx;
    uint8_t *raw; /* records of the block being filled */
    size_t raw_len, raw_cap;
    uint8_t *out; /* one encoded block: header and payload */
    size_t out_cap;
    uint32_t index; /* number of the next block in this file */
    dev_t dev;      /* identity of the trace file */
    ino_t ino;
    void *pin; /* a page of it mapped: see file_pin() */
    char *path;
    uint8_t *first; /* the first record (process), to open a new file with */
    size_t first_len;
    int recoveries;
    int stop; /* enum jst_trace_stop once the trace stopped early, else 0 */
    _Atomic int has_notice;
    char notice[256];
};

void jst_block_header(uint8_t *h, uint32_t index, const uint8_t *payload, uint32_t stored,
                      uint32_t raw, uint8_t encoding)
{
    memcpy(h, JST_BLOCK_MAGIC, 4);
    put_u32(h + 4, index);
    put_u32(h + 8, stored);
    put_u32(h + 12, raw);
    h[16] = encoding;
    h[17] = h[18] = h[19] = 0;
    put_u32(h + 20, jst_crc32c(0, payload, stored));
    put_u32(h + 24, jst_crc32c(0, h, 24));
}

/* write(2) all of it, retrying on EINTR and partial writes. */
static int write_plain(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (k == 0) {
            errno = ENOSPC;
            return -1;
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* write_plain with SIGXFSZ blocked: a write past RLIMIT_FSIZE then fails
 * with EFBIG instead of killing the process. The signal that write raised is
 * taken back before the mask is restored, unless the program itself had
 * SIGXFSZ blocked (a signal pending then may be its own). The mask is
 * restored exactly. */
static int write_all(int fd, const uint8_t *p, size_t n)
{
    sigset_t xfsz, old;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    int masked = pthread_sigmask(SIG_BLOCK, &xfsz, &old) == 0;
    int rc = write_plain(fd, p, n);
    if (masked) {
        int err = errno;
        sigset_t pend;
        if (rc < 0 && err == EFBIG && !sigismember(&old, SIGXFSZ) && sigpending(&pend) == 0 &&
            sigismember(&pend, SIGXFSZ)) {
            struct timespec zero = {0, 0};
            while (sigtimedwait(&xfsz, NULL, &zero) < 0 && errno == EINTR)
                ;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        errno = err;
    }
    return rc;
}

/* Below this RLIMIT_NOFILE the writer holds no descriptor at all: every
 * one is the program's (`ulimit -n 4` leaves a program one file). */
#define JST_FD_MIN_LIMIT 64

/* The size of the process's descriptor table (FDSize in /proc/self/status);
 * 0 when unknown. */
static long fd_table_size(void)
{
    enum { cap = 4096 };
    int err = errno;
    char *buf = malloc(cap); /* not on the stack: the first call may be on a small one */
    int fd = buf ? open("/proc/self/status", O_RDONLY | O_CLOEXEC) : -1;
    long size = 0;
    if (fd >= 0) {
        ssize_t n = read(fd, buf, cap - 1);
        close(fd);
        if (n > 0) {
            buf[n] = '\0';
            const char *p = strstr(buf, "\nFDSize:");
            if (p)
                size = strtol(p + 8, NULL, 10);
        }
    }
    free(buf);
    errno = err;
    return size;
}

/* Moves fd above the numbers programs use: they take the lowest free ones,
 * and some dup2 onto small fixed ones. The new number is in the top quarter
 * below RLIMIT_NOFILE (at most 4096), so the trace takes a number only from
 * a program that has nearly all of them open; or, when that lies beyond the
 * process's descriptor table, in the top quarter of the table: growing the
 * table in a process with several threads waits for an RCU grace period in
 * the kernel, 2-15 ms measured, inside the program's first driver call. When
 * the limit is below JST_FD_MIN_LIMIT, or no number that high is free,
 * descriptors are scarce: fd is closed and -1 returned with errno EMFILE (the
 * trace gives up, not the program). */
static int fd_raise(int fd)
{
    struct rlimit rl;
    rlim_t lim = 4096;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < lim)
        lim = rl.rlim_cur;
    int hi = -1;
    if (lim >= JST_FD_MIN_LIMIT) {
        long want = (long)(lim - lim / 4), table = fd_table_size();
        if (table >= JST_FD_MIN_LIMIT && want >= table)
            want = table - table / 4;
        hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)want);
    }
    close(fd);
    if (hi < 0)
        errno = EMFILE;
    return hi;
}

/* Is w->fd still the file we opened? A program may close every descriptor
 * and open its own file under the same number. *size: the file's size. */
static int fd_is_ours(const struct jst_writer *w, off_t *size)
{
    struct stat st;
    if (w->fd < 0 || fstat(w->fd, &st) != 0 || st.st_dev != w->dev || st.st_ino != w->ino)
        return 0;
    if (size)
        *size = st.st_size;
    return 1;
}

/* Keeps the trace file's inode alive while the writer lives. Without it, a
 * program that closes our descriptor and deletes the file frees the inode,
 * and a file it creates next may get the same inode number: the identity
 * check would then take the program's file for ours. A mapping holds the
 * inode without a descriptor the program could close. */
static void file_pin(struct jst_writer *w, int fd)
{
    if (w->pin)
        munmap(w->pin, 1);
    w->pin = mmap(NULL, 1, PROT_READ, MAP_SHARED, fd, 0);
    if (w->pin == MAP_FAILED)
        w->pin = NULL; /* the check still holds unless the inode is reused */
}

/* Creates path (O_EXCL, no symlink, 0600), writes the file header, and
 * returns a raised descriptor with the file's identity; -1 and errno. */
static int file_create(const char *path, dev_t *dev, ino_t *ino)
{
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    uint8_t hdr[JST_HEADER_SIZE] = {0};
    memcpy(hdr, JST_FILE_MAGIC, JST_FILE_MAGIC_LEN);
    put_u16(hdr + 8, JST_FORMAT_VERSION);
    put_u16(hdr + 10, JST_FORMAT_COMPAT);
    put_u32(hdr + 12, JST_ENDIAN_MARK);
    put_u32(hdr + 16, JST_HEADER_SIZE);
    put_u32(hdr + 20, JST_FILE_FLAG_BLOCKS);
    /* bytes 24..31: reserved, zero */
    struct stat st;
    if (write_all(fd, hdr, sizeof(hdr)) < 0 || fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        unlink(path);
        errno = e;
        return -1;
    }
    *dev = st.st_dev;
    *ino = st.st_ino;
    int hi = fd_raise(fd);
    if (hi < 0) {
        unlink(path);
        errno = EMFILE;
    }
    return hi;
}

static int writer_recover(struct jst_writer *w);

/* Makes *buf (of *cap bytes) hold at least need bytes: -1 with errno
 * ENOMEM when it cannot. */
static int buf_reserve(uint8_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    uint8_t *b = realloc(*buf, need);
    if (!b) {
        errno = ENOMEM;
        return -1;
    }
    *buf = b;
    *cap = need;
    return 0;
}

/* Room kept below RLIMIT_FSIZE for the note that says the trace stopped. */
#define JST_STOP_RESERVE 512

static const char *stop_text(int why)
{
    switch (why) {
    case JST_STOP_DISK_FULL:
        return "the file system is full: the trace stops here";
    case JST_STOP_FILE_LIMIT:
        return "the next block would pass the process's file-size limit (RLIMIT_FSIZE, "
               "ulimit -f): the trace stops here";
    case JST_STOP_NO_FDS:
        return "file descriptors are scarce (RLIMIT_NOFILE): jitstall gave its trace up "
               "rather than take one the program needs; the trace stops here";
    default:
        return "a write to the trace failed: the trace stops here";
    }
}

/* The reason a write that failed with err stops the trace. */
static int stop_reason(int err)
{
    switch (err) {
    case ENOSPC:
    case EDQUOT:
        return JST_STOP_DISK_FULL;
    case EFBIG:
        return JST_STOP_FILE_LIMIT;
    case EMFILE:
    case ENFILE:
        return JST_STOP_NO_FDS;
    default:
        return JST_STOP_WRITE_ERROR;
    }
}

/* The last block of a trace that stops early: a note with JST_F_TRACE_STOP,
 * built and written here (no buffer of the writer's, no limit check but
 * max: the bytes the file may still grow by, or 0 for no limit). Its failure
 * changes nothing: the trace has stopped either way. */
static void stop_note(struct jst_writer *w, int why, uint64_t max)
{
    uint8_t blk[JST_STOP_RESERVE];
    uint8_t *pay = blk + JST_BLOCK_HDR_SIZE;
    struct jst_rec r;
    jst_rec_begin(&r, pay, sizeof blk - JST_BLOCK_HDR_SIZE, JST_REC_NOTE);
    jst_rec_u64(&r, JST_F_LEVEL, 1);
    jst_rec_str(&r, JST_F_MESSAGE, stop_text(why));
    jst_rec_u64(&r, JST_F_TRACE_STOP, (uint64_t)why);
    if (r.overflow || w->fd < 0)
        return;
    size_t len = JST_BLOCK_HDR_SIZE + r.len;
    if (max && len > max)
        return;
    jst_block_header(blk, w->index, pay, (uint32_t)r.len, (uint32_t)r.len, JST_BLOCK_ENC_PLAIN);
    int saved = errno;
    if (write_all(w->fd, blk, len) == 0)
        w->index++;
    errno = saved;
}

/* 1 when a block of n bytes at offset size would leave less than
 * JST_STOP_RESERVE bytes below RLIMIT_FSIZE; *room: what is left below it. */
static int fsize_over(off_t size, size_t n, uint64_t *room)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return 0;
    uint64_t lim = (uint64_t)rl.rlim_cur, at = size > 0 ? (uint64_t)size : 0;
    *room = lim > at ? lim - at : 0;
    return n + JST_STOP_RESERVE > *room;
}

/* Encodes n bytes of whole records as one block (zstd, or plain when that is
 * no smaller) and writes it, after making sure the descriptor is ours and
 * that the block leaves room for a stop note below RLIMIT_FSIZE. */
static int block_write(struct jst_writer *w, const uint8_t *raw, size_t n)
{
    if (!n)
        return 0;
    off_t size = 0;
    if (!fd_is_ours(w, &size)) {
        if (writer_recover(w) < 0)
            return -1;
        if (!fd_is_ours(w, &size)) {
            errno = EBADF;
            return -1;
        }
    }
    size_t need = JST_BLOCK_HDR_SIZE + ZSTD_compressBound(n);
    if (buf_reserve(&w->out, &w->out_cap, need) < 0)
        return -1;
    uint8_t *pay = w->out + JST_BLOCK_HDR_SIZE;
    size_t z = n;
    if (n >= JST_ZSTD_MIN_BLOCK)
        z = ZSTD_compress2(w->cctx, pay, w->out_cap - JST_BLOCK_HDR_SIZE, raw, n);
    uint8_t enc = JST_BLOCK_ENC_ZSTD;
    if (ZSTD_isError(z) || z >= n) {
        memcpy(pay, raw, n);
        z = n;
        enc = JST_BLOCK_ENC_PLAIN;
    }
    uint64_t room = 0;
    if (fsize_over(size, JST_BLOCK_HDR_SIZE + z, &room)) {
        w->stop = JST_STOP_FILE_LIMIT;
        stop_note(w, w->stop, room);
        errno = EFBIG;
        return -1;
    }
    jst_block_header(w->out, w->index, pay, (uint32_t)z, (uint32_t)n, enc);
    if (write_all(w->fd, w->out, JST_BLOCK_HDR_SIZE + z) < 0)
        return -1;
    w->index++;
    return 0;
}

/* Writes a NOTE record (level warning) as a block of its own. */
static int note_block(struct jst_writer *w, const char *msg)
{
    uint8_t buf[512];
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof(buf), JST_REC_NOTE);
    jst_rec_str(&r, JST_F_MESSAGE, msg);
    jst_rec_u64(&r, JST_F_LEVEL, 1);
    return r.overflow ? 0 : block_write(w, r.buf, r.len);
}

static void set_notice(struct jst_writer *w, const char *msg)
{
    snprintf(w->notice, sizeof(w->notice), "%s", msg);
    w->has_notice = 1;
}

/* Opens "<path without .jst>.contN.jst" for a trace whose file is gone. */
static int cont_create(struct jst_writer *w, char **newpath)
{
    size_t n = strlen(w->path);
    if (n > 4 && !strcmp(w->path + n - 4, ".jst"))
        n -= 4;
    for (int k = 1; k < 100; k++) {
        char *p = NULL;
        if (asprintf(&p, "%.*s.cont%d.jst", (int)n, w->path, k) < 0)
            return -1;
        int fd = file_create(p, &w->dev, &w->ino);
        if (fd >= 0) {
            *newpath = p;
            return fd;
        }
        free(p);
        if (errno != EEXIST)
            return -1;
    }
    return -1;
}

/*
 * The program closed or replaced our descriptor (a daemon closing all its
 * descriptors, then opening its own file under the same number). That number
 * is not ours any more: never write to it or close it. Continue in the same
 * file if its path still leads to it (blocks stand alone, so appending
 * continues the stream); else in a new file that opens with the first record
 * again. Either way a note says so, once per loss.
 */
static int writer_recover(struct jst_writer *w)
{
    w->fd = -1;
    if (w->recoveries++ >= JST_MAX_RECOVERIES || !w->path) {
        errno = EBADF;
        return -1;
    }
    int fd = open(w->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == w->dev && st.st_ino == w->ino) {
        w->fd = fd_raise(fd);
        if (w->fd < 0) {
            w->stop = JST_STOP_NO_FDS; /* nothing to write its note with */
            return -1;
        }
        static const char msg[] = "the program closed or replaced the trace's file descriptor; "
                                  "the trace continues in the same file, reopened";
        set_notice(w, msg);
        return note_block(w, msg);
    }
    if (fd >= 0)
        close(fd);
    char *np = NULL;
    fd = cont_create(w, &np);
    if (fd < 0) {
        if (errno == EMFILE)
            w->stop = JST_STOP_NO_FDS;
        errno = w->stop ? EMFILE : EBADF;
        return -1;
    }
    file_pin(w, fd);
    char msg[sizeof(w->notice)];
    snprintf(msg, sizeof(msg),
             "the program closed or replaced the trace's file descriptor and %s is gone; "
             "the trace continues in this file",
             w->path);
    free(w->path);
    w->path = np;
    w->fd = fd;
    w->index = 0;
    set_notice(w, msg);
    if (w->first && block_write(w, w->first, w->first_len) < 0)
        return -1;
    return note_block(w, msg);
}

/* Ends the block being filled: encodes and writes it. */
static int flush_pending(struct jst_writer *w)
{
    int rc = block_write(w, w->raw, w->raw_len);
    w->raw_len = 0;
    return rc;
}

/* Adds one record to the block being filled, ending that block first when
 * the record does not fit. Only a record larger than a whole block grows it. */
static int append(struct jst_writer *w, const uint8_t *p, size_t n)
{
    if (!w->first) {
        w->first = malloc(n);
        if (w->first) {
            memcpy(w->first, p, n);
            w->first_len = n;
        }
    }
    if (n > w->raw_cap - w->raw_len) {
        if (flush_pending(w) < 0)
            return -1;
        if (buf_reserve(&w->raw, &w->raw_cap, n) < 0)
            return -1;
    }
    memcpy(w->raw + w->raw_len, p, n);
    w->raw_len += n;
    return 0;
}

static void writer_free(struct jst_writer *w)
{
    if (w->pin)
        munmap(w->pin, 1);
    ZSTD_freeCCtx(w->cctx);
    free(w->raw);
    free(w->out);
    free(w->path);
    free(w->first);
    free(w);
}

struct jst_writer *jst_writer_open(const char *path)
{
    int saved = errno;
    struct jst_writer *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->fd = -1;
    w->raw_cap = JST_BLOCK_TARGET;
    w->raw = malloc(w->raw_cap);
    w->out_cap = JST_BLOCK_HDR_SIZE + ZSTD_compressBound(w->raw_cap);
    w->out = malloc(w->out_cap);
    w->path = strdup(path);
    w->cctx = ZSTD_createCCtx();
    if (!w->raw || !w->out || !w->path || !w->cctx) {
        writer_free(w);
        errno = ENOMEM;
        return NULL;
    }
    /* The block header's CRC covers the payload: no zstd checksum needed. */
    if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, JST_ZSTD_LEVEL)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 0)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_windowLog, JST_ZSTD_WINDOW_LOG)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_hashLog, JST_ZSTD_TABLE_LOG)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_chainLog, JST_ZSTD_TABLE_LOG))) {
        writer_free(w);
        errno = EINVAL;
        return NULL;
    }
    w->fd = file_create(path, &w->dev, &w->ino);
    if (w->fd < 0) {
        int e = errno;
        writer_free(w);
        errno = e;
        return NULL;
    }
    file_pin(w, w->fd);
    if (pthread_mutex_init(&w->lock, NULL) != 0) {
        close(w->fd);
        unlink(path);
        writer_free(w);
        errno = ENOMEM;
        return NULL;
    }
    errno = saved;
    return w;
}

int jst_writer_emit(struct jst_writer *w, const struct jst_rec *r, int flush)
{
    if (!w)
        return -1;
    /* A record that overflowed its buffer is refused; the stream is intact,
     * so the writer stays usable. */
    if (!r || r->overflow || !r->buf || r->len < JST_REC_HDR_SIZE || r->len > r->cap)
        return -1;
    int saved = errno;
    int rc = 0, err = 0;
    pthread_mutex_lock(&w->lock);
    if (w->dead) {
        rc = -1;
        err = EIO;
    } else if (append(w, r->buf, r->len) < 0 || (flush && flush_pending(w) < 0)) {
        w->dead = 1;
        rc = -1;
        err = errno;
        if (!w->stop) { /* else its note is written already */
            w->stop = stop_reason(err);
            if (fd_is_ours(w, NULL))
                stop_note(w, w->stop, 0);
        }
    }
    pthread_mutex_unlock(&w->lock);
    /* On failure errno says why (the caller reports it); else as it was. */
    errno = rc ? err : saved;
    return rc;
}

int jst_writer_stopped(struct jst_writer *w)
{
    if (!w)
        return 0;
    pthread_mutex_lock(&w->lock);
    int why = w->stop;
    pthread_mutex_unlock(&w->lock);
    return why;
}

int jst_writer_notice(struct jst_writer *w, char *buf, size_t n)
{
    if (!w || !w->has_notice)
        return 0;
    pthread_mutex_lock(&w->lock);
    int had = w->has_notice;
    if (had && n)
        snprintf(buf, n, "%s", w->notice);
    w->has_notice = 0;
    pthread_mutex_unlock(&w->lock);
    return had;
}

/* Writes what is pending and lets go of the descriptor, if it is still ours
 * (a number the program took over is the program's). Caller holds the lock. */
static int writer_end(struct jst_writer *w)
{
    int rc = 0;
    if (w->dead || flush_pending(w) < 0)
        rc = -1;
    if (fd_is_ours(w, NULL) && close(w->fd) < 0 && errno != EINTR)
        rc = -1;
    w->fd = -1;
    w->dead = 1;
    return rc;
}

int jst_writer_finish(struct jst_writer *w)
{
    if (!w)
        return -1;
    int saved = errno;
    pthread_mutex_lock(&w->lock);
    int rc = writer_end(w);
    pthread_mutex_unlock(&w->lock);
    errno = saved;
    return rc;
}

int jst_writer_close(struct jst_writer *w)
{
    int rc = jst_writer_finish(w);
    if (w) {
        int saved = errno;
        pthread_mutex_destroy(&w->lock);
        writer_free(w);
        errno = saved;
    }
    return rc;
}

/* In a forked child the mutex may have been held by a parent thread that no
 * longer exists, and the pending records belong to the parent: touch neither,
 * and close only a descriptor that is still ours. */
void jst_writer_abandon(struct jst_writer *w)
{
    if (!w)
        return;
    int saved = errno;
    if (fd_is_ours(w, NULL))
        close(w->fd);
    writer_free(w);
    errno = saved;
}

int jst_fd_raise(int fd)
{
    return fd_raise(fd);
}
