/*
 * Hash index and string table (analyzer/hashidx.h): open addressing with
 * linear probing, grown at half full, so that grouping, de-duplication and
 * interning cost O(1) per item instead of a scan of everything seen so far.
 */
#include <stdlib.h>
#include <string.h>
#include "hashidx.h"

#define STRTAB_CHUNK (64u * 1024u)
#define STRTAB_FIRST 512u /* chunks double from here: small traces stay small */

uint64_t jst_hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t jst_hash_str(uint64_t h, const char *s)
{
    if (!s)
        return jst_hash_u64(h, 0x9e3779b97f4a7c15ull);
    return jst_hash_bytes(h, s, strlen(s) + 1);
}

uint64_t jst_hash_u64(uint64_t h, uint64_t v)
{
    return jst_hash_bytes(h, &v, sizeof v);
}

/* Spreads a hash over the table: FNV's low bits are weak for short keys. */
static size_t hidx_slot(uint64_t h, size_t cap)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (size_t)h & (cap - 1);
}

static int hidx_grow(struct jst_hidx *ix)
{
    size_t cap = ix->cap ? ix->cap * 2 : 64;
    if (cap > SIZE_MAX / sizeof(uint64_t))
        return -1;
    uint64_t *hash = calloc(cap, sizeof *hash);
    size_t *pos1 = calloc(cap, sizeof *pos1);
    if (!hash || !pos1) {
        free(hash);
        free(pos1);
        return -1;
    }
    for (size_t i = 0; i < ix->cap; i++) {
        if (!ix->pos1[i])
            continue;
        size_t s = hidx_slot(ix->hash[i], cap);
        while (pos1[s])
            s = (s + 1) & (cap - 1);
        hash[s] = ix->hash[i];
        pos1[s] = ix->pos1[i];
    }
    free(ix->hash);
    free(ix->pos1);
    ix->hash = hash;
    ix->pos1 = pos1;
    ix->cap = cap;
    return 0;
}

int jst_hidx_add(struct jst_hidx *ix, uint64_t h, size_t pos)
{
    if ((ix->n + 1) * 2 > ix->cap && hidx_grow(ix) < 0)
        return -1;
    size_t s = hidx_slot(h, ix->cap);
    while (ix->pos1[s])
        s = (s + 1) & (ix->cap - 1);
    ix->hash[s] = h;
    ix->pos1[s] = pos + 1;
    ix->n++;
    return 0;
}

/* *cursor holds the next slot to look at, + 1 (0: start at h's own slot). */
size_t jst_hidx_next(const struct jst_hidx *ix, uint64_t h, size_t *cursor)
{
    if (!ix->cap)
        return 0;
    size_t s = *cursor ? *cursor - 1 : hidx_slot(h, ix->cap);
    for (size_t probes = 0; probes < ix->cap; probes++) {
        if (!ix->pos1[s])
            return 0;
        size_t here = s;
        s = (s + 1) & (ix->cap - 1);
        if (ix->hash[here] == h) {
            *cursor = s + 1;
            return ix->pos1[here];
        }
    }
    return 0;
}

void jst_hidx_free(struct jst_hidx *ix)
{
    free(ix->hash);
    free(ix->pos1);
    memset(ix, 0, sizeof *ix);
}

/* Room for n bytes in the arena; big strings get a chunk of their own. */
static char *strtab_room(struct jst_strtab *t, size_t n)
{
    if (t->chunk && t->size - t->used >= n) {
        char *r = t->chunk + t->used;
        t->used += n;
        return r;
    }
    size_t next = t->size ? t->size * 2 : STRTAB_FIRST;
    if (next > STRTAB_CHUNK)
        next = STRTAB_CHUNK;
    size_t size = n > next ? n : next;
    char *c = malloc(size);
    char **cv = t->chunks;
    if (c && (t->n_chunks & (t->n_chunks - 1)) == 0) /* 0, 1, 2, 4, ...: double */
        cv = realloc(t->chunks, (t->n_chunks ? t->n_chunks * 2 : 1) * sizeof *cv);
    if (!c || !cv) {
        free(c);
        return NULL;
    }
    t->chunks = cv;
    t->chunks[t->n_chunks++] = c;
    t->bytes += size;
    if (size == next) { /* keep filling the new chunk */
        t->chunk = c;
        t->size = size;
        t->used = n;
    }
    return c;
}

