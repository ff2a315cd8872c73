/*
 * Trace reading: header checks, then the record stream, handed out one record
 * at a time, and field iteration over a record's payload.
 *
 * Version 2 streams are checksummed blocks: a damaged block is reported
 * (byte offset, block number) and skipped, and reading goes on with the next
 * good block, found by its header checksum if need be. Version 1 streams (one
 * zstd stream) are still read; there, damage ends the reading.
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
#include "trace.h"

/* Header sizes beyond this are taken as damage rather than skipped. */
#define JST_HEADER_SIZE_LIMIT (1u << 20)
#define JST_READ_CHUNK (128u << 10)

/* Damaged spans described in jst_reader_damage(); later ones are counted. */
#define JST_DAMAGE_SHOWN 3

struct jst_damage {
    uint64_t start, end; /* file offsets of the bytes skipped */
    uint32_t block;      /* number of the (first) block lost */
    char why[64];
};

struct jst_reader {
    int fd;
    unsigned version;
    int compressed;  /* JST_FILE_FLAG_ZSTD (version 1) */
    int blocks;      /* JST_FILE_FLAG_BLOCKS (version 2) */
    ZSTD_DCtx *dctx; /* when compressed or in blocks */

    uint8_t *in; /* raw file bytes not yet decoded: in[in_pos..in_len) */
    size_t in_pos, in_len, in_cap;
    int in_eof;
    uint64_t in_off; /* file offset of in[0] */

    uint32_t next_block; /* number the next block should carry */
    uint32_t cur_block;  /* number and offset of the block in d */
    uint64_t cur_off;
    int tail_cut; /* the data ends inside a block */
    unsigned n_damage;
    uint64_t damage_bytes;
    struct jst_damage damage[JST_DAMAGE_SHOWN];
    char damage_text[512];

    uint8_t *d; /* decoded record stream: d[d_pos..d_len) unconsumed */
    size_t d_pos, d_len, d_cap;

    int frame_open; /* the decoder is inside an unfinished zstd frame */
    int saw_end;    /* an END record was read */
    int truncated;
    int failed;
    char err[256];
};

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

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

