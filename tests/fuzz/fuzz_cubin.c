/*
 * Fuzz target for the cubin reader (common/cubin.c) on its own: the ELF
 * checks, the SM and variant, and the kernel names from the symbol table,
 * on an exact-size copy so that any read past the input is caught.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "image_int.h"

static void name_cb(void *ctx, const char *name, size_t len)
{
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < len; i++)
        sink ^= (uint8_t)name[i];
    *(size_t *)ctx += len + sink * 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    unsigned sm = 0, variant = 0;
    char why[80];
    if (cubin_check(buf, size, &sm, &variant, why, sizeof(why)) == 0 && variant > JST_A_FAMILY)
        abort();
    size_t total = 0;
    (void)cubin_kernels(buf, size, name_cb, &total);
    free(buf);
    return 0;
}
