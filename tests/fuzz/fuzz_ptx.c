/*
 * Fuzz target for the PTX text scanner (common/ptx.c): detection, .target
 * and .entry names, on text that is neither NUL-terminated nor well formed
 * (an exact-size copy, so a read past the end is caught).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "image_int.h"

static void name_cb(void *ctx, const char *name, size_t len)
{
    const char *end = ctx;
    if (!len || name + len > end)
        abort(); /* a name must be non-empty and inside the text */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    (void)ptx_detect((const uint8_t *)buf, size);
    unsigned sm = 0, variant = 0;
    if (ptx_target(buf, size, &sm, &variant) == 0 && variant > JST_A_FAMILY)
        abort();
    (void)ptx_kernels(buf, size, name_cb, buf + size);
    free(buf);
    return 0;
}
