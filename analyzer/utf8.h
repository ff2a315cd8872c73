/*
 * The one escaping rule for text from a trace (common/textrule.h) as the
 * CLI's text and Markdown show it (implementation: analyzer/utf8.c), so that
 * every writer of text the CLI emits (report, check, diff, dump, warm, scan,
 * messages on stderr; jsonw.c and check_out.c's XML judge bytes by the same
 * rule) escapes the same characters the same way.
 */
#ifndef JST_ANALYZER_UTF8_H
#define JST_ANALYZER_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "textrule.h"

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
