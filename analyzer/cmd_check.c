/*
 * `jitstall check`: fails a CI job when a run brings back a JIT stall. It
 * checks each process of the traces against budgets (JIT time, time to first
 * kernel, JIT'd modules, forbidden verdicts, required cache outcome) and,
 * with --baseline, against a known-good run. Every regression is one line
 * saying what, how much, which module, which call site and the fix; --junit
 * and --github carry the same lines to CI servers.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_util.h"
#include "cli.h"
#include "xalloc.h"
#include "fixes.h"
#include "report_view.h"
#include "symbolize.h"
#include "trace.h"

static const char usage_text[] =
    "usage: jitstall check [BUDGETS] [--baseline FILE] [--tolerance PCT] [--junit FILE]\n"
    "                      [--github] TRACE|DIR...\n"
    "\n"
    "Check every process of the traces; exit 1 when one is over a budget or worse\n"
    "than the baseline. Each regression prints one line: what, how much, which\n"
    "module, which call site, and the fix.\n"
    "\n"
    "budgets (per process):\n"
    "  --max-jit-ms N          at most N ms spent in PTX JIT (compile or cache load)\n"
    "  --max-ttfk-ms N         at most N ms from process start to the first kernel launch\n"
    "  --max-jit-modules N     at most N modules JIT-compiled\n"
    "  --forbid-verdict V      no module with verdict V (repeatable): sass, ptx_jit,\n"
    "                          forced_jit, no_compatible, jit_disabled, damaged\n"
    "  --require-cache C       every JIT'd module's cache outcome at least as good as C:\n"
    "                          hit, miss_stored, unknown (hit < miss_stored < unknown\n"
    "                          < miss_not_stored)\n"
    "  --max-query-ms NAME=N   the query NAME (a top-level NVTX range, as the report\n"
    "                          names it: query1, query1#2) took at most N ms\n"
    "                          (repeatable); fails when no process has it\n"
    "baseline:\n"
    "  --baseline FILE         compare with a file from 'jitstall baseline': new JIT'd\n"
    "                          modules, JIT time, time to first kernel or a query's\n"
    "                          time grown beyond the tolerance, cache outcomes that\n"
    "                          got worse\n"
    "  --tolerance PCT         allowed growth in percent (default 20)\n"
    "  --min-delta-ms N        ignore growth smaller than N ms (default 1)\n"
    "output:\n"
    "  --junit FILE            write JUnit XML: one testcase per budget per process\n"
    "  --github                print GitHub Actions ::error / ::warning annotations\n"
    "  -q, --quiet             print only regressions and the summary\n"
    "  -h, --help              show this help\n"
    "\n"
    "A load, link step or runtime compile still in flight when a trace ends (the\n"
    "process was killed during it, or is still running) fails the check, budgets\n"
    "or not.\n"
    "\n"
    "exit codes: 0 within budget, 1 a regression, 2 usage error or unreadable input\n";

#define MAX_FORBID 16
#define MAX_QUERY_GATES 16

/* --max-query-ms NAME=N */
struct qgate {
    const char *name; /* in argv, up to the last '=' */
    size_t len;
    double ms;
    size_t found; /* processes that had it */
};

struct opts {
    double max_jit_ms, max_ttfk_ms; /* < 0: unset */
    long max_jit_modules;           /* < 0: unset */
    unsigned forbid[MAX_FORBID];
    size_t n_forbid;
    int require_cache; /* rank, < 0: unset */
    struct qgate query[MAX_QUERY_GATES];
    size_t n_query;
    const char *baseline, *junit;
    double tolerance, min_delta_ms;
    int github, quiet;
    int no_budget; /* no budget and no baseline given */
};

/* Where a failure line's module was loaded from, when DWARF says. */
struct cloc {
    char *file; /* NULL: unknown */
    unsigned line;
};

/* One JUnit testcase: a budget of one process and its failure lines. */
struct ccase {
    char name[64];
    const char *type; /* failure type: "budget" or "regression" */
    char *skipped;    /* why it was not checked, or NULL */
    char **lines;
    struct cloc *locs; /* one per line */
    size_t n;
    double secs; /* JUnit time: the measured time this case is about */
};

struct cproc {
    struct jst_psum s;
    const struct jst_psum *base; /* matched baseline process or NULL */
    struct ccase *cases;
    size_t n_cases;
    struct jst_symbolizer *sym;
    int sym_tried;
    /* The call site mod_detail() just described, taken by the next
     * fail_line() (mod_detail is always an argument of that call). */
    struct cloc site;
    char classname[300]; /* JUnit classname, stable across runs */
};

struct ctx {
    struct opts o;
    struct cproc *procs;
    size_t n_procs;
    size_t n_fail_lines;
};

/* ---- output helpers ---- */

static void github_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '%')
            fputs("%25", f);
        else if (*s == '\r')
            fputs("%0D", f);
        else if (*s == '\n')
            fputs("%0A", f);
        else
            fputc(*s, f);
    }
}

/* A property value (file=...) also escapes ':' and ','. */
static void github_prop_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == ':')
            fputs("%3A", f);
        else if (*s == ',')
            fputs("%2C", f);
        else {
            char one[2] = {*s, 0};
            github_escape(f, one);
        }
    }
}

/* "::error file=F,line=L,title=jitstall::" for a line whose call site is
 * known, so the annotation lands on that source line; F is relative to
 * GITHUB_WORKSPACE when it lies inside it. */
