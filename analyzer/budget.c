/*
 * A start-up budget from past runs (analyzer/budget.h). Teams guess how long
 * a server may take to start, and either kill healthy pods or wait too long
 * for dead ones; the runs they already traced say how long starts take.
 */
#include <inttypes.h>
#include <stdlib.h>
#include "budget.h"
#include "fleet.h"
#include "jsonw.h"
#include "model.h"
#include "report_view.h"

/* A run's start-up: to ready, else to its first kernel; 0 when neither. */
static uint64_t startup_ns(const struct jst_process *p, int *by_ready)
{
    *by_ready = p->ready.present;
    if (p->ready.present)
        return p->ttr_ns ? p->ttr_ns : 1;
    return p->first_launch_ns ? (p->ttfk_ns ? p->ttfk_ns : 1) : 0;
}

int jst_startup_shown(const struct rv_report *r, int k8s, double budget_s)
{
    if (k8s || budget_s >= 0)
        return 1;
    for (size_t i = 0; i < r->n_procs; i++)
        if (r->procs[i].p->ready.present)
            return 1;
    return 0;
}

int jst_startup_compute(const struct rv_report *r, double budget_s, struct jst_startup *s)
{
    uint64_t *v = malloc((r->n_procs ? r->n_procs : 1) * sizeof *v);
    if (!v)
        return -1;
    *s = (struct jst_startup){0};
    s->has_budget = budget_s >= 0;
    s->budget_ns = s->has_budget ? (uint64_t)(budget_s * 1e9) : 0;
    for (size_t i = 0; i < r->n_procs; i++) {
        int by_ready;
        uint64_t t = startup_ns(r->procs[i].p, &by_ready);
        if (!t) {
            s->n_unknown++;
            continue;
        }
        v[s->n++] = t;
        s->n_ready += by_ready;
        s->killed += s->has_budget && t > s->budget_ns;
    }
    if (s->n) {
        s->p50 = fl_percentile(v, s->n, 50);
        s->p95 = fl_percentile(v, s->n, 95);
        s->p99 = fl_percentile(v, s->n, 99);
        s->max = v[s->n - 1];
        /* whole periods covering p99 and the margin; at least one */
        unsigned __int128 want = (unsigned __int128)s->p99 * (100 + JST_PROBE_MARGIN_PCT) / 100;
        unsigned __int128 per = (unsigned __int128)JST_PROBE_PERIOD_S * 1000000000u;
        unsigned __int128 k = (want + per - 1) / per;
        s->failure_threshold = k < 1 ? 1 : k > 1000000 ? 1000000 : (unsigned)k;
    }
    free(v);
    return 0;
}

void jst_startup_write(FILE *f, const struct jst_startup *s, int k8s, int md)
{
    char a[32], b[32], c[32], d[32];
    const char *in = md ? "" : "  ";
    fprintf(f,
            md ? "\n**Start-up budget** (%zu run%s: %zu by time to ready, %zu by time to "
                 "first kernel where no ready was set)\n\n"
               : "\nStart-up budget (%zu run%s: %zu by time to ready, %zu by time to first "
                 "kernel where no ready was set)\n",
            s->n, s->n == 1 ? "" : "s", s->n_ready, s->n - s->n_ready);
    if (!s->n) {
        fprintf(f, "%sno run got ready or launched a kernel: nothing to measure\n", in);
        return;
    }
    fprintf(f, "%sp50 %s, p95 %s, p99 %s, max %s\n", in, rv_dur(s->p50, a, sizeof a),
            rv_dur(s->p95, b, sizeof b), rv_dur(s->p99, c, sizeof c), rv_dur(s->max, d, sizeof d));
    if (s->n_unknown)
        fprintf(f, "%s%zu run%s never got ready nor launched a kernel: not counted\n",
                md ? "\n" : in, s->n_unknown, s->n_unknown == 1 ? "" : "s");
    if (s->has_budget)
        fprintf(f, "%sa budget of %s would have killed %zu of %zu runs (%.1f%%)\n", md ? "\n" : in,
                rv_dur(s->budget_ns, a, sizeof a), s->killed, s->n,
                100.0 * (double)s->killed / (double)s->n);
    if (!k8s)
        return;
    uint64_t probe = (uint64_t)s->failure_threshold * JST_PROBE_PERIOD_S;
    fprintf(f,
            "%sKubernetes startupProbe: failureThreshold x periodSeconds = %u x %d s = %" PRIu64
            " s, covering p99 (%s) with a %d%% margin\n",
            md ? "\n" : in, s->failure_threshold, JST_PROBE_PERIOD_S, probe,
            rv_dur(s->p99, a, sizeof a), JST_PROBE_MARGIN_PCT);
    fprintf(f,
            "%s%sstartupProbe:\n"
            "%s  httpGet:                # the server's own readiness check\n"
            "%s    path: /health\n"
            "%s    port: 8000\n"
            "%s  periodSeconds: %d\n"
            "%s  failureThreshold: %u     # %" PRIu64 " s: p99 %s + %d%%\n%s",
            md ? "\n```yaml\n" : "", in, in, in, in, in, JST_PROBE_PERIOD_S, in,
            s->failure_threshold, probe, rv_dur(s->p99, a, sizeof a), JST_PROBE_MARGIN_PCT,
            md ? "```\n" : "");
}

void jst_startup_json(struct jst_json *j, const struct jst_startup *s)
{
    jst_json_key(j, "startup");
    jst_json_obj(j);
    jst_json_ku64(j, "runs", s->n);
    jst_json_ku64(j, "runs_by_ready", s->n_ready);
    jst_json_ku64(j, "runs_unknown", s->n_unknown);
    jst_json_kopt_u64(j, "p50_ns", s->n != 0, s->p50);
    jst_json_kopt_u64(j, "p95_ns", s->n != 0, s->p95);
    jst_json_kopt_u64(j, "p99_ns", s->n != 0, s->p99);
    jst_json_kopt_u64(j, "max_ns", s->n != 0, s->max);
    jst_json_ku64(j, "probe_period_s", JST_PROBE_PERIOD_S);
    jst_json_ku64(j, "probe_margin_pct", JST_PROBE_MARGIN_PCT);
    jst_json_kopt_u64(j, "probe_failure_threshold", s->n != 0, s->failure_threshold);
    jst_json_kopt_u64(j, "budget_ns", s->has_budget, s->budget_ns);
    jst_json_kopt_u64(j, "killed_by_budget", s->has_budget, s->killed);
    jst_json_end(j);
}
