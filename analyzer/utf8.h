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

/* The one rule: which characters of a string from a trace may reach any
 * output as they are. Judges the character at s (n > 0 bytes): its length
 * in *len (1 for a byte that is not part of well-formed UTF-8) and its code
 * point in *cp, and returns
 *   JST_ESC_NONE     shown as it is;
 *   JST_ESC_CONTROL  a C0 control, DEL, a C1 control (U+0080..U+009F), or a
 *                    Unicode control that reorders or splits text: the line
 *                    and paragraph separators U+2028 and U+2029, and the
 *                    bidirectional marks, embeddings, overrides and isolates
 *                    (U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069);
 *   JST_ESC_INVALID  a byte that is not part of well-formed UTF-8 (overlong
 *                    forms and encoded surrogates are not).
 * Text output escapes both kinds (below); JSON writes a control as \uHHHH
 * and an invalid byte as U+FFFD (jsonw.c). */
enum jst_esc { JST_ESC_NONE = 0, JST_ESC_CONTROL, JST_ESC_INVALID };
enum jst_esc jst_esc_class(const unsigned char *s, size_t n, size_t *len, uint32_t *cp);

/* The rule for a string from a trace (or a file name) shown in text output,
 * so that no terminal control and no line of its own can come from it: the
 * newline, tab and carriage return as \n \t \r; other C0 controls and DEL
 * as \xHH; the other controls of jst_esc_class as \u00HH / \uHHHH; a byte
 * that is not part of well-formed UTF-8 (a raw 0x9B included) as \xHH.
 * Everything else is copied. Into dst (n > 0 bytes, always terminated; a
 * string that does not fit ends in "..."); returns dst. NULL shows as "?". */
char *jst_text_esc(char *dst, size_t n, const char *s);
/* The same into one of 8 rotating static buffers (16 KiB each), so that
 * several may appear in one printf. */
const char *jst_text(const char *s);
/* The same written to f. */
void jst_text_put(FILE *f, const char *s);
/* The same for n bytes that may hold NUL (shown as \x00). */
void jst_text_putn(FILE *f, const char *s, size_t n);
/* The same for Markdown text (report --markdown): escaped by the rule, then
 * Markdown's specials (| \ ` * _ [ ] < > #) behind a backslash, so that a
 * table row holds and a path or C++ name shows as written. */
void jst_text_put_md(FILE *f, const char *s);
/* Does s need escaping at all? (0: it is shown as it is.) */
int jst_text_unsafe(const char *s);

#endif
