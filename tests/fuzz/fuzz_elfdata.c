/*
 * Fuzz target for the host-ELF side of image inspection (common/elfdata.c):
 * finds .nv_fatbin and the PTX strings in the input's data sections, whole
 * and in small windows, and inspects every string found. Replayed over
 * tests/fuzz/corpus/elfdata/ by regression_driver.c under ctest.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "image.h"

struct fz {
    const uint8_t *p;
    size_t n, found;
};

static void text_cb(void *ctx, size_t off, size_t len)
{
    struct fz *f = ctx;
    if (off > f->n || len > f->n - off || (off + len < f->n && f->p[off + len] != 0))
        abort(); /* a string must lie inside the file and end at its NUL */
    struct jst_image img;
    jst_image_inspect(f->p + off, len, &img);
    if (!img.damaged && img.n_entries)
        jst_entry_kernels(&img.entries[0], NULL, NULL);
    jst_image_free(&img);
    f->found++;
}

/* Searches each section again in windows of 7 bytes, which must find the
 * same strings as the whole-file search. */
static void section_cb(void *ctx, size_t off, size_t size)
{
    struct fz *f = ctx;
    size_t e = off + size;
    for (size_t from = off; from < e;) {
        size_t to = e - from > 7 ? from + 7 : e;
        size_t next = jst_ptx_texts_window(f->p, off, e, from, to, text_cb, f);
        if (next < to)
            abort();
        from = next;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1); /* exact size: reads past it are caught */
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    size_t off = 0, sz = 0;
    if (jst_elf_section(buf, size, ".nv_fatbin", &off, &sz) == 0 && (off > size || sz > size - off))
        abort();
    struct fz whole = {buf, size, 0}, windows = {buf, size, 0};
    jst_elf_ptx_texts(buf, size, text_cb, &whole);
    jst_elf_data_sections(buf, size, section_cb, &windows);
    if (whole.found != windows.found)
        abort();
    free(buf);
    return 0;
}
