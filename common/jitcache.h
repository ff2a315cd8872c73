/*
 * The driver's JIT cache, seen from outside (implementation: common/jitcache.c).
 * Resolves CUDA_CACHE_PATH / CUDA_CACHE_MAXSIZE / CUDA_CACHE_DISABLE the way the
 * driver does, takes snapshots of the cache directory, and decides the cache
 * outcome of one JIT load from evidence (before/after snapshots and duration).
 */
#ifndef JST_COMMON_JITCACHE_H
#define JST_COMMON_JITCACHE_H

#include <stddef.h>
#include <stdint.h>

#define JST_CACHE_DEFAULT_MAX (1ull << 30) /* 1 GiB */
#define JST_CACHE_LIMIT_MAX (4ull << 30)   /* 4 GiB */

struct jst_cache_snap {
    char path[4096];          /* resolved cache directory */
    int has_index;            /* the driver's <path>/index file exists */
    uint64_t index_size;      /* its size and mtime: the driver rewrites it on */
    uint64_t index_mtime_ns;  /* every store, and leaves it alone on a hit */
    int scanned;              /* the entry files were walked (the fields below) */
    int from_env;             /* CUDA_CACHE_PATH was set */
    int disabled;             /* CUDA_CACHE_DISABLE=1 */
    int exists, writable;     /* writable: the dir, or its nearest existing ancestor */
    uint64_t max_bytes;       /* effective CUDA_CACHE_MAXSIZE */
    uint64_t size_bytes;      /* bytes in entry files */
    uint64_t entries;         /* number of entry files (the index file not counted) */
    uint64_t newest_mtime_ns; /* newest entry mtime, to see a store that replaced one */
    /* Set by jst_cache_snapshot_after(): entry files written during the load. */
    uint64_t new_entries, new_bytes;
};

/* Resolves settings from the environment, stats the index file and, with
 * scan != 0, walks the entry files (cost grows with the number of entries). */
void jst_cache_snapshot(struct jst_cache_snap *s, int scan);

/* The snapshots around one JIT load, cheap on a hit. Before: the index only,
 * plus a walk when there is no index (an empty or foreign cache, cheap). After:
 * the index again; the entry files are walked only when the index changed (a
 * store, after seconds of compiling) or the "before" was walked, and
 * new_entries/new_bytes count what the load wrote. */
void jst_cache_snapshot_before(struct jst_cache_snap *before);
void jst_cache_snapshot_after(const struct jst_cache_snap *before, struct jst_cache_snap *after);

/* The snapshot at exit, given the one at start: when start walked the
 * entries and the index is unchanged since (no store in between: the driver
 * rewrites the index on every store: docs/DRIVER.md, "The index file changes
 * on every store"), the counts are start's and nothing is walked again.
 * Returns 1 when it reused them, 0 when it walked. */
int jst_cache_snapshot_exit(const struct jst_cache_snap *start, struct jst_cache_snap *now);

/* Decides enum jst_cache_outcome for one load with verdict ptx_jit/forced_jit.
 * before/after: snapshots around the load; ptx_size: PTX bytes compiled.
 * Sets *reason (enum jst_cache_reason) for JST_C_MISS_NOT_STORED. */
unsigned jst_cache_outcome(const struct jst_cache_snap *before, const struct jst_cache_snap *after,
                           uint64_t dur_ns, uint64_t ptx_size, unsigned *reason);

/* The NVIDIA kernel module's version, "580.159.04", from
 * /proc/driver/nvidia/version into buf ("" if unknown; common/driver.c). The
 * driver's cache entries belong to one driver build. No allocation. */
void jst_driver_release(char *buf, size_t n);
/* The same from the text of that file (len bytes, its first line is read). */
void jst_driver_release_parse(const char *text, size_t len, char *buf, size_t n);

#endif
