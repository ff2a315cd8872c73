/*
 * Why a framework's cache missed, as far as the cache itself can tell
 * (analyzer/miss_triton.c, analyzer/miss_jax.c).
 */
#ifndef JST_MISS_H
#define JST_MISS_H
#include <stddef.h>
#include <stdint.h>

/* Triton's cache at path cache, for a process that lived from from_ns to
 * to_ns (ns since the epoch): words for a fix ("it missed: the cache held
 * add_kernel from an earlier run with other metadata: num_warps 4, now 8")
 * in buf. 1 when something was said; 0 (buf "") when the cache is not
 * there, or the run wrote no entry into it. */
int jst_triton_miss_words(const char *cache, uint64_t from_ns, uint64_t to_ns, char *buf, size_t n);

/* A module JAX compiled in the process ("jit_f") and how long it took. */
struct jst_jax_compile {
    const char *module;
    uint64_t dur_ns;
};
/* JAX's persistent cache at path cache, for a process that lived from
 * from_ns to to_ns (ns since the epoch) and compiled c[0 .. n_c) (analyzer/
 * miss_jax.c): words for a fix ("it missed: the cache held jit_f from an
 * earlier run under another key ..."; "JAX did not keep jit_g (0.35 s):
 * ...") in buf. 1 when something was said; 0 (buf "") when the cache is not
 * there or every compile was stored as it should be. */
int jst_jax_miss_words(const char *cache, uint64_t from_ns, uint64_t to_ns,
                       const struct jst_jax_compile *c, size_t n_c, char *buf, size_t n);
/* JAX's thresholds for keeping an entry, when known (warm --run sets them;
 * a report does not see the program's environment): they replace the
 * defaults the words above assume. */
struct jst_jax_limits {
    int known;               /* the fields below are the process's settings */
    uint64_t min_compile_ns; /* JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS */
    int any_size;            /* JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES keeps every entry */
};
int jst_jax_miss_words_limits(const char *cache, uint64_t from_ns, uint64_t to_ns,
                              const struct jst_jax_compile *c, size_t n_c,
                              const struct jst_jax_limits *lim, char *buf, size_t n);

/* The wall-clock window of process p in which a cache it used was written
 * (ns since the epoch: its start to its end plus a minute, as entries are
 * written as a process ends). 0, or -1 when the trace lacks the clocks. */
struct jst_process;
int jst_miss_window(const struct jst_process *p, uint64_t *from_ns, uint64_t *to_ns);
/* jst_jax_miss_words for the JAX modules process p compiled (each once). */
int jst_jax_miss_of(const struct jst_process *p, const char *cache, char *buf, size_t n);

#endif
