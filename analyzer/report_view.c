/*
 * Builds the view `jitstall report` prints (report_view.h): modules and
 * compiles ranked by time lost, their symbolized call sites and fixes, cache
 * directories, what each trace is missing, and totals. The words the writers
 * share are in report_words.c.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "hashidx.h"
#include "image.h"
#include "model_index.h"
#include "report_view.h"
#include "symbolize.h"
#include "trace.h"

#define MAX_FRAMES 256 /* native frames and the Python frames merged in */

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The call site of stack stack_id (taken at call count seq) as text; the
 * symbolized frames in frames[*n_frames]. NULL only when memory ran out. */
static char *call_site_of(struct jst_symbolizer **sym, const struct jst_process *p,
                          uint64_t stack_id, uint64_t seq, struct jst_frame *frames,
                          size_t *n_frames)
{
    char buf[1024];
    *n_frames = 0;
    if (!jst_model_stack(p, stack_id)) {
        snprintf(buf, sizeof(buf), "stack %" PRIu64 " is not in the trace", stack_id);
        return strdup(buf);
    }
    if (!*sym)
        *sym = jst_symbolizer_new(p);
    if (!*sym)
        return strdup("cannot symbolize (symbolizer unavailable)");
    size_t n = jst_symbolize_stack(*sym, stack_id, seq, frames, MAX_FRAMES);
    *n_frames = n;
    if (n == 0)
        return strdup("empty stack");
    int i = jst_call_site(frames, n);
    if (i < 0) {
        jst_frame_str(&frames[0], buf, sizeof(buf) - 48);
        strcat(buf, " (every frame is inside CUDA or jitstall)");
    } else {
        jst_frame_str(&frames[i], buf, sizeof(buf));
    }
    return strdup(buf);
}

/* Call sites already worked out in one process, by stack and by the module
 * map in effect (the number of map entries recorded before the call): loads
 * from one place share a stack, and symbolizing it again for each of
 * thousands of loads is most of a report's time. */
struct site_ent {
    uint64_t stack_id;
    size_t n_mods;
    char *site;                   /* interned */
    const struct rv_chain *chain; /* the chain built from it (a module's or a compile's) */
};

struct site_memo {
    struct jst_hidx ix;
    struct site_ent *v;
    size_t n, cap;
};

/* The report's copy of s: each distinct text (fix, call site, demangled
 * kernel) is kept once however many modules show it. NULL: out of memory. */
static char *rv_intern(struct rv_report *r, const char *s)
{
    if (!r->strs && !(r->strs = calloc(1, sizeof(*r->strs))))
        return NULL;
    return (char *)jst_strtab_intern(r->strs, s, strlen(s));
}

