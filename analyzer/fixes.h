/*
 * The fixes jitstall suggests for a run, ranked by the time they save
 * (implementation: analyzer/fixes.c). Shared by report (the "Fixes" section
 * and the per-module "fix" key) and check (its one-line advice per load).
 *
 * Time saved is estimated per load: a JIT load that a -gencode fix turns into
 * a SASS load then costs what a SASS load costs (the mean of the process's own
 * SASS loads, else JST_EST_SASS_LOAD_NS + JST_EST_SASS_NS_PER_KIB per KiB of
 * image); one that a cache fix turns into a cache hit then costs what a hit
 * costs (the mean of the process's own hits, else JST_EST_CACHE_HIT_NS +
 * JST_EST_CACHE_HIT_NS_PER_KIB per KiB of PTX). Nothing is ever estimated to
 * cost more than it did. A load's own fix (jst_fix_for_load) is its build or
 * environment fix when it has one, since that removes the JIT on every
 * machine and every run; its cache fix otherwise.
 */
#ifndef JST_ANALYZER_FIXES_H
#define JST_ANALYZER_FIXES_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"

#define JST_EST_SASS_LOAD_NS 100000ull       /* 0.1 ms fixed part of a SASS load */
#define JST_EST_SASS_NS_PER_KIB 500ull       /* 2.4 ms for a 5.6 MB module on an H200 */
#define JST_EST_CACHE_HIT_NS 1000000ull      /* 1 ms fixed part of a cache hit */
#define JST_EST_CACHE_HIT_NS_PER_KIB 6000ull /* 30 ms for 5.6 MB of PTX on an H200 */

enum jst_fix_kind {
    JST_FIX_GENCODE = 1,        /* rebuild a library with SASS for the GPU */
    JST_FIX_UNFORCE_JIT = 2,    /* unset CUDA_FORCE_PTX_JIT / CUDA_FORCE_JIT */
    JST_FIX_CACHE_VOLUME = 3,   /* keep the cache across runs (container volume) */
    JST_FIX_CACHE_ENABLE = 4,   /* unset CUDA_CACHE_DISABLE */
    JST_FIX_CACHE_WRITABLE = 5, /* make the cache directory writable */
    JST_FIX_CACHE_MAXSIZE = 6,  /* raise CUDA_CACHE_MAXSIZE */
    JST_FIX_CACHE_DIR = 7,      /* the cache directory could not be created */
    JST_FIX_ALLOW_JIT = 8,      /* a load failed: JIT disabled or no compatible code */
    JST_FIX_RTC_CACHE = 9,      /* compile ahead of time / keep the program's kernel cache */
    JST_FIX_FATBIN_FILE = 10,   /* rebuild a fatbin file the program reads */
    JST_FIX_PTX_FILE = 11,      /* compile a .ptx file ahead of time, load the result */
    JST_FIX_PTX_DATA = 12,      /* the same for PTX text held in an object's data */
    JST_FIX_NVRTC_PTX = 13,     /* NVRTC-made PTX: compile to a cubin (nvrtcGetCUBIN) */
    JST_FIX_THIRD_PARTY = 14,   /* a library the user does not build: upgrade, cache now */
    JST_FIX_RACE = 15,          /* processes compiled one image at once: warm the cache */
    JST_FIX_CACHE_REWARM = 16,  /* the cache was warmed for another driver or GPU */
    JST_FIX_PTX_TOO_NEW = 17,   /* PTX newer than the driver: upgrade it, or build to match */
    /* a framework's own compile cache (analyzer/fixes_fw.c) */
    JST_FIX_TRITON_CACHE = 40,   /* TRITON_CACHE_DIR on a persistent volume */
    JST_FIX_INDUCTOR_CACHE = 41, /* TORCHINDUCTOR_CACHE_DIR, or save/load_cache_artifacts */
    JST_FIX_JAX_CACHE = 42,      /* turn on JAX's persistent compilation cache */
    JST_FIX_NUMBA_CACHE = 43,    /* @cuda.jit(cache=True) */
    JST_FIX_CUPY_CACHE = 44,     /* CUPY_CACHE_DIR on a persistent volume */
    JST_FIX_FRAMEWORK_AOT = 50,  /* a framework's cache hit: its ahead-of-time path */
    JST_FIX_FRAMEWORK_COST = 51, /* a framework's cache hit, no ahead-of-time path */
    JST_FIX_COMPILE_AHEAD = 45,  /* a compiler subprocess no framework owns: run it at build */
    JST_FIX_WARMUP = 46,         /* a compile after ready: add it to the warm-up or ship it
                                    (analyzer/late.c) */
    /* a build tool's output: keep the directory it builds in (TORCH_EXTENSIONS_DIR, a
     * library's cache), or build it when the package is installed (analyzer/fixes_fw.c) */
    JST_FIX_EXTENSION_CACHE = 47,
    /* graph capture a main cause of a process's start: capture fewer graphs, or
     * later (analyzer/graphs.h); saves what jst_graphs_start_ns says */
    JST_FIX_GRAPH_CAPTURE = 52,
};

