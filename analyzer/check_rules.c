/* What `jitstall check` checks in one process: budgets, calls in flight, NVTX
 * query budgets, and the comparison with a baseline. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_ctx.h"
#include "cli.h"
#include "compiles.h"
#include "fixes.h"
#include "late.h"
#include "report_compiles.h"
#include "report_view.h"
#include "symbolize.h"
#include "trace.h"
#include "utf8.h"
#include "xalloc.h"

/* The JIT module that cost most, optionally only those before the first launch. */
static const struct jst_pmod *chk_worst_jit(const struct jst_psum *s, int before_launch)
{
    const struct jst_pmod *w = NULL;
    for (size_t i = 0; i < s->n_mods; i++) {
        const struct jst_pmod *m = &s->mods[i];
        if (!m->jit)
            continue;
        if (before_launch && s->p && m->ev && !jst_model_before_first_kernel(s->p, m->ev))
            continue;
        if (!w || m->jit_ns > w->jit_ns)
            w = m;
    }
    return w;
}

static int chk_grew(const struct opts *o, uint64_t base, uint64_t cur)
{
    if (cur <= base)
        return 0;
    double d = (double)(cur - base);
    return d > o->min_delta_ms * 1e6 && (base == 0 || d * 100.0 > o->tolerance * (double)base);
}

static double chk_pct(uint64_t base, uint64_t cur)
{
    return base ? ((double)cur - (double)base) * 100.0 / (double)base : INFINITY;
}

/* ---- budgets ---- */

/* --max-jit-ms: the JIT time of the whole process. */
static void budget_jit(struct ctx *x, struct cproc *cp)
{
    const struct opts *o = &x->o;
    const struct jst_psum *s = &cp->s;
    char a[64], b[64], d[64], det[4096];
    if (o->max_jit_ms >= 0) {
        struct ccase *c = chk_add_case(cp, "max-jit-ms", "budget");
        c->secs = (double)s->jit_ns / 1e9;
        uint64_t lim = (uint64_t)(o->max_jit_ms * 1e6);
        if (s->jit_ns > lim) {
            const struct jst_pmod *w = chk_worst_jit(s, 0);
            chk_fail_line(x, cp, c, "JIT took %s, budget %s (+%s)%s", jst_fmt_ms(s->jit_ns, a, 64),
                          jst_fmt_ms(lim, b, 64), jst_fmt_ms(s->jit_ns - lim, d, 64),
                          w ? chk_mod_detail(cp, w, det, sizeof det) : "");
        }
    }
}

/* --max-ttfk-ms; with no launch, a trace cut off during a long JIT must
 * still fail once it covers more than the budget. */
static void budget_ttfk(struct ctx *x, struct cproc *cp)
{
    const struct opts *o = &x->o;
    const struct jst_psum *s = &cp->s;
    const struct jst_process *p = s->p;
    char a[64], b[64], d[64], det[4096];
    if (o->max_ttfk_ms >= 0) {
        struct ccase *c = chk_add_case(cp, "max-ttfk-ms", "budget");
        if (s->has_ttfk)
            c->secs = (double)s->ttfk_ns / 1e9;
        uint64_t lim = (uint64_t)(o->max_ttfk_ms * 1e6);
        const struct jst_pmod *w = chk_worst_jit(s, 1);
        if (s->has_ttfk && s->ttfk_ns > lim) {
            if (w)
                chk_mod_detail(cp, w, det, sizeof det);
            else
                snprintf(det, sizeof det, "; no JIT before it (init %.1f ms, context %.1f ms)",
                         p ? (double)p->init_ns / 1e6 : 0.0, p ? (double)p->ctx_ns / 1e6 : 0.0);
            chk_fail_line(x, cp, c, "time to first kernel %s, budget %s (+%s)%s",
                          jst_fmt_ms(s->ttfk_ns, a, 64), jst_fmt_ms(lim, b, 64),
                          jst_fmt_ms(s->ttfk_ns - lim, d, 64), det);
        } else if (!s->has_ttfk && p) {
            /* No launch: a trace cut off during a long JIT must not pass. */
            uint64_t start = p->proc_start_ns ? p->proc_start_ns : p->mono_ns;
            uint64_t seen = p->end_ns > start && start ? p->end_ns - start : 0;
            if (seen > lim)
                chk_fail_line(x, cp, c,
                              "no kernel launched in the %s the trace covers, budget %s%s",
                              jst_fmt_ms(seen, a, 64), jst_fmt_ms(lim, b, 64),
                              w ? chk_mod_detail(cp, w, det, sizeof det) : "");
            else if (!o->quiet)
                chk_warn(x, "%s[%llu]: no kernel launched; max-ttfk-ms not measurable", s->exe,
                         (unsigned long long)s->pid);
        }
    }
}

