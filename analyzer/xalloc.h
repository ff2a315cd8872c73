/*
 * Allocation for the CLI: jitstall_x* never return NULL. Out of memory they
 * print one line, "jitstall <command>: out of memory", and exit with
 * JST_EXIT_USAGE (docs/jitstall.1.md, EXIT STATUS), so no command needs a
 * hand-written out-of-memory branch where nothing better can be done. Code
 * that degrades instead (the model's reader, the indexes) keeps plain malloc.
 */
#ifndef JST_ANALYZER_XALLOC_H
#define JST_ANALYZER_XALLOC_H

#include <stddef.h>

/* The command the out-of-memory line names (main.c sets it). */
void jst_xalloc_command(const char *cmd);

void *jst_xmalloc(size_t n);
void *jst_xcalloc(size_t n, size_t size);
/* Grows p to n elements of size bytes each, checking n * size for overflow. */
void *jst_xreallocarray(void *p, size_t n, size_t size);
char *jst_xstrdup(const char *s);
/* Prints the out-of-memory line and exits. */
void jst_xalloc_die(void) __attribute__((noreturn));

#endif
