/*
 * CUDA graph capture in `jitstall report` (analyzer/graphs.h has the model):
 * one line per process that captured graphs, whether or not a first call
 * holds them, and the process's `graphs` object in JSON.
 */
#include <inttypes.h>
#include <stdio.h>
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
        fprintf(f, "- process %" PRIu64 ": %s\n", p->pid, w);
    }
}
