/*
 * Inside the preload: the command line without its secrets (interpose/argv.c).
 */
#ifndef JST_INTERPOSE_ARGV_H
#define JST_INTERPOSE_ARGV_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>

/* Writes argument a (n bytes) to out (cap bytes) with a credential's value
 * replaced by "***"; returns the length written. *next_secret carries "the
 * next argument is the value of --password" from one call to the next. */
size_t jst_arg_redact(const char *a, size_t n, int *next_secret, char *out, size_t cap);
/* 0 when JITSTALL_ARGV=0: record no argument. */
int jst_argv_wanted(void);

#endif
