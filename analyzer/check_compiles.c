/*
 * `jitstall check`'s budgets on compiles, whatever the compiler: their wall
 * time (--max-compile-ms), their number (--max-compiles), each for every
 * compiler together or for one, and the slowest first call
 * (--max-first-call-ms). One rule for all compilers: the compiler is a table
 * row (analyzer/compiles.h), never a case of its own here.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_ctx.h"
#include "cli.h"
#include "compiles.h"
#include "fixes.h"
#include "report_compiles.h"
#include "report_view.h"
#include "samplefn.h"

int chk_parse_compile_gate(const char *opt, const char *arg, struct cgate *g, size_t *n)
{
    const char *eq = strchr(arg, '='), *num = eq ? eq + 1 : arg;
    unsigned k = 0;
    if (eq) {
        char name[32];
        size_t l = (size_t)(eq - arg);
        if (l >= sizeof name ||
            !(memcpy(name, arg, l), name[l] = 0, k = jst_compiler_by_name(name))) {
            jst_errorf("check",
                       "%s: '%.*s' is not a compiler (driver, nvrtc, nvjitlink, nvvm, "
                       "nvptxcompiler, ptxas, nvcc, cicc, nvlink, fatbinary, host_cc, xla)",
                       opt, (int)l, arg);
            return -1;
        }
    }
    char *end;
    errno = 0;
    double v = strtod(num, &end);
    if (!*num || *end || errno || !isfinite(v) || v < 0) {
        jst_errorf("check", "%s: '%s' is not [COMPILER=]N with N a non-negative number", opt, arg);
        return -1;
    }
    if (*n == MAX_COMPILE_GATES) {
        jst_errorf("check", "%s: at most %d", opt, MAX_COMPILE_GATES);
        return -1;
    }
    g[*n].compiler = k;
    g[*n].limit = v;
    (*n)++;
    return 0;
}

/* The compile of compiler k (0: any) that took longest, or NULL. */
static const struct jst_compile *worst(const struct jst_process *p, unsigned k)
{
    const struct jst_compile *w = NULL;
    for (size_t i = 0; i < p->n_compiles; i++) {
        const struct jst_compile *c = &p->compiles[i];
        if ((!k || c->compiler == k) && jst_compile_counts(c) && (!w || c->dur_ns > w->dur_ns))
            w = c;
    }
    return w;
}

/* What a compile was for: the first call that holds it (the one whose
 * first kernel the compile records), named as the report names first calls;
 * else what it compiled or produced; else NULL. */
static const char *compile_for(const struct jst_process *p, const struct jst_compile *w, char *buf,
                               size_t n)
{
    struct jst_fc_index ix;
    jst_fc_index_init(&ix, p);
    const struct jst_first_call *f = jst_fc_index_of(&ix, w);
    jst_fc_index_free(&ix);
    if (f)
        return rv_first_call_name(f, buf, n);
    return w->kernel ? w->kernel : w->what;
}

/* "; longest: ptxas 400.0 ms (triton) for add_kernel from main (/app/t.py:9)";
 * its fix (as report words it, when the compile has one) is the next failure
 * line's detail. */
static const char *worst_detail(struct cproc *cp, const struct jst_compile *w, char *buf, size_t n)
{
    char a[32], fix[1024], nm[1024];
    if (!w) {
        snprintf(buf, n, "%s", "");
        return buf;
    }
    const char *f = jst_fix_for_compile(cp->s.p, w, fix, sizeof fix);
    const char *what = compile_for(cp->s.p, w, nm, sizeof nm);
    snprintf(buf, n, "; longest: %s %s%s%s%s%s%s", jst_compiler_name(w->compiler),
             rv_dur(w->dur_ns, a, sizeof a), w->framework ? " (" : "",
             w->framework ? jst_framework_name(w->framework) : "", w->framework ? ")" : "",
             what ? " for " : "", what ? what : "");
    if (f)
        chk_set_detail(cp, NULL, f);
    return buf;
}

static const char *gate_name(const char *opt, const struct cgate *g, char *buf, size_t n)
{
    if (g->compiler)
        snprintf(buf, n, "%s=%s", opt, jst_compiler_name(g->compiler));
    else
        snprintf(buf, n, "%s", opt);
    return buf;
}

static void budget_compile_ms(struct ctx *x, struct cproc *cp, const struct cgate *g)
{
    const struct jst_process *p = cp->s.p;
    char name[64], a[64], b[64], d[64], det[1536];
    struct ccase *c = chk_add_case(cp, gate_name("max-compile-ms", g, name, sizeof name), "budget");
    uint64_t ns = jst_compiler_wall(p, g->compiler); /* parallel compiles once */
    c->secs = (double)ns / 1e9;
    uint64_t lim = (uint64_t)(g->limit * 1e6);
    if (ns > lim)
        chk_fail_line(x, cp, c, "%s took %s, budget %s (+%s)%s",
                      g->compiler ? jst_compiler_label(g->compiler) : "compiling",
                      jst_fmt_ms(ns, a, 64), jst_fmt_ms(lim, b, 64), jst_fmt_ms(ns - lim, d, 64),
                      worst_detail(cp, worst(p, g->compiler), det, sizeof det));
}

