/*
 * Fuzz target for the trace reader (common/trace_read.c): opens the input as
 * a trace file and walks every record and field. Each input is tried five
 * ways: as a whole file; after a valid header for a version 1 zstd stream,
 * a version 1 plain record stream and a version 2 block stream (damage and
 * resynchronisation); and cut into chunks that are wrapped as valid version 2
 * blocks (some zstd-compressed here), so that mutations reach the block
 * decoder and the record and field parsers without first having to get
 * checksums right.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void make_header(uint8_t *h, uint32_t flags)
{
    memset(h, 0, JST_HEADER_SIZE);
    memcpy(h, JST_FILE_MAGIC, JST_FILE_MAGIC_LEN);
    h[8] = flags & JST_FILE_FLAG_BLOCKS ? 2 : 1;
    h[10] = h[8];
    uint32_t mark = JST_ENDIAN_MARK;
    for (int i = 0; i < 4; i++) {
        h[12 + i] = (uint8_t)(mark >> (8 * i));
        h[20 + i] = (uint8_t)(flags >> (8 * i));
    }
    h[16] = JST_HEADER_SIZE;
}

static int write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Reads everything the reader will give, touching every byte it hands out. */
static void read_trace(int fd)
{
    char path[64], err[256];
    snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
    struct jst_reader *rd = jst_reader_open(path, err, sizeof(err));
    if (!rd) {
        if (!err[0] || strchr(err, '\n'))
            __builtin_trap(); /* a refusal must say why, on one line */
        return;
    }
    struct jst_record rec;
    volatile uint64_t sink = 0;
    int rc;
    while ((rc = jst_reader_next(rd, &rec)) == 1) {
        struct jst_field_iter it;
        struct jst_field f;
        jst_fields_begin(&it, &rec);
        while (jst_fields_next(&it, &f)) {
            sink += f.key + f.kind + f.u64;
            for (uint32_t i = 0; i < f.len; i++)
                sink += f.data[i];
        }
        uint64_t v;
        const char *s;
        uint32_t n;
        if (jst_rec_get_u64(&rec, JST_F_SEQ, &v))
            sink += v;
        if (jst_rec_get_str(&rec, JST_F_CALL, &s, &n) && n)
            sink += (uint8_t)s[n - 1];
        if (jst_rec_type_name(rec.type))
            sink++;
    }
    if (rc < 0 && !jst_reader_error(rd)[0])
        __builtin_trap();
    if (jst_reader_damaged(rd)) {
        const char *d = jst_reader_damage(rd);
        if (!d[0] || strchr(d, '\n'))
            __builtin_trap(); /* where the damage is, on one line */
    }
    sink += (uint64_t)jst_reader_truncated(rd) + jst_reader_version(rd);
    jst_reader_close(rd);
}

static void run_one(const uint8_t *prefix, size_t plen, const uint8_t *data, size_t size)
{
    int fd = memfd_create("fuzz_trace", MFD_CLOEXEC);
    if (fd < 0)
        return;
    if (write_all(fd, prefix, plen) == 0 && write_all(fd, data, size) == 0)
        read_trace(fd);
    close(fd);
}

/*
 * Chunks of the input as version 2 blocks: each chunk is {u8 op, u16 len,
 * len bytes}; op bit 0 compresses the bytes, bit 1 breaks the header
 * checksum, bit 2 the payload checksum, bit 3 skips a block number.
 */
static void run_blocks(const uint8_t *data, size_t size)
{
    /* Each chunk: a header and at most ZSTD_compressBound(len) bytes. */
    size_t cap = JST_HEADER_SIZE + (size / 3 + 1) * (JST_BLOCK_HDR_SIZE + 128) + 2 * size;
    uint8_t *f = malloc(cap), *z = malloc(ZSTD_compressBound(size) + 1);
    if (!f || !z)
        goto out;
    make_header(f, JST_FILE_FLAG_BLOCKS);
    size_t n = JST_HEADER_SIZE;
    uint32_t index = 0;
    for (size_t at = 0; size - at >= 3;) {
        uint8_t op = data[at];
        size_t len = (size_t)(data[at + 1] | data[at + 2] << 8);
        at += 3;
        if (len > size - at)
            len = size - at;
        const uint8_t *raw = data + at, *pay = raw;
        size_t stored = len;
        uint8_t enc = JST_BLOCK_ENC_PLAIN;
        if (op & 1) {
            static ZSTD_CCtx *cctx; /* one for the whole run: creating one is slow */
            if (!cctx)
                cctx = ZSTD_createCCtx();
            size_t k = cctx ? ZSTD_compressCCtx(cctx, z, ZSTD_compressBound(size) + 1, raw, len, 1)
                            : (size_t)-1;
            if (!ZSTD_isError(k)) {
                pay = z;
                stored = k;
                enc = JST_BLOCK_ENC_ZSTD;
            }
        }
        index += (op & 8) ? 2 : 1;
        uint8_t *h = f + n;
        jst_block_header(h, index - 1, pay, (uint32_t)stored, (uint32_t)len, enc);
        if (op & 2)
            h[24] ^= 1;
        if (op & 4)
            h[20] ^= 1;
        memcpy(h + JST_BLOCK_HDR_SIZE, pay, stored);
        n += JST_BLOCK_HDR_SIZE + stored;
        at += len;
    }
    run_one(NULL, 0, f, n);
out:
    free(f);
    free(z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t h[JST_HEADER_SIZE];
    run_one(NULL, 0, data, size);
    make_header(h, JST_FILE_FLAG_ZSTD);
    run_one(h, sizeof(h), data, size);
    make_header(h, 0);
    run_one(h, sizeof(h), data, size);
    make_header(h, JST_FILE_FLAG_BLOCKS);
    run_one(h, sizeof(h), data, size);
    run_blocks(data, size);
    return 0;
}
