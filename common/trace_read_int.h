/*
 * The trace reader's insides, shared by its files: trace_read.c (header,
 * buffers, version 1 streams, the reader API), trace_blocks.c (version 2
 * checksummed blocks and the damage they report) and trace_fields.c (a
 * record's fields). Not for use outside common/trace_*.c.
 */
#ifndef JST_COMMON_TRACE_READ_INT_H
#define JST_COMMON_TRACE_READ_INT_H

#include <stdint.h>
#include <sys/types.h>
#include <zstd.h>
#include "trace.h"

#define JST_READ_CHUNK (128u << 10)

/* Damaged spans described in jst_reader_damage(); later ones are counted. */
#define JST_DAMAGE_SHOWN 3

/* The reader's limits (docs/FORMAT.md, "Reader limits"): what the analysis
 * needs, with room, so that a small hostile file cannot make the CLI hold
 * gigabytes or decode for minutes. A record above its type's limit is
 * skipped and counted; a version 2 block above the largest record is
 * skipped without being decoded. Reading stops when the records decoded
 * pass the floor plus the ratio times the file bytes read so far. */
#define JST_READ_REC_BIG (1u << 20)    /* process, call, begin, types this reader does not know */
#define JST_READ_REC_SMALL (64u << 10) /* every other record */
#define JST_READ_BLOCK_MAX (JST_READ_REC_BIG + JST_REC_HDR_SIZE)
#define JST_READ_DECODE_FLOOR (64ull << 20)
#define JST_READ_DECODE_RATIO 128u

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

    uint64_t decoded;    /* record bytes decoded so far */
    uint64_t skip_left;  /* version 1: bytes of a skipped record not yet decoded */
    unsigned n_oversize; /* records and blocks over the limits, skipped */
    uint64_t oversize_bytes;
    char oversize_first[96]; /* the first of them, in words */

    int frame_open; /* the decoder is inside an unfinished zstd frame */
    int saw_end;    /* an END record was read */
    int truncated;
    int failed;
    char err[256];
};

/* Little-endian numbers from bytes the caller has checked are there. */
static inline uint16_t jst_rd_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t jst_rd_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t jst_rd_u64(const uint8_t *p)
{
    return (uint64_t)jst_rd_u32(p) | (uint64_t)jst_rd_u32(p + 4) << 32;
}

/* read(2) until n bytes or end of file; returns the count or -1. */
ssize_t jst_rd_read_full(int fd, uint8_t *p, size_t n);
/* Grows *buf (of *cap bytes) to at least need bytes, doubling from *cap
 * (or JST_READ_CHUNK): -1 out of memory, said in rd->err. */
int jst_rd_grow(struct jst_reader *rd, uint8_t **buf, size_t *cap, size_t need);
/* Makes room for at least `more` decoded bytes after d_len, first sliding the
 * unconsumed bytes to the front (records handed out before are done with). */
int jst_rd_reserve_decoded(struct jst_reader *rd, size_t more);
/* Hands out the record at d_pos, whose len payload bytes are all decoded;
 * returns 1. */
int jst_rd_hand_out(struct jst_reader *rd, struct jst_record *out, uint32_t len);
/* The most payload bytes a record of this type may have (see above). */
uint32_t jst_rd_rec_limit(uint16_t type);
/* 1 when a record of this type and payload length is over its limit: it is
 * then counted, and the caller skips it. */
int jst_rd_over_limit(struct jst_reader *rd, uint16_t type, uint32_t len);
/* Counts a record or block (what: "a block") of len bytes that is over
 * limit, skipped. */
void jst_rd_oversize(struct jst_reader *rd, const char *what, uint64_t len, uint64_t limit);
/* Counts more decoded bytes, file_bytes of the file read so far: -1 (said
 * in rd->err) when that passes the decode bound, and reading must stop. */
int jst_rd_decoded(struct jst_reader *rd, uint64_t more, uint64_t file_bytes);
/* Version 2 (trace_blocks.c): the next record, as jst_reader_next. */
int jst_rd_block_next(struct jst_reader *rd, struct jst_record *out);

#endif