/* --max-jit-modules. */
static void budget_modules(struct ctx *x, struct cproc *cp)
{
    const struct opts *o = &x->o;
    const struct jst_psum *s = &cp->s;
    char det[4096];
    if (o->max_jit_modules >= 0) {
        struct ccase *c = chk_add_case(cp, "max-jit-modules", "budget");
        size_t n = 0;
        for (size_t i = 0; i < s->n_mods; i++)
            n += s->mods[i].jit != 0;
        if (n > (size_t)o->max_jit_modules) {
            const struct jst_pmod *w = chk_worst_jit(s, 0);
            chk_fail_line(x, cp, c, "%zu module%s JIT-compiled, budget %ld (+%zu); worst%s", n,
                          n == 1 ? "" : "s", o->max_jit_modules, n - (size_t)o->max_jit_modules,
                          w ? chk_mod_detail(cp, w, det, sizeof det) + 1 : " unknown");
        }
    }
}

/* --forbid-verdict: one case per verdict, one line per module. */
static void budget_forbid(struct ctx *x, struct cproc *cp)
{
    const struct opts *o = &x->o;
    const struct jst_psum *s = &cp->s;
    char a[64], det[4096];
    for (size_t f = 0; f < o->n_forbid; f++) {
        char name[64];
        snprintf(name, sizeof name, "forbid-verdict=%s", jst_verdict_name(o->forbid[f]));
        struct ccase *c = chk_add_case(cp, name, "budget");
        for (size_t i = 0; i < s->n_mods; i++) {
            const struct jst_pmod *m = &s->mods[i];
            if (m->verdict != o->forbid[f])
                continue;
            const char *why = m->ev && m->ev->reason ? m->ev->reason : NULL;
            chk_fail_line(x, cp, c, "forbidden verdict %s%s%s%s, JIT %s%s",
                          jst_verdict_name(m->verdict), why ? " (" : "", why ? why : "",
                          why ? ")" : "", jst_fmt_ms(m->jit_ns, a, 64),
                          chk_mod_detail(cp, m, det, sizeof det));
        }
    }
}

/* --require-cache: every JIT module must do at least this well. */
static void budget_cache(struct ctx *x, struct cproc *cp)
{
    const struct opts *o = &x->o;
    const struct jst_psum *s = &cp->s;
    char a[64], det[4096];
    if (o->require_cache >= 0) {
        char name[64];
        static const unsigned by_rank[] = {JST_C_HIT, JST_C_MISS_STORED, JST_C_UNKNOWN,
                                           JST_C_MISS_NOT_STORED};
        const char *want = jst_cache_name(by_rank[o->require_cache]);
        snprintf(name, sizeof name, "require-cache=%s", want);
        struct ccase *c = chk_add_case(cp, name, "budget");
        for (size_t i = 0; i < s->n_mods; i++) {
            const struct jst_pmod *m = &s->mods[i];
            if (!m->jit || jst_cache_rank(m->cache) <= o->require_cache)
                continue;
            chk_fail_line(x, cp, c, "cache %s, required %s, JIT %s%s", jst_cache_name(m->cache),
                          want, jst_fmt_ms(m->jit_ns, a, 64),
                          chk_mod_detail(cp, m, det, sizeof det));
        }
    }
}

/* "; longest: driver 400.0 ms for K in request req1; fix: the warm-up ..."
 * for the longest late compile. */
static const char *late_detail(const struct jst_process *p, char *buf, size_t n)
{
    const struct jst_compile *w = NULL;
    char a[32], what[512], fix[1024];
    for (size_t i = 0; i < p->n_compiles; i++)
        if (p->compiles[i].late && (!w || p->compiles[i].dur_ns > w->dur_ns))
            w = &p->compiles[i];
    if (!w) {
        snprintf(buf, n, "%s", "");
        return buf;
    }
    const struct jst_query *q = jst_late_request(p, w);
    snprintf(buf, n, "; longest: %s %s for %s%s%s; fix: %s", jst_compiler_name(w->compiler),
             rv_dur(w->dur_ns, a, sizeof a), jst_late_subject(w, what, sizeof what),
             q ? " in request " : "", q ? q->name : "", jst_late_fix(w, fix, sizeof fix));
    return buf;
}

