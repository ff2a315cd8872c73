/*
 * `jitstall check`'s percentile budgets: --max-ttfk-ms p95=N and
 * --max-jit-ms p95=N judge the runs of one program together (same executable
 * and command, as report's fleet view groups them), so that one slow replica
 * among hundreds does not fail a fleet whose p95 is fine, and a fleet whose
 * p95 grew does fail though no single budget would.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_ctx.h"
#include "cli.h"
#include "fleet.h"
#include "xalloc.h"

int chk_parse_pct(const char *opt, const char *arg, struct opts *o, int metric)
{
    const char *eq = strchr(arg, '=');
    unsigned pct = 0;
    if (eq && eq - arg == 3 && !strncmp(arg, "max", 3))
        pct = 100;
    else if (eq && arg[0] == 'p' && eq - arg >= 2 && eq - arg <= 3) {
        char *end;
        unsigned long v = strtoul(arg + 1, &end, 10);
        if (end == eq && arg[1] != '0' && v >= 1 && v <= 99)
            pct = (unsigned)v;
    }
    if (!pct) {
        jst_errorf("check", "%s: '%s' is not N, pNN=N (NN 1 to 99) or max=N", opt, arg);
        return -1;
    }
    char *end;
    errno = 0;
    double v = strtod(eq + 1, &end);
    if (!eq[1] || *end || errno || !isfinite(v) || v < 0) {
        jst_errorf("check", "%s: '%s' is not a non-negative number", opt, eq + 1);
        return -1;
    }
    if (o->n_pct == MAX_PCT_GATES) {
        jst_errorf("check", "%s: at most %d percentile budgets", opt, MAX_PCT_GATES);
        return -1;
    }
    o->pct[o->n_pct++] = (struct pgate){metric, pct, v};
    return 0;
}

static const char *pct_name(unsigned pct, char *buf, size_t n)
{
    if (pct == 100)
        snprintf(buf, n, "max");
    else
        snprintf(buf, n, "p%u", pct);
    return buf;
}

/* One case per gate and program, on the program's worst run (the longest
 * measure): JUnit and the annotations carry it like any budget. */
void chk_percentiles(struct ctx *x)
{
    if (!x->o.n_pct || !x->n_procs)
        return;
    const struct jst_process **ps = jst_xcalloc(x->n_procs, sizeof(*ps));
    size_t *of = jst_xcalloc(x->n_procs, sizeof(*of));
    size_t n_real = 0;
    for (size_t i = 0; i < x->n_procs; i++)
        if (x->procs[i].s.p)
            ps[n_real++] = x->procs[i].s.p;
    size_t ng = fl_group_of(ps, n_real, of);
    uint64_t *v = jst_xcalloc(n_real + 1, sizeof(*v));
    for (size_t g = 0; g < ng; g++) {
        for (size_t k = 0; k < x->o.n_pct; k++) {
            const struct pgate *pg = &x->o.pct[k];
            size_t n = 0, runs = 0, worst = 0, first = 0;
            uint64_t worst_v = 0;
            for (size_t i = 0; i < n_real; i++) {
                if (of[i] != g)
                    continue;
                if (!runs++)
                    first = i;
                const struct jst_process *p = ps[i];
                int have = pg->metric == PCT_TTFK ? p->first_launch_ns != 0 : 1;
                uint64_t m = pg->metric == PCT_TTFK ? p->ttfk_ns : p->jit_ns;
                if (!have)
                    continue;
                v[n++] = m;
                if (n == 1 || m > worst_v) {
                    worst_v = m;
                    worst = i;
                }
            }
            if (!n)
                continue;
            uint64_t val = fl_percentile(v, n, pg->pct);
            uint64_t lim = (uint64_t)(pg->ms * 1e6);
            char nm[16], name[64], a[64], b[64], d[64], w[64];
            pct_name(pg->pct, nm, sizeof nm);
            snprintf(name, sizeof name, "%s=%s",
                     pg->metric == PCT_TTFK ? "max-ttfk-ms" : "max-jit-ms", nm);
            struct cproc *cp = NULL;
            for (size_t i = 0; i < x->n_procs; i++)
                if (x->procs[i].s.p == ps[worst])
                    cp = &x->procs[i];
            if (!cp)
                continue;
            struct ccase *c = chk_add_case(cp, name, "budget");
            c->secs = (double)val / 1e9;
            if (val <= lim)
                continue;
            chk_fail_line(x, cp, c,
                          "%s of %s over %zu of %zu run%s of %s is %s, budget %s (+%s); worst run "
                          "pid %llu, %s (%s)",
                          nm, pg->metric == PCT_TTFK ? "time to first kernel" : "JIT time", n, runs,
                          runs == 1 ? "" : "s", fl_exe(ps[first]), jst_fmt_ms(val, a, 64),
                          jst_fmt_ms(lim, b, 64), jst_fmt_ms(val - lim, d, 64),
                          (unsigned long long)ps[worst]->pid, jst_fmt_ms(worst_v, w, 64),
                          ps[worst]->trace_path ? ps[worst]->trace_path : "?");
        }
    }
    free(v);
    free(of);
    free(ps);
}
