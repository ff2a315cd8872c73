/*
 * The insides of `jitstall warm` shared by cmd_warm.c (the driver, the
 * images, loading them, the command) and warm_out.c (what it says, as text
 * or JSON).
 */
#ifndef JST_ANALYZER_WARM_H
#define JST_ANALYZER_WARM_H

#include <stddef.h>
#include <stdint.h>
#include "imgwalk.h"
#include "jitcache.h"
#include "warmfile.h"

/* What became of one image that needs the JIT. */
enum warm_status { WS_PENDING, WS_WARMED, WS_CACHED, WS_DUP, WS_FAILED, WS_NOT_STORED, WS_SKIPPED };

struct warm_img {
    char *path;
    size_t off;
    int text;      /* PTX text in an ELF object's data */
    uint8_t *data; /* a NUL-terminated copy of the image, as loaded */
    size_t size;
    uint64_t hash;
    size_t kernels;
    uint64_t ptx_size;
    char jit_from[16];
    unsigned status; /* enum warm_status */
    int result;      /* CUresult of the load */
    uint64_t dur_ns, new_entries, new_bytes;
    char why[200]; /* for failed, not stored, skipped */
};

typedef int (*cu_init_t)(unsigned);
typedef int (*cu_int_t)(int *);
typedef int (*cu_dev_get_t)(int *, int);
typedef int (*cu_attr_t)(int *, int, int);
typedef int (*cu_name_t)(char *, int, int);
typedef int (*cu_retain_t)(void **, int);
typedef int (*cu_release_t)(int);
typedef int (*cu_setcur_t)(void *);
typedef int (*cu_load_t)(void **, const void *);
typedef int (*cu_unload_t)(void *);
typedef int (*cu_errname_t)(int, const char **);

struct warm_drv {
    void *h;
    cu_init_t init;
    cu_int_t count, version;
    cu_dev_get_t get;
    cu_attr_t attr;
    cu_name_t name;
    cu_retain_t retain;
    cu_release_t release;
    cu_setcur_t setcur;
    cu_load_t load;
    cu_unload_t unload;
    cu_errname_t errname;
};

struct warm {
    int json, progress, env_flags, ordinal, allow_empty;
    unsigned cc;
    struct warm_drv d;
    struct jst_warm_for target;
    struct jst_walk walk;
    struct warm_img *v;
    size_t n, cap;
    size_t sass, empty, cannot_run, damaged; /* images with nothing to warm */
    size_t other_gpus;   /* nothing for this GPU, in a file with code for this one */
    size_t file_runs;    /* the file being walked: images that run (SASS or JIT) */
    size_t file_others;  /* the file being walked: images with nothing for this GPU */
    size_t lost;         /* images dropped: out of memory */
    uint64_t need_bytes; /* estimated cache bytes for the set */
    struct jst_cache_snap before, after;
    uint64_t total_ns;
};

struct warm_sum {
    size_t warmed, cached, bad, dup, kernels;
};

/* What became of the images, counted. */
struct warm_sum warm_summarize(const struct warm *w);
/* The result on stdout: text, or one JSON document (0, or -1 when writing
 * failed). */
void warm_print_text(const struct warm *w);
int warm_print_json(const struct warm *w);

#endif