/* Compiles after the process said it was ready (--max-late-compiles,
 * --max-late-ms): one line per budget. A process that never said it was
 * ready has no late compiles and passes. */
static void budget_late(struct ctx *x, struct cproc *cp)
{
    const struct jst_process *p = cp->s.p;
    char a[64], b[64], d[64], det[2048];
    if (!p)
        return;
    uint64_t ns = 0;
    size_t n = jst_late_count(p, &ns);
    if (x->o.max_late_compiles >= 0) {
        struct ccase *c = chk_add_case(cp, "max-late-compiles", "budget");
        c->secs = (double)ns / 1e9;
        if ((double)n > x->o.max_late_compiles)
            chk_fail_line(x, cp, c, "%zu compile%s after ready, budget %.0f (+%.0f)%s", n,
                          n == 1 ? "" : "s", x->o.max_late_compiles,
                          (double)n - x->o.max_late_compiles, late_detail(p, det, sizeof det));
    }
    if (x->o.max_late_ms >= 0) {
        struct ccase *c = chk_add_case(cp, "max-late-ms", "budget");
        uint64_t lim = (uint64_t)(x->o.max_late_ms * 1e6);
        c->secs = (double)ns / 1e9;
        if (ns > lim)
            chk_fail_line(x, cp, c, "compiling after ready took %s, budget %s (+%s)%s",
                          jst_fmt_ms(ns, a, 64), jst_fmt_ms(lim, b, 64),
                          jst_fmt_ms(ns - lim, d, 64), late_detail(p, det, sizeof det));
    }
}

/* CUDA graph capture (--max-graph-capture-ms): capture and instantiation,
 * wall time per thread (graphs.h), one line. */
static void budget_graphs(struct ctx *x, struct cproc *cp)
{
    const struct jst_process *p = cp->s.p;
    char a[64], b[64], d[64], e[64];
    if (!p || x->o.max_graph_capture_ms < 0)
        return;
    const struct jst_graphs *g = &p->graphs;
    uint64_t ns = jst_graphs_ns(p), lim = (uint64_t)(x->o.max_graph_capture_ms * 1e6);
    struct ccase *c = chk_add_case(cp, "max-graph-capture-ms", "budget");
    c->secs = (double)ns / 1e9;
    if (ns > lim)
        chk_fail_line(x, cp, c,
                      "CUDA graph capture took %s for %zu graph%s (instantiate %s), budget %s "
                      "(+%s); fix: capture fewer graphs (fewer batch sizes) or capture them "
                      "after the server says it is ready",
                      jst_fmt_ms(ns, a, 64), g->count, g->count == 1 ? "" : "s",
                      jst_fmt_ms(g->instantiate_ns, e, 64), jst_fmt_ms(lim, b, 64),
                      jst_fmt_ms(ns - lim, d, 64));
}

void chk_budgets(struct ctx *x, struct cproc *cp)
{
    budget_jit(x, cp);
    budget_ttfk(x, cp);
    budget_modules(x, cp);
    budget_forbid(x, cp);
    budget_cache(x, cp);
    chk_compile_budgets(x, cp);
    budget_late(x, cp);
    budget_graphs(x, cp);
}

/* ---- calls in flight ---- */

/* A trace that ends during a load, link step or runtime compile fails with no
 * budget given: the stall it shows has no end yet, so no budget can pass it
 * (a killed first query leaves exactly this). One line per call. */
