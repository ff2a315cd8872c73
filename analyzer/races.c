/*
 * Processes racing on one cold cache (races.h). Several ranks started
 * together with an empty JIT cache each compile the same module in full and
 * the cache keeps one entry (docs/DRIVER.md, "Processes sharing one cold
 * cache compile the same image each"). Found by grouping the compiles of a
 * run by image hash and sweeping each group for spans that overlap in time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "races.h"
#include "sfmt.h"

struct race_ev {
    uint64_t hash;
    uint64_t start, end; /* wall-clock ns, comparable across processes */
    size_t proc;         /* index in run->procs */
    const struct jst_call_ev *c;
    int racing; /* part of an overlapping span of several processes */
};

static uint64_t wall(const struct jst_process *p, uint64_t t)
{
    if (!p->realtime_ns || !p->mono_ns)
        return t;
    return t >= p->mono_ns ? p->realtime_ns + (t - p->mono_ns) : p->realtime_ns - (p->mono_ns - t);
}

static int cmp_ev(const void *a, const void *b)
{
    const struct race_ev *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->proc < y->proc ? -1 : x->proc > y->proc;
}

/* A compile: a JIT event that succeeded and did not come from the cache. */
static int is_compile(const struct jst_process *p, const struct jst_call_ev *c)
{
    return c->image_hash && c->result == 0 && c->cache != JST_C_HIT && jst_is_jit_event(p, c);
}

static struct race_ev *collect(const struct jst_run *run, size_t *n)
{
    size_t cap = 0;
    *n = 0;
    for (size_t i = 0; i < run->n_procs; i++)
        for (size_t k = 0; k < run->procs[i].n_calls; k++)
            cap += is_compile(&run->procs[i], &run->procs[i].calls[k]);
    struct race_ev *v = calloc(cap ? cap : 1, sizeof(*v));
    if (!v)
        return NULL;
    for (size_t i = 0; i < run->n_procs; i++) {
        const struct jst_process *p = &run->procs[i];
        for (size_t k = 0; k < p->n_calls; k++) {
            const struct jst_call_ev *c = &p->calls[k];
            if (!is_compile(p, c))
                continue;
            uint64_t s = wall(p, c->start_ns);
            v[(*n)++] = (struct race_ev){c->image_hash, s, s + c->dur_ns, i, c, 0};
        }
    }
    qsort(v, *n, sizeof(*v), cmp_ev);
    return v;
}

/* Adds the compiles v[0..n) (one overlapping span) to race r. */
static void add_span(struct jst_race *r, const struct jst_run *run, struct race_ev *v, size_t n,
                     uint64_t *longest)
{
    for (size_t i = 0; i < n; i++) {
        const struct jst_process *p = &run->procs[v[i].proc];
        v[i].racing = 1;
        r->compiles++;
        r->jit_ns += v[i].c->dur_ns;
        if (v[i].c->dur_ns > *longest)
            *longest = v[i].c->dur_ns;
        if (!r->origin)
            r->origin = jst_load_origin(v[i].c);
        if (!r->cache_path)
            r->cache_path = p->cache_start.present ? p->cache_start.path : p->cache_end.path;
    }
}

/* Do the compiles v[0..n) come from more than one process? */
static int several_procs(const struct race_ev *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (v[i].proc != v[0].proc)
            return 1;
    return 0;
}

/* The distinct processes among the racing compiles of v[0..n), counted into
 * r with their first pids in run order. */
static void race_procs(const struct jst_run *run, const struct race_ev *v, size_t n,
                       struct jst_race *r)
{
    for (size_t proc = 0; proc < run->n_procs; proc++) {
        size_t i = 0;
        while (i < n && (v[i].proc != proc || !v[i].racing))
            i++;
        if (i == n)
            continue;
        if (r->processes < sizeof(r->pids) / sizeof(r->pids[0]))
            r->pids[r->processes] = run->procs[proc].pid;
        r->processes++;
    }
}

static void race_text(struct jst_race *r)
{
    char dur[32];
    double s = (double)r->jit_ns / 1e9;
    if (s >= 1.0) /* as the reports write times (rv_dur) */
        jst_sfmt(dur, sizeof(dur), "%.2f s", s);
    else
        jst_sfmt(dur, sizeof(dur), "%.1f ms", s * 1e3);
    const char *what = r->origin ? r->origin : "an image built in memory";
    if (r->origin)
        jst_sfmt(r->text, sizeof(r->text),
                 "%s: compiled %zu times at once in %zu processes, %s in all: warm the cache "
                 "before starting them (jitstall warm --cache %s %s)",
                 what, r->compiles, r->processes, dur, r->cache_path ? r->cache_path : "DIR",
                 r->origin);
    else
        jst_sfmt(r->text, sizeof(r->text),
                 "%s: compiled %zu times at once in %zu processes, %s in all: warm the cache "
                 "before starting them (run one process first)",
                 what, r->compiles, r->processes, dur);
}

static int cmp_race(const void *a, const void *b)
{
    const struct jst_race *x = a, *y = b;
    if (x->jit_ns != y->jit_ns)
        return x->jit_ns > y->jit_ns ? -1 : 1;
    return x->image_hash < y->image_hash ? -1 : x->image_hash > y->image_hash;
}

int jst_races_find(const struct jst_run *run, struct jst_races *out)
{
    size_t n;
    memset(out, 0, sizeof(*out));
    struct race_ev *v = collect(run, &n);
    if (!v)
        return -1;
    for (size_t g = 0; g < n;) {
        size_t e = g;
        while (e < n && v[e].hash == v[g].hash)
            e++;
        struct jst_race r = {.image_hash = v[g].hash};
        uint64_t longest = 0;
        for (size_t s = g; s < e;) { /* one span of overlapping compiles */
            size_t t = s + 1;
            uint64_t end = v[s].end;
            for (; t < e && v[t].start < end; t++)
                if (v[t].end > end)
                    end = v[t].end;
            if (several_procs(v + s, t - s))
                add_span(&r, run, v + s, t - s, &longest);
            s = t;
        }
        if (r.compiles)
            race_procs(run, v + g, e - g, &r);
        g = e;
        if (!r.compiles)
            continue;
        r.saves_ns = r.jit_ns - longest;
        race_text(&r);
        struct jst_race *nv = realloc(out->v, (out->n + 1) * sizeof(*nv));
        if (!nv) {
            free(v);
            jst_races_free(out);
            return -1;
        }
        out->v = nv;
        out->v[out->n++] = r;
    }
    free(v);
    if (out->n)
        qsort(out->v, out->n, sizeof(*out->v), cmp_race);
    return 0;
}

void jst_races_free(struct jst_races *r)
{
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

int jst_races_add_fixes(const struct jst_races *r, struct jst_fixes *fixes)
{
    if (!r->n)
        return 0;
    struct jst_fix *nv = realloc(fixes->v, (fixes->n + r->n) * sizeof(*nv));
    if (!nv)
        return -1;
    fixes->v = nv;
    for (size_t i = 0; i < r->n; i++) {
        struct jst_fix *f = &fixes->v[fixes->n++];
        memset(f, 0, sizeof(*f));
        f->kind = JST_FIX_RACE;
        jst_sfmt(f->text, sizeof(f->text), "%s", r->v[i].text);
        jst_sfmt(f->target, sizeof(f->target), "%s",
                 r->v[i].cache_path ? r->v[i].cache_path : "JIT cache");
        f->saves_ns = r->v[i].saves_ns;
        f->n_loads = r->v[i].compiles;
    }
    jst_fixes_sort(fixes);
    return 0;
}
