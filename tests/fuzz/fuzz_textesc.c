/*
 * Fuzz target for the CLI's one escaping rule for text from a trace
 * (analyzer/utf8.c, jst_text_esc and jst_text_put): whatever the bytes, the
 * result is valid UTF-8 with no C0 control, DEL, C1 control or line break,
 * so no line of output can be started (a "::" workflow command) and no
 * terminal sequence passes; it fits its buffer; and the unbounded writer
 * gives the same bytes as the buffer when the buffer is large enough.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_clean(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t len = jst_utf8_len(s + i, n - i, &cp);
        if (!len || cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x2028 ||
            cp == 0x2029 || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
            (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
            abort();
        i += len;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    if (!in)
        return 0;
    memcpy(in, data, size);
    in[size] = '\0'; /* the escaping sees a C string, as the CLI's callers pass */
    size_t cap = strlen(in) * 6 + 8;
    char *big = malloc(cap);
    char small[37];
    if (big) {
        jst_text_esc(big, cap, in);
        check_clean((const unsigned char *)big, strlen(big));
        char *mem = NULL;
        size_t ml = 0;
        FILE *f = open_memstream(&mem, &ml);
        if (f) {
            jst_text_put(f, in);
            fclose(f);
            if (ml != strlen(big) || memcmp(mem, big, ml))
                abort();
            free(mem);
        }
        if (jst_text_unsafe(in) != (strcmp(big, in) != 0))
            abort();
    }
    jst_text_esc(small, sizeof small, in);
    if (strlen(small) >= sizeof small)
        abort();
    check_clean((const unsigned char *)small, strlen(small));
    /* The byte-counted writer, NULs included. */
    char *mem = NULL;
    size_t ml = 0;
    FILE *f = open_memstream(&mem, &ml);
    if (f) {
        jst_text_putn(f, (const char *)data, size);
        fclose(f);
        check_clean((const unsigned char *)mem, ml);
        free(mem);
    }
    free(big);
    free(in);
    return 0;
}