void chk_in_flight(struct ctx *x, struct cproc *cp)
{
    const struct jst_process *p = cp->s.p;
    struct ccase *c = NULL;
    if (p && p->truncated && jst_trace_stop_words(p)) {
        /* The trace stopped, not the process: a call open then went on. */
        for (size_t i = 0; i < p->n_calls; i++)
            if (p->calls[i].in_flight) {
                chk_warn(x,
                         "%s[%llu]: the trace stopped because %s; calls open then are not "
                         "judged as in flight",
                         cp->s.exe, (unsigned long long)cp->s.pid, jst_trace_stop_words(p));
                break;
            }
        return;
    }
    for (size_t i = 0; p && i < p->n_calls; i++) {
        const struct jst_call_ev *ev = &p->calls[i];
        if (!ev->in_flight)
            continue;
        char what[128], site[1024], fix[1024] = "", origin[1024] = "";
        const char *api = ev->call_name ? ev->call_name : jst_call_name(ev->call);
        const char *o = jst_load_origin(ev);
        if (o)
            snprintf(origin, sizeof origin, "; module %s", o);
        jst_call_site_str(chk_symbolizer(cp), ev, site, sizeof site);
        /* The call site's source line, for the annotation's file= (taken by
         * the next chk_fail_line). */
        struct jst_frame fr;
        free(cp->site.file);
        cp->site.file = NULL;
        if (jst_call_site_frame(chk_symbolizer(cp), ev, &fr) == 0 && fr.file[0] && fr.line) {
            cp->site.file = jst_xstrdup(fr.file);
            cp->site.line = fr.line;
        }
        jst_fix_for_load(p, ev, NULL, fix, sizeof fix);
        if (!c)
            c = chk_add_case(cp, "in-flight", "in_flight");
        chk_set_detail(cp, site, fix);
        chk_fail_line(x, cp, c, "%s %s%s", api ? api : "?",
                      rv_in_flight_str(p, ev, what, sizeof what), origin);
    }
}

/* ---- query budgets (NVTX ranges) ---- */

static const struct jst_pmod *chk_pmod_of(const struct jst_psum *s, const struct jst_call_ev *ev)
{
    for (size_t i = 0; ev && i < s->n_mods; i++)
        if (s->mods[i].ev == ev)
            return &s->mods[i];
    return NULL;
}

/* One case per gate and process; a process without the query skips it (the
 * caller fails the gate when no process had it). */
void chk_queries(struct ctx *x, struct cproc *cp)
{
    char a[64], b[64], d[64], j[64], det[4096], name[64];
    const struct jst_process *p = cp->s.p;
    for (size_t g = 0; g < x->o.n_query; g++) {
        struct qgate *qg = &x->o.query[g];
        snprintf(name, sizeof name, "max-query-ms=%.*s", (int)qg->len, qg->name);
        struct ccase *c = chk_add_case(cp, name, "budget");
        const struct jst_query *q = NULL;
        for (size_t i = 0; p && i < p->n_queries && !q; i++)
            if (p->queries[i].name && strlen(p->queries[i].name) == qg->len &&
                !memcmp(p->queries[i].name, qg->name, qg->len))
                q = &p->queries[i];
        if (!q) {
            c->skipped = jst_xstrdup("no such query in this process");
            continue;
        }
        qg->found++;
        uint64_t lim = (uint64_t)(qg->ms * 1e6);
        if (q->dur_ns <= lim)
            continue;
        const struct jst_pmod *w = chk_pmod_of(&cp->s, q->top_jit);
        chk_fail_line(x, cp, c, "query '%s' took %s, budget %s (+%s), JIT %s%s", q->name,
                      jst_fmt_ms(q->dur_ns, a, 64), jst_fmt_ms(lim, b, 64),
                      jst_fmt_ms(q->dur_ns - lim, d, 64), jst_fmt_ms(q->jit_ns, j, 64),
                      w ? chk_mod_detail(cp, w, det, sizeof det) : "");
    }
}

/* A gate no process had fails: the ranges may not have been recorded. */
void chk_queries_found(struct ctx *x)
{
    for (size_t g = 0; g < x->o.n_query && x->n_procs; g++) {
        struct qgate *qg = &x->o.query[g];
        struct cproc *cp = &x->procs[0];
        if (qg->found)
            continue;
        for (size_t k = 0; k < cp->n_cases; k++) {
            struct ccase *c = &cp->cases[k];
            if (strncmp(c->name, "max-query-ms=", 13) || strlen(c->name + 13) != qg->len ||
                memcmp(c->name + 13, qg->name, qg->len))
                continue;
            free(c->skipped);
            c->skipped = NULL;
            chk_fail_line(x, cp, c, "no process has a query '%.*s' (no such top-level NVTX range)",
                          (int)qg->len, qg->name);
            break;
        }
    }
}

/* ---- baseline ---- */

/* Each query of the baseline process against the query of the same name in
 * this run: its time grown beyond the tolerance is a regression. */