static void github_error_head(const struct cloc *loc)
{
    fputs("::error ", stdout);
    if (loc->file) {
        const char *f = loc->file;
        const char *ws = getenv("GITHUB_WORKSPACE");
        size_t n = ws ? strlen(ws) : 0;
        while (n > 1 && ws[n - 1] == '/')
            n--;
        if (n && !strncmp(f, ws, n) && f[n] == '/')
            f += n + 1;
        fputs("file=", stdout);
        github_prop_escape(stdout, f);
        printf(",line=%u,", loc->line);
    }
    fputs("title=jitstall::", stdout);
}

static void warn(const struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(const struct ctx *x, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    jst_errorf("check", "warning: %s", buf);
    if (x->o.github) {
        fputs("::warning title=jitstall::", stdout);
        github_escape(stdout, buf);
        fputc('\n', stdout);
    }
}

/* Appends a case; the pointer is valid until the next add_case on cp. */
static struct ccase *add_case(struct cproc *cp, const char *name, const char *type)
{
    struct ccase *n = jst_xreallocarray(cp->cases, cp->n_cases + 1, sizeof(*n));
    cp->cases = n;
    struct ccase *c = &n[cp->n_cases++];
    memset(c, 0, sizeof(*c));
    snprintf(c->name, sizeof c->name, "%s", name);
    c->type = type;
    /* JUnit time: what the process took, unless the check measures a time
     * of its own (set by the caller). */
    const struct jst_process *p = cp->s.p;
    uint64_t start = p ? (p->proc_start_ns ? p->proc_start_ns : p->mono_ns) : 0;
    c->secs = p && p->end_ns > start ? (double)(p->end_ns - start) / 1e9 : 0;
    return c;
}

/* Records one failure line of case c: "<exe>[<pid>] <case>: <text>". */
static void fail_line(struct ctx *x, struct cproc *cp, struct ccase *c, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void fail_line(struct ctx *x, struct cproc *cp, struct ccase *c, const char *fmt, ...)
{
    char text[4096];
    int len = snprintf(text, sizeof text, "%s[%llu] %s: ", cp->s.exe, (unsigned long long)cp->s.pid,
                       c->name);
    /* A trace's executable name can be longer than the whole line. */
    if (len < 0)
        len = 0;
    if ((size_t)len >= sizeof text)
        len = (int)sizeof text - 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + len, sizeof text - (size_t)len, fmt, ap);
    va_end(ap);
    c->lines = jst_xreallocarray(c->lines, c->n + 1, sizeof(*c->lines));
    c->locs = jst_xreallocarray(c->locs, c->n + 1, sizeof(*c->locs));
    c->locs[c->n] = cp->site;
    cp->site.file = NULL;
    c->lines[c->n++] = jst_xstrdup(text);
    x->n_fail_lines++;
}

static void improved(const struct ctx *x, const struct cproc *cp, const char *what, const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));
static void improved(const struct ctx *x, const struct cproc *cp, const char *what, const char *fmt,
                     ...)
{
    if (x->o.quiet)
        return;
    printf("improved %s[%llu] %s: ", cp->s.exe, (unsigned long long)cp->s.pid, what);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
}

static struct jst_symbolizer *symbolizer(struct cproc *cp)
{
    if (!cp->sym_tried && cp->s.p) {
        cp->sym_tried = 1;
        cp->sym = jst_symbolizer_new(cp->s.p);
    }
    return cp->sym;
}

/* "; module M (verdict ..., cache ...); call site S; fix: F" for one module. */
static const char *mod_detail(struct cproc *cp, const struct jst_pmod *m, char *buf, size_t n)
{
    char label[1024], site[1024], fix[1024] = "";
    jst_pmod_label(m, label, sizeof label);
    int len = snprintf(buf, n, "; module %s (%s", label,
                       jst_verdict_name(m->verdict) ? jst_verdict_name(m->verdict) : "?");
    if (m->jit_from && len >= 0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, " from %s", m->jit_from);
    if (m->jit && len >= 0 && (size_t)len < n) {
        const char *cn = jst_cache_name(m->cache);
        len += snprintf(buf + len, n - (size_t)len, ", cache %s", cn ? cn : "?");
        if (m->cache == JST_C_MISS_NOT_STORED && m->ev && m->ev->cache_reason && (size_t)len < n)
            len += snprintf(buf + len, n - (size_t)len, " (%s)",
                            jst_cache_reason_name(m->ev->cache_reason)
                                ? jst_cache_reason_name(m->ev->cache_reason)
                                : "?");
    }
    if (len < 0 || (size_t)len >= n)
        return buf;
    if (m->ev) {
        jst_call_site_str(symbolizer(cp), m->ev, site, sizeof site);
        struct jst_frame fr;
        free(cp->site.file);
        cp->site.file = NULL;
        if (jst_call_site_frame(symbolizer(cp), m->ev, &fr) == 0 && fr.file[0] && fr.line) {
            cp->site.file = jst_xstrdup(fr.file);
            cp->site.line = fr.line;
        }
        jst_fix_for_load(cp->s.p, m->ev, NULL, fix, sizeof fix);
    } else {
        snprintf(site, sizeof site, "unknown (not in the trace)");
    }
    len += snprintf(buf + len, n - (size_t)len, "); call site %s", site);
    if (fix[0] && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, "; fix: %s", fix);
    return buf;
}

/* The JIT module that cost most, optionally only those before the first launch. */
static const struct jst_pmod *worst_jit(const struct jst_psum *s, int before_launch)
{
    const struct jst_pmod *w = NULL;
    for (size_t i = 0; i < s->n_mods; i++) {
        const struct jst_pmod *m = &s->mods[i];
        if (!m->jit)
            continue;
        if (before_launch && s->p && s->p->first_launch_ns && m->ev &&
            m->ev->start_ns >= s->p->first_launch_ns)
            continue;
        if (!w || m->jit_ns > w->jit_ns)
            w = m;
    }
    return w;
}

