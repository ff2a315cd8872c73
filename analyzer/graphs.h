/*
 * CUDA graph capture (implementation: analyzer/graphs.c). A server captures
 * one graph per batch size at start: the time from each cuStreamBeginCapture
 * to the cuStreamEndCapture of the same stream, and each cuGraphInstantiate*,
 * is time before the first request. These spans are one cause of the blame
 * model (JST_CAUSE_GRAPH_CAPTURE): a first call that holds captures blames
 * them, and the process's totals are reported even when no first call does.
 */
#ifndef JST_ANALYZER_GRAPHS_H
#define JST_ANALYZER_GRAPHS_H

#include <stddef.h>
#include <stdint.h>

/* One stretch of graph work on a thread: a capture (begin to end) or an
 * instantiation. */
struct jst_graph_span {
    uint64_t tid, start_ns, end_ns;
    int graph; /* 1: a capture that made a graph (a successful end), 0: a capture
                  that made none, -1: an instantiation */
};

struct jst_graphs {
    size_t count;                 /* graphs captured: successful cuStreamEndCapture */
    size_t n_instantiated;        /* successful cuGraphInstantiate* */
    uint64_t capture_ns;          /* begin-to-end spans: union per thread, summed */
    uint64_t instantiate_ns;      /* instantiations: union per thread, summed */
    size_t late_count;            /* graphs captured after the ready moment */
    uint64_t late_ns;             /* their capture and every instantiation after ready */
    uint64_t ttfk_ns;             /* graph work before the first launch: its wall time, out of
                                     the time-to-first-kernel breakdown's rest */
    uint64_t max_span_ns;         /* the longest span (lookups by time) */
    size_t n_open;                /* captures begun and not ended when the trace ends (still
                                     capturing, or killed during one) */
    uint64_t open_since_ns;       /* the oldest of them began; 0 when none */
    struct jst_graph_span *spans; /* captures and instantiations, by thread, then start */
    size_t n_spans;
};

struct jst_process;
/* Fills p->graphs from p's calls (jst_model_derive calls it). */
void jst_graphs_derive(struct jst_process *p);
void jst_graphs_free(struct jst_process *p);
/* Graphs captured on thread tid whose capture ended within [a, b). */
size_t jst_graphs_within(const struct jst_process *p, uint64_t tid, uint64_t a, uint64_t b);
/* The time graph work took in p as a whole: capture_ns + instantiate_ns. */
uint64_t jst_graphs_ns(const struct jst_process *p);
/* Whether graph capture is a main cause of p's start: the largest cause of
 * one of its first calls, or the largest part of its time to first kernel. */
int jst_graphs_main(const struct jst_process *p);
/* What capturing later (after the first requests) takes off p's start: the
 * graph work in its time to first kernel or in its slowest first call,
 * whichever is more; 0 unless jst_graphs_main(p). */
uint64_t jst_graphs_start_ns(const struct jst_process *p);
/* The graph work in first call f (its blame), and the fix every output
 * words the same way. */
struct jst_first_call;
uint64_t jst_graphs_in_first_call(const struct jst_first_call *f);
#define JST_GRAPHS_FIX                                                                             \
    "capture fewer graphs (one per batch size a request can have), or capture after the "          \
    "first requests are served"

#endif
