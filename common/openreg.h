/*
 * Opening input files that must be regular files (implementation:
 * common/openreg.c). A FIFO, a device or a socket named where a file is
 * expected (a trace in a shared directory, a module path from a trace) could
 * block the open or a read forever; these are refused without blocking.
 */
#ifndef JST_COMMON_OPENREG_H
#define JST_COMMON_OPENREG_H

#include <stdio.h>

/* errno after jst_open_regular refused something that is not a regular file:
 * a value no system call returns, so it cannot be mistaken for one. */
#define JST_ENOTREG 10079

/* open(path, O_RDONLY | O_CLOEXEC), but only for a regular file: opened with
 * O_NONBLOCK (a FIFO's open cannot wait for a writer), checked with fstat,
 * and O_NONBLOCK cleared again. Returns the descriptor, or -1 with errno
 * set: JST_ENOTREG when it is something else. */
int jst_open_regular(const char *path);

/* The same as a stdio stream for reading; NULL with errno set. */
FILE *jst_fopen_regular(const char *path);

/* strerror(e), but "not a regular file" for JST_ENOTREG. */
const char *jst_open_strerror(int e);

#endif
