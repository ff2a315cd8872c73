/*
 * The program's own query boundaries: NVTX range records (push/pop, start/
 * end, per domain) become ranges, and each top-level range of a thread is a
 * query, with the JIT and runtime-compile time that ran inside it. A trace
 * without range records has no queries, and the report is as before.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "fixes.h"
#include "model.h"
#include "trace.h"

void jst_queries_read(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_range_ev ev = {0};
    jst_model_read_range(p, &ev, it);
    if (ev.op < JST_RANGE_PUSH || ev.op > JST_RANGE_END) {
        free(ev.name);
        free(ev.domain);
        return;
    }
    if (p->n_ranges == p->cap_ranges) { /* doubling: traces may hold millions */
        size_t cap = p->cap_ranges ? p->cap_ranges * 2 : 64;
        struct jst_range_ev *v =
            cap < SIZE_MAX / sizeof(*v) ? realloc(p->ranges, cap * sizeof(*v)) : NULL;
        if (!v) {
            free(ev.name);
            free(ev.domain);
            return;
        }
        p->ranges = v;
        p->cap_ranges = cap;
    }
    p->ranges[p->n_ranges++] = ev;
}

/* A range being built: the event that opened it and its end. */
struct span {
    const struct jst_range_ev *open;
    size_t order; /* index of the opening event: earlier opens enclose later */
    uint64_t end_ns;
    int closed;
};

