/*
 * Trace reading: header checks, the reader's buffers, and the record stream,
 * handed out one record at a time. Version 1 streams (one zstd stream) are
 * read here; there, damage ends the reading. Version 2 streams are
 * checksummed blocks, read by trace_blocks.c: a damaged block is reported and
 * skipped. A record's fields are read by trace_fields.c.
 *
 * Traces are hostile input: every length is checked against the bytes that
 * are really there. A file that simply stops (the process was killed) is not
 * an error: the reader returns what it has and reports it as truncated.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include "trace_read_int.h"
#include "openreg.h"

/* Header sizes beyond this are taken as damage rather than skipped. */
#define JST_HEADER_SIZE_LIMIT (1u << 20)

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

ssize_t jst_rd_read_full(int fd, uint8_t *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(fd, p + got, n - got);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (ssize_t)got;
}

static void reader_free(struct jst_reader *rd)
{
    if (rd->fd >= 0)
        close(rd->fd);
    ZSTD_freeDCtx(rd->dctx);
    free(rd->in);
    free(rd->d);
    free(rd);
}

/* Checks the plain header and leaves the file positioned at the stream. */
static int read_header(struct jst_reader *rd, char *err, size_t errlen)
{
    uint8_t h[JST_HEADER_SIZE];
    ssize_t n = jst_rd_read_full(rd->fd, h, sizeof(h));
    if (n < 0) {
        set_err(err, errlen, "cannot read: %s", strerror(errno));
        return -1;
    }
    if (n == 0) {
        set_err(err, errlen, "empty file (0 bytes): not a trace");
        return -1;
    }
    if ((size_t)n < JST_FILE_MAGIC_LEN || memcmp(h, JST_FILE_MAGIC, JST_FILE_MAGIC_LEN) != 0) {
        set_err(err, errlen, "not a jitstall trace (bad magic)");
        return -1;
    }
    if ((size_t)n < sizeof(h)) {
        set_err(err, errlen, "truncated header (%zd of %d bytes)", n, JST_HEADER_SIZE);
        return -1;
    }
    uint16_t version = jst_rd_u16(h + 8), compat = jst_rd_u16(h + 10);
    uint32_t endian = jst_rd_u32(h + 12), hsize = jst_rd_u32(h + 16), flags = jst_rd_u32(h + 20);
    if (endian == __builtin_bswap32(JST_ENDIAN_MARK)) {
        set_err(err, errlen, "byte-swapped trace, not supported");
        return -1;
    }
    if (endian != JST_ENDIAN_MARK) {
        set_err(err, errlen, "damaged header (endian mark 0x%08x)", endian);
        return -1;
    }
    if (compat > JST_FORMAT_VERSION) {
        set_err(err, errlen,
                "trace format version %u needs a newer jitstall (reader supports up to %u)",
                version > compat ? version : compat, JST_FORMAT_VERSION);
        return -1;
    }
    if (hsize < JST_HEADER_SIZE || hsize > JST_HEADER_SIZE_LIMIT) {
        set_err(err, errlen, "damaged header (header size %u)", hsize);
        return -1;
    }
    /* Skip a longer header by reading, so pipes work too. */
    for (uint32_t left = hsize - JST_HEADER_SIZE; left;) {
        uint8_t skip[256];
        size_t want = left < sizeof(skip) ? left : sizeof(skip);
        n = jst_rd_read_full(rd->fd, skip, want);
        if (n < 0) {
            set_err(err, errlen, "cannot read: %s", strerror(errno));
            return -1;
        }
        if ((size_t)n < want) {
            set_err(err, errlen, "truncated header (%u bytes announced)", hsize);
            return -1;
        }
        left -= (uint32_t)n;
    }
    rd->version = version;
    rd->blocks = (flags & JST_FILE_FLAG_BLOCKS) != 0;
    rd->compressed = !rd->blocks && (flags & JST_FILE_FLAG_ZSTD) != 0;
    rd->in_off = hsize;
    return 0;
}

struct jst_reader *jst_reader_open(const char *path, char *err, size_t errlen)
{
    set_err(err, errlen, "%s", "");
    struct jst_reader *rd = calloc(1, sizeof(*rd));
    if (!rd) {
        set_err(err, errlen, "out of memory");
        return NULL;
    }
    /* "-" is standard input: the reader only reads forward, so a pipe does. */
    rd->fd = strcmp(path, "-") ? jst_open_regular(path) : dup(STDIN_FILENO);
    if (rd->fd < 0) {
        set_err(err, errlen, "cannot open: %s", jst_open_strerror(errno));
        reader_free(rd);
        return NULL;
    }
    if (read_header(rd, err, errlen) < 0) {
        reader_free(rd);
        return NULL;
    }
    rd->in_cap = JST_READ_CHUNK;
    rd->in = malloc(rd->in_cap);
    if (rd->compressed || rd->blocks)
        rd->dctx = ZSTD_createDCtx();
    if (!rd->in || ((rd->compressed || rd->blocks) && !rd->dctx)) {
        set_err(err, errlen, "out of memory");
        reader_free(rd);
        return NULL;
    }
    return rd;
}

