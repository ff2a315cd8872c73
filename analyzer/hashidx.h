/*
 * Small hash tables the analyzer uses to stay linear in the size of a trace
 * (implementation: analyzer/hashidx.c): an index from a 64-bit hash to
 * positions in a caller's array (the caller compares the candidates), and a
 * string table that keeps each distinct string once.
 */
#ifndef JST_ANALYZER_HASHIDX_H
#define JST_ANALYZER_HASHIDX_H

#include <stddef.h>
#include <stdint.h>

/* hash -> array positions; several positions may share a hash. */
struct jst_hidx {
    uint64_t *hash;
    size_t *pos1; /* position + 1; 0: empty slot */
    size_t cap, n;
};

/* Returns 0, or -1 when out of memory. */
int jst_hidx_add(struct jst_hidx *ix, uint64_t h, size_t pos);
/* Candidates for h, one per call: start with *cursor = 0; returns the next
 * position + 1 whose hash is h, or 0 when there is none left. */
size_t jst_hidx_next(const struct jst_hidx *ix, uint64_t h, size_t *cursor);
void jst_hidx_free(struct jst_hidx *ix);

uint64_t jst_hash_bytes(uint64_t h, const void *p, size_t n);
uint64_t jst_hash_str(uint64_t h, const char *s); /* NULL hashes apart from "" */
uint64_t jst_hash_u64(uint64_t h, uint64_t v);
#define JST_HASH_SEED 0xcbf29ce484222325ull

/* Each distinct string stored once, NUL-terminated, never moved. */
struct jst_strtab {
    struct jst_hidx ix;
    char **strs; /* by position */
    size_t n;
    char *chunk; /* current arena chunk */
    size_t used, size;
    char **chunks;
    size_t n_chunks;
    size_t bytes; /* arena bytes held, for tests and benchmarks */
};

/* The stored copy of the len bytes at s (a NUL is added); NULL when out of
 * memory. */
const char *jst_strtab_intern(struct jst_strtab *t, const void *s, size_t len);
void jst_strtab_free(struct jst_strtab *t);

/* Matching two lists in order (diff and check pair a run's modules and
 * processes with another's): each a[i] not yet matched (a_to_b[i] < 0) gets
 * the first b[k], in b's order, that is not used and has an equal key;
 * used[k] is then set. The key functions return 0 for an element that takes
 * no part. Linear in na + nb unless many keys share a hash; out of memory, it
 * falls back to jst_match_scan, which needs none. */
struct jst_match_keys {
    const void *ctx;
    int (*hash_a)(const void *ctx, size_t i, uint64_t *h);
    int (*hash_b)(const void *ctx, size_t k, uint64_t *h);
    int (*same)(const void *ctx, size_t i, size_t k);
};
void jst_match_first(const struct jst_match_keys *m, size_t na, size_t nb, long *a_to_b,
                     char *used);
/* The same pairs by comparing each a[i] with every b[k]: quadratic, but it
 * allocates nothing. */
void jst_match_scan(const struct jst_match_keys *m, size_t na, size_t nb, long *a_to_b, char *used);

#endif
