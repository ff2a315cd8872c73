/*
 * UTF-8 validation and the one escaping rule for text from a trace
 * (implementation: analyzer/utf8.c), so that every writer of text the CLI
 * emits (report, check, diff, dump, warm, scan, messages on stderr; jsonw.c
 * and check_out.c's XML) judges bytes the same way.
 */
#ifndef JST_ANALYZER_UTF8_H
#define JST_ANALYZER_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Length of the well-formed UTF-8 sequence at s (at most n bytes, n > 0):
 * 1 to 4, or 0 when it is not one (overlong forms, surrogates and code
 * points above U+10FFFF are not). Its code point in *cp when cp != NULL. */
size_t jst_utf8_len(const unsigned char *s, size_t n, uint32_t *cp);

/* The escaping rule for a string from a trace (or a file name) shown in text
 * output, so that no terminal control and no line of its own can come from
 * it: the newline, tab and carriage return as \n \t \r; other C0 controls
 * and DEL as \xHH; C1 controls (U+0080..U+009F) and the Unicode controls
 * that reorder or split text (U+2028, U+2029, U+202A..U+202E,
 * U+2066..U+2069) as \u00HH / \uHHHH; a byte that is not part of
 * well-formed UTF-8 (a raw 0x9B included) as \xHH. Everything else is
 * copied. Into dst (n > 0 bytes, always terminated; a string that does not
 * fit ends in "..."); returns dst. NULL shows as "?". */
char *jst_text_esc(char *dst, size_t n, const char *s);
/* The same into one of 8 rotating static buffers (16 KiB each), so that
 * several may appear in one printf. */
const char *jst_text(const char *s);
/* The same written to f. */
void jst_text_put(FILE *f, const char *s);
/* The same for n bytes that may hold NUL (shown as \x00). */
void jst_text_putn(FILE *f, const char *s, size_t n);
/* Does s need escaping at all? (0: it is shown as it is.) */
int jst_text_unsafe(const char *s);

#endif
