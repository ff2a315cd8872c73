/*
 * jitstall-warm.json, the small file `jitstall warm` leaves in a JIT cache
 * directory to say what the cache was filled for (implementation:
 * analyzer/warmfile.c). The driver keys its entries on the driver and the
 * GPU, so a cache baked on one machine misses on another; `report` reads the
 * file to say so.
 */
#ifndef JST_ANALYZER_WARMFILE_H
#define JST_ANALYZER_WARMFILE_H

#include <stddef.h>
#include <stdint.h>

#define JST_WARM_FILE "jitstall-warm.json"
#define JST_WARM_MAX_FOR 16 /* driver/GPU pairs kept in one file */

struct jst_warm_for {
    uint64_t driver_version; /* cuDriverGetVersion: 13000 is CUDA 13.0 */
    char driver[32];         /* the kernel module's version, "580.159.04", or "" */
    char gpu[128];           /* cuDeviceGetName */
    unsigned cc;             /* 90 */
    uint64_t images, kernels;
    char when[32]; /* UTC, ISO 8601 */
};

/* Adds w to DIR's file (replacing an entry for the same driver and GPU),
 * written beside and renamed into place. Returns 0, or -1 with errno. */
int jst_warmfile_record(const char *dir, const struct jst_warm_for *w);

/* Reads DIR's file: returns the number of entries (at most max), or -1 when
 * there is none or it cannot be parsed. */
int jst_warmfile_read(const char *dir, struct jst_warm_for *out, int max);

struct jst_process;
struct jst_call_ev;
struct jst_device;
/* The device a load of p ran on (NULL if the trace has none). */
const struct jst_device *jst_warm_run_device(const struct jst_process *p,
                                             const struct jst_call_ev *c);
/* When the cache at dir was warmed, but for none of this run's driver
 * (cuDriverGetVersion and the kernel module's release; 0 and NULL: unknown)
 * and compute capability, writes the sentence that says so into buf and
 * returns 1; else 0. */
int jst_warm_mismatch(const char *dir, uint64_t driver_version, const char *release, unsigned cc,
                      char *buf, size_t n);

#endif
