/*
 * Reading version 2 traces: checksummed blocks of whole records. A damaged
 * block is reported (byte offset, block number) and skipped, and reading goes
 * on with the next good block, found by its header checksum if need be.
 * Every size in a block header is checked against the bytes really there.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "trace_read_int.h"

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
        if (need > rd->in_cap && jst_rd_grow(rd, &rd->in, &rd->in_cap, need) < 0)
            return -1;
        size_t want = rd->in_cap - rd->in_len;
        ssize_t n = jst_rd_read_full(rd->fd, rd->in + rd->in_len, want);
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
    if (memcmp(h, JST_BLOCK_MAGIC, 4) != 0 || jst_rd_u32(h + 24) != jst_crc32c(0, h, 24))
        return 0;
    b->index = jst_rd_u32(h + 4);
    b->stored = jst_rd_u32(h + 8);
    b->raw = jst_rd_u32(h + 12);
    b->enc = h[16];
    b->crc = jst_rd_u32(h + 20);
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
    if (jst_rd_reserve_decoded(rd, b->raw ? b->raw : 1) < 0) {
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
        if (b.raw > JST_READ_BLOCK_MAX) { /* one record larger than any the reader takes */
            jst_rd_oversize(rd, "a block", b.raw, JST_READ_REC_BIG);
            continue;
        }
        if (jst_rd_decoded(rd, b.raw, rd->in_off + rd->in_pos) < 0)
            return -1;
        char why[64] = "checksum mismatch";
        if (jst_crc32c(0, pay, b.stored) == b.crc &&
            block_decode(rd, &b, pay, why, sizeof(why)) == 0)
            return 1;
        rd->d_pos = rd->d_len = 0;
        add_damage(rd, at, at + JST_BLOCK_HDR_SIZE + b.stored, b.index, why);
    }
}

/* Version 2: records from the current block; a block holds whole records. */
int jst_rd_block_next(struct jst_reader *rd, struct jst_record *out)
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
        uint32_t len = left >= JST_REC_HDR_SIZE ? jst_rd_u32(h + 4) : 0;
        if (left < JST_REC_HDR_SIZE || len > left - JST_REC_HDR_SIZE) {
            /* The checksum held, so the writer cut a record: lose the rest. */
            add_damage(rd, rd->cur_off, rd->cur_off, rd->cur_block, "a record runs past its block");
            rd->d_pos = rd->d_len;
            continue;
        }
        if (jst_rd_over_limit(rd, jst_rd_u16(h), len)) {
            rd->d_pos += JST_REC_HDR_SIZE + (size_t)len;
            continue;
        }
        return jst_rd_hand_out(rd, out, len);
    }
}

unsigned jst_reader_damaged(const struct jst_reader *rd)
{
    return rd->n_damage + rd->n_oversize;
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
        k += (size_t)snprintf(t + k, n - k,
                              " (%llu bytes skipped; reading went on with the next good block)",
                              (unsigned long long)rd->damage_bytes);
    if (rd->n_oversize && k < n)
        snprintf(t + k, n - k,
                 "%s%u record%s over the reader's size limits skipped (%llu bytes; the first: "
                 "%s); reading went on",
                 rd->n_damage ? "; " : "", rd->n_oversize, rd->n_oversize == 1 ? "" : "s",
                 (unsigned long long)rd->oversize_bytes, rd->oversize_first);
    return t;
}
