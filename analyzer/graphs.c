/*
 * CUDA graph capture (analyzer/graphs.h): pairs each cuStreamBeginCapture
 * with the next cuStreamEndCapture of the same stream (a stream captures one
 * graph at a time), in the order the calls were made, and adds every
 * cuGraphInstantiate* as a span of its own. A capture counts as a graph when
 * its end succeeded; a failed end still spent its time. A begin that failed
 * opens nothing; a begin never ended (the trace stopped) is left out of the
 * spans, and counted as open (status: a process still capturing).
 * Totals are wall times: spans that overlap on one thread (two streams
 * captured at once) count once.
 */
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "model.h"

/* Captures open at once that are followed (a program has one per stream it
 * captures on; more is a damaged or hostile trace, whose oldest open ones
 * are then forgotten). */
#define OPEN_MAX 256

/* A capture begun and not yet ended. */
struct open_cap {
    uint64_t stream, tid, start_ns;
};

static int cmp_seq(const void *a, const void *b)
{
    const struct jst_call_ev *x = *(const struct jst_call_ev *const *)a,
                             *y = *(const struct jst_call_ev *const *)b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x < y ? -1 : x > y; /* trace order (a trace without seq) */
}

static int cmp_span(const void *a, const void *b)
{
    const struct jst_graph_span *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static uint64_t end_of(uint64_t s, uint64_t d)
{
    return s > UINT64_MAX - d ? UINT64_MAX : s + d;
}

/* The union of the spans of one kind (graph: captures; else
 * instantiations), per thread, summed; spans are sorted by thread and start.
 * With ready (ready_ns != 0), only what starts at or after it. */
static uint64_t union_ns(const struct jst_graphs *g, int captures, uint64_t from_ns)
{
    uint64_t sum = 0, tid = 0, s = 0, e = 0;
    int open = 0;
    for (size_t i = 0; i < g->n_spans; i++) {
        const struct jst_graph_span *x = &g->spans[i];
        if ((x->graph >= 0) != captures || x->start_ns < from_ns)
            continue;
        if (open && x->tid == tid && x->start_ns <= e) {
            e = x->end_ns > e ? x->end_ns : e;
            continue;
        }
        if (open)
            sum += e - s;
        open = 1;
        tid = x->tid;
        s = x->start_ns;
        e = x->end_ns;
    }
    return open ? sum + (e - s) : sum;
}

/* Graph work before the first kernel, as wall time (any thread): its own
 * line of the time-to-first-kernel breakdown, taken out of the rest
 * ("everything else"), never more than that rest. */
static void ttfk_part(struct jst_process *p)
{
    struct jst_graphs *g = &p->graphs;
    uint64_t(*iv)[2] = p->first_launch_ns ? malloc(g->n_spans * sizeof *iv) : NULL;
    size_t n = 0;
    if (!iv)
        return;
    for (size_t i = 0; i < g->n_spans; i++) {
        const struct jst_graph_span *x = &g->spans[i];
        uint64_t e = x->end_ns < p->first_launch_ns ? x->end_ns : p->first_launch_ns;
        if (e > x->start_ns) {
            iv[n][0] = x->start_ns;
            iv[n++][1] = e;
        }
    }
    n = jst_iv_merge(iv, n);
    for (size_t i = 0; i < n; i++)
        g->ttfk_ns += iv[i][1] - iv[i][0];
    free(iv);
    g->ttfk_ns = g->ttfk_ns < p->other_ns ? g->ttfk_ns : p->other_ns;
    p->other_ns -= g->ttfk_ns;
}

void jst_graphs_free(struct jst_process *p)
{
    free(p->graphs.spans);
    memset(&p->graphs, 0, sizeof p->graphs);
}

void jst_graphs_derive(struct jst_process *p)
{
    struct jst_graphs *g = &p->graphs;
    jst_graphs_free(p);
    size_t n = 0;
    for (size_t i = 0; i < p->n_calls; i++)
        n += jst_is_graph_call(p->calls[i].call);
    if (!n)
        return;
    const struct jst_call_ev **v = malloc(n * sizeof *v);
    struct open_cap *open = malloc(n * sizeof *open);
    g->spans = malloc(n * sizeof *g->spans);
    if (!v || !open || !g->spans) {
        free(v);
        free(open);
        jst_graphs_free(p);
        return;
    }
    size_t k = 0, n_open = 0, evict = 0;
    for (size_t i = 0; i < p->n_calls; i++)
        if (jst_is_graph_call(p->calls[i].call))
            v[k++] = &p->calls[i];
    qsort(v, n, sizeof *v, cmp_seq);
    uint64_t ready = p->ready.present ? p->ready.t_ns : 0;
    for (size_t i = 0; i < n; i++) {
        const struct jst_call_ev *c = v[i];
        uint64_t end = end_of(c->start_ns, c->dur_ns);
        if (c->call == JST_CALL_cuGraphInstantiate) {
            /* graph -1: an instantiation */
            g->spans[g->n_spans++] = (struct jst_graph_span){c->tid, c->start_ns, end, -1};
            g->n_instantiated += c->result == 0;
            continue;
        }
        size_t j = 0;
        while (j < n_open && open[j].stream != c->handle)
            j++;
        if (c->call == JST_CALL_cuStreamBeginCapture) {
            if (c->result != 0 || c->in_flight)
                continue;
            if (j == n_open && n_open == OPEN_MAX)
                j = evict++ % OPEN_MAX; /* bounded work: the oldest open ones give way */
            else if (j == n_open)
                n_open++;
            open[j] = (struct open_cap){c->handle, c->tid, c->start_ns};
            continue;
        }
        if (j == n_open)
            continue; /* an end without a begin: the driver refused it */
        int made = c->result == 0 && !c->in_flight;
        uint64_t s = open[j].start_ns;
        g->spans[g->n_spans++] = (struct jst_graph_span){open[j].tid, s, end > s ? end : s, made};
        g->count += made;
        if (made && ready && s >= ready)
            g->late_count++;
        open[j] = open[--n_open];
    }
    g->n_open = n_open;
    for (size_t j = 0; j < n_open; j++)
        if (!g->open_since_ns || open[j].start_ns < g->open_since_ns)
            g->open_since_ns = open[j].start_ns;
    free(v);
    free(open);
    qsort(g->spans, g->n_spans, sizeof *g->spans, cmp_span);
    for (size_t i = 0; i < g->n_spans; i++)
        if (g->spans[i].end_ns - g->spans[i].start_ns > g->max_span_ns)
            g->max_span_ns = g->spans[i].end_ns - g->spans[i].start_ns;
    g->capture_ns = union_ns(g, 1, 0);
    g->instantiate_ns = union_ns(g, 0, 0);
    if (ready)
        g->late_ns = union_ns(g, 1, ready) + union_ns(g, 0, ready);
    ttfk_part(p);
}

size_t jst_graphs_within(const struct jst_process *p, uint64_t tid, uint64_t a, uint64_t b)
{
    const struct jst_graphs *g = &p->graphs;
    size_t lo = 0, hi = g->n_spans, n = 0;
    /* the thread's first span that can end after a: none is longer than
     * the longest */
    uint64_t from = a > g->max_span_ns ? a - g->max_span_ns : 0;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (g->spans[m].tid < tid || (g->spans[m].tid == tid && g->spans[m].start_ns < from))
            lo = m + 1;
        else
            hi = m;
    }
    for (size_t i = lo; i < g->n_spans && g->spans[i].tid == tid && g->spans[i].start_ns < b; i++)
        n += g->spans[i].graph > 0 && g->spans[i].end_ns > a && g->spans[i].end_ns <= b;
    return n;
}

uint64_t jst_graphs_ns(const struct jst_process *p)
{
    return p->graphs.capture_ns + p->graphs.instantiate_ns;
}

uint64_t jst_graphs_in_first_call(const struct jst_first_call *f)
{
    return f->blame[JST_CAUSE_GRAPH_CAPTURE];
}

int jst_graphs_main(const struct jst_process *p)
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

uint64_t jst_graphs_start_ns(const struct jst_process *p)
{
    if (!jst_graphs_main(p))
        return 0;
    uint64_t most = p->graphs.ttfk_ns;
    for (size_t i = 0; i < p->n_first_calls; i++)
        if (jst_graphs_in_first_call(&p->first_calls[i]) > most)
            most = jst_graphs_in_first_call(&p->first_calls[i]);
    return most;
}
