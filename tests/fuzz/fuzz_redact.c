/*
 * Fuzz target for the text the preload rewrites before it writes it out:
 * command-line redaction (interpose/argv.c: options, headers, variables,
 * URLs, API key prefixes) and Prometheus label values (common/labels.c).
 * The input is arguments separated by NUL bytes. Invariants: redaction never
 * writes past its buffer nor makes an argument longer than its cut; a label
 * value is valid UTF-8 with every '"', '\' and newline escaped, and fits.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "argv.h"
#include "labels.h"

/* Valid UTF-8, and each '"' or newline escaped: 0 when not. */
static int prom_ok(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned c = s[i];
        if (c == '\n' || c == '"')
            return 0;
        if (c == '\\') {
            if (i + 1 >= n || (s[i + 1] != '\\' && s[i + 1] != '"' && s[i + 1] != 'n'))
                return 0;
            i++;
            continue;
        }
        size_t k = c < 0x80 ? 0 : c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2
                                : c >= 0xF0 && c <= 0xF4                             ? 3
                                                                                     : 9;
        if (k == 9 || i + k >= n + (k ? 0 : 1))
            return 0;
        for (size_t j = 1; j <= k; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return 0;
        i += k;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t cap = 1 + data[0] % 64; /* small outputs cut mid-secret too */
    data++, size--;
    char *copy = malloc(size + 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    copy[size] = '\0';
    int next_secret = 0;
    for (size_t i = 0; i <= size;) {
        size_t l = strnlen(copy + i, size - i);
        char *out = malloc(cap), *big = malloc(4096);
        if (!out || !big)
            abort();
        int ns = next_secret;
        size_t m = jst_arg_redact(copy + i, l, &next_secret, out, cap);
        if (m > cap)
            abort();
        size_t mb = jst_arg_redact(copy + i, l, &ns, big, 4096);
        if (mb > 4096)
            abort();
        free(out);
        free(big);
        char val[JST_PROM_VALUE_MAX];
        size_t vn = jst_prom_value(val, cap, copy + i);
        if (vn >= cap || val[vn] != '\0' || !prom_ok((const unsigned char *)val, vn))
            abort();
        vn = jst_prom_value(val, sizeof val, copy + i);
        if (vn >= sizeof val || !prom_ok((const unsigned char *)val, vn))
            abort();
        i += l + 1;
    }
    free(copy);
    return 0;
}
