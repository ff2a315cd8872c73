/*
 * Operands of the commands that read traces one file at a time (dump): a
 * directory stands for every *.jst file in it, in name order, as it does for
 * the commands that load a whole run (analyzer/paths.c).
 */
#ifndef JST_ANALYZER_PATHS_H
#define JST_ANALYZER_PATHS_H

#include <stddef.h>

struct jst_paths {
    char **v;
    size_t n;
    int bad; /* some operand could not be used (said on stderr) */
};

/* Appends path, or the *.jst files of the directory path. 0, or -1 after one
 * error line ("jitstall dump: DIR: no *.jst traces in this directory"). */
int jst_expand_path(const char *path, struct jst_paths *ps);
void jst_paths_free(struct jst_paths *ps);

#endif