static void chk_baseline_queries(struct ctx *x, struct cproc *cp)
{
    const struct jst_psum *bs = cp->base;
    const struct jst_process *p = cp->s.p;
    char a[64], b[64], d[64], j[64], det[4096];
    if (!bs || !bs->n_queries || !p)
        return;
    struct ccase *c = chk_add_case(cp, "baseline-query", "regression");
    for (size_t k = 0; k < bs->n_queries; k++) {
        const struct jst_pquery *bq = &bs->queries[k];
        const struct jst_query *q = NULL;
        for (size_t i = 0; i < p->n_queries && !q; i++)
            if (p->queries[i].name && !strcmp(p->queries[i].name, bq->name))
                q = &p->queries[i];
        if (!q) {
            chk_warn(x, "%s[%llu]: query '%s' of the baseline is not in this run", cp->s.exe,
                     (unsigned long long)cp->s.pid, bq->name);
            continue;
        }
        if (chk_grew(&x->o, bq->dur_ns, q->dur_ns)) {
            const struct jst_pmod *w = chk_pmod_of(&cp->s, q->top_jit);
            chk_fail_line(x, cp, c,
                          "query '%s' took %s -> %s (+%s, +%.0f%%, tolerance %g%%), JIT %s%s",
                          q->name, jst_fmt_ms(bq->dur_ns, a, 64), jst_fmt_ms(q->dur_ns, b, 64),
                          jst_fmt_ms(q->dur_ns - bq->dur_ns, d, 64), chk_pct(bq->dur_ns, q->dur_ns),
                          x->o.tolerance, jst_fmt_ms(q->jit_ns, j, 64),
                          w ? chk_mod_detail(cp, w, det, sizeof det) : "");
        } else if (chk_grew(&x->o, q->dur_ns, bq->dur_ns)) {
            chk_improved(x, cp, "baseline-query", "query '%s' took %s -> %s", q->name,
                         jst_fmt_ms(bq->dur_ns, a, 64), jst_fmt_ms(q->dur_ns, b, 64));
        }
    }
}

/* The four cases of a baseline comparison. */
struct bcases {
    struct ccase *fresh, *jit, *ttfk, *cache;
};

/* One module m of this run against its baseline module bm (NULL: none). */
static void baseline_module(struct ctx *x, struct cproc *cp, const struct bcases *bc,
                            const struct jst_pmod *m, const struct jst_pmod *bm)
{
    const struct opts *o = &x->o;
    char a[64], b[64], d[64], det[4096], lab[1024];
    if (m->jit && (!bm || !bm->jit)) {
        chk_fail_line(x, cp, bc->fresh, "new JIT'd module, JIT %s (baseline: %s)%s",
                      jst_fmt_ms(m->jit_ns, a, 64),
                      bm ? jst_verdict_name(bm->verdict) : "not loaded",
                      chk_mod_detail(cp, m, det, sizeof det));
        return;
    }
    if (!bm)
        return;
    if (m->jit && bm->jit) {
        if (chk_grew(o, bm->jit_ns, m->jit_ns))
            chk_fail_line(x, cp, bc->jit, "JIT time %s -> %s (+%s, +%.0f%%, tolerance %g%%)%s",
                          jst_fmt_ms(bm->jit_ns, a, 64), jst_fmt_ms(m->jit_ns, b, 64),
                          jst_fmt_ms(m->jit_ns - bm->jit_ns, d, 64), chk_pct(bm->jit_ns, m->jit_ns),
                          o->tolerance, chk_mod_detail(cp, m, det, sizeof det));
        else if (chk_grew(o, m->jit_ns, bm->jit_ns))
            chk_improved(x, cp, "baseline-jit-time", "JIT time %s -> %s; module %s",
                         jst_fmt_ms(bm->jit_ns, a, 64), jst_fmt_ms(m->jit_ns, b, 64),
                         jst_pmod_label(m, lab, sizeof lab));
        int rb = jst_cache_rank(bm->cache), rc = jst_cache_rank(m->cache);
        if (rc > rb)
            chk_fail_line(x, cp, bc->cache, "cache outcome got worse: %s -> %s, JIT %s%s",
                          jst_cache_name(bm->cache), jst_cache_name(m->cache),
                          jst_fmt_ms(m->jit_ns, a, 64), chk_mod_detail(cp, m, det, sizeof det));
        else if (rc < rb)
            chk_improved(x, cp, "baseline-cache", "cache outcome %s -> %s; module %s",
                         jst_cache_name(bm->cache), jst_cache_name(m->cache),
                         jst_pmod_label(m, lab, sizeof lab));
    }
    if (!m->jit && bm->jit)
        chk_improved(x, cp, "baseline-new-jit", "module no longer JIT-compiled (%s -> %s); %s",
                     jst_verdict_name(bm->verdict), jst_verdict_name(m->verdict),
                     jst_pmod_label(m, lab, sizeof lab));
}

