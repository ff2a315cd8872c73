/*
 * Formatting into a fixed buffer where cutting the text short is the wanted
 * behaviour (implementation: analyzer/sfmt.c): fix texts, race notes and
 * paths are bounded on purpose, and a path that does not fit is simply not
 * found, which is the safe answer.
 */
#ifndef JST_ANALYZER_SFMT_H
#define JST_ANALYZER_SFMT_H

#include <stddef.h>

/* snprintf into buf (n bytes, n > 0), always NUL-terminated, truncating
 * silently. A function of its own so that -Wformat-truncation, right about
 * snprintf calls whose truncation is a bug, stays quiet about these. */
void jst_sfmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