static int grew(const struct opts *o, uint64_t base, uint64_t cur)
{
    if (cur <= base)
        return 0;
    double d = (double)(cur - base);
    return d > o->min_delta_ms * 1e6 && (base == 0 || d * 100.0 > o->tolerance * (double)base);
}

static double pct(uint64_t base, uint64_t cur)
{
    return base ? ((double)cur - (double)base) * 100.0 / (double)base : INFINITY;
}

/* ---- budgets ---- */

static void check_budgets(struct ctx *x, struct cproc *cp)
{
    const struct opts *o = &x->o;
    const struct jst_psum *s = &cp->s;
    const struct jst_process *p = s->p;
    char a[64], b[64], d[64], det[4096];

    if (o->max_jit_ms >= 0) {
        struct ccase *c = add_case(cp, "max-jit-ms", "budget");
        c->secs = (double)s->jit_ns / 1e9;
        uint64_t lim = (uint64_t)(o->max_jit_ms * 1e6);
        if (s->jit_ns > lim) {
            const struct jst_pmod *w = worst_jit(s, 0);
            fail_line(x, cp, c, "JIT took %s, budget %s (+%s)%s", jst_fmt_ms(s->jit_ns, a, 64),
                      jst_fmt_ms(lim, b, 64), jst_fmt_ms(s->jit_ns - lim, d, 64),
                      w ? mod_detail(cp, w, det, sizeof det) : "");
        }
    }
    if (o->max_ttfk_ms >= 0) {
        struct ccase *c = add_case(cp, "max-ttfk-ms", "budget");
        if (s->has_ttfk)
            c->secs = (double)s->ttfk_ns / 1e9;
        uint64_t lim = (uint64_t)(o->max_ttfk_ms * 1e6);
        const struct jst_pmod *w = worst_jit(s, 1);
        if (s->has_ttfk && s->ttfk_ns > lim) {
            if (w)
                mod_detail(cp, w, det, sizeof det);
            else
                snprintf(det, sizeof det, "; no JIT before it (init %.1f ms, context %.1f ms)",
                         p ? (double)p->init_ns / 1e6 : 0.0, p ? (double)p->ctx_ns / 1e6 : 0.0);
            fail_line(x, cp, c, "time to first kernel %s, budget %s (+%s)%s",
                      jst_fmt_ms(s->ttfk_ns, a, 64), jst_fmt_ms(lim, b, 64),
                      jst_fmt_ms(s->ttfk_ns - lim, d, 64), det);
        } else if (!s->has_ttfk && p) {
            /* No launch: a trace cut off during a long JIT must not pass. */
            uint64_t start = p->proc_start_ns ? p->proc_start_ns : p->mono_ns;
            uint64_t seen = p->end_ns > start && start ? p->end_ns - start : 0;
            if (seen > lim)
                fail_line(x, cp, c, "no kernel launched in the %s the trace covers, budget %s%s",
                          jst_fmt_ms(seen, a, 64), jst_fmt_ms(lim, b, 64),
                          w ? mod_detail(cp, w, det, sizeof det) : "");
            else if (!o->quiet)
                warn(x, "%s[%llu]: no kernel launched; max-ttfk-ms not measurable", s->exe,
                     (unsigned long long)s->pid);
        }
    }
    if (o->max_jit_modules >= 0) {
        struct ccase *c = add_case(cp, "max-jit-modules", "budget");
        size_t n = 0;
        for (size_t i = 0; i < s->n_mods; i++)
            n += s->mods[i].jit != 0;
        if (n > (size_t)o->max_jit_modules) {
            const struct jst_pmod *w = worst_jit(s, 0);
            fail_line(x, cp, c, "%zu module%s JIT-compiled, budget %ld (+%zu); worst%s", n,
                      n == 1 ? "" : "s", o->max_jit_modules, n - (size_t)o->max_jit_modules,
                      w ? mod_detail(cp, w, det, sizeof det) + 1 : " unknown");
        }
    }
    for (size_t f = 0; f < o->n_forbid; f++) {
        char name[64];
        snprintf(name, sizeof name, "forbid-verdict=%s", jst_verdict_name(o->forbid[f]));
        struct ccase *c = add_case(cp, name, "budget");
        for (size_t i = 0; i < s->n_mods; i++) {
            const struct jst_pmod *m = &s->mods[i];
            if (m->verdict != o->forbid[f])
                continue;
            const char *why = m->ev && m->ev->reason ? m->ev->reason : NULL;
            fail_line(x, cp, c, "forbidden verdict %s%s%s%s, JIT %s%s",
                      jst_verdict_name(m->verdict), why ? " (" : "", why ? why : "", why ? ")" : "",
                      jst_fmt_ms(m->jit_ns, a, 64), mod_detail(cp, m, det, sizeof det));
        }
    }
    if (o->require_cache >= 0) {
        char name[64];
        static const unsigned by_rank[] = {JST_C_HIT, JST_C_MISS_STORED, JST_C_UNKNOWN,
                                           JST_C_MISS_NOT_STORED};
        const char *want = jst_cache_name(by_rank[o->require_cache]);
        snprintf(name, sizeof name, "require-cache=%s", want);
        struct ccase *c = add_case(cp, name, "budget");
        for (size_t i = 0; i < s->n_mods; i++) {
            const struct jst_pmod *m = &s->mods[i];
            if (!m->jit || jst_cache_rank(m->cache) <= o->require_cache)
                continue;
            fail_line(x, cp, c, "cache %s, required %s, JIT %s%s", jst_cache_name(m->cache), want,
                      jst_fmt_ms(m->jit_ns, a, 64), mod_detail(cp, m, det, sizeof det));
        }
    }
}