/* Time to first kernel against the baseline's. */
static void baseline_ttfk(struct ctx *x, struct cproc *cp, struct ccase *c)
{
    const struct opts *o = &x->o;
    const struct jst_psum *s = &cp->s, *bs = cp->base;
    char a[64], b[64], d[64], det[4096];
    if (s->has_ttfk && bs->has_ttfk) {
        if (chk_grew(o, bs->ttfk_ns, s->ttfk_ns)) {
            const struct jst_pmod *w = chk_worst_jit(s, 1);
            if (w)
                chk_mod_detail(cp, w, det, sizeof det);
            else
                snprintf(det, sizeof det, "; no JIT before the first launch");
            chk_fail_line(x, cp, c,
                          "time to first kernel %s -> %s (+%s, +%.0f%%, tolerance %g%%)%s",
                          jst_fmt_ms(bs->ttfk_ns, a, 64), jst_fmt_ms(s->ttfk_ns, b, 64),
                          jst_fmt_ms(s->ttfk_ns - bs->ttfk_ns, d, 64),
                          chk_pct(bs->ttfk_ns, s->ttfk_ns), o->tolerance, det);
        } else if (chk_grew(o, s->ttfk_ns, bs->ttfk_ns)) {
            chk_improved(x, cp, "baseline-ttfk", "time to first kernel %s -> %s (%.0f%%)",
                         jst_fmt_ms(bs->ttfk_ns, a, 64), jst_fmt_ms(s->ttfk_ns, b, 64),
                         chk_pct(bs->ttfk_ns, s->ttfk_ns));
        }
    } else if (bs->has_ttfk) {
        c->skipped = jst_xstrdup("no kernel launched in this run");
    } else {
        c->skipped = jst_xstrdup("no kernel launched in the baseline");
    }
}

static int pick_framework(const struct jst_compile *c, const void *fw)
{
    return c->compiler != JST_CMP_DRIVER && c->framework == *(const unsigned *)fw;
}

/* The fix of a group's longest compile, for the next failure line's detail. */
static void group_fix(struct cproc *cp, const struct jst_pcgroup *g)
{
    char fix[1024];
    const char *f = g->longest ? jst_fix_for_compile(cp->s.p, g->longest, fix, sizeof fix) : NULL;
    if (f)
        chk_set_detail(cp, NULL, f);
}

/* Each framework cache that hit in the baseline (so compiled nothing) and
 * compiled now: a cache key that changed, a cache directory lost with /tmp.
 * One that missed (or was disabled) and hits now is an improvement
 * (*improved). Returns, as bits, the frameworks it named: their compiles
 * are said with them. */
static unsigned baseline_fw_caches(struct ctx *x, struct cproc *cp, struct ccase *c,
                                   unsigned *improved)
{
    const struct jst_psum *s = &cp->s, *bs = cp->base;
    char a[64], b[64], lab[1024];
    unsigned named = 0;
    for (unsigned fw = 1; fw < JST_FW_MAX_; fw++) {
        const char *was = bs->fw_cache[fw], *now = s->fw_cache[fw];
        const struct jst_pcgroup *lead = NULL;
        uint64_t count = 0;
        for (size_t i = 0; i < s->n_groups; i++) {
            const struct jst_pcgroup *g = &s->groups[i];
            if (g->framework != fw)
                continue;
            count += g->count;
            if (!lead || g->longest->dur_ns > lead->longest->dur_ns)
                lead = g;
        }
        int used;
        if (lead) /* it compiled: a miss (or disabled), whether or not it has a record */
            now = rv_fw_cache_result(s->p, fw, &used);
        if (!was || !now)
            continue;
        if (!strcmp(was, "hit") && lead && strcmp(now, "hit")) {
            const char *path = s->fw_path[fw] ? s->fw_path[fw] : bs->fw_path[fw];
            uint64_t ns = jst_compiles_wall(s->p, pick_framework, &fw, 0, UINT64_MAX);
            group_fix(cp, lead);
            chk_fail_line(x, cp, c,
                          "%s cache hit -> %s%s%s%s: compiled again, %s in %llu compile%s "
                          "(longest: %s, %s)",
                          jst_framework_name(fw), now, path ? " (" : "", path ? jst_text(path) : "",
                          path ? ")" : "", jst_fmt_ms(ns, a, 64), (unsigned long long)count,
                          count == 1 ? "" : "s", jst_pcgroup_label(lead, lab, sizeof lab),
                          jst_fmt_ms(lead->longest->dur_ns, b, 64));
            named |= 1u << fw;
        } else if (!strcmp(now, "hit") && (!strcmp(was, "miss") || !strcmp(was, "disabled"))) {
            chk_improved(x, cp, "baseline-cache", "%s cache %s -> hit", jst_framework_name(fw),
                         jst_text(was));
            *improved |= 1u << fw;
        }
    }
    return named;
}

