/* The one rule for text from a trace (see textrule.h). */
#include "textrule.h"

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

size_t jst_esc_text(const unsigned char *s, enum jst_esc k, uint32_t cp, char out[8])
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    out[0] = '\0';
    if (k == JST_ESC_NONE)
        return 0;
    out[n++] = '\\';
    if (k == JST_ESC_INVALID || cp < 0x20 || cp == 0x7f) {
        unsigned b = k == JST_ESC_INVALID ? s[0] : cp;
        if (k != JST_ESC_INVALID && (cp == '\n' || cp == '\t' || cp == '\r')) {
            out[n++] = cp == '\n' ? 'n' : cp == '\t' ? 't' : 'r';
        } else {
            out[n++] = 'x';
            out[n++] = hex[(b >> 4) & 15];
            out[n++] = hex[b & 15];
        }
    } else {
        out[n++] = 'u';
        for (int sh = 12; sh >= 0; sh -= 4)
            out[n++] = hex[(cp >> sh) & 15];
    }
    out[n] = '\0';
    return n;
}
