/* The one escaping rule for text from a trace (common/textrule.h) applied to
 * the CLI's text and Markdown output (see utf8.h). */
#include "utf8.h"

#include <string.h>

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
        size_t el = jst_esc_text(s, k, cp, e);
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