/* ---- calls in flight ---- */

/* A trace that ends during a load, link step or runtime compile fails with no
 * budget given: the stall it shows has no end yet, so no budget can pass it
 * (a killed first query leaves exactly this). One line per call. */
static void check_in_flight(struct ctx *x, struct cproc *cp)
{
    const struct jst_process *p = cp->s.p;
    struct ccase *c = NULL;
    for (size_t i = 0; p && i < p->n_calls; i++) {
        const struct jst_call_ev *ev = &p->calls[i];
        if (!ev->in_flight)
            continue;
        char what[128], site[1024], fix[1024] = "", origin[1024] = "";
        const char *api = ev->call_name ? ev->call_name : jst_call_name(ev->call);
        const char *o = jst_load_origin(ev);
        if (o)
            snprintf(origin, sizeof origin, "; module %s", o);
        jst_call_site_str(symbolizer(cp), ev, site, sizeof site);
        jst_fix_for_load(p, ev, NULL, fix, sizeof fix);
        if (!c)
            c = add_case(cp, "in-flight", "in_flight");
        fail_line(x, cp, c, "%s %s%s; call site %s%s%s", api ? api : "?",
                  rv_in_flight_str(ev, what, sizeof what), origin, site, fix[0] ? "; fix: " : "",
                  fix);
    }
}

/* ---- query budgets (NVTX ranges) ---- */

static const struct jst_pmod *pmod_of(const struct jst_psum *s, const struct jst_call_ev *ev)
{
    for (size_t i = 0; ev && i < s->n_mods; i++)
        if (s->mods[i].ev == ev)
            return &s->mods[i];
    return NULL;
}

/* One case per gate and process; a process without the query skips it (the
 * caller fails the gate when no process had it). */
static void check_queries(struct ctx *x, struct cproc *cp)
{
    char a[64], b[64], d[64], j[64], det[4096], name[64];
    const struct jst_process *p = cp->s.p;
    for (size_t g = 0; g < x->o.n_query; g++) {
        struct qgate *qg = &x->o.query[g];
        snprintf(name, sizeof name, "max-query-ms=%.*s", (int)qg->len, qg->name);
        struct ccase *c = add_case(cp, name, "budget");
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
        const struct jst_pmod *w = pmod_of(&cp->s, q->top_jit);
        fail_line(x, cp, c, "query '%s' took %s, budget %s (+%s), JIT %s%s", q->name,
                  jst_fmt_ms(q->dur_ns, a, 64), jst_fmt_ms(lim, b, 64),
                  jst_fmt_ms(q->dur_ns - lim, d, 64), jst_fmt_ms(q->jit_ns, j, 64),
                  w ? mod_detail(cp, w, det, sizeof det) : "");
    }
}

/* A gate no process had fails: the ranges may not have been recorded. */
static void check_queries_found(struct ctx *x)
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
            fail_line(x, cp, c, "no process has a query '%.*s' (no such top-level NVTX range)",
                      (int)qg->len, qg->name);
            break;
        }
    }
}

/* ---- baseline ---- */

/* Each query of the baseline process against the query of the same name in
 * this run: its time grown beyond the tolerance is a regression. */
static void check_baseline_queries(struct ctx *x, struct cproc *cp)
{
    const struct jst_psum *bs = cp->base;
    const struct jst_process *p = cp->s.p;
    char a[64], b[64], d[64], j[64], det[4096];
    if (!bs || !bs->n_queries || !p)
        return;
    struct ccase *c = add_case(cp, "baseline-query", "regression");
    for (size_t k = 0; k < bs->n_queries; k++) {
        const struct jst_pquery *bq = &bs->queries[k];
        const struct jst_query *q = NULL;
        for (size_t i = 0; i < p->n_queries && !q; i++)
            if (p->queries[i].name && !strcmp(p->queries[i].name, bq->name))
                q = &p->queries[i];
        if (!q) {
            warn(x, "%s[%llu]: query '%s' of the baseline is not in this run", cp->s.exe,
                 (unsigned long long)cp->s.pid, bq->name);
            continue;
        }
        if (grew(&x->o, bq->dur_ns, q->dur_ns)) {
            const struct jst_pmod *w = pmod_of(&cp->s, q->top_jit);
            fail_line(x, cp, c, "query '%s' took %s -> %s (+%s, +%.0f%%, tolerance %g%%), JIT %s%s",
                      q->name, jst_fmt_ms(bq->dur_ns, a, 64), jst_fmt_ms(q->dur_ns, b, 64),
                      jst_fmt_ms(q->dur_ns - bq->dur_ns, d, 64), pct(bq->dur_ns, q->dur_ns),
                      x->o.tolerance, jst_fmt_ms(q->jit_ns, j, 64),
                      w ? mod_detail(cp, w, det, sizeof det) : "");
        } else if (grew(&x->o, q->dur_ns, bq->dur_ns)) {
            improved(x, cp, "baseline-query", "query '%s' took %s -> %s", q->name,
                     jst_fmt_ms(bq->dur_ns, a, 64), jst_fmt_ms(q->dur_ns, b, 64));
        }
    }
}

