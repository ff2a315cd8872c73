/*
 * Files the CLI writes (export -o, baseline -o): written beside the target
 * and renamed into place, so a failed write never leaves a half file where a
 * good one was. The temporary file has an unpredictable name and is created
 * new (O_EXCL|O_NOFOLLOW): a symlink planted beside the target is never
 * followed. A path of NULL or "-" is standard output.
 */
#ifndef JST_ANALYZER_OUTFILE_H
#define JST_ANALYZER_OUTFILE_H

#include <stdio.h>

struct jst_outfile {
    FILE *f;          /* where to write */
    const char *path; /* the target, or NULL for standard output */
    char tmp[4096];
};

/* 0, or -1 after one error line for cmd on stderr. */
int jst_outfile_open(struct jst_outfile *o, const char *cmd, const char *path);
/* Closes and renames into place; werr: the writer already failed. Returns 0,
 * or -1 after one error line (the temporary file is removed). */
int jst_outfile_commit(struct jst_outfile *o, const char *cmd, int werr);

#endif
