/* Address -> module map entry, in logarithmic time (see modix.h).
 *
 * A segment tree over the distinct range ends: each entry is stored in the
 * O(log n) nodes that together cover its range, each node's entries in
 * falling position. The nodes on one leaf's path to the root hold exactly the
 * entries whose range holds that leaf's addresses, so the latest of them is
 * the largest head of those lists. The latest one mapped and still open at a
 * given call is found in each list by bisection (the entries mapped by then
 * are a suffix of it) and a max tree over the dlclose times, so that maps
 * opened and closed before the call do not make each lookup scan them. */
#include "modix.h"

#include <stdlib.h>
#include <string.h>

struct jst_modix {
    const struct jst_modmap *mods;
    uint64_t *pts;      /* distinct range ends, rising */
    size_t n_pts, size; /* size: leaves, a power of two */
    size_t *off;        /* node v's entries: ent[off[v] .. off[v + 1]) */
    long *ent;
    uint64_t *closed_at; /* per entry: the first later dlclose's seq, or max */
    /* For jst_modix_at: the most a closed_at reaches over slices of ent[],
     * a max tree of msize leaves (leaf e: closed_at[ent[e]]); NULL when the
     * map's seq_after ever falls (then each node's list is scanned). */
    uint64_t *mx;
    size_t msize;
};

static uint64_t modix_steps;

