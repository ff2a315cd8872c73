/*
 * The one rule for text from a trace, whatever writes it (implementation:
 * common/textrule.c): which bytes are well-formed UTF-8, and which
 * characters may reach an output as they are. The CLI's text, Markdown,
 * JSON and XML writers (analyzer/utf8.h, analyzer/jsonw.c) and the
 * Prometheus label values of the preload and of `export` (common/labels.c)
 * all judge bytes here. No allocation, no state: the preload calls it too.
 */
#ifndef JST_COMMON_TEXTRULE_H
#define JST_COMMON_TEXTRULE_H

#include <stddef.h>
#include <stdint.h>

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

/* How text shows a character jst_esc_class did not pass (k, cp as it gave
 * them, s its first byte): the newline, tab and carriage return as \n \t
 * \r; other C0 controls and DEL as \xHH; the other controls as \u00HH or
 * \uHHHH; a byte that is not UTF-8 as \xHH. Into out (NUL-terminated);
 * returns its length, or 0 for JST_ESC_NONE. */
size_t jst_esc_text(const unsigned char *s, enum jst_esc k, uint32_t cp, char out[8]);

#endif
