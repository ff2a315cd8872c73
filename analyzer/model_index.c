/*
 * Keeps the analyzer linear in the size of a trace and its memory bounded
 * (analyzer/model_index.h). A 262,806-load trace took 544 s to report while
 * every fix estimate rescanned every call; here each per-process figure is
 * computed once, lookups by seq and stack id are binary searches, and calls
 * that no command but export needs one by one are folded into counts.
 */
#include <stdlib.h>
#include <string.h>
#include "fixes.h"
#include "hashidx.h"
#include "model_index.h"
#include "model_read.h"
#include "ixfind.h"

#define CU_JIT_INPUT_NVVM 5

static uint64_t mi_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int mi_is_launch(unsigned call)
{
    return call == JST_CALL_cuLaunchKernel || call == JST_CALL_cuLaunchKernelEx;
}

static int mi_is_link_add(unsigned call)
{
    return call == JST_CALL_cuLinkAddData || call == JST_CALL_cuLinkAddFile;
}

/* Calls the report, check, baseline and diff look at one by one. */
static int mi_kept(unsigned call, unsigned verdict)
{
    return verdict != JST_V_NONE || mi_is_link_add(call) || call == JST_CALL_cuLinkComplete ||
           jst_is_rtc_call(call) || call == JST_CALL_cuInit || call == JST_CALL_cuCtxCreate ||
           call == JST_CALL_cuDevicePrimaryCtxRetain || jst_is_graph_call(call);
}

void jst_model_note_launch(struct jst_process *p, const struct jst_record *rec, unsigned call)
{
    if (!mi_is_launch(call))
        return;
    struct jst_launch *l = jst_model_push(&p->launches, &p->n_launches, sizeof(*l));
    if (!l)
        return;
    /* one pass over the fields; the first of each key counts, as the
     * reader takes it (docs/FORMAT.md) */
    struct jst_field_iter it;
    struct jst_field f;
    unsigned seen = 0;
    jst_fields_begin(&it, rec);
    while (jst_fields_next(&it, &f)) {
        unsigned bit = f.key == JST_F_START_NS ? 1u
                       : f.key == JST_F_DUR_NS ? 2u
                       : f.key == JST_F_TID    ? 4u
                       : f.key == JST_F_SEQ    ? 8u
                       : f.key == JST_F_NAME   ? 16u
                                               : 0u;
        if (!bit || (seen & bit))
            continue;
        /* a field of the wrong kind counts as absent, as for the reader */
        if (bit == 16u) {
            if ((f.kind == JST_K_STR || f.kind == JST_K_BYTES) &&
                (l->name = jst_model_intern(p, &f)) != NULL)
                seen |= bit;
        } else if (f.kind == JST_K_U64 || f.kind == JST_K_I64) {
            *(bit == 1u ? &l->start_ns : bit == 2u ? &l->dur_ns : bit == 4u ? &l->tid : &l->seq) =
                f.u64;
            seen |= bit;
        }
    }
}

int jst_model_fold_call(struct jst_process *p, const struct jst_record *rec, unsigned call)
{
    uint64_t verdict = 0, start = 0, dur = 0;
    jst_rec_get_u64(rec, JST_F_VERDICT, &verdict);
    if (mi_kept(call, (unsigned)verdict))
        return 0;
    jst_rec_get_u64(rec, JST_F_START_NS, &start);
    jst_rec_get_u64(rec, JST_F_DUR_NS, &dur);
    p->n_folded++;
    if (start && (!p->fold_first_start || start < p->fold_first_start))
        p->fold_first_start = start;
    if (mi_add(start, dur) > p->fold_last_end)
        p->fold_last_end = mi_add(start, dur);
    if (mi_is_launch(call) && start &&
        (!p->fold_first_launch || start < p->fold_first_launch))
        p->fold_first_launch = start;
    return 1;
}

char *jst_model_intern(struct jst_process *p, const struct jst_field *f)
{
    if (f->kind != JST_K_STR && f->kind != JST_K_BYTES)
        return NULL;
    if (!p->strs && !(p->strs = calloc(1, sizeof *p->strs))) {
        p->n_oom++;
        return NULL;
    }
    const char *s = jst_strtab_intern(p->strs, f->data, f->len);
    if (!s)
        p->n_oom++;
    return (char *)s; /* shared: never freed or changed one by one */
}

