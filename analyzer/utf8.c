/* UTF-8 validation for the CLI's output, and the one escaping rule for text
 * from a trace (see utf8.h): which characters are unsafe is decided here
 * only, for text, Markdown, JSON, XML and Prometheus output alike. */
#include "utf8.h"

#include <string.h>

size_t jst_utf8_len(const unsigned char *s, size_t n, uint32_t *cpp)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    if (c < 0x80) {
        if (cpp)
            *cpp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        min = 0x80;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    unsigned cp = c & (0x3F >> (len - 1));
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    if (cpp)
        *cpp = cp;
    return len;
}

/* Unicode controls that reorder or split text: a bidirectional override
 * can make a path read backwards on the screen, a separator starts a line. */
static int is_layout_control(uint32_t cp)
{
    return cp == 0x061c || cp == 0x200e || cp == 0x200f || cp == 0x2028 || cp == 0x2029 ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

enum jst_esc jst_esc_class(const unsigned char *s, size_t n, size_t *lenp, uint32_t *cpp)
{
    uint32_t cp = s[0];
    size_t len = jst_utf8_len(s, n, &cp);
    *lenp = len ? len : 1;
    *cpp = cp;
    if (!len)
        return JST_ESC_INVALID;
    if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || is_layout_control(cp))
        return JST_ESC_CONTROL;
    return JST_ESC_NONE;
}

/* The text escape for the character at s (cp its code point, k its class)
 * into out, or 0 when it is shown as it is. */
static size_t esc_one(const unsigned char *s, enum jst_esc k, uint32_t cp, char *out)
{
    static const char hex[] = "0123456789abcdef";
    if (k == JST_ESC_NONE)
        return 0;
    if (k == JST_ESC_INVALID)
        return (size_t)snprintf(out, 8, "\\x%c%c", hex[s[0] >> 4], hex[s[0] & 15]);
    if (cp == '\n')
        return memcpy(out, "\\n", 3), 2;
    if (cp == '\t')
        return memcpy(out, "\\t", 3), 2;
    if (cp == '\r')
        return memcpy(out, "\\r", 3), 2;
    if (cp < 0x20 || cp == 0x7f)
        return (size_t)snprintf(out, 8, "\\x%c%c", hex[cp >> 4], hex[cp & 15]);
    return (size_t)snprintf(out, 8, "\\u%04x", (unsigned)cp);
}

/* Walks s, handing each piece (copied bytes or an escape) to put; stops
 * when put returns non-zero. */
static void esc_walk(const char *str, size_t left, int (*put)(const char *p, size_t n, void *ctx),
                     void *ctx)
{
    const unsigned char *s = (const unsigned char *)str;
    while (left) {
        uint32_t cp;
        size_t len;
        enum jst_esc k = jst_esc_class(s, left, &len, &cp);
        char e[8];
        size_t el = esc_one(s, k, cp, e);
        if (el ? put(e, el, ctx) : put((const char *)s, len, ctx))
            return;
        s += len;
        left -= len;
    }
}

struct esc_buf {
    char *d;
    size_t n, used;
    size_t safe; /* the last piece boundary that leaves room for "..." */
    int full;
};

static int buf_put(const char *p, size_t n, void *ctx)
{
    struct esc_buf *b = ctx;
    if (b->used + n + 1 > b->n) {
        b->full = 1;
        return 1;
    }
    memcpy(b->d + b->used, p, n);
    b->used += n;
    if (b->used + 4 <= b->n)
        b->safe = b->used;
    return 0;
}

char *jst_text_esc(char *dst, size_t n, const char *s)
{
    struct esc_buf b = {dst, n, 0, 0, 0};
    if (!s)
        s = "?";
    esc_walk(s, strlen(s), buf_put, &b);
    dst[b.used] = '\0';
    if (b.full && n >= 4) /* at a whole character or escape */
        memcpy(dst + b.safe, "...", 4);
    return dst;
}

const char *jst_text(const char *s)
{
    static char bufs[8][16384];
    static unsigned next;
    return jst_text_esc(bufs[next++ % 8], sizeof bufs[0], s);
}

static int file_put(const char *p, size_t n, void *ctx)
{
    fwrite(p, 1, n, (FILE *)ctx);
    return 0;
}

void jst_text_put(FILE *f, const char *s)
{
    s = s ? s : "?";
    esc_walk(s, strlen(s), file_put, f);
}

void jst_text_putn(FILE *f, const char *s, size_t n)
{
    esc_walk(s, n, file_put, f);
}

static int md_put(const char *p, size_t n, void *ctx)
{
    FILE *f = ctx;
    for (size_t i = 0; i < n; i++) {
        if (p[i] && strchr("|\\`*_[]<>#", p[i]))
            fputc('\\', f);
        fputc(p[i], f);
    }
    return 0;
}

void jst_text_put_md(FILE *f, const char *s)
{
    s = s ? s : "?";
    esc_walk(s, strlen(s), md_put, f);
}

int jst_text_unsafe(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t left = str ? strlen(str) : 0;
    while (left) {
        uint32_t cp;
        size_t len;
        if (jst_esc_class(s, left, &len, &cp) != JST_ESC_NONE)
            return 1;
        s += len;
        left -= len;
    }
    return 0;
}
