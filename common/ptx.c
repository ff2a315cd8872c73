/*
 * PTX text: recognising it, reading its .target, and listing its kernels
 * (.entry directives). Every read is bounded by the given length and stops
 * at a NUL, so unterminated or garbled text is safe.
 */
#include <ctype.h>
#include "image_int.h"

/* Skips whitespace and comments from i; returns the new index (<= n). */
static size_t skip_space(const char *p, size_t n, size_t i)
{
    while (i < n && p[i]) {
        char c = p[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
            i++;
        } else if (c == '/' && i + 1 < n && p[i + 1] == '/') {
            while (i < n && p[i] && p[i] != '\n')
                i++;
        } else if (c == '/' && i + 1 < n && p[i + 1] == '*') {
            i += 2;
            while (i < n && p[i] && !(p[i] == '*' && i + 1 < n && p[i + 1] == '/'))
                i++;
            i = (i < n && p[i]) ? i + 2 : i;
            if (i > n)
                i = n;
        } else {
            break;
        }
    }
    return i;
}

/* Does the token at p[i..] equal word, followed by a non-identifier byte? */
static int token_is(const char *p, size_t n, size_t i, const char *word)
{
    size_t k = strlen(word);
    if (n - i < k || memcmp(p + i, word, k) != 0)
        return 0;
    if (i + k == n)
        return 1;
    char c = p[i + k];
    return !(isalnum((unsigned char)c) || c == '_' || c == '$');
}

int ptx_detect(const uint8_t *p, size_t avail)
{
    /* Only the first 64 KiB may be comments: a real PTX file opens with a few lines. */
    size_t n = avail < 65536 ? avail : 65536;
    size_t i = skip_space((const char *)p, n, 0);
    return token_is((const char *)p, n, i, ".version");
}

/* Parses "sm_XY", "sm_XYa", "sm_XYf" at p[i..]; returns 0 or -1. */
static int parse_sm(const char *p, size_t n, size_t i, unsigned *sm, unsigned *variant)
{
    if (n - i < 4 || memcmp(p + i, "sm_", 3) != 0)
        return -1;
    i += 3;
    unsigned v = 0, digits = 0;
    while (i < n && p[i] >= '0' && p[i] <= '9' && digits < 4) {
        v = v * 10 + (unsigned)(p[i] - '0');
        i++;
        digits++;
    }
    if (digits < 2)
        return -1;
    *variant = JST_A_PLAIN;
    if (i < n && p[i] == 'a')
        *variant = JST_A_SPECIFIC;
    else if (i < n && p[i] == 'f')
        *variant = JST_A_FAMILY;
    *sm = v;
    return 0;
}

int ptx_target(const char *p, size_t n, unsigned *sm, unsigned *variant)
{
    /* .target follows .version within the first directives; look at most 64 lines. */
    size_t i = 0;
    for (int line = 0; line < 64 && i < n && p[i]; line++) {
        i = skip_space(p, n, i);
        if (i >= n || !p[i])
            break;
        if (token_is(p, n, i, ".target")) {
            i += 7;
            while (i < n && (p[i] == ' ' || p[i] == '\t'))
                i++;
            return parse_sm(p, n, i, sm, variant);
        }
        while (i < n && p[i] && p[i] != '\n')
            i++;
    }
    return -1;
}

unsigned ptx_version(const char *p, size_t n)
{
    size_t i = skip_space(p, n, 0);
    if (!token_is(p, n, i, ".version"))
        return 0;
    i += 8;
    while (i < n && (p[i] == ' ' || p[i] == '\t'))
        i++;
    unsigned major = 0, minor = 0, digits = 0;
    while (i < n && p[i] >= '0' && p[i] <= '9' && digits < 3) {
        major = major * 10 + (unsigned)(p[i++] - '0');
        digits++;
    }
    /* One minor digit, as in every ISA so far ("9.1"). */
    if (!digits || i + 1 >= n || p[i] != '.' || p[i + 1] < '0' || p[i + 1] > '9')
        return 0;
    minor = (unsigned)(p[i + 1] - '0');
    if (i + 2 < n && p[i + 2] >= '0' && p[i + 2] <= '9')
        return 0;
    return major * 10 + minor;
}

static int ident_char(char c)
{
    return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '%' || c == '.';
}

int ptx_kernels(const char *p, size_t n, void (*cb)(void *, const char *, size_t), void *ctx)
{
    int count = 0;
    size_t i = 0;
    while (i < n && p[i]) {
        i = skip_space(p, n, i);
        if (i >= n || !p[i])
            break;
        /* Most lines are instructions: skip them whole without looking closer. */
        if (p[i] != '.') {
            const char *nl = memchr(p + i, '\n', n - i);
            i = nl ? (size_t)(nl - p) + 1 : n;
            continue;
        }
        /* A statement may open with linkage directives; .extern only declares. */
        int is_extern = 0;
        for (;;) {
            if (token_is(p, n, i, ".visible") || token_is(p, n, i, ".weak")) {
                i += (p[i + 1] == 'v') ? 8 : 5;
            } else if (token_is(p, n, i, ".extern")) {
                is_extern = 1;
                i += 7;
            } else {
                break;
            }
            while (i < n && (p[i] == ' ' || p[i] == '\t'))
                i++;
        }
        if (token_is(p, n, i, ".entry")) {
            i += 6;
            while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
                i++;
            size_t s = i;
            while (i < n && p[i] && ident_char(p[i]))
                i++;
            if (i > s && !is_extern) {
                if (cb)
                    cb(ctx, p + s, i - s);
                count++;
            }
        }
        /* Skip to the next line; a { ... } body is skipped line by line. */
        while (i < n && p[i] && p[i] != '\n') {
            if (p[i] == '/' && i + 1 < n && p[i + 1] == '*') {
                i = skip_space(p, n, i);
                break;
            }
            i++;
        }
    }
    return count;
}
