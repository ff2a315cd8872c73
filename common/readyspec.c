/*
 * The forms of JITSTALL_READY (common/readyspec.h): one parser, so that
 * `jitstall run --ready` refuses exactly what the preload would only note
 * in the trace. No allocation and no locale (strtod would read "1,5" in
 * some): it runs inside traced programs.
 */
#include <string.h>

#include "readyspec.h"

/* The longest after: taken, about 11.5 days. */
#define JST_READY_AFTER_MAX_S 999999ull

/* "SECONDS": digits, then optionally '.' and up to 9 digits. */
static int parse_seconds(const char *s, uint64_t *ns)
{
    uint64_t whole = 0, frac = 0, scale = 1000000000ull;
    const char *p = s;
    if (*p < '0' || *p > '9')
        return -1;
    for (; *p >= '0' && *p <= '9'; p++) {
        whole = whole * 10 + (uint64_t)(*p - '0');
        if (whole > JST_READY_AFTER_MAX_S)
            return -1;
    }
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return -1;
        for (int n = 0; *p >= '0' && *p <= '9'; p++, n++) {
            if (n >= 9)
                return -1;
            scale /= 10;
            frac += (uint64_t)(*p - '0') * scale;
        }
    }
    if (*p)
        return -1;
    *ns = whole * 1000000000ull + frac;
    return 0;
}

void jst_ready_parse(const char *s, struct jst_ready_spec *out)
{
    memset(out, 0, sizeof *out);
    if (!s || !*s)
        return;
    out->kind = JST_READY_BAD;
    const char *arg = strchr(s, ':');
    if (!arg) {
        out->why = "it is not nvtx:NAME, file:PATH or after:SECONDS";
        return;
    }
    arg++;
    size_t n = strlen(arg);
    if (!strncmp(s, "nvtx:", 5) || !strncmp(s, "file:", 5)) {
        if (!n || n > JST_READY_ARG_MAX) {
            out->why = !n ? "the name or path is empty" : "the name or path is too long";
            return;
        }
        out->kind = s[0] == 'n' ? JST_READY_NVTX : JST_READY_FILE;
        out->arg = arg;
    } else if (!strncmp(s, "after:", 6)) {
        if (parse_seconds(arg, &out->after_ns) != 0) {
            out->why = "after: takes a number of seconds from 0 to 999999 (e.g. 30 or 2.5)";
            return;
        }
        out->kind = JST_READY_AFTER;
    } else {
        out->why = "it is not nvtx:NAME, file:PATH or after:SECONDS";
    }
}