/* read(2) until n bytes or end of file; returns the count or -1. */
static ssize_t read_full(int fd, uint8_t *p, size_t n)
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
    ssize_t n = read_full(rd->fd, h, sizeof(h));
    if (n < 0) {
        set_err(err, errlen, "cannot read: %s", strerror(errno));
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
    uint16_t version = get_u16(h + 8), compat = get_u16(h + 10);
    uint32_t endian = get_u32(h + 12), hsize = get_u32(h + 16), flags = get_u32(h + 20);
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
        n = read_full(rd->fd, skip, want);
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
    rd->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (rd->fd < 0) {
        set_err(err, errlen, "cannot open: %s", strerror(errno));
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
    ssize_t n = read_full(rd->fd, rd->in, JST_READ_CHUNK);
    if (n < 0) {
        snprintf(rd->err, sizeof(rd->err), "cannot read: %s", strerror(errno));
        return -1;
    }
    rd->in_len = (size_t)n;
    if (n == 0)
        rd->in_eof = 1;
    return 0;
}

/* Grows *buf (of *cap bytes) to at least need bytes, doubling from *cap
 * (or JST_READ_CHUNK): -1 out of memory, said in rd->err. */
static int rd_grow(struct jst_reader *rd, uint8_t **buf, size_t *cap, size_t need)
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

/* Makes room for at least `more` decoded bytes after d_len, first sliding the
 * unconsumed bytes to the front (records handed out before are done with). */
static int reserve_decoded(struct jst_reader *rd, size_t more)
{
    if (rd->d_pos) {
        memmove(rd->d, rd->d + rd->d_pos, rd->d_len - rd->d_pos);
        rd->d_len -= rd->d_pos;
        rd->d_pos = 0;
    }
    if (rd->d_cap - rd->d_len >= more)
        return 0;
    return rd_grow(rd, &rd->d, &rd->d_cap, rd->d_len + more);
}

/* Decodes until `need` unconsumed bytes are available.
 * 1: they are; 0: the data ends before that; -1: damaged or I/O error. */
static int fill(struct jst_reader *rd, size_t need)
{
    while (rd->d_len - rd->d_pos < need) {
        size_t want = need - (rd->d_len - rd->d_pos);
        if (reserve_decoded(rd, want > JST_READ_CHUNK ? want : JST_READ_CHUNK) < 0)
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
        rd->in_pos = in.pos;
        rd->d_len = out.pos;
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

/* Hands out the record at d_pos, whose len payload bytes are all decoded. */
static int hand_out(struct jst_reader *rd, struct jst_record *out, uint32_t len)
{
    const uint8_t *h = rd->d + rd->d_pos;
    out->type = get_u16(h);
    out->flags = get_u16(h + 2);
    out->len = len;
    out->payload = h + JST_REC_HDR_SIZE;
    rd->d_pos += JST_REC_HDR_SIZE + (size_t)len;
    if (out->type == JST_REC_END)
        rd->saw_end = 1;
    return 1;
}

/* Version 1: records from one continuous (zstd or plain) stream. */
static int stream_next(struct jst_reader *rd, struct jst_record *out)
{
    int r = fill(rd, JST_REC_HDR_SIZE);
    if (r == 1) {
        const uint8_t *h = rd->d + rd->d_pos;
        uint32_t len = get_u32(h + 4);
        if (len > JST_REC_MAX_PAYLOAD) {
            snprintf(rd->err, sizeof(rd->err),
                     "damaged record header (payload length %u exceeds %u)", len,
                     JST_REC_MAX_PAYLOAD);
            rd->failed = 1;
            return -1;
        }
        r = fill(rd, JST_REC_HDR_SIZE + (size_t)len);
        if (r == 1)
            return hand_out(rd, out, len);
    }
    if (r < 0) {
        rd->failed = 1;
        return -1;
    }
    /* End of data: complete only if every byte was a whole record, the zstd
     * frame was closed, and the writer got to write END. */
    if (rd->d_len != rd->d_pos || rd->frame_open || !rd->saw_end)
        rd->truncated = 1;
    return 0;
}

/* ---- version 2: blocks ---- */

struct blk {
    uint32_t index, stored, raw, crc;
    uint8_t enc;
};

/* Makes need bytes available at in[in_pos..], reading more and growing the
 * buffer as needed. Returns the bytes available (fewer only at the end of
 * the file), or -1 on a read error. */
static ssize_t in_ensure(struct jst_reader *rd, size_t need)
{
    while (rd->in_len - rd->in_pos < need && !rd->in_eof) {
        if (rd->in_pos) {
            memmove(rd->in, rd->in + rd->in_pos, rd->in_len - rd->in_pos);
            rd->in_off += rd->in_pos;
            rd->in_len -= rd->in_pos;
            rd->in_pos = 0;
        }
        if (need > rd->in_cap && rd_grow(rd, &rd->in, &rd->in_cap, need) < 0)
            return -1;
        size_t want = rd->in_cap - rd->in_len;
        ssize_t n = read_full(rd->fd, rd->in + rd->in_len, want);
        if (n < 0) {
            snprintf(rd->err, sizeof(rd->err), "cannot read: %s", strerror(errno));
            return -1;
        }
        rd->in_len += (size_t)n;
        if ((size_t)n < want)
            rd->in_eof = 1;
    }
    return (ssize_t)(rd->in_len - rd->in_pos);
}

/* Is h a block header whose checksum holds, with sizes a writer can produce? */
static int block_header_ok(const uint8_t *h, struct blk *b)
{
    if (memcmp(h, JST_BLOCK_MAGIC, 4) != 0 || get_u32(h + 24) != jst_crc32c(0, h, 24))
        return 0;
    b->index = get_u32(h + 4);
    b->stored = get_u32(h + 8);
    b->raw = get_u32(h + 12);
    b->enc = h[16];
    b->crc = get_u32(h + 20);
    return b->stored <= JST_BLOCK_MAX_SIZE && b->raw <= JST_BLOCK_MAX_SIZE;
}

static void add_damage(struct jst_reader *rd, uint64_t start, uint64_t end, uint32_t block,
                       const char *why)
{
    if (rd->n_damage < JST_DAMAGE_SHOWN) {
        struct jst_damage *d = &rd->damage[rd->n_damage];
        d->start = start;
        d->end = end;
        d->block = block;
        snprintf(d->why, sizeof(d->why), "%s", why);
    }
    rd->n_damage++;
    rd->damage_bytes += end - start;
}

/* Skips damaged bytes: from the byte after in_pos, finds the next block
 * header whose checksum holds and leaves in_pos there, or at the end of the
 * data. Returns that file offset. A block's magic can occur by chance inside
 * compressed bytes; the header checksum tells a real header from it. */
static uint64_t resync(struct jst_reader *rd)
{
    rd->in_pos++;
    for (;;) {
        ssize_t have = in_ensure(rd, JST_BLOCK_HDR_SIZE);
        if (have < (ssize_t)JST_BLOCK_HDR_SIZE) {
            if (have > 0)
                rd->in_pos = rd->in_len;
            return rd->in_off + rd->in_pos;
        }
        const uint8_t *p = rd->in + rd->in_pos;
        const uint8_t *m = memmem(p, (size_t)have, JST_BLOCK_MAGIC, 4);
        if (!m) {
            rd->in_pos += (size_t)have - 3; /* the magic may straddle the refill */
            continue;
        }
        rd->in_pos = (size_t)(m - rd->in);
        struct blk b;
        if (rd->in_len - rd->in_pos >= JST_BLOCK_HDR_SIZE && block_header_ok(m, &b))
            return rd->in_off + rd->in_pos;
        if (rd->in_len - rd->in_pos >= JST_BLOCK_HDR_SIZE || rd->in_eof)
            rd->in_pos++;
    }
}

/* Decodes a block whose checksum held into d. Returns 0, or -1 with why. */
static int block_decode(struct jst_reader *rd, const struct blk *b, const uint8_t *pay, char *why,
                        size_t whyn)
{
    rd->d_pos = rd->d_len = 0;
    if (reserve_decoded(rd, b->raw ? b->raw : 1) < 0) {
        snprintf(why, whyn, "out of memory");
        return -1;
    }
    if (b->enc == JST_BLOCK_ENC_PLAIN && b->stored == b->raw) {
        memcpy(rd->d, pay, b->raw);
    } else if (b->enc == JST_BLOCK_ENC_ZSTD) {
        size_t r = ZSTD_decompressDCtx(rd->dctx, rd->d, b->raw, pay, b->stored);
        if (ZSTD_isError(r) || r != b->raw) {
            snprintf(why, whyn, "undecodable (%s)",
                     ZSTD_isError(r) ? ZSTD_getErrorName(r) : "wrong size");
            return -1;
        }
    } else {
        snprintf(why, whyn, "unknown encoding %u", b->enc);
        return -1;
    }
    rd->d_len = b->raw;
    return 0;
}

/* Reads the next good block into d, stepping over damaged ones.
 * 1: a block; 0: end of the data; -1: read error. */
static int load_block(struct jst_reader *rd)
{
    for (;;) {
        ssize_t have = in_ensure(rd, JST_BLOCK_HDR_SIZE);
        if (have <= 0)
            return (int)have;
        uint64_t at = rd->in_off + rd->in_pos;
        if ((size_t)have < JST_BLOCK_HDR_SIZE) {
            rd->tail_cut = 1; /* the writer stopped inside a header */
            rd->in_pos = rd->in_len;
            return 0;
        }
        struct blk b;
        if (!block_header_ok(rd->in + rd->in_pos, &b)) {
            const char *why = memcmp(rd->in + rd->in_pos, JST_BLOCK_MAGIC, 4)
                                  ? "no block header there"
                                  : "block header checksum mismatch";
            uint64_t end = resync(rd);
            add_damage(rd, at, end, rd->next_block, why);
            continue;
        }
        have = in_ensure(rd, JST_BLOCK_HDR_SIZE + (size_t)b.stored);
        if (have < 0)
            return -1;
        if ((size_t)have < JST_BLOCK_HDR_SIZE + (size_t)b.stored) {
            rd->tail_cut = 1; /* the writer stopped inside a block */
            rd->in_pos = rd->in_len;
            return 0;
        }
        const uint8_t *pay = rd->in + rd->in_pos + JST_BLOCK_HDR_SIZE;
        rd->in_pos += JST_BLOCK_HDR_SIZE + (size_t)b.stored;
        rd->next_block = b.index + 1;
        rd->cur_block = b.index;
        rd->cur_off = at;
        char why[64] = "checksum mismatch";
        if (jst_crc32c(0, pay, b.stored) == b.crc &&
            block_decode(rd, &b, pay, why, sizeof(why)) == 0)
            return 1;
        rd->d_pos = rd->d_len = 0;
        add_damage(rd, at, at + JST_BLOCK_HDR_SIZE + b.stored, b.index, why);
    }
}

/* Version 2: records from the current block; a block holds whole records. */
static int block_next(struct jst_reader *rd, struct jst_record *out)
{
    for (;;) {
        size_t left = rd->d_len - rd->d_pos;
        if (!left) {
            int r = load_block(rd);
            if (r < 0) {
                rd->failed = 1;
                return -1;
            }
            if (r == 0) {
                rd->truncated = rd->tail_cut || !rd->saw_end;
                return 0;
            }
            continue;
        }
        const uint8_t *h = rd->d + rd->d_pos;
        uint32_t len = left >= JST_REC_HDR_SIZE ? get_u32(h + 4) : 0;
        if (left < JST_REC_HDR_SIZE || len > left - JST_REC_HDR_SIZE) {
            /* The checksum held, so the writer cut a record: lose the rest. */
            add_damage(rd, rd->cur_off, rd->cur_off, rd->cur_block, "a record runs past its block");
            rd->d_pos = rd->d_len;
            continue;
        }
        return hand_out(rd, out, len);
    }
}

int jst_reader_next(struct jst_reader *rd, struct jst_record *out)
{
    if (rd->failed)
        return -1;
    return rd->blocks ? block_next(rd, out) : stream_next(rd, out);
}

unsigned jst_reader_damaged(const struct jst_reader *rd)
{
    return rd->n_damage;
}

const char *jst_reader_damage(struct jst_reader *rd)
{
    char *t = rd->damage_text;
    size_t n = sizeof(rd->damage_text), k = 0;
    t[0] = 0;
    for (unsigned i = 0; i < rd->n_damage && i < JST_DAMAGE_SHOWN && k < n; i++) {
        const struct jst_damage *d = &rd->damage[i];
        k += (size_t)snprintf(t + k, n - k, "%sblock %u at byte %llu: %s", i ? "; " : "",
                              (unsigned)d->block, (unsigned long long)d->start, d->why);
    }
    if (rd->n_damage > JST_DAMAGE_SHOWN && k < n)
        k += (size_t)snprintf(t + k, n - k, "; %u more damaged spans",
                              rd->n_damage - JST_DAMAGE_SHOWN);
    if (rd->n_damage && k < n)
        snprintf(t + k, n - k, " (%llu bytes skipped; reading went on with the next good block)",
                 (unsigned long long)rd->damage_bytes);
    return t;
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

/* ---- fields ---- */

void jst_fields_begin(struct jst_field_iter *it, const struct jst_record *rec)
{
    it->p = rec->payload;
    it->end = rec->payload + rec->len;
    it->bad = 0;
}

int jst_fields_next(struct jst_field_iter *it, struct jst_field *f)
{
    if (it->bad || it->p >= it->end)
        return 0;
    size_t left = (size_t)(it->end - it->p);
    if (left < 3) {
        it->bad = 1;
        return 0;
    }
    f->key = get_u16(it->p);
    f->kind = it->p[2];
    f->u64 = 0;
    f->data = NULL;
    f->len = 0;
    left -= 3;
    const uint8_t *v = it->p + 3;
    switch (f->kind) {
    case JST_K_U64:
    case JST_K_I64:
        if (left < 8) {
            it->bad = 1;
            return 0;
        }
        f->u64 = get_u64(v);
        it->p = v + 8;
        return 1;
    case JST_K_STR:
    case JST_K_BYTES: {
        if (left < 4) {
            it->bad = 1;
            return 0;
        }
        uint32_t n = get_u32(v);
        if (n > left - 4) {
            it->bad = 1;
            return 0;
        }
        f->data = v + 4;
        f->len = n;
        it->p = v + 4 + n;
        return 1;
    }
    default:
        /* An unknown kind has no known size, so nothing after it can be found. */
        it->bad = 1;
        return 0;
    }
}

/* The first field with key whose kind is a number (num) or text (!num). */
static int rec_find(const struct jst_record *rec, uint16_t key, int num, struct jst_field *f)
{
    struct jst_field_iter it;
    jst_fields_begin(&it, rec);
    while (jst_fields_next(&it, f)) {
        int is_num = f->kind == JST_K_U64 || f->kind == JST_K_I64;
        int is_text = f->kind == JST_K_STR || f->kind == JST_K_BYTES;
        if (f->key == key && (num ? is_num : is_text))
            return 1;
    }
    return 0;
}

int jst_rec_get_u64(const struct jst_record *rec, uint16_t key, uint64_t *out)
{
    struct jst_field f;
    if (!rec_find(rec, key, 1, &f))
        return 0;
    *out = f.u64;
    return 1;
}

int jst_rec_get_str(const struct jst_record *rec, uint16_t key, const char **s, uint32_t *len)
{
    struct jst_field f;
    if (!rec_find(rec, key, 0, &f))
        return 0;
    *s = (const char *)f.data;
    *len = f.len;
    return 1;
}