static int same_domain(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* The latest open span that an event ending a range closes (a pop: the last
 * push of its thread and domain; an end: the start with its id), taken off
 * the list of open spans (indices into s, oldest first); NULL if none. */
static struct span *closes(struct span *s, size_t *open, size_t *n_open,
                           const struct jst_range_ev *e)
{
    for (size_t k = *n_open; k-- > 0;) {
        struct span *c = &s[open[k]];
        const struct jst_range_ev *o = c->open;
        /* Depths, when both are known, must agree: a pop whose push was not
         * recorded (the preload's early buffer was full) must not end an
         * outer range. */
        int pop = e->op == JST_RANGE_POP && o->op == JST_RANGE_PUSH && o->tid == e->tid &&
                  same_domain(o->domain, e->domain) &&
                  (!e->depth || !o->depth || e->depth == o->depth);
        int end = e->op == JST_RANGE_END && o->op == JST_RANGE_START && e->id && o->id == e->id;
        if (!pop && !end)
            continue;
        memmove(open + k, open + k + 1, (*n_open - k - 1) * sizeof(*open));
        (*n_open)--;
        return c;
    }
    return NULL;
}

static int cmp_span(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    if (x->open->tid != y->open->tid)
        return x->open->tid < y->open->tid ? -1 : 1;
    if (x->open->t_ns != y->open->t_ns)
        return x->open->t_ns < y->open->t_ns ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_query(const void *a, const void *b)
{
    const struct jst_query *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Pairs the range events into spans; ranges still open end with the trace. */
static struct span *build_spans(const struct jst_process *p, size_t *n_out)
{
    struct span *s = calloc(p->n_ranges ? p->n_ranges : 1, sizeof(*s));
    size_t *open = calloc(p->n_ranges ? p->n_ranges : 1, sizeof(*open));
    size_t n = 0, n_open = 0;
    if (!s || !open) {
        free(s);
        free(open);
        return NULL;
    }
    for (size_t i = 0; i < p->n_ranges; i++) {
        const struct jst_range_ev *e = &p->ranges[i];
        if (e->op == JST_RANGE_PUSH || e->op == JST_RANGE_START) {
            s[n].open = e;
            s[n].order = i;
            open[n_open++] = n;
            n++;
            continue;
        }
        struct span *c = closes(s, open, &n_open, e);
        if (c) {
            c->closed = 1;
            c->end_ns = e->t_ns > c->open->t_ns ? e->t_ns : c->open->t_ns;
        }
    }
    for (size_t i = 0; i < n; i++)
        if (!s[i].closed)
            s[i].end_ns = p->end_ns > s[i].open->t_ns ? p->end_ns : s[i].open->t_ns;
    free(open);
    *n_out = n;
    return s;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
    uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? hi - lo : 0;
}

/* A JIT event or runtime-compiler call: what a query's time is measured
 * against. Collected once, since a trace may hold many queries and calls. */
struct timed {
    const struct jst_call_ev *c;
    uint64_t start, end;
    int jit; /* else runtime compile */
};

static struct timed *collect_timed(const struct jst_process *p, size_t *n_out)
{
    struct timed *t = calloc(p->n_calls ? p->n_calls : 1, sizeof(*t));
    size_t n = 0;
    for (size_t i = 0; t && i < p->n_calls; i++) {
        const struct jst_call_ev *c = &p->calls[i];
        int jit = jst_is_jit_event(p, c);
        if (!jit && !jst_is_rtc_call(c->call))
            continue;
        uint64_t end = c->start_ns + c->dur_ns;
        t[n++] = (struct timed){c, c->start_ns, end < c->start_ns ? UINT64_MAX : end, jit};
    }
    *n_out = n;
    return t;
}

/* JIT and runtime-compile time of any thread while the query ran, clipped to it. */
static void measure(const struct timed *t, size_t n, struct jst_query *q)
{
    uint64_t end = q->start_ns + q->dur_ns, best = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t o = overlap(q->start_ns, end, t[i].start, t[i].end);
        if (!o)
            continue;
        if (!t[i].jit) {
            q->rtc_ns += o;
            continue;
        }
        q->jit_ns += o;
        if (o > best) {
            best = o;
            q->top_jit = t[i].c;
        }
    }
}

/* Sorts indices of queries by name, then by start order. */
static const struct jst_query *g_sort_q;
static int cmp_name_idx(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int c = strcmp(g_sort_q[x].name, g_sort_q[y].name);
    return c ? c : (x < y ? -1 : x > y);
}

/* Repeated names get "#k" for their k-th top-level range (k >= 2), in start
 * order. Names still point at the range events on entry; copies on return. */
static void number_names(struct jst_query *q, size_t n)
{
    size_t *idx = malloc((n ? n : 1) * sizeof(*idx));
    char **own = calloc(n ? n : 1, sizeof(*own));
    if (!idx || !own) {
        for (size_t i = 0; i < n; i++)
            q[i].name = NULL;
        free(idx);
        free(own);
        return;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    g_sort_q = q;
    qsort(idx, n, sizeof(*idx), cmp_name_idx);
    for (size_t i = 0, k = 1; i < n; i++) {
        const char *nm = q[idx[i]].name;
        k = (i && strcmp(q[idx[i - 1]].name, nm) == 0) ? k + 1 : 1;
        size_t len = strlen(nm) + 24;
        own[idx[i]] = malloc(len);
        if (own[idx[i]])
            snprintf(own[idx[i]], len, k > 1 ? "%s#%zu" : "%s", nm, k);
    }
    for (size_t i = 0; i < n; i++)
        q[i].name = own[i];
    free(idx);
    free(own);
}

void jst_queries_derive(struct jst_process *p)
{
    for (size_t i = 0; i < p->n_queries; i++)
        free(p->queries[i].name);
    free(p->queries);
    p->queries = NULL;
    p->n_queries = 0;
    if (!p->n_ranges)
        return;
    size_t n = 0;
    struct span *s = build_spans(p, &n);
    struct jst_query *q = calloc(n ? n : 1, sizeof(*q));
    if (!s || !q) {
        free(s);
        free(q);
        return;
    }
    qsort(s, n, sizeof(*s), cmp_span);
    size_t nq = 0;
    uint64_t top_end = 0, top_tid = 0;
    for (size_t i = 0; i < n; i++) {
        const struct jst_range_ev *o = s[i].open;
        int top = i == 0 || o->tid != top_tid || o->t_ns >= top_end;
        if (!top)
            continue;
        top_tid = o->tid;
        top_end = s[i].end_ns;
        /* A framework's compile (XLA's "XlaCompile:...") is never a query:
         * the query around it holds it, and its time is compile time. */
        if (jst_range_compiler(o->name, NULL))
            continue;
        struct jst_query *x = &q[nq++];
        x->name = (char *)(o->name ? o->name : "");
        x->domain = o->domain;
        x->tid = o->tid;
        x->start_ns = o->t_ns;
        x->dur_ns = s[i].end_ns - o->t_ns;
        x->open = !s[i].closed;
    }
    free(s);
    qsort(q, nq, sizeof(*q), cmp_query);
    number_names(q, nq);
    size_t nt = 0;
    struct timed *t = collect_timed(p, &nt);
    for (size_t i = 0; t && i < nq; i++) {
        measure(t, nt, &q[i]);
        q[i].compile_ns = jst_compile_ns_within(p, q[i].start_ns, q[i].start_ns + q[i].dur_ns);
    }
    free(t);
    p->queries = q;
    p->n_queries = nq;
}

const struct jst_query *jst_first_jit_query(const struct jst_process *p)
{
    for (size_t i = 0; i < p->n_queries; i++)
        if (p->queries[i].jit_ns)
            return &p->queries[i];
    return NULL;
}

void jst_queries_free(struct jst_process *p)
{
    for (size_t i = 0; i < p->n_queries; i++)
        free(p->queries[i].name);
    free(p->queries);
    for (size_t i = 0; i < p->n_ranges; i++) {
        free(p->ranges[i].name);
        free(p->ranges[i].domain);
    }
    free(p->ranges);
    p->queries = NULL;
    p->ranges = NULL;
    p->n_queries = p->n_ranges = p->cap_ranges = 0;
}
