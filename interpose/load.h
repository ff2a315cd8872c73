/*
 * Inside the preload: what a load was given, and what the driver did with it (interpose/load.c).
 */
#ifndef JST_INTERPOSE_LOAD_H
#define JST_INTERPOSE_LOAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include "trace.h"

struct jst_load {
    int active;          /* inspection done */
    unsigned image_kind; /* enum jst_image_kind */
    const void *ptr;     /* image bytes (mapped file for paths) */
    size_t size;
    uint64_t hash;
    const char *path; /* for file loads */
    void *map;        /* mmap of the file, if any */
    size_t map_len;
    int jit;        /* verdict is ptx_jit / forced_jit */
    int scan_cache; /* take cache snapshots around the call */
    unsigned cc;
    int dev;
    uint64_t ctx;
    void *priv; /* inspection results (struct in load.c) */
};
/* Before the real call. known_size: 0 to derive it from headers. */
void jst_load_pre_mem(struct jst_load *ld, const void *image, size_t known_size, int cache);
void jst_load_pre_file(struct jst_load *ld, const char *path, int cache);
/* What is known before the real call (image, source, verdict, kernels); the
 * BEGIN record and jst_load_post share it. */
void jst_load_describe(struct jst_load *ld, struct jst_rec *r);
/* After the real call: cache outcome, kernels, budget; appends the fields. */
void jst_load_post(struct jst_load *ld, struct jst_rec *r, uint64_t dur_ns, int result);
void jst_load_free(struct jst_load *ld);

#endif