uint64_t jst_modix_steps(void)
{
    return modix_steps;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static const struct jst_modmap *g_sort_mods;

/* By path, bias, then position: the entries a dlclose may close, together. */
static int cmp_key(const void *a, const void *b)
{
    const struct jst_modmap *x = &g_sort_mods[*(const size_t *)a];
    const struct jst_modmap *y = &g_sort_mods[*(const size_t *)b];
    int c = strcmp(x->path ? x->path : "", y->path ? y->path : "");
    if (c)
        return c;
    if (x->bias != y->bias)
        return x->bias < y->bias ? -1 : 1;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    return i < j ? -1 : i > j;
}

static int indexed(const struct jst_modmap *m)
{
    return m->event != JST_MOD_DLCLOSE && m->path && m->start < m->end;
}

/* Position of v among the range ends (v is one of them). */
static size_t pt_index(const struct jst_modix *x, uint64_t v)
{
    size_t lo = 0, hi = x->n_pts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->pts[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Calls fn for each node covering leaves [lo, hi). */
#define MODIX_COVER(x, lo, hi, v, BODY)                                                            \
    for (size_t l_ = (lo) + (x)->size, r_ = (hi) + (x)->size; l_ < r_; l_ >>= 1, r_ >>= 1) {       \
        if (l_ & 1) {                                                                              \
            size_t v = l_++;                                                                       \
            BODY;                                                                                  \
        }                                                                                          \
        if (r_ & 1) {                                                                              \
            size_t v = --r_;                                                                       \
            BODY;                                                                                  \
        }                                                                                          \
    }

static int modix_closed(struct jst_modix *x, const struct jst_modmap *mods, size_t n)
{
    x->closed_at = malloc((n ? n : 1) * sizeof *x->closed_at);
    size_t *ord = malloc((n ? n : 1) * sizeof *ord);
    if (!x->closed_at || !ord) {
        free(ord);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        ord[i] = i;
    g_sort_mods = mods;
    qsort(ord, n, sizeof *ord, cmp_key);
    /* Each group of one path and bias from its end: the dlcloses after an
     * entry are those seen so far. */
    uint64_t first = UINT64_MAX;
    for (size_t r = n; r-- > 0;) {
        const struct jst_modmap *m = &mods[ord[r]];
        if (r + 1 < n) {
            const struct jst_modmap *after = &mods[ord[r + 1]];
            if (m->bias != after->bias ||
                strcmp(m->path ? m->path : "", after->path ? after->path : ""))
                first = UINT64_MAX;
        }
        if (m->event == JST_MOD_DLCLOSE) {
            if (m->seq_after < first)
                first = m->seq_after;
        } else {
            x->closed_at[ord[r]] = first;
        }
    }
    free(ord);
    return 0;
}

/* The max tree over closed_at along ent[], when seq_after never falls along
 * the map (as the reader records it: the calls seen so far). Then in each
 * node's list, by falling position, seq_after falls too: the entries mapped
 * by call k are a suffix, found by bisection, and the first of them still
 * open at k is found in the tree, both in logarithmic time. */
static int at_tree(struct jst_modix *x, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (x->mods[i].seq_after < x->mods[i - 1].seq_after)
            return 0; /* no tree: jst_modix_at scans */
    size_t m = x->off[2 * x->size];
    x->msize = 1;
    while (x->msize < (m ? m : 1))
        x->msize <<= 1;
    x->mx = calloc(2 * x->msize, sizeof *x->mx);
    if (!x->mx)
        return -1;
    for (size_t e = 0; e < m; e++)
        x->mx[x->msize + e] = x->closed_at[x->ent[e]];
    for (size_t v = x->msize; v-- > 1;)
        x->mx[v] = x->mx[2 * v] > x->mx[2 * v + 1] ? x->mx[2 * v] : x->mx[2 * v + 1];
    return 0;
}

/* The first e in [s, e_end) whose closed_at is above k, under tree node v
 * (which spans [nl, nr)); -1 when none. */
static long first_open(const struct jst_modix *x, size_t v, size_t nl, size_t nr, size_t s,
                       size_t e_end, uint64_t k)
{
    modix_steps++;
    if (nr <= s || e_end <= nl || x->mx[v] <= k)
        return -1;
    if (nr - nl == 1)
        return (long)nl;
    size_t mid = nl + (nr - nl) / 2;
    long r = first_open(x, 2 * v, nl, mid, s, e_end, k);
    return r >= 0 ? r : first_open(x, 2 * v + 1, mid, nr, s, e_end, k);
}

struct jst_modix *jst_modix_build(const struct jst_modmap *mods, size_t n)
{
    struct jst_modix *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->mods = mods;
    x->pts = malloc((2 * n + 1) * sizeof *x->pts);
    if (!x->pts || modix_closed(x, mods, n) != 0) {
        jst_modix_free(x);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (indexed(&mods[i])) {
            x->pts[x->n_pts++] = mods[i].start;
            x->pts[x->n_pts++] = mods[i].end;
        }
    qsort(x->pts, x->n_pts, sizeof *x->pts, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < x->n_pts; i++)
        if (!u || x->pts[i] != x->pts[u - 1])
            x->pts[u++] = x->pts[i];
    x->n_pts = u;
    /* Leaf s is [pts[s], pts[s + 1]). */
    x->size = 1;
    while (x->size < (u ? u : 1))
        x->size <<= 1;
    x->off = calloc(2 * x->size + 1, sizeof *x->off);
    if (!x->off) {
        jst_modix_free(x);
        return NULL;
    }
    /* Two passes: count each node's entries, then fill them, the latest
     * first. */
    for (size_t i = 0; i < n; i++)
        if (indexed(&mods[i])) {
            size_t lo = pt_index(x, mods[i].start), hi = pt_index(x, mods[i].end);
            MODIX_COVER(x, lo, hi, v, x->off[v + 1]++);
        }
    for (size_t v = 0; v < 2 * x->size; v++)
        x->off[v + 1] += x->off[v];
    x->ent = malloc((x->off[2 * x->size] ? x->off[2 * x->size] : 1) * sizeof *x->ent);
    size_t *fill = malloc(2 * x->size * sizeof *fill);
    if (!x->ent || !fill) {
        free(fill);
        jst_modix_free(x);
        return NULL;
    }
    memcpy(fill, x->off, 2 * x->size * sizeof *fill);
    for (size_t i = n; i-- > 0;)
        if (indexed(&mods[i])) {
            size_t lo = pt_index(x, mods[i].start), hi = pt_index(x, mods[i].end);
            MODIX_COVER(x, lo, hi, v, x->ent[fill[v]++] = (long)i);
        }
    free(fill);
    if (at_tree(x, n) != 0) {
        jst_modix_free(x);
        return NULL;
    }
    return x;
}

void jst_modix_free(struct jst_modix *x)
{
    if (!x)
        return;
    free(x->pts);
    free(x->off);
    free(x->ent);
    free(x->closed_at);
    free(x->mx);
    free(x);
}

/* The leaf holding ip, or 0 when no range does. */
static size_t leaf_of(const struct jst_modix *x, uint64_t ip)
{
    if (!x || x->n_pts < 2 || ip < x->pts[0] || ip >= x->pts[x->n_pts - 1])
        return 0;
    size_t lo = 0, hi = x->n_pts; /* the last end <= ip */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->pts[mid] <= ip)
            lo = mid;
        else
            hi = mid;
    }
    return lo + x->size;
}

long jst_modix_latest(const struct jst_modix *x, uint64_t ip)
{
    long best = -1;
    for (size_t v = leaf_of(x, ip); v >= 1; v >>= 1) {
        modix_steps++;
        if (x->off[v] < x->off[v + 1] && x->ent[x->off[v]] > best)
            best = x->ent[x->off[v]];
    }
    return best;
}

long jst_modix_at(const struct jst_modix *x, uint64_t ip, long k)
{
    size_t leaf = leaf_of(x, ip);
    long any = -1, best = -1;
    for (size_t v = leaf; x && x->mx && v >= 1; v >>= 1) {
        size_t lo = x->off[v], hi = x->off[v + 1];
        if (lo == hi)
            continue;
        if (x->ent[lo] > any)
            any = x->ent[lo];
        if (k < 0)
            continue;
        while (lo < hi) { /* the first entry mapped by call k */
            size_t mid = lo + (hi - lo) / 2;
            modix_steps++;
            if (x->mods[x->ent[mid]].seq_after <= (uint64_t)k)
                hi = mid;
            else
                lo = mid + 1;
        }
        long e = first_open(x, 1, 0, x->msize, lo, x->off[v + 1], (uint64_t)k);
        if (e >= 0 && x->ent[e] > best)
            best = x->ent[e];
    }
    if (x && x->mx)
        return best >= 0 ? best : any;
    for (size_t v = leaf; v >= 1; v >>= 1) {
        for (size_t e = x->off[v]; e < x->off[v + 1]; e++) {
            long i = x->ent[e];
            modix_steps++;
            if (e == x->off[v] && i > any)
                any = i;
            if (k < 0 || i <= best)
                break; /* the rest of this node are older still */
            const struct jst_modmap *m = &x->mods[i];
            if (m->seq_after <= (uint64_t)k && x->closed_at[i] > (uint64_t)k) {
                best = i;
                break;
            }
        }
    }
    return best >= 0 ? best : any;
}
