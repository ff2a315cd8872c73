/*
 * CUDA graph capture in `jitstall report` (analyzer/graphs.h has the model):
 * one line per process that captured graphs, whether or not a first call
 * holds them, and the process's `graphs` object in JSON.
 */
#include <inttypes.h>
#include <stdio.h>
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
    const struct jst_graphs *g = &p->graphs;
    if (!g->count)
        return 0;
    for (size_t i = 0; i < p->n_first_calls; i++) {
        const struct jst_first_call *f = &p->first_calls[i];
        unsigned top = 0;
        for (unsigned c = 1; c < JST_CAUSE_MAX_; c++)
            if (f->blame[c] > f->blame[top])
                top = c;
        if (top == JST_CAUSE_GRAPH_CAPTURE && f->blame[top])
            return 1;
    }
    uint64_t t = g->ttfk_ns;
    return t && t > p->ttfk_jit_ns && t > p->init_ns + p->ctx_ns && t > p->sass_load_ns &&
           t > p->rtc_ns && t > p->pre_driver_ns && t > p->other_ns;
}

const char *rv_graphs_culprit(const struct jst_process *p, char *buf, size_t n)
{
    char w[160];
    if (!rv_graphs_main(p) || !rv_graphs_words(p, w, sizeof w))
        return NULL;
    snprintf(buf, n, "CUDA graph capture: %s", w);
    return buf;
}

void rv_graphs_culprits(FILE *f, const struct rv_report *r)
{
    char a[32], w[200];
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        if (!rv_graphs_culprit(p, w, sizeof w))
            continue;
        fprintf(f, "  *  %s  %s (process %" PRIu64 ")\n     fix        %s\n",
                rv_dur(jst_graphs_ns(p), a, sizeof a), w, p->pid, RV_GRAPHS_FIX);
    }
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
