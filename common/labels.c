/*
 * Parsing of JITSTALL_LABELS (see labels.h). No allocation: the preload
 * calls it at exit.
 */
#include <string.h>
#include "labels.h"
#include "textrule.h"

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

size_t jst_prom_value(char *out, size_t cap, const char *v)
{
    static const char fffd[] = "\xEF\xBF\xBD";
    size_t len = 0;
    const unsigned char *s = (const unsigned char *)v;
    size_t left = v ? strlen(v) : 0;
    while (left) {
        char esc[16];
        const char *rep = (const char *)s;
        size_t in, put;
        uint32_t cp;
        enum jst_esc k = jst_esc_class(s, left, &in, &cp);
        put = in;
        if (k == JST_ESC_INVALID) {
            rep = fffd;
            put = 3;
        } else if (k == JST_ESC_CONTROL) {
            /* As text shows it (\x1b, \u202e, \n), its backslash escaped:
             * the value reads the same as in jitstall's report. */
            char t[8];
            size_t tl = jst_esc_text(s, k, cp, t);
            esc[0] = '\\';
            memcpy(esc + 1, t, tl);
            rep = esc;
            put = tl + 1;
        } else if (*s == '\\' || *s == '"') {
            esc[0] = '\\';
            esc[1] = (char)*s;
            rep = esc;
            put = 2;
        }
        if (len + put + 1 > cap)
            break;
        memcpy(out + len, rep, put);
        len += put;
        s += in;
        left -= in;
    }
    if (cap)
        out[len] = '\0';
    return len;
}