/* Refills the raw input buffer once it is used up. */
static int refill_input(struct jst_reader *rd)
{
    if (rd->in_pos < rd->in_len || rd->in_eof)
        return 0;
    rd->in_off += rd->in_len;
    rd->in_pos = rd->in_len = 0;
    ssize_t n = jst_rd_read_full(rd->fd, rd->in, JST_READ_CHUNK);
    if (n < 0) {
        snprintf(rd->err, sizeof(rd->err), "cannot read: %s", strerror(errno));
        return -1;
    }
    rd->in_len = (size_t)n;
    if (n == 0)
        rd->in_eof = 1;
    return 0;
}

int jst_rd_grow(struct jst_reader *rd, uint8_t **buf, size_t *cap, size_t need)
{
    size_t c = *cap ? *cap : JST_READ_CHUNK;
    while (c < need)
        c *= 2;
    uint8_t *p = realloc(*buf, c);
    if (!p) {
        snprintf(rd->err, sizeof(rd->err), "out of memory");
        return -1;
    }
    *buf = p;
    *cap = c;
    return 0;
}

int jst_rd_reserve_decoded(struct jst_reader *rd, size_t more)
{
    if (rd->d_pos) {
        memmove(rd->d, rd->d + rd->d_pos, rd->d_len - rd->d_pos);
        rd->d_len -= rd->d_pos;
        rd->d_pos = 0;
    }
    if (rd->d_cap - rd->d_len >= more)
        return 0;
    return jst_rd_grow(rd, &rd->d, &rd->d_cap, rd->d_len + more);
}

uint32_t jst_rd_rec_limit(uint16_t type)
{
    switch (type) {
    case JST_REC_PROCESS: /* the command line: the writer keeps 256 KiB */
    case JST_REC_CALL:    /* a load's kernel names: the writer keeps 256 KiB */
    case JST_REC_BEGIN:
        return JST_READ_REC_BIG;
    case JST_REC_DEVICE:
    case JST_REC_CACHE_STATE:
    case JST_REC_STACK: /* 256 frames and 24 KiB of Python frames */
    case JST_REC_MODMAP:
    case JST_REC_CUPTI_JIT:
    case JST_REC_NOTE: /* one line of text */
    case JST_REC_END:
    case JST_REC_RANGE:
    case JST_REC_PROGRESS:
    case JST_REC_COMPILE:
    case JST_REC_SAMPLE:
    case JST_REC_FW_CACHE:
    case JST_REC_FW_EVENT:
        return JST_READ_REC_SMALL;
    default: /* a newer writer's record: skipped unread anyway */
        return JST_READ_REC_BIG;
    }
}

int jst_rd_over_limit(struct jst_reader *rd, uint16_t type, uint32_t len)
{
    uint32_t limit = jst_rd_rec_limit(type);
    if (len <= limit)
        return 0;
    const char *name = jst_rec_type_name(type);
    char what[48];
    snprintf(what, sizeof(what), "a %s record", name ? name : "unknown");
    jst_rd_oversize(rd, what, len, limit);
    return 1;
}

void jst_rd_oversize(struct jst_reader *rd, const char *what, uint64_t len, uint64_t limit)
{
    if (!rd->n_oversize)
        snprintf(rd->oversize_first, sizeof(rd->oversize_first),
                 "%s of %llu bytes, over the limit of %llu KiB", what, (unsigned long long)len,
                 (unsigned long long)(limit >> 10));
    rd->n_oversize++;
    rd->oversize_bytes += len;
}

int jst_rd_decoded(struct jst_reader *rd, uint64_t more, uint64_t file_bytes)
{
    rd->decoded += more;
    uint64_t bound = JST_READ_DECODE_FLOOR + (uint64_t)JST_READ_DECODE_RATIO * file_bytes;
    if (rd->decoded <= bound)
        return 0;
    snprintf(rd->err, sizeof(rd->err),
             "reading stopped at byte %llu: its records decode to %llu MiB, more than %llu MiB "
             "plus %u times the file's bytes read so far; no trace jitstall writes does that",
             (unsigned long long)file_bytes, (unsigned long long)(rd->decoded >> 20),
             (unsigned long long)(JST_READ_DECODE_FLOOR >> 20), JST_READ_DECODE_RATIO);
    return -1;
}

/* Decodes until `need` unconsumed bytes are available.
 * 1: they are; 0: the data ends before that; -1: damaged or I/O error. */