/* Each compile group (compiler, framework, what) the baseline did not have
 * that cost more than --min-delta-ms, the noise bound of every baseline
 * comparison; those of a framework whose cache hit -> miss line (fw_named)
 * already names them are not said again. Returns the compilers named, as
 * bits. */
static unsigned baseline_groups(struct ctx *x, struct cproc *cp, struct ccase *c, unsigned fw_named,
                                unsigned fw_improved)
{
    const struct opts *o = &x->o;
    const struct jst_psum *s = &cp->s, *bs = cp->base;
    char a[64], lab[1024];
    unsigned named = 0;
    for (size_t i = 0; i < s->n_groups; i++) {
        const struct jst_pcgroup *g = &s->groups[i];
        if (fw_named >> g->framework & 1) {
            named |= 1u << g->compiler;
            continue;
        }
        if (jst_pcgroup_find(bs, g) || !chk_grew(o, 0, g->dur_ns))
            continue;
        group_fix(cp, g);
        chk_fail_line(
            x, cp, c, "new compile %s%s%s%s%s%s: %s in %llu compile%s, not in the baseline",
            jst_pcgroup_label(g, lab, sizeof lab), g->framework ? " (" : "",
            g->framework ? jst_framework_name(g->framework) : "",
            g->framework && g->cache ? ", cache " : "",
            g->framework && g->cache ? jst_text(g->cache) : "", g->framework ? ")" : "",
            jst_fmt_ms(g->dur_ns, a, 64), (unsigned long long)g->count, g->count == 1 ? "" : "s");
        named |= 1u << g->compiler;
    }
    for (size_t i = 0; i < bs->n_groups; i++) {
        const struct jst_pcgroup *g = &bs->groups[i];
        if (!(fw_improved >> g->framework & 1) && !jst_pcgroup_find(s, g) &&
            chk_grew(o, 0, g->dur_ns))
            chk_improved(x, cp, "baseline-compile-time", "compile gone: %s (%s in the baseline)",
                         jst_pcgroup_label(g, lab, sizeof lab), jst_fmt_ms(g->dur_ns, a, 64));
    }
    return named;
}

/* Framework caches and compile groups against the baseline's, then every
 * compiler alike: its time grown beyond the tolerance (a compiler the
 * baseline did not run counts from zero; said only when no group line of
 * that compiler already explains it), and the slowest first call. */