static void check_baseline(struct ctx *x, struct cproc *cp)
{
    const struct opts *o = &x->o;
    const struct jst_psum *s = &cp->s, *bs = cp->base;
    /* add_case may move the array: take the pointers once all four exist. */
    size_t first = cp->n_cases;
    add_case(cp, "baseline-new-jit", "regression");
    add_case(cp, "baseline-jit-time", "regression");
    add_case(cp, "baseline-ttfk", "regression");
    add_case(cp, "baseline-cache", "regression");
    struct ccase *c_new = &cp->cases[first], *c_jit = &cp->cases[first + 1];
    struct ccase *c_ttfk = &cp->cases[first + 2], *c_cache = &cp->cases[first + 3];
    char a[64], b[64], d[64], det[4096], lab[1024];
    if (!bs) {
        const char *why = "no matching process in the baseline (same executable)";
        c_new->skipped = jst_xstrdup(why);
        c_jit->skipped = jst_xstrdup(why);
        c_ttfk->skipped = jst_xstrdup(why);
        c_cache->skipped = jst_xstrdup(why);
        warn(x, "%s[%llu]: %s; only budgets checked", s->exe, (unsigned long long)s->pid, why);
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

    for (size_t i = 0; i < s->n_mods; i++) {
        const struct jst_pmod *m = &s->mods[i];
        const struct jst_pmod *bm = map[i] >= 0 ? &bs->mods[map[i]] : NULL;
        if (m->jit && (!bm || !bm->jit)) {
            fail_line(x, cp, c_new, "new JIT'd module, JIT %s (baseline: %s)%s",
                      jst_fmt_ms(m->jit_ns, a, 64),
                      bm ? jst_verdict_name(bm->verdict) : "not loaded",
                      mod_detail(cp, m, det, sizeof det));
            continue;
        }
        if (!bm)
            continue;
        if (m->jit && bm->jit) {
            if (grew(o, bm->jit_ns, m->jit_ns))
                fail_line(x, cp, c_jit, "JIT time %s -> %s (+%s, +%.0f%%, tolerance %g%%)%s",
                          jst_fmt_ms(bm->jit_ns, a, 64), jst_fmt_ms(m->jit_ns, b, 64),
                          jst_fmt_ms(m->jit_ns - bm->jit_ns, d, 64), pct(bm->jit_ns, m->jit_ns),
                          o->tolerance, mod_detail(cp, m, det, sizeof det));
            else if (grew(o, m->jit_ns, bm->jit_ns))
                improved(x, cp, "baseline-jit-time", "JIT time %s -> %s; module %s",
                         jst_fmt_ms(bm->jit_ns, a, 64), jst_fmt_ms(m->jit_ns, b, 64),
                         jst_pmod_label(m, lab, sizeof lab));
            int rb = jst_cache_rank(bm->cache), rc = jst_cache_rank(m->cache);
            if (rc > rb)
                fail_line(x, cp, c_cache, "cache outcome got worse: %s -> %s, JIT %s%s",
                          jst_cache_name(bm->cache), jst_cache_name(m->cache),
                          jst_fmt_ms(m->jit_ns, a, 64), mod_detail(cp, m, det, sizeof det));
            else if (rc < rb)
                improved(x, cp, "baseline-cache", "cache outcome %s -> %s; module %s",
                         jst_cache_name(bm->cache), jst_cache_name(m->cache),
                         jst_pmod_label(m, lab, sizeof lab));
        }
        if (!m->jit && bm->jit)
            improved(x, cp, "baseline-new-jit", "module no longer JIT-compiled (%s -> %s); %s",
                     jst_verdict_name(bm->verdict), jst_verdict_name(m->verdict),
                     jst_pmod_label(m, lab, sizeof lab));
    }
    for (size_t k = 0; k < bs->n_mods; k++)
        if (rmap[k] < 0 && bs->mods[k].jit)
            improved(x, cp, "baseline-new-jit", "JIT'd module gone: %s",
                     jst_pmod_label(&bs->mods[k], lab, sizeof lab));

    /* The total catches many small modules each within tolerance; it is only
     * reported when no module line already explains the growth. */
    if (!c_new->n && !c_jit->n && grew(o, bs->jit_ns, s->jit_ns) && bs->jit_ns) {
        const struct jst_pmod *w = worst_jit(s, 0);
        fail_line(x, cp, c_jit, "total JIT time %s -> %s (+%s, +%.0f%%, tolerance %g%%)%s",
                  jst_fmt_ms(bs->jit_ns, a, 64), jst_fmt_ms(s->jit_ns, b, 64),
                  jst_fmt_ms(s->jit_ns - bs->jit_ns, d, 64), pct(bs->jit_ns, s->jit_ns),
                  o->tolerance, w ? mod_detail(cp, w, det, sizeof det) : "");
    }

    if (s->has_ttfk && bs->has_ttfk) {
        if (grew(o, bs->ttfk_ns, s->ttfk_ns)) {
            const struct jst_pmod *w = worst_jit(s, 1);
            if (w)
                mod_detail(cp, w, det, sizeof det);
            else
                snprintf(det, sizeof det, "; no JIT before the first launch");
            fail_line(x, cp, c_ttfk,
                      "time to first kernel %s -> %s (+%s, +%.0f%%, tolerance %g%%)%s",
                      jst_fmt_ms(bs->ttfk_ns, a, 64), jst_fmt_ms(s->ttfk_ns, b, 64),
                      jst_fmt_ms(s->ttfk_ns - bs->ttfk_ns, d, 64), pct(bs->ttfk_ns, s->ttfk_ns),
                      o->tolerance, det);
        } else if (grew(o, s->ttfk_ns, bs->ttfk_ns)) {
            improved(x, cp, "baseline-ttfk", "time to first kernel %s -> %s (%.0f%%)",
                     jst_fmt_ms(bs->ttfk_ns, a, 64), jst_fmt_ms(s->ttfk_ns, b, 64),
                     pct(bs->ttfk_ns, s->ttfk_ns));
        }
    } else if (bs->has_ttfk) {
        c_ttfk->skipped = jst_xstrdup("no kernel launched in this run");
    } else {
        c_ttfk->skipped = jst_xstrdup("no kernel launched in the baseline");
    }
    free(map);
    free(rmap);
    check_baseline_queries(x, cp);
}

/* ---- JUnit XML ---- */

/* Writes s escaped for XML text or attributes: markup characters as entities,
 * characters XML 1.0 forbids and invalid UTF-8 as U+FFFD. */
static void xml_escape(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned char c = *p;
        if (c < 0x80) {
            switch (c) {
            case '&':
                fputs("&amp;", f);
                break;
            case '<':
                fputs("&lt;", f);
                break;
            case '>':
                fputs("&gt;", f);
                break;
            case '"':
                fputs("&quot;", f);
                break;
            case '\'':
                fputs("&apos;", f);
                break;
            case '\n':
                fputs("&#10;", f);
                break;
            case '\r':
                fputs("&#13;", f);
                break;
            case '\t':
                fputs("&#9;", f);
                break;
            default:
                if (c < 0x20 || c == 0x7f)
                    fputs("\xEF\xBF\xBD", f);
                else
                    fputc(c, f);
            }
            p++;
            continue;
        }
        /* A well-formed UTF-8 sequence (no overlongs, surrogates or > U+10FFFF). */
        size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
        int ok = len > 0 && c <= 0xF4;
        uint32_t cp = len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
        for (size_t i = 1; ok && i < len; i++) {
            if ((p[i] & 0xC0) != 0x80)
                ok = 0;
            else
                cp = (cp << 6) | (p[i] & 0x3F);
        }
        if (ok && ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp < 0xE000) || cp >= 0xFFFE)) ||
                   (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))))
            ok = 0;
        if (!ok) {
            fputs("\xEF\xBF\xBD", f);
            p++;
            continue;
        }
        fwrite(p, 1, len, f);
        p += len;
    }
}

