/*
 * Finding CUDA images in files (implementation: analyzer/imgwalk.c), shared
 * by `jitstall scan` and `jitstall warm`: walks files and directories, maps
 * each file and hands every image it carries to a callback: the fatbins of an
 * ELF object's .nv_fatbin section, PTX text in its data, a .fatbin, .cubin or
 * .ptx file.
 */
#ifndef JST_ANALYZER_IMGWALK_H
#define JST_ANALYZER_IMGWALK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "image.h"

struct jst_walk {
    const char *cmd; /* names the command in error messages */
    void *ctx;
    /* One image of path at file offset off; img->base/img->size are its bytes,
     * valid during the call only. text: PTX text found in an ELF object's data
     * (its NUL follows the image). */
    void (*image)(void *ctx, const char *path, size_t off, const struct jst_image *img, int text);
    /* After every file read: explicit_path when named on the command line. */
    void (*file_done)(void *ctx, const char *path, int explicit_path, size_t n_images);
    size_t files;   /* regular files read */
    uint64_t bytes; /* bytes of the files that were mapped (those with CUDA headers) */
    /* Files and directories already seen, by (dev, ino). */
    struct jst_walk_key {
        dev_t dev;
        ino_t ino;
    } * keys;
    size_t cap, n;
};

/* Walks path (a file, or a directory in name order, symlink loops cut).
 * Returns 0 if path itself could be read, else -1 after one message. */
int jst_walk_path(struct jst_walk *w, const char *path);
void jst_walk_free(struct jst_walk *w);
/* Before a walk: every path named on the command line exists (a file or a
 * directory). Returns how many do not, after one message each; a gate that
 * names a missing path must not pass on the others. */
int jst_walk_check_paths(const char *cmd, int npaths, char **paths);

#endif
