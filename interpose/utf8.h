/*
 * Inside the preload: one code point as UTF-8, for the names that reach us
 * as wide or Python strings (interpose/nvtx.c, interpose/pycode.c).
 */
#ifndef JST_INTERPOSE_UTF8_H
#define JST_INTERPOSE_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Writes c to out (room for 4 bytes); returns the bytes written. A value
 * past U+10FFFF (a wchar_t or a damaged string) becomes '?'. */
static inline size_t jst_utf8_put(uint32_t c, char *out)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | c >> 12);
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    if (c < 0x110000) {
        out[0] = (char)(0xF0 | c >> 18);
        out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[3] = (char)(0x80 | (c & 0x3F));
        return 4;
    }
    out[0] = '?';
    return 1;
}

#endif