static int write_junit(const struct ctx *x, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        jst_errorf("check", "--junit %s: %s", path, strerror(errno));
        return -1;
    }
    size_t tests = 0, failures = 0, skipped = 0;
    for (size_t i = 0; i < x->n_procs; i++)
        for (size_t k = 0; k < x->procs[i].n_cases; k++) {
            tests++;
            failures += x->procs[i].cases[k].n > 0;
            skipped += x->procs[i].cases[k].skipped && !x->procs[i].cases[k].n;
        }
    double total = 0;
    for (size_t i = 0; i < x->n_procs; i++)
        for (size_t k = 0; k < x->procs[i].n_cases; k++)
            total += x->procs[i].cases[k].secs;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f,
            "<testsuites name=\"jitstall\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "time=\"%.3f\">\n",
            tests, failures, total);
    fprintf(f,
            "  <testsuite name=\"jitstall\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "skipped=\"%zu\" time=\"%.3f\">\n",
            tests, failures, skipped, total);
    for (size_t i = 0; i < x->n_procs; i++) {
        const struct cproc *cp = &x->procs[i];
        for (size_t k = 0; k < cp->n_cases; k++) {
            const struct ccase *c = &cp->cases[k];
            fputs("    <testcase classname=\"", f);
            xml_escape(f, cp->classname);
            fputs("\" name=\"", f);
            xml_escape(f, c->name);
            fprintf(f, "\" time=\"%.3f", c->secs);
            if (!c->n && !c->skipped) {
                fputs("\"/>\n", f);
                continue;
            }
            fputs("\">\n", f);
            if (c->n) {
                fputs("      <failure message=\"", f);
                xml_escape(f, c->lines[0]);
                if (c->n > 1)
                    fprintf(f, " (and %zu more)", c->n - 1);
                fprintf(f, "\" type=\"%s\">", c->type);
                for (size_t l = 0; l < c->n; l++) {
                    xml_escape(f, c->lines[l]);
                    if (l + 1 < c->n)
                        fputs("&#10;", f);
                }
                fputs("</failure>\n", f);
            } else {
                fputs("      <skipped message=\"", f);
                xml_escape(f, c->skipped);
                fputs("\"/>\n", f);
            }
            fputs("    </testcase>\n", f);
        }
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    if (ferror(f) | (fclose(f) != 0)) {
        jst_errorf("check", "--junit %s: write failed", path);
        return -1;
    }
    return 0;
}

/* ---- options ---- */

