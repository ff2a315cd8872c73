/*
 * CUDA graph capture in `jitstall report` (analyzer/graphs.h has the model):
 * one line per process that captured graphs, whether or not a first call
 * holds them, and the process's `graphs` object in JSON.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "compiles.h"
#include "graphs.h"
#include "jsonw.h"
#include "model.h"
#include "report_compiles.h"
#include "report_view.h"

void rv_graphs_json(struct jst_json *j, const struct jst_process *p)
{
    const struct jst_graphs *g = &p->graphs;
    jst_json_key(j, "graphs");
    jst_json_obj(j);
    jst_json_ku64(j, "count", g->count);
    jst_json_ku64(j, "capture_ns", g->capture_ns);
    jst_json_ku64(j, "instantiated", g->n_instantiated);
    jst_json_ku64(j, "instantiate_ns", g->instantiate_ns);
    jst_json_ku64(j, "before_first_kernel_ns", g->ttfk_ns);
    jst_json_ku64(j, "late_count", g->late_count);
    jst_json_ku64(j, "late_ns", g->late_ns);
    jst_json_end(j);
}

/* "8 captured, 40.8 ms, instantiate 16.8 ms", or NULL when none. */
const char *rv_graphs_words(const struct jst_process *p, char *buf, size_t n)
{
    const struct jst_graphs *g = &p->graphs;
    char a[32], b[32];
    if (!g->count && !g->n_spans)
        return NULL;
    snprintf(buf, n, "%zu captured, %s, instantiate %s", g->count,
             rv_dur(g->capture_ns, a, sizeof a), rv_dur(g->instantiate_ns, b, sizeof b));
    return buf;
}

int rv_graphs_main(const struct jst_process *p)
{
    return jst_graphs_main(p);
}

const char *rv_graphs_culprit(const struct jst_process *p, char *buf, size_t n)
{
    char w[160];
    if (!rv_graphs_main(p) || !rv_graphs_words(p, w, sizeof w))
        return NULL;
    snprintf(buf, n, "CUDA graph capture: %s", w);
    return buf;
}

/* The processes where graph capture is a main cause: their graph time,
 * graphs, capture and instantiation summed; "pid 1, 2 ..." in pids. */
struct gsum {
    uint64_t ns, capture_ns, instantiate_ns;
    size_t count, n_procs;
    const struct jst_process *one;
};

static void graphs_sum(const struct rv_report *r, struct gsum *s, char *pids, size_t n)
{
    size_t at = 0;
    memset(s, 0, sizeof(*s));
    if (n)
        pids[0] = 0;
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        if (!jst_graphs_main(p))
            continue;
        s->ns += jst_graphs_ns(p);
        s->capture_ns += p->graphs.capture_ns;
        s->instantiate_ns += p->graphs.instantiate_ns;
        s->count += p->graphs.count;
        s->one = p;
        if (++s->n_procs <= 6 && at < n) {
            int k = snprintf(pids + at, n - at, "%s%" PRIu64, at ? ", " : "", p->pid);
            at = k > 0 && (size_t)k < n - at ? at + (size_t)k : n;
        }
    }
    if (s->n_procs > 6 && at < n)
        snprintf(pids + at, n - at, ", ... %zu more", s->n_procs - 6);
}

uint64_t rv_graphs_culprit_ns(const struct rv_report *r)
{
    struct gsum s;
    graphs_sum(r, &s, NULL, 0);
    return s.ns;
}

/* "12 captured, 62.0 ms, instantiate 25.6 ms" over the processes. */
static const char *sum_words(const struct gsum *s, char *buf, size_t n)
{
    char a[32], b[32];
    snprintf(buf, n, "%zu captured, %s, instantiate %s", s->count,
             rv_dur(s->capture_ns, a, sizeof a), rv_dur(s->instantiate_ns, b, sizeof b));
    return buf;
}

void rv_graphs_culprit_text(FILE *f, const struct rv_report *r, size_t num)
{
    char a[32], w[200], pids[160];
    struct gsum s;
    graphs_sum(r, &s, pids, sizeof pids);
    if (!s.n_procs)
        return;
    fprintf(f, "  %zu. %s  CUDA graph capture: %s", num, rv_dur(s.ns, a, sizeof a),
            sum_words(&s, w, sizeof w));
    if (s.n_procs > 1)
        fprintf(f, "  [%zu processes, pid %s]\n", s.n_procs, pids);
    else
        fprintf(f, " (process %" PRIu64 ")\n", s.one->pid);
    fprintf(f, "     fix        %s\n", RV_GRAPHS_FIX);
}

void rv_graphs_culprit_md(FILE *f, const struct rv_report *r, size_t num)
{
    char a[32], w[200], pids[160];
    struct gsum s;
    graphs_sum(r, &s, pids, sizeof pids);
    if (!s.n_procs)
        return;
    fprintf(f, "| %zu | %s | ", num, rv_dur(s.ns, a, sizeof a));
    if (s.n_procs > 1)
        fprintf(f, "%zu processes, pid %s", s.n_procs, pids);
    else
        fprintf(f, "pid %" PRIu64, s.one->pid);
    fprintf(f, " | CUDA graph capture | %s | - | - | - | %s |\n", sum_words(&s, w, sizeof w),
            RV_GRAPHS_FIX);
}

void rv_graphs_text(FILE *f, const struct jst_process *p)
{
    char w[160], a[32];
    if (!rv_graphs_words(p, w, sizeof w))
        return;
    fprintf(f, "  CUDA graphs          %s", w);
    if (p->graphs.late_count)
        fprintf(f, "; %zu after ready (%s)", p->graphs.late_count,
                rv_dur(p->graphs.late_ns, a, sizeof a));
    fputc('\n', f);
}

void rv_graphs_markdown(FILE *f, const struct rv_report *r)
{
    char w[160];
    int any = 0;
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        if (!rv_graphs_words(p, w, sizeof w))
            continue;
        if (!any)
            fputs("\nCUDA graphs:\n\n", f);
        any = 1;
        fprintf(f, "- process %" PRIu64 ": %s", p->pid, w);
        if (rv_graphs_main(p))
            fprintf(f, "; a main cause of its start; fix: %s", RV_GRAPHS_FIX);
        fputc('\n', f);
    }
}
