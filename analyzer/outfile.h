/*
 * Every file the CLI writes (export -o, baseline -o, check --junit, ...)
 * goes through here. A regular file (or a new one) is written beside the
 * target and renamed into place, so a failed write never leaves a half file
 * where a good one was; the temporary file has an unpredictable name and is
 * created new (O_EXCL|O_NOFOLLOW): a symlink planted beside the target is
 * never followed. A character device or a FIFO is written through, never
 * replaced; /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are the
 * process's own descriptors. Any other symbolic link is refused, and so is
 * anything else that is not a regular file. A path of NULL or "-" is
 * standard output.
 */
#ifndef JST_ANALYZER_OUTFILE_H
#define JST_ANALYZER_OUTFILE_H

#include <stdio.h>

struct jst_outfile {
    FILE *f;          /* where to write */
    const char *path; /* the target, or NULL for standard output */
    int direct;       /* written through: a device, a FIFO or a descriptor */
    char tmp[4096];
};

/* 0, or -1 after one error line for cmd on stderr. */
int jst_outfile_open(struct jst_outfile *o, const char *cmd, const char *path);
/* Whether path could be opened by jst_outfile_open, found before any work is
 * done and without writing to it: a device or a FIFO is not opened (a FIFO's
 * reader would see an end of file), a symlink or another non-file is refused,
 * and for a regular or new file a temporary file is made beside it and
 * removed. 0, or -1 after one error line for cmd on stderr. */
int jst_outfile_probe(const char *cmd, const char *path);
/* Closes and renames into place; werr: the writer already failed. Returns 0,
 * or -1 after one error line (the temporary file is removed). */
int jst_outfile_commit(struct jst_outfile *o, const char *cmd, int werr);

/* The same without a word on stderr, for files that are not a command's
 * output (the warm record): the temporary file beside path, created new
 * under an unpredictable name, as o->f (NULL with errno set); then closed
 * and renamed onto path (0, or -1 with errno set, the temporary removed). */
FILE *jst_outfile_create(struct jst_outfile *o, const char *path);
int jst_outfile_finish(struct jst_outfile *o, const char *path, int werr);

/* The whole of writing one output: opens path, fills it through fn(f, ctx)
 * (0, or non-zero when it failed), commits it, and when it went to a file
 * says "jitstall CMD: wrote PATH (N processes)NOTE" on stderr. Returns the
 * exit status: JST_EXIT_OK, or JST_EXIT_USAGE after one error line. */
int jst_outfile_write(const char *cmd, const char *path, size_t n_procs,
                      int (*fn)(FILE *f, void *ctx), void *ctx, const char *note);

#endif
