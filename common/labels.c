/*
 * Parsing of JITSTALL_LABELS (see labels.h). No allocation: the preload
 * calls it at exit.
 */
#include <string.h>
#include "labels.h"

/* Names a user's label may not take: those jitstall sets itself (the
 * preload's file and `export --format prometheus` alike: a second label of
 * the same name makes the whole file invalid), and those Prometheus gives a
 * meaning (histogram buckets, summary quantiles), which a gauge may not carry. */
static int name_ok(const char *s, size_t n)
{
    static const char *const reserved[] = {"program",        "host",    "gpu_arch",
                                           "driver_version", "verdict", "outcome",
                                           "compiler",       "le",      "quantile"};
    if (n == 0 || n >= JST_LABEL_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    if (n >= 2 && s[0] == '_' && s[1] == '_')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_'))
            return 0;
    }
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
        if (strlen(reserved[i]) == n && !memcmp(reserved[i], s, n))
            return 0;
    return 1;
}

size_t jst_parse_labels(const char *s, struct jst_label *out, size_t max)
{
    size_t n = 0;
    while (s && *s && n < max) {
        const char *end = strchr(s, ',');
        size_t len = end ? (size_t)(end - s) : strlen(s);
        const char *eq = memchr(s, '=', len);
        if (eq) {
            size_t nl = (size_t)(eq - s), vl = len - nl - 1;
            int dup = 0;
            for (size_t i = 0; i < n; i++)
                dup |= strlen(out[i].name) == nl && !memcmp(out[i].name, s, nl);
            if (name_ok(s, nl) && vl < JST_LABEL_VALUE_MAX && !dup) {
                memcpy(out[n].name, s, nl);
                out[n].name[nl] = '\0';
                memcpy(out[n].value, eq + 1, vl);
                out[n].value[vl] = '\0';
                n++;
            }
        }
        s = end ? end + 1 : NULL;
    }
    return n;
}

/* The length of the valid UTF-8 sequence at s (1-4), or 0 when the byte at
 * s does not start one (RFC 3629: no overlong forms, no surrogates, nothing
 * above U+10FFFF). s is NUL-terminated, so a cut sequence stops at the NUL. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

size_t jst_prom_value(char *out, size_t cap, const char *v)
{
    static const char fffd[] = "\xEF\xBF\xBD";
    size_t len = 0;
    const unsigned char *s = (const unsigned char *)v;
    while (s && *s) {
        char esc[2] = {'\\', (char)*s};
        const char *rep = (const char *)s;
        size_t in = utf8_len(s), put = in;
        if (!in) {
            rep = fffd;
            in = 1;
            put = 3;
        } else if (*s == '\\' || *s == '"' || *s == '\n') {
            esc[1] = *s == '\n' ? 'n' : (char)*s;
            rep = esc;
            put = 2;
        }
        if (len + put + 1 > cap)
            break;
        memcpy(out + len, rep, put);
        len += put;
        s += in;
    }
    if (cap)
        out[len] = '\0';
    return len;
}
