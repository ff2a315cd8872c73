/*
 * Fuzz target for the trace reader (common/trace_read.c): opens the input as
 * a trace file and walks every record and field. Each input is tried three
 * ways: as a whole file, and after a valid header for a zstd stream and for
 * a plain record stream, so that mutations reach the record and field parsers
 * without first having to get the header right.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void make_header(uint8_t *h, uint32_t flags)
{
    memset(h, 0, JST_HEADER_SIZE);
    memcpy(h, JST_FILE_MAGIC, JST_FILE_MAGIC_LEN);
    h[8] = JST_FORMAT_VERSION;
    h[10] = JST_FORMAT_COMPAT;
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t h[JST_HEADER_SIZE];
    run_one(NULL, 0, data, size);
    make_header(h, JST_FILE_FLAG_ZSTD);
    run_one(h, sizeof(h), data, size);
    make_header(h, 0);
    run_one(h, sizeof(h), data, size);
    return 0;
}
