/*
 * UTF-8 validation (implementation: analyzer/utf8.c), so that every writer of
 * text the CLI emits (jsonw.c, check_out.c) judges bytes the same way.
 */
#ifndef JST_ANALYZER_UTF8_H
#define JST_ANALYZER_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Length of the well-formed UTF-8 sequence at s (at most n bytes, n > 0):
 * 1 to 4, or 0 when it is not one (overlong forms, surrogates and code
 * points above U+10FFFF are not). Its code point in *cp when cp != NULL. */
size_t jst_utf8_len(const unsigned char *s, size_t n, uint32_t *cp);

#endif