static int parse_num(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < 0) {
        jst_errorf("check", "%s: '%s' is not a non-negative number", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
    enum {
        O_JIT = 256,
        O_TTFK,
        O_MODS,
        O_FORBID,
        O_CACHE,
        O_BASE,
        O_TOL,
        O_DELTA,
        O_JUNIT,
        O_GH,
        O_QUERY
    };
    static const struct option lo[] = {
        {"max-jit-ms", required_argument, NULL, O_JIT},
        {"max-ttfk-ms", required_argument, NULL, O_TTFK},
        {"max-jit-modules", required_argument, NULL, O_MODS},
        {"forbid-verdict", required_argument, NULL, O_FORBID},
        {"require-cache", required_argument, NULL, O_CACHE},
        {"max-query-ms", required_argument, NULL, O_QUERY},
        {"baseline", required_argument, NULL, O_BASE},
        {"tolerance", required_argument, NULL, O_TOL},
        {"min-delta-ms", required_argument, NULL, O_DELTA},
        {"junit", required_argument, NULL, O_JUNIT},
        {"github", no_argument, NULL, O_GH},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    double v;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
        switch (c) {
        case O_JIT:
            if (parse_num("--max-jit-ms", optarg, &o->max_jit_ms) < 0)
                return -1;
            break;
        case O_TTFK:
            if (parse_num("--max-ttfk-ms", optarg, &o->max_ttfk_ms) < 0)
                return -1;
            break;
        case O_MODS:
            if (parse_num("--max-jit-modules", optarg, &v) < 0)
                return -1;
            if (v != floor(v) || v > 1e9) {
                jst_errorf("check", "--max-jit-modules: '%s' is not a whole number", optarg);
                return -1;
            }
            o->max_jit_modules = (long)v;
            break;
        case O_FORBID: {
            int found = -1;
            for (unsigned k = JST_V_SASS; jst_verdict_name(k); k++)
                if (!strcmp(jst_verdict_name(k), optarg))
                    found = (int)k;
            if (found < 0) {
                jst_errorf("check",
                           "--forbid-verdict: unknown verdict '%s' (one of sass, ptx_jit, "
                           "forced_jit, no_compatible, jit_disabled, damaged)",
                           optarg);
                return -1;
            }
            size_t k = 0;
            while (k < o->n_forbid && o->forbid[k] != (unsigned)found)
                k++;
            if (k == o->n_forbid && o->n_forbid < MAX_FORBID)
                o->forbid[o->n_forbid++] = (unsigned)found;
            break;
        }
        case O_CACHE: {
            int r = -1;
            for (unsigned k = JST_C_HIT; jst_cache_name(k); k++)
                if (!strcmp(jst_cache_name(k), optarg))
                    r = jst_cache_rank(k);
            if (r < 0 || r == 3) {
                jst_errorf("check", "--require-cache: '%s' is not one of hit, miss_stored, unknown",
                           optarg);
                return -1;
            }
            o->require_cache = r;
            break;
        }
        case O_QUERY: {
            const char *eq = strrchr(optarg, '=');
            if (!eq || eq == optarg) {
                jst_errorf("check", "--max-query-ms: '%s' is not NAME=MS", optarg);
                return -1;
            }
            if (o->n_query == MAX_QUERY_GATES) {
                jst_errorf("check", "--max-query-ms: at most %d queries", MAX_QUERY_GATES);
                return -1;
            }
            struct qgate *g = &o->query[o->n_query];
            if (parse_num("--max-query-ms", eq + 1, &g->ms) < 0)
                return -1;
            g->name = optarg;
            g->len = (size_t)(eq - optarg);
            o->n_query++;
            break;
        }
        case O_BASE:
            o->baseline = optarg;
            break;
        case O_TOL:
            if (parse_num("--tolerance", optarg, &o->tolerance) < 0)
                return -1;
            break;
        case O_DELTA:
            if (parse_num("--min-delta-ms", optarg, &o->min_delta_ms) < 0)
                return -1;
            break;
        case O_JUNIT:
            o->junit = optarg;
            break;
        case O_GH:
            o->github = 1;
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return 1;
        default:
            jst_errorf("check", "unknown option or missing value '%s' (see --help)",
                       argv[optind - 1]);
            return -1;
        }
    }
    if (optind >= argc) {
        jst_errorf("check", "no trace or directory given (see --help)");
        return -1;
    }
    /* With nothing to check, only calls in flight can fail: decided once the
     * traces are read. */
    o->no_budget = o->max_jit_ms < 0 && o->max_ttfk_ms < 0 && o->max_jit_modules < 0 &&
                   !o->n_forbid && o->require_cache < 0 && !o->baseline && !o->n_query;
    return 0;
}

static void print_case_lines(const struct ctx *x)
{
    for (size_t i = 0; i < x->n_procs; i++)
        for (size_t k = 0; k < x->procs[i].n_cases; k++)
            for (size_t l = 0; l < x->procs[i].cases[k].n; l++) {
                const char *line = x->procs[i].cases[k].lines[l];
                if (x->o.github) {
                    github_error_head(&x->procs[i].cases[k].locs[l]);
                    github_escape(stdout, line);
                    fputc('\n', stdout);
                } else {
                    printf("FAIL %s\n", line);
                }
            }
}

/* Orders processes by executable, then start time, then pid. */
static const struct cproc *g_sort_procs;
static int cmp_proc_order(const void *a, const void *b)
{
    const struct cproc *x = &g_sort_procs[*(const size_t *)a];
    const struct cproc *y = &g_sort_procs[*(const size_t *)b];
    int c = strcmp(x->s.exe, y->s.exe);
    if (c)
        return c;
    uint64_t sx = x->s.p ? x->s.p->proc_start_ns : 0, sy = y->s.p ? y->s.p->proc_start_ns : 0;
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return x->s.pid < y->s.pid ? -1 : x->s.pid > y->s.pid;
}

/* JUnit classnames that stay the same from one CI run to the next, so that
 * history and trend views line up: "jitstall.<exe>", and for the second and
 * later processes of the same executable, by start, "jitstall.<exe>_<n>".
 * No pid. Dots in the name would read as packages: they become '_'. */
static void set_classnames(struct ctx *x)
{
    size_t *idx = jst_xcalloc(x->n_procs + 1, sizeof(*idx));
    for (size_t i = 0; i < x->n_procs; i++)
        idx[i] = i;
    g_sort_procs = x->procs;
    qsort(idx, x->n_procs, sizeof(*idx), cmp_proc_order);
    size_t nth = 0;
    for (size_t r = 0; r < x->n_procs; r++) {
        struct cproc *cp = &x->procs[idx[r]];
        nth = r > 0 && !strcmp(x->procs[idx[r - 1]].s.exe, cp->s.exe) ? nth + 1 : 1;
        if (nth == 1)
            snprintf(cp->classname, sizeof cp->classname, "jitstall.%s", cp->s.exe);
        else
            snprintf(cp->classname, sizeof cp->classname, "jitstall.%s_%zu", cp->s.exe, nth);
        for (char *q = cp->classname + strlen("jitstall."); *q; q++)
            if (*q == '.')
                *q = '_';
    }
    free(idx);
}

static int cmd_check(int argc, char **argv)
{
    struct ctx x;
    memset(&x, 0, sizeof x);
    x.o.max_jit_ms = x.o.max_ttfk_ms = -1;
    x.o.max_jit_modules = -1;
    x.o.require_cache = -1;
    x.o.tolerance = 20;
    x.o.min_delta_ms = 1;
    int r = parse_opts(argc, argv, &x.o);
    if (r)
        return r > 0 ? JST_EXIT_OK : JST_EXIT_USAGE;

    struct jst_baseline base;
    memset(&base, 0, sizeof base);
    if (x.o.baseline) {
        char err[512];
        if (jst_baseline_read(x.o.baseline, &base, err, sizeof err) < 0) {
            jst_errorf("check", "--baseline %s: %s", x.o.baseline, err);
            return JST_EXIT_USAGE;
        }
    }
    struct jst_run run = {0};
    int rc = jst_run_load("check", argv + optind, argc - optind, &run, 1);
    if (rc != JST_EXIT_OK) {
        jst_model_free(&run);
        jst_baseline_free(&base);
        return rc;
    }
    size_t n_in_flight = 0;
    for (size_t i = 0; i < run.n_procs; i++)
        n_in_flight += run.procs[i].n_in_flight;
    if (x.o.no_budget && !n_in_flight) {
        jst_errorf("check", "nothing to check: give a budget (--max-jit-ms, --max-ttfk-ms, "
                            "--max-jit-modules, --forbid-verdict, --require-cache, "
                            "--max-query-ms) or --baseline");
        jst_model_free(&run);
        return JST_EXIT_USAGE;
    }
    for (size_t i = 0; i < run.n_procs; i++) {
        char why[512];
        if (jst_partial_str(&run.procs[i], why, sizeof why))
            warn(&x, "%s: partial trace (%s); checked what it holds",
                 run.procs[i].trace_path ? run.procs[i].trace_path : "?", why);
    }

    x.n_procs = run.n_procs;
    x.procs = jst_xcalloc(run.n_procs, sizeof(*x.procs));
    struct jst_psum *sums = jst_xcalloc(run.n_procs, sizeof(*sums));
    long *map = jst_xcalloc(run.n_procs, sizeof(*map));
    for (size_t i = 0; i < run.n_procs; i++) {
        if (jst_psum_from_process(&run.procs[i], &x.procs[i].s) < 0)
            jst_xalloc_die();
        sums[i] = x.procs[i].s;
    }
    set_classnames(&x);
    if (x.o.baseline) {
        jst_match_procs(sums, run.n_procs, base.procs, base.n_procs, map);
        char *used = calloc(base.n_procs + 1, 1);
        for (size_t i = 0; i < run.n_procs; i++)
            if (map[i] >= 0) {
                x.procs[i].base = &base.procs[map[i]];
                if (used)
                    used[map[i]] = 1;
            }
        for (size_t k = 0; used && k < base.n_procs; k++)
            if (!used[k])
                warn(&x, "baseline process %s (pid %llu) has no match in this run",
                     base.procs[k].exe, (unsigned long long)base.procs[k].pid);
        free(used);
    }
    size_t failed_procs = 0, n_checks = 0;
    for (size_t i = 0; i < run.n_procs; i++) {
        struct cproc *cp = &x.procs[i];
        size_t before = x.n_fail_lines;
        check_budgets(&x, cp);
        check_in_flight(&x, cp);
        check_queries(&x, cp);
        if (x.o.baseline)
            check_baseline(&x, cp);
        failed_procs += x.n_fail_lines > before;
        n_checks += cp->n_cases;
    }
    if (x.o.n_query && run.n_procs) {
        int had = 0;
        for (size_t k = 0; k < x.procs[0].n_cases; k++)
            had |= x.procs[0].cases[k].n != 0;
        size_t before = x.n_fail_lines;
        check_queries_found(&x);
        failed_procs += !had && x.n_fail_lines > before;
    }
    print_case_lines(&x);

    int junit_err = x.o.junit ? write_junit(&x, x.o.junit) : 0;
    if (x.n_fail_lines)
        printf("jitstall check: FAILED: %zu regression%s in %zu of %zu process%s\n", x.n_fail_lines,
               x.n_fail_lines == 1 ? "" : "s", failed_procs, run.n_procs,
               run.n_procs == 1 ? "" : "es");
    else
        printf("jitstall check: OK: %zu process%s within budget (%zu check%s)\n", run.n_procs,
               run.n_procs == 1 ? "" : "es", n_checks, n_checks == 1 ? "" : "s");
    fflush(stdout);

    for (size_t i = 0; i < x.n_procs; i++) {
        struct cproc *cp = &x.procs[i];
        for (size_t k = 0; k < cp->n_cases; k++) {
            for (size_t l = 0; l < cp->cases[k].n; l++) {
                free(cp->cases[k].lines[l]);
                free(cp->cases[k].locs[l].file);
            }
            free(cp->cases[k].lines);
            free(cp->cases[k].locs);
            free(cp->cases[k].skipped);
        }
        free(cp->cases);
        free(cp->site.file);
        if (cp->sym)
            jst_symbolizer_free(cp->sym);
        jst_psum_free(&cp->s);
    }
    free(x.procs);
    free(sums);
    free(map);
    jst_baseline_free(&base);
    jst_model_free(&run);
    if (junit_err)
        return JST_EXIT_USAGE;
    return x.n_fail_lines ? JST_EXIT_FAIL : JST_EXIT_OK;
}

JST_COMMAND(check, cmd_check, "fail a CI job on JIT budgets or a regression from a baseline")