struct jst_fix {
    unsigned kind;        /* enum jst_fix_kind */
    char text[1024];      /* one line, exact: what to change, where */
    char target[256];     /* library / cache path / variable it is about */
    uint64_t saves_ns;    /* estimated, summed over every process of the run */
    size_t n_loads;       /* loads it fixes */
    uint64_t new_maxsize; /* JST_FIX_CACHE_MAXSIZE: the value suggested */
    /* A fix that stands for the same change in several cache directories
     * (one per container, say): each of them, target being the first, and
     * text says "DIR (each of N directories: ...)"; NULL and 0 otherwise. */
    char **targets;
    size_t n_targets;
};

struct jst_fixes {
    struct jst_fix *v; /* sorted: saves_ns descending, then text */
    size_t n;
};

/* Computes the ranked fix list for every process of run. Returns 0, or -1 when
 * out of memory (out is then empty). */
int jst_fixes_compute(const struct jst_run *run, struct jst_fixes *out);
void jst_fixes_free(struct jst_fixes *f);
/* Adds the fixes of the frameworks' compile caches (analyzer/fixes_fw.c):
 * one per framework whose compiles the run shows. 0, or -1 (memory). */
int jst_fixes_frameworks(const struct jst_run *run, struct jst_fixes *out);
/* Adds a fix of kind (enum jst_fix_kind) with text to out, or merges it into
 * the one with the same kind and text: savings and counts add up. 0, or -1
 * out of memory. */
int jst_fixes_merge(struct jst_fixes *out, unsigned kind, const char *text, const char *target,
                    uint64_t saves_ns, size_t n);
/* The fix kind's name in JSON ("triton_cache"), NULL for the older kinds. */
const char *jst_fix_fw_kind_name(unsigned kind);
/* Whether framework (enum jst_framework) has a cache of its own whose fix
 * covers the compiles it runs (a runtime compile it makes included). */
int jst_fix_fw_owns(unsigned framework);
/* The fix of a compile, as the Fixes list words it for its process: for a
 * driver or library call, that call's own fix (jst_fix_for_load); for a
 * compiler subprocess or a framework's own compile, the framework's cache
 * fix or the compile-ahead fix. buf, or NULL when it has none (a failed or
 * unfinished subprocess has nothing to keep). */
struct jst_compile;
const char *jst_fix_for_compile(const struct jst_process *p, const struct jst_compile *k, char *buf,
                                size_t n);
/* What the fix of each of p's compiles saves, into saves[0 .. p->n_compiles),
 * in one pass: a call's, its own fix's; a compile-ahead child's, its time; a
 * framework's compile, its share of the framework's saving in p (the shares
 * of the framework's compiles sum to it); 0 without a fix. */
void jst_fix_compile_saves(const struct jst_process *p, uint64_t *saves);

/* Ranks f again (saves_ns descending, then kind, then text) after additions. */
void jst_fixes_sort(struct jst_fixes *f);

/* The one-line fix for one load of process p (kind in *kind when non-NULL),
 * e.g. "rebuild libfoo.so with -gencode arch=compute_90,code=sm_90 (GPU is
 * sm_90; it ships only PTX compute_75)". Returns buf, "" (kind 0) when the
 * load needs no fix. */
const char *jst_fix_for_load(const struct jst_process *p, const struct jst_call_ev *c,
                             unsigned *kind, char *buf, size_t n);

/* What the load's own fix (above) saves (0 when none). */
uint64_t jst_fix_load_saves(const struct jst_process *p, const struct jst_call_ev *c);

/* "-gencode arch=compute_90,code=sm_90"; for an architecture CUDA 13 no
 * longer builds, with the newest toolkit that does. Returns buf. */
const char *jst_fix_gencode(char *buf, size_t n, unsigned cc);
/* How to compile PTX ahead of time for cc (ptxas, or nvcc -fatbin keeping
 * PTX): the one wording of report and scan. Returns buf. */
const char *jst_fix_ptx_aot(char *buf, size_t n, unsigned cc);

/* The library or file a load came from: JST_F_SOURCE, else JST_F_PATH, else
 * NULL (an image built in memory). */
const char *jst_load_origin(const struct jst_call_ev *c);

/* Projected time to first kernel of p once every fix is applied: ttfk minus
 * what the fixes save on the loads before the first launch. 0 when p
 * launched no kernel. */
uint64_t jst_fixes_projected_ttfk(const struct jst_process *p);
/* The slowest first call once the fixes are applied: the driver's JIT and
 * runtime compiles in it go (SASS shipped, output kept), and a first call of
 * a framework that compiled keeps only its module loads and driver start-up,
 * which a warm cache still pays; 0 without first calls. */
uint64_t jst_fixes_projected_first_call(const struct jst_process *p);

#endif