static void baseline_compiles(struct ctx *x, struct cproc *cp, struct ccase *cache)
{
    const struct opts *o = &x->o;
    const struct jst_psum *s = &cp->s, *bs = cp->base;
    char a[64], b[64], d[64];
    unsigned improved = 0, fw_named = baseline_fw_caches(x, cp, cache, &improved);
    struct ccase *c = chk_add_case(cp, "baseline-compile-time", "regression");
    if (!bs->has_cmp) {
        c->skipped = jst_xstrdup("the baseline has no compiles (written by an older jitstall)");
        return;
    }
    unsigned named = bs->has_groups ? baseline_groups(x, cp, c, fw_named, improved) : 0;
    for (unsigned k = 1; k < JST_CMP_MAX_; k++) {
        if (named >> k & 1)
            continue;
        if (chk_grew(o, bs->cmp_ns[k], s->cmp_ns[k]))
            chk_fail_line(x, cp, c, "%s time %s -> %s (+%s, %zu -> %zu compiles, tolerance %g%%)",
                          jst_compiler_label(k), jst_fmt_ms(bs->cmp_ns[k], a, 64),
                          jst_fmt_ms(s->cmp_ns[k], b, 64),
                          jst_fmt_ms(s->cmp_ns[k] - bs->cmp_ns[k], d, 64), (size_t)bs->cmp_n[k],
                          (size_t)s->cmp_n[k], o->tolerance);
        else if (chk_grew(o, s->cmp_ns[k], bs->cmp_ns[k]))
            chk_improved(x, cp, "baseline-compile-time", "%s time %s -> %s", jst_compiler_label(k),
                         jst_fmt_ms(bs->cmp_ns[k], a, 64), jst_fmt_ms(s->cmp_ns[k], b, 64));
    }
    if (chk_grew(o, bs->first_call_ns, s->first_call_ns))
        chk_fail_line(x, cp, c, "slowest first call %s -> %s (+%s, tolerance %g%%)",
                      jst_fmt_ms(bs->first_call_ns, a, 64), jst_fmt_ms(s->first_call_ns, b, 64),
                      jst_fmt_ms(s->first_call_ns - bs->first_call_ns, d, 64), o->tolerance);
}

void chk_baseline(struct ctx *x, struct cproc *cp)
{
    const struct opts *o = &x->o;
    const struct jst_psum *s = &cp->s, *bs = cp->base;
    /* add_case may move the array: take the pointers once all four exist. */
    size_t first = cp->n_cases;
    chk_add_case(cp, "baseline-new-jit", "regression");
    chk_add_case(cp, "baseline-jit-time", "regression");
    chk_add_case(cp, "baseline-ttfk", "regression");
    chk_add_case(cp, "baseline-cache", "regression");
    struct bcases bc = {&cp->cases[first], &cp->cases[first + 1], &cp->cases[first + 2],
                        &cp->cases[first + 3]};
    char a[64], b[64], d[64], det[4096], lab[1024];
    if (!bs) {
        const char *why = "no matching process in the baseline (same executable)";
        bc.fresh->skipped = jst_xstrdup(why);
        bc.jit->skipped = jst_xstrdup(why);
        bc.ttfk->skipped = jst_xstrdup(why);
        bc.cache->skipped = jst_xstrdup(why);
        chk_warn(x, "%s[%llu]: %s; only budgets checked", s->exe, (unsigned long long)s->pid, why);
        return;
    }
    long *map = jst_xcalloc(s->n_mods + 1, sizeof(*map));
    long *rmap = jst_xcalloc(bs->n_mods + 1, sizeof(*rmap));
    jst_match_mods(s->mods, s->n_mods, bs->mods, bs->n_mods, map);
    for (size_t k = 0; k < bs->n_mods; k++)
        rmap[k] = -1;
    for (size_t i = 0; i < s->n_mods; i++)
        if (map[i] >= 0)
            rmap[map[i]] = (long)i;

    for (size_t i = 0; i < s->n_mods; i++)
        baseline_module(x, cp, &bc, &s->mods[i], map[i] >= 0 ? &bs->mods[map[i]] : NULL);

    for (size_t k = 0; k < bs->n_mods; k++)
        if (rmap[k] < 0 && bs->mods[k].jit)
            chk_improved(x, cp, "baseline-new-jit", "JIT'd module gone: %s",
                         jst_pmod_label(&bs->mods[k], lab, sizeof lab));

    /* The total catches many small modules each within tolerance; it is only
     * reported when no module line already explains the growth. */
    if (!bc.fresh->n && !bc.jit->n && chk_grew(o, bs->jit_ns, s->jit_ns) && bs->jit_ns) {
        const struct jst_pmod *w = chk_worst_jit(s, 0);
        chk_fail_line(x, cp, bc.jit, "total JIT time %s -> %s (+%s, +%.0f%%, tolerance %g%%)%s",
                      jst_fmt_ms(bs->jit_ns, a, 64), jst_fmt_ms(s->jit_ns, b, 64),
                      jst_fmt_ms(s->jit_ns - bs->jit_ns, d, 64), chk_pct(bs->jit_ns, s->jit_ns),
                      o->tolerance, w ? chk_mod_detail(cp, w, det, sizeof det) : "");
    }

    baseline_ttfk(x, cp, bc.ttfk);
    baseline_compiles(x, cp, bc.cache);
    free(map);
    free(rmap);
    chk_baseline_queries(x, cp);
}
