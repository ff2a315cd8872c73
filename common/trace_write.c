/*
 * Trace writing: building records in caller buffers (jst_rec_*) and the
 * thread-safe writer that appends them to one zstd stream (jst_writer_*).
 *
 * The writer runs inside the host program (libjitstall.so), so it never
 * aborts, never prints, and leaves errno as it found it, except that a failed
 * emit leaves the reason of the failure in errno. A record emitted with
 * flush set is compressed, flushed and write(2)-done before emit returns, so a
 * process killed right after it leaves a file that reads up to that record.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
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

struct jst_writer {
    pthread_mutex_t lock;
    int fd;
    int dead; /* a write or compression failed: refuse everything after */
    ZSTD_CCtx *cctx;
    uint8_t *out;
    size_t out_cap;
};

/* write(2) all of it, retrying on EINTR and partial writes. */
static int write_all(int fd, const uint8_t *p, size_t n)
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

/* Feeds in to the compressor with the given directive and writes whatever it
 * produces. For ZSTD_e_flush and ZSTD_e_end it loops until zstd has nothing
 * left to give, so the data is in the kernel on return. Caller holds the lock. */
static int compress_out(struct jst_writer *w, const void *src, size_t n, ZSTD_EndDirective mode)
{
    ZSTD_inBuffer in = {src, n, 0};
    for (;;) {
        ZSTD_outBuffer out = {w->out, w->out_cap, 0};
        size_t rem = ZSTD_compressStream2(w->cctx, &out, &in, mode);
        if (ZSTD_isError(rem)) {
            errno = EIO;
            return -1;
        }
        if (out.pos && write_all(w->fd, w->out, out.pos) < 0)
            return -1;
        if (mode == ZSTD_e_continue ? in.pos == in.size : rem == 0)
            return 0;
    }
}

static void writer_free(struct jst_writer *w)
{
    ZSTD_freeCCtx(w->cctx);
    free(w->out);
    free(w);
}

struct jst_writer *jst_writer_open(const char *path)
{
    int saved = errno;
    struct jst_writer *w = calloc(1, sizeof(*w));
    if (!w)
        return NULL;
    w->fd = -1;
    w->out_cap = ZSTD_CStreamOutSize();
    w->out = malloc(w->out_cap);
    w->cctx = ZSTD_createCCtx();
    if (!w->out || !w->cctx) {
        writer_free(w);
        errno = ENOMEM;
        return NULL;
    }
    if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, JST_ZSTD_LEVEL)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_windowLog, JST_ZSTD_WINDOW_LOG)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_hashLog, JST_ZSTD_TABLE_LOG)) ||
        ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_chainLog, JST_ZSTD_TABLE_LOG))) {
        writer_free(w);
        errno = EINVAL;
        return NULL;
    }
    w->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (w->fd < 0) {
        int e = errno;
        writer_free(w);
        errno = e;
        return NULL;
    }

    uint8_t hdr[JST_HEADER_SIZE] = {0};
    memcpy(hdr, JST_FILE_MAGIC, JST_FILE_MAGIC_LEN);
    put_u16(hdr + 8, JST_FORMAT_VERSION);
    put_u16(hdr + 10, JST_FORMAT_COMPAT);
    put_u32(hdr + 12, JST_ENDIAN_MARK);
    put_u32(hdr + 16, JST_HEADER_SIZE);
    put_u32(hdr + 20, JST_FILE_FLAG_ZSTD);
    /* bytes 24..31: reserved, zero */
    if (write_all(w->fd, hdr, sizeof(hdr)) < 0) {
        int e = errno;
        close(w->fd);
        unlink(path);
        writer_free(w);
        errno = e;
        return NULL;
    }
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
    int saved = errno, err = EIO; /* EIO: an earlier emit failed */
    int rc = 0;
    pthread_mutex_lock(&w->lock);
    if (w->dead)
        rc = -1;
    else if (compress_out(w, r->buf, r->len, ZSTD_e_continue) < 0 ||
             (flush && compress_out(w, NULL, 0, ZSTD_e_flush) < 0)) {
        err = errno;
        w->dead = 1;
        rc = -1;
    }
    pthread_mutex_unlock(&w->lock);
    errno = rc ? err : saved; /* the caller says why, once */
    return rc;
}

int jst_writer_finish(struct jst_writer *w)
{
    if (!w)
        return -1;
    int saved = errno;
    int rc = 0;
    pthread_mutex_lock(&w->lock);
    if (w->dead || compress_out(w, NULL, 0, ZSTD_e_end) < 0)
        rc = -1;
    if (w->fd >= 0 && close(w->fd) < 0 && errno != EINTR)
        rc = -1;
    w->fd = -1;
    w->dead = 1;
    pthread_mutex_unlock(&w->lock);
    errno = saved;
    return rc;
}

int jst_writer_close(struct jst_writer *w)
{
    if (!w)
        return -1;
    int saved = errno;
    int rc = 0;
    pthread_mutex_lock(&w->lock);
    if (w->dead || compress_out(w, NULL, 0, ZSTD_e_end) < 0)
        rc = -1;
    w->dead = 1;
    pthread_mutex_unlock(&w->lock);
    if (close(w->fd) < 0 && errno != EINTR)
        rc = -1;
    pthread_mutex_destroy(&w->lock);
    writer_free(w);
    errno = saved;
    return rc;
}

/* In a forked child the mutex may have been held by a parent thread that no
 * longer exists, and the stream belongs to the parent: touch neither. */
void jst_writer_abandon(struct jst_writer *w)
{
    if (!w)
        return;
    int saved = errno;
    close(w->fd);
    writer_free(w);
    errno = saved;
}