/* A link completes an LTO-IR link when an earlier cuLinkAdd* on the same
 * handle was fed NVVM: one pass with a set of such handles. */
static void mi_link_flags(struct jst_process *p)
{
    struct jst_hidx set = {0};
    for (size_t i = 0; i < p->n_calls; i++) {
        struct jst_call_ev *c = &p->calls[i];
        c->link_nvvm = 0;
        uint64_t h = jst_hash_u64(JST_HASH_SEED, c->handle);
        size_t cur = 0, p1;
        int seen = 0;
        if (mi_is_link_add(c->call) || (c->call == JST_CALL_cuLinkComplete && c->handle))
            while (!seen && (p1 = jst_hidx_next(&set, h, &cur)) != 0)
                seen = p->calls[p1 - 1].handle == c->handle;
        if (c->call == JST_CALL_cuLinkComplete && c->handle)
            c->link_nvvm = seen;
        else if (mi_is_link_add(c->call) && !seen && c->has_jit_input &&
                 c->jit_input == CU_JIT_INPUT_NVVM && jst_hidx_add(&set, h, i) < 0)
            p->n_oom++;
    }
    jst_hidx_free(&set);
}

void jst_model_index_free(struct jst_process *p)
{
    free(p->seq_ix);
    free(p->stack_ix);
    p->seq_ix = NULL;
    p->stack_ix = NULL;
    if (p->origin_ix_free)
        p->origin_ix_free(p);
}

void jst_model_index(struct jst_process *p)
{
    jst_model_index_free(p);
    jst_ix_build(p, &p->seq_ix, &p->stack_ix);
    mi_link_flags(p);
}

long jst_model_call_index(const struct jst_process *p, uint64_t seq)
{
    return jst_ix_call(p, p->seq_ix, seq);
}

const struct jst_call_ev *jst_model_call_by_seq(const struct jst_process *p, uint64_t seq)
{
    long i = jst_model_call_index(p, seq);
    return i < 0 ? NULL : &p->calls[i];
}

const struct jst_stack *jst_model_stack(const struct jst_process *p, uint64_t id)
{
    return id ? jst_ix_stack(p, p->stack_ix, id) : NULL;
}

void jst_model_estimates(struct jst_process *p)
{
    uint64_t sass = 0, n_sass = 0, hit = 0, n_hit = 0, want = 0;
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct jst_call_ev *c = &p->calls[i];
        if (c->result == 0 && c->verdict == JST_V_SASS) {
            sass = mi_add(sass, c->dur_ns);
            n_sass++;
        }
        if (c->result == 0 && c->cache == JST_C_HIT && jst_is_jit_event(p, c)) {
            hit = mi_add(hit, c->dur_ns);
            n_hit++;
        }
        want = mi_add(want, c->cache_new_bytes);
        /* An entry that did not fit: the driver's entries are about 1.5 times
         * the PTX they were compiled from (measured on an H200). */
        if (c->cache == JST_C_MISS_NOT_STORED && c->cache_reason == JST_CR_TOO_SMALL) {
            uint64_t ptx = c->ptx_size ? c->ptx_size : c->image_size;
            want = mi_add(want, mi_add(ptx, ptx / 2));
        }
    }
    p->est_sass_ns = n_sass ? sass / n_sass : 0;
    p->est_hit_ns = n_hit ? hit / n_hit : 0;
    p->cache_want_bytes = want;
}

struct mi_span {
    uint64_t a, b;
};

static int mi_cmp_span(const void *x, const void *y)
{
    const struct mi_span *s = x, *t = y;
    if (s->a != t->a)
        return s->a < t->a ? -1 : 1;
    return s->b < t->b ? -1 : s->b > t->b;
}

