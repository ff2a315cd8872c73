/* UTF-8 validation for the CLI's text output (JSON strings, JUnit XML). */
#include "utf8.h"

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
