/*
 * Test tool of the chain end-to-end test: reads one trace through the
 * analyzer's model and prints every frame of every call's stack, symbolized
 * by analyzer/symbolize.c, one tab-separated line per frame:
 *   seq call frame internal callsite func file line module note
 * ("-" for an empty value). The report shows only the call site; the test
 * needs the whole chain. Exit status 0, or 2 when the trace is unreadable.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "model.h"
#include "symbolize.h"

#define MAX_FRAMES 256

static const char *or_dash(const char *s)
{
    return s && *s ? s : "-";
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: chain_symbolize TRACE\n");
        return 2;
    }
    struct jst_run run = {0};
    char err[512];
    if (jst_model_add(&run, argv[1], err, sizeof err) < 0 || run.n_procs == 0) {
        fprintf(stderr, "chain_symbolize: %s\n", err);
        return 2;
    }
    static struct jst_frame frames[MAX_FRAMES];
    for (size_t pi = 0; pi < run.n_procs; pi++) {
        const struct jst_process *p = &run.procs[pi];
        struct jst_symbolizer *s = jst_symbolizer_new(p);
        if (!s) {
            fprintf(stderr, "chain_symbolize: out of memory\n");
            return 2;
        }
        for (size_t i = 0; i < p->n_calls; i++) {
            const struct jst_call_ev *c = &p->calls[i];
            size_t n = jst_symbolize_stack(s, c->stack_id, c->seq, frames, MAX_FRAMES);
            int site = jst_call_site(frames, n);
            for (size_t k = 0; k < n; k++) {
                const struct jst_frame *f = &frames[k];
                char line[16];
                snprintf(line, sizeof line, "%u", f->line);
                printf("%" PRIu64 "\t%s\t%zu\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", c->seq,
                       or_dash(c->call_name), k, f->internal, (int)k == site, or_dash(f->func),
                       or_dash(f->file), f->line ? line : "-", or_dash(f->module),
                       or_dash(f->note));
            }
        }
        jst_symbolizer_free(s);
    }
    jst_model_free(&run);
    return 0;
}