static size_t mods_before(const struct jst_process *p, uint64_t seq)
{
    long k = jst_model_call_index(p, seq);
    size_t lo = 0, hi = p->n_mods; /* seq_after never decreases along the map */
    while (k >= 0 && lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->mods[mid].seq_after <= (uint64_t)k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return k >= 0 ? lo : SIZE_MAX;
}

/* The call site of a stack (taken at call count seq) and its chain of
 * callers into *site and *chain: from the memo when an earlier culprit had
 * the same stack (its chain is copied), else symbolized. -1 only when memory
 * ran out. */
static int call_site(struct rv_report *r, struct jst_symbolizer **sym, struct site_memo *memo,
                     const struct jst_process *p, uint64_t stack_id, uint64_t seq, char **site,
                     struct rv_chain *chain, struct jst_frame *frames, size_t depth)
{
    *site = NULL;
    if (!stack_id)
        return 0;
    size_t nm = mods_before(p, seq);
    uint64_t h = jst_hash_u64(jst_hash_u64(JST_HASH_SEED, stack_id), nm);
    size_t cur = 0, p1;
    while ((p1 = jst_hidx_next(&memo->ix, h, &cur)) != 0) {
        const struct site_ent *e = &memo->v[p1 - 1];
        if (e->stack_id == stack_id && e->n_mods == nm) {
            *site = e->site;
            return rv_stack_copy(chain, e->chain);
        }
    }
    size_t n_frames = 0;
    char *made = call_site_of(sym, p, stack_id, seq, frames, &n_frames);
    if (rv_stack_build(chain, frames, n_frames, n_frames ? jst_call_site(frames, n_frames) : -1,
                       depth) < 0) {
        free(made);
        return -1;
    }
    char *text = made ? rv_intern(r, made) : NULL;
    free(made);
    if (!text)
        return -1;
    *site = text;
    if (memo->n == memo->cap) {
        size_t cap = memo->cap ? memo->cap * 2 : 16;
        struct site_ent *nv = realloc(memo->v, cap * sizeof *nv);
        if (!nv)
            return 0; /* no memo, still the right answer */
        memo->v = nv;
        memo->cap = cap;
    }
    if (jst_hidx_add(&memo->ix, h, memo->n) == 0)
        memo->v[memo->n++] = (struct site_ent){stack_id, nm, text, chain};
    return 0;
}

static void site_memo_free(struct site_memo *m)
{
    free(m->v);
    jst_hidx_free(&m->ix);
    memset(m, 0, sizeof *m);
}

static void add_missing(struct rv_proc *rp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add_missing(struct rv_proc *rp, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s)
        return;
    char **nv = realloc(rp->missing, (rp->n_missing + 1) * sizeof(char *));
    if (!nv) {
        free(s);
        return;
    }
    rp->missing = nv;
    rp->missing[rp->n_missing++] = s;
}

/* One line per thing the trace lacks, so a partial report says what it
 * cannot show. */
static void find_missing(struct rv_proc *rp)
{
    const struct jst_process *p = rp->p;
    if (p->damage)
        add_missing(rp, "the trace is damaged (%s); the events in the damaged part are missing",
                    p->damage);
    else if (p->truncated && jst_trace_stop_words(p))
        add_missing(rp,
                    "the trace is truncated: jitstall stopped writing it because %s; the "
                    "process went on, and its later events are missing",
                    jst_trace_stop_words(p));
    else if (p->truncated && !p->ended_by)
        add_missing(rp, "the trace is truncated: it has no END record (the process was killed, "
                        "crashed or is still running); events not yet written are missing");
    if (p->n_oom)
        add_missing(rp,
                    "jitstall ran out of memory reading the trace: %" PRIu64 " records or fields "
                    "were dropped, so the figures below are incomplete",
                    p->n_oom);
    if (!p->pid && !p->exe)
        add_missing(rp, "no process record: pid, program and start time are unknown");
    else if (!p->proc_start_ns)
        add_missing(rp, "process start time not recorded: time to first kernel counts from "
                        "when tracing started");
    if (p->ttfk_in_flight)
        add_missing(rp, "no kernel launch recorded yet: a call was still in flight when the "
                        "trace ends, so time to first kernel is at least the time shown");
    else if (!p->first_launch_ns)
        add_missing(rp, "no kernel launch recorded: there is no time to first kernel");
    if (!p->n_devices && (p->n_calls || p->n_folded))
        add_missing(rp, "no device record: the GPU architecture is unknown");
    if (!p->cache_start.present)
        add_missing(rp, "JIT cache state at start not recorded");
    if (!p->cache_end.present)
        add_missing(rp, "JIT cache state at exit not recorded");
}

static int cmp_mod(const void *a, const void *b)
{
    const struct rv_module *x = a, *y = b;
    if (x->culprit != y->culprit)
        return x->culprit ? -1 : 1;
    if (x->lost_ns != y->lost_ns)
        return x->lost_ns > y->lost_ns ? -1 : 1;
    if (x->saves_ns != y->saves_ns)
        return x->saves_ns > y->saves_ns ? -1 : 1;
    if (x->c->dur_ns != y->c->dur_ns)
        return x->c->dur_ns > y->c->dur_ns ? -1 : 1;
    if (x->p != y->p)
        return x->p < y->p ? -1 : 1; /* procs are one array, in run order */
    return x->c->seq < y->c->seq ? -1 : x->c->seq > y->c->seq;
}

static const struct jst_cache_state *cache_state(const struct jst_process *p)
{
    if (p->cache_start.present && p->cache_start.path)
        return &p->cache_start;
    if (p->cache_end.present && p->cache_end.path)
        return &p->cache_end;
    return NULL;
}

static int str_eq(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* Loads group only when they are the same image (same content hash and
 * size), loaded the same way from the same place with the same outcome and
 * fix. The cache outcome is not part of it: the runs of one image that hit
 * and those that missed are one culprit, whose cache line counts each
 * outcome, so that the culprit's total is the image's total, as the fleet
 * view counts it. */
static int same_group(const struct rv_module *a, const struct rv_module *b)
{
    const struct jst_call_ev *x = a->c, *y = b->c;
    return x->image_hash == y->image_hash && x->image_size == y->image_size &&
           str_eq(jst_load_origin(x), jst_load_origin(y)) && str_eq(x->name, y->name) &&
           x->call == y->call && x->verdict == y->verdict && str_eq(x->reason, y->reason) &&
           str_eq(x->jit_from, y->jit_from) && x->result == y->result &&
           x->n_kernels == y->n_kernels && x->in_flight == y->in_flight &&
           str_eq(a->call_site, b->call_site) && str_eq(a->fix, b->fix);
}

static int cmp_group(const void *a, const void *b)
{
    const struct rv_group *x = a, *y = b;
    if (x->lost_ns != y->lost_ns)
        return x->lost_ns > y->lost_ns ? -1 : 1;
    if (!x->m != !y->m)
        return x->m ? -1 : 1; /* modules before compiles */
    if (x->m)
        return x->m < y->m ? -1 : x->m > y->m; /* mods are ranked: keep their order */
    return x->k < y->k ? -1 : x->k > y->k;     /* so are comps */
}

/* Culprit compiles: the longest first, then in run and start order. */
static int cmp_comp(const void *a, const void *b)
{
    const struct rv_compile *x = a, *y = b;
    if (x->k->dur_ns != y->k->dur_ns)
        return x->k->dur_ns > y->k->dur_ns ? -1 : 1;
    if (x->p != y->p)
        return x->p < y->p ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k; /* compiles are in start order */
}

/* Compiles in one group: the same compiler, framework, target and outcome,
 * called from the same place, with the same fix. */
static int same_kgroup(const struct rv_compile *a, const struct rv_compile *b)
{
    const struct jst_compile *x = a->k, *y = b->k;
    return x->compiler == y->compiler && x->framework == y->framework &&
           str_eq(x->target, y->target) && x->in_flight == y->in_flight &&
           x->has_exit == y->has_exit && (!x->has_exit || x->exit_status == y->exit_status) &&
           str_eq(a->call_site, b->call_site) && str_eq(a->fix, b->fix);
}

static uint64_t kgroup_hash(const struct rv_compile *a)
{
    const struct jst_compile *x = a->k;
    uint64_t h = jst_hash_u64(jst_hash_u64(JST_HASH_SEED, x->compiler), x->framework);
    h = jst_hash_str(jst_hash_str(jst_hash_str(h, x->target), a->call_site), a->fix);
    return jst_hash_u64(jst_hash_u64(h, (uint64_t)x->in_flight),
                        x->has_exit ? (uint64_t)x->exit_status : UINT64_MAX);
}

/* Hash of what same_group compares. */
static uint64_t group_hash(const struct rv_module *a)
{
    const struct jst_call_ev *x = a->c;
    uint64_t h = jst_hash_str(JST_HASH_SEED, jst_load_origin(x));
    h = jst_hash_str(jst_hash_str(h, x->name), x->reason);
    h = jst_hash_str(jst_hash_str(h, x->jit_from), a->call_site);
    h = jst_hash_str(h, a->fix);
    h = jst_hash_u64(jst_hash_u64(jst_hash_u64(h, x->call), x->verdict), x->image_hash);
    h = jst_hash_u64(jst_hash_u64(h, x->image_size), (uint64_t)x->result);
    return jst_hash_u64(h, x->n_kernels);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* For rv_group_pids: each group's processes in run order, once each, as
 * slices of r->group_procs (pairs group << 32 | process index, sorted). */
static int build_group_procs(struct rv_report *r)
{
    size_t n = 0;
    r->group_procs = calloc(r->n_mods + r->n_comps + 1, sizeof(*r->group_procs));
    if (!r->group_procs)
        return -1;
    for (size_t i = 0; i < r->n_mods; i++)
        if (r->mods[i].culprit)
            r->group_procs[n++] = (r->mods[i].group << 32) | (size_t)(r->mods[i].p - r->run->procs);
    for (size_t i = 0; i < r->n_comps; i++)
        r->group_procs[n++] = (r->comps[i].group << 32) | (size_t)(r->comps[i].p - r->run->procs);
    qsort(r->group_procs, n, sizeof(*r->group_procs), cmp_size);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (w && r->group_procs[w - 1] == r->group_procs[i])
            continue;
        size_t g = r->group_procs[i] >> 32;
        if (!w || (r->group_procs[w - 1] >> 32) != g)
            r->groups[g].procs_at = w;
        r->groups[g].n_procs++;
        r->group_procs[w++] = r->group_procs[i];
    }
    return 0;
}

static const size_t *g_kgof; /* qsort has no context argument */
static const struct rv_report *g_rep;
static int cmp_kmember(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, k = *(const size_t *)b;
    const struct rv_compile *x = &g_rep->comps[i], *y = &g_rep->comps[k];
    if (g_kgof[i] != g_kgof[k])
        return g_kgof[i] < g_kgof[k] ? -1 : 1;
    if (x->p != y->p)
        return x->p < y->p ? -1 : 1;
    if (x->k->start_ns != y->k->start_ns)
        return x->k->start_ns < y->k->start_ns ? -1 : 1;
    return i < k ? -1 : i > k;
}

/* Each compile culprit's lost_ns (rv_compile): by group, process and start,
 * the part of its interval that no earlier member reached. 0, or -1 (memory). */
static int comp_lost(struct rv_report *r, const size_t *kgof)
{
    size_t *o = malloc((r->n_comps + 1) * sizeof *o);
    if (!o)
        return -1;
    for (size_t i = 0; i < r->n_comps; i++)
        o[i] = i;
    g_kgof = kgof;
    g_rep = r;
    qsort(o, r->n_comps, sizeof *o, cmp_kmember);
    uint64_t reach = 0;
    for (size_t n = 0; n < r->n_comps; n++) {
        struct rv_compile *x = &r->comps[o[n]];
        const struct rv_compile *prev = n ? &r->comps[o[n - 1]] : NULL;
        uint64_t s = x->k->start_ns,
                 e = s > UINT64_MAX - x->k->dur_ns ? UINT64_MAX : s + x->k->dur_ns;
        if (!prev || kgof[o[n - 1]] != kgof[o[n]] || prev->p != x->p)
            reach = 0;
        x->lost_ns = e > reach ? e - (s > reach ? s : reach) : 0;
        if (e > reach)
            reach = e;
    }
    free(o);
    return 0;
}

/* Groups the culprits (mods and comps are already ranked): modules by
 * same_group, compiles by same_kgroup, then ranks all groups together. */
static int build_groups(struct rv_report *r)
{
    struct jst_hidx ix = {0}, kix = {0};
    size_t *gof = calloc(r->n_mods + 1, sizeof(*gof));
    size_t *kgof = calloc(r->n_comps + 1, sizeof(*kgof));
    size_t *rank = NULL;
    r->groups = calloc(r->n_mods + r->n_comps + 1, sizeof(*r->groups));
    if (!r->groups || !gof || !kgof)
        goto oom;
    for (size_t i = 0; i < r->n_mods; i++) {
        struct rv_module *m = &r->mods[i];
        if (!m->culprit)
            continue;
        uint64_t h = group_hash(m);
        size_t g = r->n_groups, cur = 0, p1;
        while ((p1 = jst_hidx_next(&ix, h, &cur)) != 0)
            if (same_group(r->groups[p1 - 1].m, m)) {
                g = p1 - 1;
                break;
            }
        if (g == r->n_groups) {
            if (jst_hidx_add(&ix, h, g) < 0)
                goto oom;
            r->groups[r->n_groups++] = (struct rv_group){.m = m};
        }
        gof[i] = g;
        r->groups[g].n++;
        r->groups[g].lost_ns = sat_add(r->groups[g].lost_ns, m->lost_ns);
        unsigned co = m->c->cache < RV_CACHE_OUTCOMES ? m->c->cache : JST_C_UNKNOWN;
        r->groups[g].cache_n[co]++;
        r->groups[g].cache_ns[co] = sat_add(r->groups[g].cache_ns[co], m->lost_ns);
    }
    for (size_t i = 0; i < r->n_comps; i++) {
        struct rv_compile *x = &r->comps[i];
        uint64_t h = kgroup_hash(x);
        size_t g = r->n_groups, cur = 0, p1;
        while ((p1 = jst_hidx_next(&kix, h, &cur)) != 0)
            if (same_kgroup(r->groups[p1 - 1].k, x)) {
                g = p1 - 1;
                break;
            }
        if (g == r->n_groups) {
            if (jst_hidx_add(&kix, h, g) < 0)
                goto oom;
            r->groups[r->n_groups++] = (struct rv_group){.k = x};
        }
        kgof[i] = g;
        r->groups[g].n++;
    }
    if (comp_lost(r, kgof) < 0)
        goto oom;
    for (size_t i = 0; i < r->n_comps; i++)
        r->groups[kgof[i]].lost_ns = sat_add(r->groups[kgof[i]].lost_ns, r->comps[i].lost_ns);
    jst_hidx_free(&ix);
    jst_hidx_free(&kix);
    if (r->n_groups)
        qsort(r->groups, r->n_groups, sizeof(*r->groups), cmp_group);
    /* where each group went: its leader knows its old group number */
    rank = calloc(r->n_groups + 1, sizeof(*rank));
    if (!rank)
        goto oom;
    for (size_t g = 0; g < r->n_groups; g++)
        rank[r->groups[g].m ? gof[r->groups[g].m - r->mods] : kgof[r->groups[g].k - r->comps]] = g;
    for (size_t i = 0; i < r->n_mods; i++)
        if (r->mods[i].culprit)
            r->mods[i].group = rank[gof[i]];
    for (size_t i = 0; i < r->n_comps; i++)
        r->comps[i].group = rank[kgof[i]];
    free(rank);
    free(gof);
    free(kgof);
    return build_group_procs(r);
oom:
    jst_hidx_free(&ix);
    jst_hidx_free(&kix);
    free(gof);
    free(kgof);
    return -1;
}

const char *rv_group_pids(const struct rv_report *r, size_t g, char *buf, size_t n)
{
    size_t shown = 0, more = 0;
    uint64_t last = UINT64_MAX;
    const struct rv_group *gr = &r->groups[g];
    buf[0] = '\0';
    for (size_t i = 0; i < gr->n_procs; i++) {
        const struct jst_process *p =
            &r->run->procs[r->group_procs[gr->procs_at + i] & 0xffffffffu];
        if (p->pid == last)
            continue;
        last = p->pid;
        if (shown < 6)
            rv_cat(buf, n, "%s%" PRIu64, shown ? ", " : "", p->pid);
        else
            more++;
        shown++;
    }
    if (more)
        rv_cat(buf, n, " and %zu more", more);
    if (shown > 1) {
        char tmp[512];
        snprintf(tmp, sizeof(tmp), "pids %s", buf);
        snprintf(buf, n, "%s", tmp);
    } else {
        char tmp[512];
        snprintf(tmp, sizeof(tmp), "pid %s", buf);
        snprintf(buf, n, "%s", tmp);
    }
    return buf;
}

static uint64_t wall_end(const struct jst_process *p)
{
    return p->realtime_ns + (p->end_ns > p->mono_ns ? p->end_ns - p->mono_ns : 0);
}

/* Processes share a cache entry when they used the same directory with the
 * same settings; its start state is the earliest process's, its end state the
 * latest's (by wall-clock time, comparable across hosts). */
static int build_caches(struct rv_report *r)
{
    struct jst_hidx ix = {0}; /* cache key -> index in caches */
    size_t cap = 0;
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        const struct jst_cache_state *s = cache_state(p);
        if (!s)
            continue;
        uint64_t h = jst_hash_u64(jst_hash_u64(jst_hash_str(JST_HASH_SEED, s->path), s->disabled),
                                  s->max_bytes);
        size_t j = r->n_caches, cur = 0, p1;
        while ((p1 = jst_hidx_next(&ix, h, &cur)) != 0) {
            const struct jst_cache_state *o = cache_state(r->caches[p1 - 1].first);
            if (!strcmp(o->path, s->path) && o->disabled == s->disabled &&
                o->max_bytes == s->max_bytes) {
                j = p1 - 1;
                break;
            }
        }
        if (j == r->n_caches) {
            struct rv_cache *nv = r->n_caches < cap
                                      ? r->caches
                                      : realloc(r->caches, (cap ? cap * 2 : 4) * sizeof(*nv));
            if (!nv || jst_hidx_add(&ix, h, j) < 0) {
                jst_hidx_free(&ix);
                if (nv)
                    r->caches = nv;
                return -1;
            }
            if (r->n_caches == cap)
                cap = cap ? cap * 2 : 4;
            r->caches = nv;
            r->caches[j] = (struct rv_cache){s->path, p, p, 0};
            r->n_caches++;
        }
        struct rv_cache *c = &r->caches[j];
        if (p->realtime_ns < c->first->realtime_ns)
            c->first = p;
        if (wall_end(p) >= wall_end(c->last))
            c->last = p;
        c->path = cache_state(c->first)->path;
        c->n_procs++;
    }
    jst_hidx_free(&ix);
    return 0;
}

/* Each process's modules and culprit compiles in rank order (a counting sort
 * by process), so a writer that lists them per process does not scan every
 * one per process. */
static int build_proc_mods(struct rv_report *r)
{
    r->proc_mods = calloc(r->n_mods ? r->n_mods : 1, sizeof(*r->proc_mods));
    if (!r->proc_mods)
        return -1;
    for (size_t i = 0; i < r->n_mods; i++)
        r->procs[r->mods[i].p - r->run->procs].n_mods++;
    size_t at = 0;
    for (size_t i = 0; i < r->n_procs; i++) {
        r->procs[i].mods_at = at;
        at += r->procs[i].n_mods;
        r->procs[i].n_mods = 0;
    }
    for (size_t i = 0; i < r->n_mods; i++) {
        struct rv_proc *rp = &r->procs[r->mods[i].p - r->run->procs];
        r->proc_mods[rp->mods_at + rp->n_mods++] = i;
    }
    /* the same for the culprit compiles */
    r->proc_comps = calloc(r->n_comps + 1, sizeof(*r->proc_comps));
    if (!r->proc_comps)
        return -1;
    for (size_t i = 0; i < r->n_comps; i++)
        r->procs[r->comps[i].p - r->run->procs].n_comps++;
    at = 0;
    for (size_t i = 0; i < r->n_procs; i++) {
        r->procs[i].comps_at = at;
        at += r->procs[i].n_comps;
        r->procs[i].n_comps = 0;
    }
    for (size_t i = 0; i < r->n_comps; i++) {
        struct rv_proc *rp = &r->procs[r->comps[i].p - r->run->procs];
        r->proc_comps[rp->comps_at + rp->n_comps++] = i;
    }
    return 0;
}

static int demangle_kernels(struct rv_report *r, struct rv_module *m)
{
    const struct jst_call_ev *c = m->c;
    if (!c->n_kernels)
        return 0;
    m->kernels = calloc(c->n_kernels, sizeof(char *));
    if (!m->kernels)
        return -1;
    for (size_t q = 0; q < c->n_kernels; q++) {
        char d[1024];
        jst_demangle(c->kernels[q], d, sizeof(d));
        if (!(m->kernels[q] = rv_intern(r, d[0] ? d : c->kernels[q])))
            return -1;
    }
    return 0;
}

/* One process's modules into r: 0, or -1 when out of memory. */
static int build_proc(struct rv_report *r, const struct jst_process *p, struct rv_proc *rp,
                      struct jst_frame *frames, size_t depth)
{
    struct jst_symbolizer *sym = NULL;
    struct site_memo memo = {0};
    int rc = 0;
    rp->p = p;
    rp->projected_ttfk_ns = jst_fixes_projected_ttfk(p);
    find_missing(rp);
    if (jst_model_is_partial(p))
        r->partial = 1;
    for (size_t k = 0; k < p->n_calls; k++) {
        const struct jst_call_ev *c = &p->calls[k];
        if (!jst_model_is_module(p, c))
            continue;
        struct rv_module *m = &r->mods[r->n_mods++];
        char fix[512];
        m->p = p;
        m->c = c;
        m->culprit = jst_model_is_culprit(p, c);
        m->lost_ns =
            jst_is_jit_event(p, c) || jst_is_rtc_call(c->call) || c->in_flight ? c->dur_ns : 0;
        m->saves_ns = jst_fix_load_saves(p, c);
        rp->n_jit_loads += jst_is_jit_event(p, c);
        jst_fix_for_load(p, c, NULL, fix, sizeof(fix));
        if ((fix[0] && !(m->fix = rv_intern(r, fix))) ||
            call_site(r, &sym, &memo, p, c->stack_id, c->seq, &m->call_site, &m->chain, frames,
                      depth) < 0 ||
            demangle_kernels(r, m) < 0) {
            rc = -1;
            break;
        }
    }
    uint64_t *saves = rc == 0 && p->n_compiles ? malloc(p->n_compiles * sizeof *saves) : NULL;
    if (p->n_compiles && !saves)
        rc = -1;
    else if (saves)
        jst_fix_compile_saves(p, saves);
    for (size_t k = 0; k < p->n_compiles && rc == 0; k++) {
        const struct jst_compile *kc = &p->compiles[k];
        if (!jst_compile_is_culprit(kc))
            continue;
        struct rv_compile *x = &r->comps[r->n_comps++];
        char fix[1024];
        x->p = p;
        x->k = kc;
        x->saves_ns = saves[k];
        if ((jst_fix_for_compile(p, kc, fix, sizeof fix) && !(x->fix = rv_intern(r, fix))) ||
            call_site(r, &sym, &memo, p, kc->stack_id, kc->seq, &x->call_site, &x->chain, frames,
                      depth) < 0)
            rc = -1;
    }
    free(saves);
    if (sym)
        jst_symbolizer_free(sym);
    site_memo_free(&memo);
    return rc;
}

int rv_build(struct rv_report *r, const struct jst_run *run, char **errors, size_t n_errors)
{
    return rv_build_depth(r, run, errors, n_errors, RV_STACK_DEPTH_DEFAULT);
}

int rv_build_depth(struct rv_report *r, const struct jst_run *run, char **errors, size_t n_errors,
                   size_t depth)
{
    memset(r, 0, sizeof(*r));
    r->run = run;
    r->procs = calloc(run->n_procs ? run->n_procs : 1, sizeof(*r->procs));
    r->errors = calloc(n_errors ? n_errors : 1, sizeof(*r->errors));
    struct jst_frame *frames = calloc(MAX_FRAMES, sizeof(*frames));
    if (!r->procs || !r->errors || !frames)
        goto oom;
    for (size_t i = 0; i < n_errors; i++)
        if (!(r->errors[r->n_errors++].msg = strdup(errors[i])))
            goto oom;
    if (jst_fixes_compute(run, &r->fixes) < 0 || jst_races_find(run, &r->races) < 0 ||
        jst_races_add_fixes(&r->races, &r->fixes) < 0)
        goto oom;

    size_t n_mods = 0;
    for (size_t i = 0; i < run->n_procs; i++)
        for (size_t k = 0; k < run->procs[i].n_calls; k++)
            n_mods += jst_model_is_module(&run->procs[i], &run->procs[i].calls[k]);
    r->mods = calloc(n_mods ? n_mods : 1, sizeof(*r->mods));
    size_t n_comps = 0;
    for (size_t i = 0; i < run->n_procs; i++)
        for (size_t k = 0; k < run->procs[i].n_compiles; k++)
            n_comps += jst_compile_is_culprit(&run->procs[i].compiles[k]);
    r->comps = calloc(n_comps + 1, sizeof(*r->comps));
    if (!r->mods || !r->comps)
        goto oom;

    for (size_t i = 0; i < run->n_procs; i++) {
        const struct jst_process *p = &run->procs[i];
        struct rv_proc *rp = &r->procs[r->n_procs++];
        if (build_proc(r, p, rp, frames, depth) < 0)
            goto oom;
        if (p->ttfk_ns > r->ttfk_max_ns)
            r->ttfk_max_ns = p->ttfk_ns;
        if (rp->projected_ttfk_ns > r->projected_ttfk_max_ns)
            r->projected_ttfk_max_ns = rp->projected_ttfk_ns;
        r->jit_ns = sat_add(r->jit_ns, p->jit_ns);
        r->jit_compile_ns = sat_add(r->jit_compile_ns, p->jit_compile_ns);
        r->jit_cache_load_ns = sat_add(r->jit_cache_load_ns, p->jit_cache_load_ns);
    }
    if (r->n_mods)
        qsort(r->mods, r->n_mods, sizeof(*r->mods), cmp_mod);
    if (r->n_comps)
        qsort(r->comps, r->n_comps, sizeof(*r->comps), cmp_comp);
    if (build_caches(r) < 0 || build_groups(r) < 0 || build_proc_mods(r) < 0)
        goto oom;
    free(frames);
    return 0;
oom:
    free(frames);
    rv_free(r);
    return -1;
}

void rv_free(struct rv_report *r)
{
    for (size_t i = 0; i < r->n_mods; i++) {
        rv_stack_free(&r->mods[i].chain);
        free(r->mods[i].kernels); /* the strings are interned */
    }
    free(r->mods);
    for (size_t i = 0; i < r->n_comps; i++)
        rv_stack_free(&r->comps[i].chain);
    free(r->comps);
    if (r->strs)
        jst_strtab_free(r->strs);
    free(r->strs);
    for (size_t i = 0; i < r->n_procs; i++) {
        for (size_t q = 0; q < r->procs[i].n_missing; q++)
            free(r->procs[i].missing[q]);
        free(r->procs[i].missing);
    }
    free(r->procs);
    for (size_t i = 0; i < r->n_errors; i++)
        free(r->errors[i].msg);
    free(r->errors);
    free(r->caches);
    free(r->groups);
    free(r->group_procs);
    free(r->proc_mods);
    free(r->proc_comps);
    jst_fixes_free(&r->fixes);
    jst_races_free(&r->races);
    memset(r, 0, sizeof(*r));
}