const char *jst_strtab_intern(struct jst_strtab *t, const void *s, size_t len)
{
    uint64_t h = jst_hash_bytes(JST_HASH_SEED, s, len);
    size_t cur = 0, p1;
    while ((p1 = jst_hidx_next(&t->ix, h, &cur)) != 0) {
        const char *o = t->strs[p1 - 1];
        if (!memcmp(o, s, len) && o[len] == '\0')
            return o;
    }
    if (len == SIZE_MAX)
        return NULL;
    /* capacity of strs doubles from 16: implied by n */
    if (t->n == 0 || (t->n >= 16 && (t->n & (t->n - 1)) == 0)) {
        size_t cap = t->n ? t->n * 2 : 16;
        char **nv = cap > SIZE_MAX / sizeof(char *) ? NULL : realloc(t->strs, cap * sizeof *nv);
        if (!nv)
            return NULL;
        t->strs = nv;
    }
    char *d = strtab_room(t, len + 1);
    if (!d)
        return NULL;
    memcpy(d, s, len);
    d[len] = '\0';
    if (jst_hidx_add(&t->ix, h, t->n) < 0)
        return NULL; /* the bytes stay in the arena, unreachable until free */
    t->strs[t->n++] = d;
    return d;
}

void jst_strtab_free(struct jst_strtab *t)
{
    for (size_t i = 0; i < t->n_chunks; i++)
        free(t->chunks[i]);
    free(t->chunks);
    free(t->strs);
    jst_hidx_free(&t->ix);
    memset(t, 0, sizeof *t);
}

struct match_ent {
    uint64_t h;
    size_t k;
};

static int match_cmp(const void *x, const void *y)
{
    const struct match_ent *a = x, *b = y;
    if (a->h != b->h)
        return a->h < b->h ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}

/* b's entries sorted by (hash, position): one run per hash, in b's order;
 * a run's cursor moves past used entries for good. */
static int match_hashed(const struct jst_match_keys *m, size_t na, size_t nb, long *a_to_b,
                        char *used)
{
    struct match_ent *e = malloc((nb ? nb : 1) * sizeof *e);
    size_t *cur = malloc((nb ? nb : 1) * sizeof *cur);
    struct jst_hidx ix = {0};
    size_t n = 0;
    int rc = -1;
    if (!e || !cur)
        goto out;
    for (size_t k = 0; k < nb; k++)
        if (m->hash_b(m->ctx, k, &e[n].h))
            e[n++].k = k;
    qsort(e, n, sizeof *e, match_cmp);
    for (size_t r = 0; r < n; r++)
        if (r == 0 || e[r].h != e[r - 1].h) {
            cur[r] = r;
            if (jst_hidx_add(&ix, e[r].h, r) < 0)
                goto out;
        }
    for (size_t i = 0; i < na; i++) {
        uint64_t h;
        size_t c = 0, p1;
        if (a_to_b[i] >= 0 || !m->hash_a(m->ctx, i, &h) || !(p1 = jst_hidx_next(&ix, h, &c)))
            continue;
        size_t run = p1 - 1, r = cur[run];
        while (r < n && e[r].h == h && used[e[r].k])
            r++;
        cur[run] = r;
        for (; r < n && e[r].h == h; r++)
            if (!used[e[r].k] && m->same(m->ctx, i, e[r].k)) {
                a_to_b[i] = (long)e[r].k;
                used[e[r].k] = 1;
                break;
            }
    }
    rc = 0;
out:
    free(e);
    free(cur);
    jst_hidx_free(&ix);
    return rc;
}

void jst_match_scan(const struct jst_match_keys *m, size_t na, size_t nb, long *a_to_b, char *used)
{
    for (size_t i = 0; i < na; i++) {
        uint64_t h, hk;
        if (a_to_b[i] >= 0 || !m->hash_a(m->ctx, i, &h))
            continue;
        for (size_t k = 0; k < nb; k++)
            if (!used[k] && m->hash_b(m->ctx, k, &hk) && hk == h && m->same(m->ctx, i, k)) {
                a_to_b[i] = (long)k;
                used[k] = 1;
                break;
            }
    }
}

void jst_match_first(const struct jst_match_keys *m, size_t na, size_t nb, long *a_to_b, char *used)
{
    if (match_hashed(m, na, nb, a_to_b, used) != 0)
        jst_match_scan(m, na, nb, a_to_b, used); /* out of memory: the same pairs, slower */
}