int jst_model_jit_union(struct jst_process *p)
{
    uint64_t cut = p->first_launch_ns ? p->first_launch_ns : UINT64_MAX;
    size_t n = 0;
    p->ttfk_jit_work_ns = p->ttfk_jit_ns;
    p->ttfk_jit_overlap = 0;
    for (size_t i = 0; i < p->n_calls; i++)
        n += p->calls[i].start_ns < cut && jst_is_jit_event(p, &p->calls[i]);
    if (!n)
        return 0;
    struct mi_span *v = malloc(n * sizeof *v);
    if (!v) {
        p->n_oom++;
        return -1;
    }
    n = 0;
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct jst_call_ev *c = &p->calls[i];
        if (c->start_ns >= cut || !jst_is_jit_event(p, c))
            continue;
        uint64_t end = mi_add(c->start_ns, c->dur_ns);
        v[n++] = (struct mi_span){c->start_ns, end < cut ? end : cut};
    }
    qsort(v, n, sizeof *v, mi_cmp_span);
    /* Merge runs of overlapping spans; every span in a run of two or more
     * overlaps another. Spans that only touch do not overlap. */
    uint64_t wall = 0;
    for (size_t i = 0; i < n;) {
        uint64_t a = v[i].a, b = v[i].b;
        size_t k = i + 1;
        while (k < n && v[k].a < b) {
            if (v[k].b > b)
                b = v[k].b;
            k++;
        }
        wall = mi_add(wall, b - a);
        if (k - i > 1)
            p->ttfk_jit_overlap += k - i;
        i = k;
    }
    free(v);
    p->ttfk_jit_ns = wall;
    return 0;
}

/* Loads sorted by start, for tying CUPTI records to loads by time: pass 0
 * holds the JIT events, pass 1 every load. maxend[i] is the latest end among
 * the first i + 1, so a search walks back only over spans that can still
 * contain the time asked for. Built and freed inside jst_model_derive. */
static struct mi_spans {
    size_t *pos;
    uint64_t *maxend;
    size_t n;
} mi_span[2];
static const struct jst_call_ev *mi_calls;

static int mi_cmp_start(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return jst_ix_order(mi_calls[x].start_ns, mi_calls[y].start_ns, x, y);
}

void jst_model_span_free(struct jst_process *p)
{
    (void)p;
    for (int k = 0; k < 2; k++) {
        free(mi_span[k].pos);
        free(mi_span[k].maxend);
        memset(&mi_span[k], 0, sizeof mi_span[k]);
    }
}

void jst_model_span_build(struct jst_process *p)
{
    jst_model_span_free(p);
    for (int k = 0; k < 2; k++) {
        struct mi_spans *s = &mi_span[k];
        s->pos = malloc((p->n_calls ? p->n_calls : 1) * sizeof *s->pos);
        s->maxend = malloc((p->n_calls ? p->n_calls : 1) * sizeof *s->maxend);
        if (!s->pos || !s->maxend) {
            p->n_oom++;
            jst_model_span_free(p);
            return;
        }
        for (size_t i = 0; i < p->n_calls; i++) {
            const struct jst_call_ev *c = &p->calls[i];
            if (k == 0 ? jst_is_jit_event(p, c) : c->verdict != JST_V_NONE)
                s->pos[s->n++] = i;
        }
        mi_calls = p->calls;
        qsort(s->pos, s->n, sizeof *s->pos, mi_cmp_start);
        uint64_t m = 0;
        for (size_t i = 0; i < s->n; i++) {
            const struct jst_call_ev *c = &p->calls[s->pos[i]];
            if (mi_add(c->start_ns, c->dur_ns) > m)
                m = mi_add(c->start_ns, c->dur_ns);
            s->maxend[i] = m;
        }
    }
}

long jst_model_span_find(const struct jst_process *p, int pass, uint64_t t)
{
    const struct mi_spans *s = &mi_span[pass ? 1 : 0];
    if (!s->pos) { /* not built (out of memory): scan in call order */
        for (size_t i = 0; i < p->n_calls; i++) {
            const struct jst_call_ev *c = &p->calls[i];
            int cand = pass == 0 ? jst_is_jit_event(p, c) : c->verdict != JST_V_NONE;
            if (cand && t >= c->start_ns && t <= mi_add(c->start_ns, c->dur_ns))
                return (long)i;
        }
        return -1;
    }
    size_t lo = 0, hi = s->n; /* first span starting after t */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->calls[s->pos[mid]].start_ns <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    long best = -1; /* the earliest in call order, as a scan would find */
    for (size_t i = lo; i-- > 0 && s->maxend[i] >= t;) {
        const struct jst_call_ev *c = &p->calls[s->pos[i]];
        if (mi_add(c->start_ns, c->dur_ns) >= t && (best < 0 || s->pos[i] < (size_t)best))
            best = (long)s->pos[i];
    }
    return best;
}