static int fill(struct jst_reader *rd, size_t need)
{
    while (rd->d_len - rd->d_pos < need) {
        size_t want = need - (rd->d_len - rd->d_pos);
        if (jst_rd_reserve_decoded(rd, want > JST_READ_CHUNK ? want : JST_READ_CHUNK) < 0)
            return -1;
        if (refill_input(rd) < 0)
            return -1;
        size_t avail = rd->in_len - rd->in_pos;
        if (!rd->compressed) {
            if (!avail)
                return 0;
            size_t k = avail < rd->d_cap - rd->d_len ? avail : rd->d_cap - rd->d_len;
            memcpy(rd->d + rd->d_len, rd->in + rd->in_pos, k);
            rd->d_len += k;
            rd->in_pos += k;
            continue;
        }
        ZSTD_inBuffer in = {rd->in, rd->in_len, rd->in_pos};
        ZSTD_outBuffer out = {rd->d, rd->d_cap, rd->d_len};
        size_t ret = ZSTD_decompressStream(rd->dctx, &out, &in);
        if (ZSTD_isError(ret)) {
            snprintf(rd->err, sizeof(rd->err), "damaged compressed data near byte %llu: %s",
                     (unsigned long long)(rd->in_off + rd->in_pos), ZSTD_getErrorName(ret));
            return -1;
        }
        int progress = in.pos != rd->in_pos || out.pos != rd->d_len;
        size_t got = out.pos - rd->d_len;
        rd->in_pos = in.pos;
        rd->d_len = out.pos;
        if (jst_rd_decoded(rd, got, rd->in_off + rd->in_pos) < 0)
            return -1;
        /* 0 means a frame was completed and fully flushed; a new one may follow.
         * A call that did nothing (empty input between frames) says nothing. */
        if (progress)
            rd->frame_open = ret != 0;
        if (!progress) {
            /* With input used up and no more in the file, a call that produced
             * nothing means the decoder has nothing more to give. */
            if (rd->in_pos == rd->in_len && rd->in_eof)
                return 0;
            if (rd->in_pos < rd->in_len) {
                snprintf(rd->err, sizeof(rd->err), "zstd decoder made no progress");
                return -1;
            }
        }
    }
    return 1;
}

int jst_rd_hand_out(struct jst_reader *rd, struct jst_record *out, uint32_t len)
{
    const uint8_t *h = rd->d + rd->d_pos;
    out->type = jst_rd_u16(h);
    out->flags = jst_rd_u16(h + 2);
    out->len = len;
    out->payload = h + JST_REC_HDR_SIZE;
    rd->d_pos += JST_REC_HDR_SIZE + (size_t)len;
    if (out->type == JST_REC_END)
        rd->saw_end = 1;
    return 1;
}

/* Version 1: decodes and drops the rest of a skipped record, a chunk at a
 * time, so that it is never held whole. 1 done, else as fill. */
static int skip_decoded(struct jst_reader *rd)
{
    while (rd->skip_left) {
        if (rd->d_len == rd->d_pos) {
            int r = fill(rd, 1);
            if (r != 1)
                return r;
        }
        size_t k = rd->d_len - rd->d_pos;
        k = k < rd->skip_left ? k : (size_t)rd->skip_left;
        rd->d_pos += k;
        rd->skip_left -= k;
    }
    return 1;
}

/* Version 1: records from one continuous (zstd or plain) stream. */
static int stream_next(struct jst_reader *rd, struct jst_record *out)
{
    int r;
    while ((r = skip_decoded(rd)) == 1 && (r = fill(rd, JST_REC_HDR_SIZE)) == 1) {
        const uint8_t *h = rd->d + rd->d_pos;
        uint16_t type = jst_rd_u16(h);
        uint32_t len = jst_rd_u32(h + 4);
        if (len > JST_REC_MAX_PAYLOAD) {
            snprintf(rd->err, sizeof(rd->err),
                     "damaged record header (payload length %u exceeds %u)", len,
                     JST_REC_MAX_PAYLOAD);
            rd->failed = 1;
            return -1;
        }
        if (jst_rd_over_limit(rd, type, len)) {
            rd->d_pos += JST_REC_HDR_SIZE;
            rd->skip_left = len;
            continue;
        }
        r = fill(rd, JST_REC_HDR_SIZE + (size_t)len);
        if (r == 1)
            return jst_rd_hand_out(rd, out, len);
        break;
    }
    if (r < 0) {
        rd->failed = 1;
        return -1;
    }
    /* End of data: complete only if every byte was a whole record, the zstd
     * frame was closed, and the writer got to write END. */
    if (rd->d_len != rd->d_pos || rd->skip_left || rd->frame_open || !rd->saw_end)
        rd->truncated = 1;
    return 0;
}

int jst_reader_next(struct jst_reader *rd, struct jst_record *out)
{
    if (rd->failed)
        return -1;
    return rd->blocks ? jst_rd_block_next(rd, out) : stream_next(rd, out);
}

int jst_reader_truncated(const struct jst_reader *rd)
{
    return rd->truncated;
}

const char *jst_reader_error(const struct jst_reader *rd)
{
    return rd->err[0] ? rd->err : "no error";
}

unsigned jst_reader_version(const struct jst_reader *rd)
{
    return rd->version;
}

void jst_reader_close(struct jst_reader *rd)
{
    if (rd)
        reader_free(rd);
}
