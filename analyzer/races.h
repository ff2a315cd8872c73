/*
 * Processes racing on one cold cache (implementation: analyzer/races.c): the
 * same image, by content hash, JIT-compiled (not a cache hit) in several
 * processes of a run at overlapping times. Each compiled it whole, and the
 * cache kept one copy: warming the cache first would have saved all but one.
 */
#ifndef JST_ANALYZER_RACES_H
#define JST_ANALYZER_RACES_H

#include <stddef.h>
#include <stdint.h>
#include "fixes.h"
#include "model.h"

struct jst_race {
    uint64_t image_hash;
    const char *origin;     /* the library or file, or NULL (image in memory) */
    const char *cache_path; /* the first racer's JIT cache directory, or NULL */
    size_t compiles;        /* overlapping compiles of the image */
    size_t processes;       /* distinct processes among them */
    uint64_t pids[8];       /* the first few, in run order */
    uint64_t jit_ns;        /* their durations, summed */
    uint64_t saves_ns;      /* jit_ns less the longest compile (one must run) */
    char text[512];         /* "compiled 4 times at once in 4 processes, 49.0 s in all: ..." */
};

struct jst_races {
    struct jst_race *v; /* ranked by jit_ns, largest first */
    size_t n;
};

/* Finds the races of run. Returns 0, or -1 when out of memory (out empty). */
int jst_races_find(const struct jst_run *run, struct jst_races *out);
void jst_races_free(struct jst_races *r);

/* Adds one fix of kind JST_FIX_RACE per race to fixes and ranks the list
 * again. Returns 0, or -1 when out of memory. */
int jst_races_add_fixes(const struct jst_races *r, struct jst_fixes *fixes);

#endif
