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

#endif