static void budget_compiles(struct ctx *x, struct cproc *cp, const struct cgate *g)
{
    const struct jst_process *p = cp->s.p;
    char name[64], det[1536];
    struct ccase *c = chk_add_case(cp, gate_name("max-compiles", g, name, sizeof name), "budget");
    size_t n = 0;
    for (size_t i = 0; i < p->n_compiles; i++)
        n += (!g->compiler || p->compiles[i].compiler == g->compiler) &&
             jst_compile_counts(&p->compiles[i]);
    if ((double)n > g->limit)
        chk_fail_line(x, cp, c, "%zu compile%s%s%s, budget %.0f (+%.0f)%s", n, n == 1 ? "" : "s",
                      g->compiler ? " by " : "", g->compiler ? jst_compiler_name(g->compiler) : "",
                      g->limit, (double)n - g->limit,
                      worst_detail(cp, worst(p, g->compiler), det, sizeof det));
}

/* The causes of a first call, largest first, as "subprocess 400.0 ms,
 * python 600.0 ms (cache_key 400.0 ms)": Python with its largest phase. */
static const char *blame_detail(const struct jst_first_call *f, char *buf, size_t n)
{
    char a[32];
    unsigned order[JST_CAUSE_MAX_];
    for (unsigned i = 0; i < JST_CAUSE_MAX_; i++)
        order[i] = i;
    for (unsigned i = 1; i < JST_CAUSE_MAX_; i++)
        for (unsigned k = i; k > 0 && f->blame[order[k]] > f->blame[order[k - 1]]; k--) {
            unsigned t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    buf[0] = 0;
    for (unsigned i = 0, shown = 0; i < JST_CAUSE_MAX_ && shown < 3; i++) {
        if (!f->blame[order[i]])
            continue;
        size_t l = strlen(buf);
        snprintf(buf + l, n - l, "%s%s %s", shown ? ", " : "; ", jst_cause_name(order[i]),
                 rv_dur(f->blame[order[i]], a, sizeof a));
        if (order[i] == JST_CAUSE_PYTHON && f->n_phases) { /* phases: largest first */
            l = strlen(buf);
            snprintf(buf + l, n - l, " (%s %s)", jst_phase_name(f->phases[0].phase),
                     rv_dur(f->phases[0].dur_ns, a, sizeof a));
        }
        shown++;
    }
    return buf;
}

static void budget_first_call(struct ctx *x, struct cproc *cp)
{
    const struct jst_process *p = cp->s.p;
    char a[64], b[64], d[64], det[512], nm[1536];
    struct ccase *c = chk_add_case(cp, "max-first-call-ms", "budget");
    const struct jst_first_call *w = jst_slowest_first_call(p);
    uint64_t lim = (uint64_t)(x->o.max_first_call_ms * 1e6);
    c->secs = w ? (double)w->dur_ns / 1e9 : 0;
    for (size_t i = 0; i < p->n_first_calls; i++) {
        const struct jst_first_call *f = &p->first_calls[i];
        if (f->dur_ns <= lim)
            continue;
        chk_fail_line(x, cp, c, "first call of %s%s%s%s%s%s took %s, budget %s (+%s)%s",
                      jst_first_call_title(f, nm, sizeof nm), f->top_framework ? " [" : "",
                      f->top_framework ? jst_framework_name(f->top_framework) : "",
                      f->top_framework && f->cache ? ", cache " : "",
                      f->top_framework && f->cache ? f->cache : "", f->top_framework ? "]" : "",
                      jst_fmt_ms(f->dur_ns, a, 64), jst_fmt_ms(lim, b, 64),
                      jst_fmt_ms(f->dur_ns - lim, d, 64), blame_detail(f, det, sizeof det));
    }
}

void chk_compile_budgets(struct ctx *x, struct cproc *cp)
{
    if (!cp->s.p) /* a baseline's summary: nothing to measure */
        return;
    for (size_t i = 0; i < x->o.n_compile_ms; i++)
        budget_compile_ms(x, cp, &x->o.compile_ms[i]);
    for (size_t i = 0; i < x->o.n_compiles; i++)
        budget_compiles(x, cp, &x->o.compiles[i]);
    if (x->o.max_first_call_ms >= 0)
        budget_first_call(x, cp);
}
