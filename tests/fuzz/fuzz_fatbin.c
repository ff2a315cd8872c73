/*
 * Fuzz target for the fatbin walker (common/fatbin.c) and the entry
 * decompressors (jst_entry_data: zstd and LZ4 with header-claimed sizes):
 * the input is parsed as one fatbin and as an ELF .nv_fatbin section of
 * several, and every entry found is decompressed and scanned for kernels.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "image_int.h"

static void name_cb(void *ctx, const char *name, size_t len)
{
    (void)name;
    *(size_t *)ctx += len;
}

static void walk(const uint8_t *buf, size_t size, int many)
{
    struct jst_image img;
    memset(&img, 0, sizeof(img));
    fatbin_parse(buf, size, many, &img);
    size_t total = 0;
    for (size_t k = 0; k < img.n_entries; k++) {
        const struct jst_entry *e = &img.entries[k];
        if (e->payload < buf || e->payload_size > size ||
            (size_t)(e->payload - buf) > size - e->payload_size)
            abort(); /* an entry outside the input is a bug */
        size_t len;
        free(jst_entry_data(e, &len));
        jst_entry_kernels(e, name_cb, &total);
    }
    jst_image_free(&img);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16)
        return 0; /* fatbin_parse's callers check the 16-byte header first */
    uint8_t *buf = malloc(size);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    walk(buf, size, 0);
    walk(buf, size, 1);
    size_t n = jst_fatbin_size(buf, size);
    if (n > size)
        abort();
    free(buf);
    return 0;
}
