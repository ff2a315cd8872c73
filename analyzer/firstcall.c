/*
 * The first call of each kernel (analyzer/compiles.h): a kernel whose first
 * launch came after compile work on its thread, since that thread's previous
 * launch. Its time runs from the start of that work (or of the sampler's
 * window) to the launch, and never starts before set-up is over: the thread's
 * previous launch, or its last driver start-up call (cuInit, context
 * creation) that ended before that compile work began (before the launch,
 * when none), whichever ended later. Driver start-up that came before the
 * program's call is set-up, which time to first kernel already shows; the
 * call is what followed it. A context the call creates lazily after it
 * compiled is the call's own. Its blame table splits that
 * time by cause with
 * one rule: intervals of every cause are laid on the window, and each moment
 * counts once, for the first cause of enum jst_cause that covers it (the
 * thread's own causes first, then the compiles other threads of the process
 * ran meanwhile, which the thread waited for). The
 * sampler's records carry no times, only how long each stack was seen for in
 * a window: the time no interval covers is Python's in the share of the window
 * in which the sampler found Python frames (its ticks fall alike in covered and
 * uncovered time), and the rest is unexplained; so the parts always sum to the
 * first call's time. The Python part is split again by phase (cache-key
 * hashing, imports, tracing, ...: samplefn.h's table), in the shares the
 * samples give, and a first call with no compile of its own is kept when its
 * samples are a framework's whose cache hit (the time that is left).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "model.h"
#include "samplefn.h"
#include "symclass.h"
#include "trace.h"

static uint64_t end_of(uint64_t s, uint64_t d)
{
    return s > UINT64_MAX - d ? UINT64_MAX : s + d;
}

static int cmp_iv(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

size_t jst_iv_merge(uint64_t (*iv)[2], size_t n)
{
    if (n < 2)
        return n;
    qsort(iv, n, sizeof *iv, cmp_iv);
    size_t k = 0;
    for (size_t i = 1; i < n; i++) {
        if (iv[i][0] <= iv[k][1]) {
            if (iv[i][1] > iv[k][1])
                iv[k][1] = iv[i][1];
        } else {
            k++;
            iv[k][0] = iv[i][0];
            iv[k][1] = iv[i][1];
        }
    }
    return k + 1;
}

/* An edge of a cause's interval: +1 at its start, -1 at its end. */
struct edge {
    uint64_t t;
    int delta;
    unsigned cause;
};

struct edges {
    struct edge *v;
    size_t n, cap;
};

static void add_iv(struct edges *e, uint64_t s, uint64_t t, uint64_t lo, uint64_t hi,
                   unsigned cause)
{
    s = s > lo ? s : lo;
    t = t < hi ? t : hi;
    if (t <= s)
        return;
    if (e->n + 2 > e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 32;
        struct edge *v = realloc(e->v, cap * sizeof *v);
        if (!v)
            return;
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = (struct edge){s, +1, cause};
    e->v[e->n++] = (struct edge){t, -1, cause};
}

static int cmp_edge(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* A cause of an interval that is not the first call's own thread's (a
 * compile another thread of the process ran while it waited): it counts only
 * where none of the thread's own causes does. */
#define OTHER_THREAD(cause) ((cause) + JST_CAUSE_MAX_)

/* Sweeps the edges over [lo, hi): each stretch counts for the first cause
 * open over it (the thread's own causes first, then other threads'), so
 * intervals that overlap (compiles run at once) count once. Returns the time
 * no cause covers. */
static uint64_t sweep(struct edges *e, uint64_t lo, uint64_t hi, uint64_t *blame)
{
    unsigned open[2 * JST_CAUSE_MAX_] = {0};
    uint64_t at = lo, covered = 0;
    if (e->n > 1)
        qsort(e->v, e->n, sizeof *e->v, cmp_edge);
    for (size_t i = 0; i <= e->n; i++) {
        uint64_t t = i < e->n ? e->v[i].t : hi;
        if (t > at) {
            /* the thread's wait on a build tool first: its compilers ran in it */
            for (unsigned k = 0; k <= 2 * JST_CAUSE_MAX_; k++) {
                unsigned c = k == 0 ? JST_CAUSE_BUILD : k - 1;
                if (k && c == JST_CAUSE_BUILD)
                    continue;
                if (open[c]) {
                    blame[c % JST_CAUSE_MAX_] += t - at;
                    covered += t - at;
                    break;
                }
            }
            at = t;
        }
        if (i < e->n) {
            unsigned c = e->v[i].cause < 2 * JST_CAUSE_MAX_ ? e->v[i].cause : JST_CAUSE_UNEXPLAINED;
            if (e->v[i].delta > 0)
                open[c]++;
            else if (open[c])
                open[c]--;
        }
    }
    return hi - lo > covered ? hi - lo - covered : 0;
}

/* Everything with a time a first call's window is measured against, by
 * thread and start, so that each window looks only at what overlaps it (a
 * trace may hold many thousands of compiles and launches): the compiles, and
 * the driver calls that are not compiles but take time (loads of ready
 * images, initialization, context creation). The sample records, by the
 * launch they came before. */
struct tiv {
    uint64_t tid, s, e, maxe; /* maxe: the latest end of this thread's entries up to here */
    unsigned cause;
    struct jst_compile *c;          /* NULL: a driver call */
    const struct jst_call_ev *call; /* that call, for c == NULL */
};

struct fc_ix {
    struct tiv *v;
    size_t n;
    /* per cause, the union of the process's compiles of that cause (any
     * thread), merged and by start: what other threads ran (jst_first_call
     * blame; the thread's own are covered first anyway) */
    uint64_t (*mv[JST_CAUSE_MAX_])[2];
    size_t mn[JST_CAUSE_MAX_];
    size_t *samp; /* indices into p->samples, by before_seq */
    size_t n_samp;
    uint64_t (*init)[2]; /* driver start-up calls' (tid, end), sorted */
    size_t n_init;
    const struct jst_process *p;
};

static int cmp_tiv(const void *a, const void *b)
{
    const struct tiv *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->s < y->s ? -1 : x->s > y->s;
}

static const struct jst_process *g_samp_p; /* qsort has no context argument */
static int cmp_samp(const void *a, const void *b)
{
    uint64_t x = g_samp_p->samples[*(const size_t *)a].before_seq,
             y = g_samp_p->samples[*(const size_t *)b].before_seq;
    return x < y   ? -1
           : x > y ? 1
                   : (*(const size_t *)a > *(const size_t *)b) -
                         (*(const size_t *)a < *(const size_t *)b);
}

static void ix_free(struct fc_ix *ix)
{
    free(ix->v);
    free(ix->samp);
    free(ix->init);
    for (unsigned c = 0; c < JST_CAUSE_MAX_; c++)
        free(ix->mv[c]);
    memset(ix, 0, sizeof *ix);
}

static int ix_build(struct fc_ix *ix, struct jst_process *p)
{
    memset(ix, 0, sizeof *ix);
    ix->p = p;
    ix->v = malloc((p->n_compiles + p->n_calls + p->graphs.n_spans + 1) * sizeof *ix->v);
    ix->samp = malloc((p->n_samples + 1) * sizeof *ix->samp);
    ix->init = malloc((p->n_calls + 1) * sizeof *ix->init);
    int oom = 0;
    for (unsigned c = 0; c < JST_CAUSE_MAX_; c++)
        oom |= !(ix->mv[c] = malloc((p->n_compiles + 1) * sizeof *ix->mv[c]));
    if (!ix->v || !ix->samp || !ix->init || oom) {
        ix_free(ix);
        return -1;
    }
    for (size_t i = 0; i < p->n_compiles; i++) {
        struct jst_compile *c = &p->compiles[i];
        unsigned cause = jst_compiler_cause(c->compiler);
        ix->mv[cause][ix->mn[cause]][0] = c->start_ns;
        ix->mv[cause][ix->mn[cause]++][1] = end_of(c->start_ns, c->dur_ns);
        ix->v[ix->n++] = (struct tiv){
            c->tid, c->start_ns, end_of(c->start_ns, c->dur_ns), 0, jst_compiler_cause(c->compiler),
            c,      NULL};
    }
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct jst_call_ev *c = &p->calls[i];
        unsigned cause;
        if (jst_is_jit_event(p, c) || jst_is_rtc_call(c->call))
            continue; /* compiles already */
        if (c->verdict != JST_V_NONE)
            cause = JST_CAUSE_MODULE_LOAD;
        else if (c->call == JST_CALL_cuInit || c->call == JST_CALL_cuCtxCreate ||
                 c->call == JST_CALL_cuDevicePrimaryCtxRetain)
            cause = JST_CAUSE_DRIVER_INIT;
        else
            continue;
        ix->v[ix->n++] =
            (struct tiv){c->tid, c->start_ns, end_of(c->start_ns, c->dur_ns), 0, cause, NULL, c};
        if (cause == JST_CAUSE_DRIVER_INIT) {
            ix->init[ix->n_init][0] = c->tid;
            ix->init[ix->n_init++][1] = end_of(c->start_ns, c->dur_ns);
        }
    }
    if (ix->n_init > 1)
        qsort(ix->init, ix->n_init, sizeof *ix->init, cmp_iv);
    /* graph captures and instantiations: the thread's own time (graphs.c) */
    for (size_t i = 0; i < p->graphs.n_spans; i++) {
        const struct jst_graph_span *g = &p->graphs.spans[i];
        ix->v[ix->n++] =
            (struct tiv){g->tid, g->start_ns, g->end_ns, 0, JST_CAUSE_GRAPH_CAPTURE, NULL, NULL};
    }
    for (unsigned c = 0; c < JST_CAUSE_MAX_; c++)
        ix->mn[c] = jst_iv_merge(ix->mv[c], ix->mn[c]);
    qsort(ix->v, ix->n, sizeof *ix->v, cmp_tiv);
    for (size_t i = 0; i < ix->n; i++) {
        struct tiv *t = &ix->v[i];
        t->maxe = t->e;
        if (i && ix->v[i - 1].tid == t->tid && ix->v[i - 1].maxe > t->maxe)
            t->maxe = ix->v[i - 1].maxe;
    }
    for (size_t i = 0; i < p->n_samples; i++)
        ix->samp[ix->n_samp++] = i;
    g_samp_p = p;
    qsort(ix->samp, ix->n_samp, sizeof *ix->samp, cmp_samp);
    return 0;
}

/* The first entry of thread tid starting at or after t (or the next thread's). */
static size_t ix_find(const struct fc_ix *ix, uint64_t tid, uint64_t t)
{
    size_t lo = 0, hi = ix->n;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        const struct tiv *x = &ix->v[m];
        if (x->tid < tid || (x->tid == tid && x->s < t))
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* The end of thread tid's last driver start-up call that ended by t, or 0. */
static uint64_t setup_end(const struct fc_ix *ix, uint64_t tid, uint64_t t)
{
    size_t a = 0, b = ix->n_init; /* the first entry past (tid, t) */
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (ix->init[m][0] < tid || (ix->init[m][0] == tid && ix->init[m][1] <= t))
            a = m + 1;
        else
            b = m;
    }
    return a && ix->init[a - 1][0] == tid ? ix->init[a - 1][1] : 0;
}

#define MAX_SAMPLE_FNS 10

/* A sample record's Python frames, innermost first (n in *n). */
static char *const *sample_frames(const struct jst_process *p, const struct jst_sample_ev *s,
                                  size_t *n)
{
    if (s->n_py) {
        *n = s->n_py;
        return s->py;
    }
    const struct jst_stack *st = jst_model_stack(p, s->stack_id);
    *n = st ? st->n_py : 0;
    return st && st->n_py ? st->py_frames : NULL;
}

/* The framework of the innermost frame that is a framework's, or 0; but
 * Inductor drives Triton (as compiles.c ranks them): a Triton frame under an
 * Inductor one is Inductor's work, and its cache the one that hit. */
static unsigned frames_framework(char *const *fr, size_t n)
{
    unsigned inner = 0;
    for (size_t i = 0; fr && i < n; i++) {
        const char *t = fr[i] ? strchr(fr[i], '\t') : NULL;
        unsigned fw = t ? jst_framework_of_file(t + 1) : 0;
        if (fw == JST_FW_INDUCTOR)
            return fw;
        if (!inner)
            inner = fw;
    }
    return inner;
}

/* What the samples of one first call add up to, by phase and framework. */
struct phase_acc {
    struct jst_samplefn_acc fn[JST_PHASE_MAX_]; /* by the frame that named the phase */
    uint64_t ns[JST_PHASE_MAX_], fw_ns[JST_FW_MAX_];
};

/* The phases of acc into f (largest first), their raw sampled times. */
static void take_phases(struct phase_acc *acc, struct jst_first_call *f)
{
    f->phases = calloc(JST_PHASE_MAX_, sizeof *f->phases);
    f->n_phases = 0;
    for (unsigned ph = 0; ph < JST_PHASE_MAX_; ph++) {
        struct jst_sample_fn *top = NULL;
        size_t n = jst_samplefn_take(&acc->fn[ph], &top, 1);
        if (f->phases && acc->ns[ph]) {
            struct jst_fc_phase *x = &f->phases[f->n_phases++];
            x->phase = ph;
            x->dur_ns = acc->ns[ph];
            x->func = n ? top[0].func : NULL;
            x->file = n ? top[0].file : NULL;
        } else if (n) {
            free(top[0].func);
            free(top[0].file);
        }
        free(top);
    }
    for (size_t i = 1; i < f->n_phases; i++) /* largest first; few: insertion */
        for (size_t k = i; k > 0 && f->phases[k].dur_ns > f->phases[k - 1].dur_ns; k--) {
            struct jst_fc_phase t = f->phases[k];
            f->phases[k] = f->phases[k - 1];
            f->phases[k - 1] = t;
        }
    if (f->phases && !f->n_phases) {
        free(f->phases);
        f->phases = NULL;
    }
}

/* The phases' sampled times become shares of the first call's Python blame
 * (by the order they are in, so that they sum to it). */
static void scale_phases(struct jst_first_call *f)
{
    uint64_t total = 0, py = f->blame[JST_CAUSE_PYTHON], done = 0, acc = 0;
    for (size_t i = 0; i < f->n_phases; i++)
        total = end_of(total, f->phases[i].dur_ns);
    for (size_t i = 0; i < f->n_phases; i++) {
        acc = end_of(acc, f->phases[i].dur_ns);
        uint64_t upto = total ? (uint64_t)((unsigned __int128)py * acc / total) : 0;
        f->phases[i].dur_ns = upto - done;
        done = upto;
    }
    size_t k = 0; /* a phase left with no time is not shown */
    for (size_t i = 0; i < f->n_phases; i++) {
        if (f->phases[i].dur_ns) {
            f->phases[k++] = f->phases[i];
            continue;
        }
        free(f->phases[i].func);
        free(f->phases[i].file);
    }
    f->n_phases = k;
}

/* Sample records belonging to the launch of seq: their time in all, their
 * window and its earliest sample (0 when not recorded); functions into f. */
static uint64_t take_samples(const struct fc_ix *ix, uint64_t seq, struct jst_first_call *f,
                             uint64_t *window, uint64_t *first)
{
    const struct jst_process *p = ix->p;
    struct jst_samplefn_acc acc;
    struct phase_acc *ph = f ? calloc(1, sizeof *ph) : NULL;
    uint64_t sum = 0;
    size_t lo = 0, hi = ix->n_samp;
    jst_samplefn_init(&acc);
    *window = 0;
    *first = 0;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (p->samples[ix->samp[m]].before_seq < seq)
            lo = m + 1;
        else
            hi = m;
    }
    for (size_t i = lo; seq && i < ix->n_samp; i++) {
        const struct jst_sample_ev *s = &p->samples[ix->samp[i]];
        if (s->before_seq != seq)
            break;
        uint64_t ns = s->sample_ns ? s->sample_ns : s->samples * s->period_ns;
        sum = end_of(sum, ns);
        if (s->window_ns > *window)
            *window = s->window_ns;
        if (s->start_ns && (!*first || s->start_ns < *first))
            *first = s->start_ns;
        if (!f)
            continue;
        size_t n_fr = 0, at = 0;
        char *const *fr = sample_frames(p, s, &n_fr);
        jst_samplefn_add(&acc, fr ? fr[0] : NULL, ns);
        if (!ph)
            continue;
        unsigned phase = jst_sample_phase(fr, n_fr, &at);
        jst_samplefn_add(&ph->fn[phase], fr ? fr[at] : NULL, ns);
        ph->ns[phase] = end_of(ph->ns[phase], ns);
        unsigned fw = frames_framework(fr, n_fr);
        fw = fw < JST_FW_MAX_ ? fw : 0;
        ph->fw_ns[fw] = end_of(ph->fw_ns[fw], ns);
    }
    if (f)
        f->n_samples = jst_samplefn_take(&acc, &f->samples, MAX_SAMPLE_FNS);
    if (ph) {
        take_phases(ph, f);
        unsigned best = 0; /* without a compile's: the samples' framework */
        for (unsigned fw = 1; fw < JST_FW_MAX_; fw++)
            if (ph->fw_ns[fw] > (best ? ph->fw_ns[best] : 0))
                best = fw;
        if (!f->top_framework)
            f->top_framework = best;
    }
    free(ph);
    return sum;
}

/* The blame of f on thread tid, with the compiles given (the process's and,
 * when linked, its children's) and the samples' time. */
static void blame(const struct fc_ix *ix, struct jst_first_call *f, const struct jst_compile *extra,
                  size_t n_extra, uint64_t sampled, uint64_t window)
{
    struct edges e = {0};
    uint64_t lo = f->start_ns, hi = end_of(f->start_ns, f->dur_ns);
    memset(f->blame, 0, sizeof f->blame);
    size_t at = ix_find(ix, f->tid, lo);
    for (size_t i = at; i < ix->n && ix->v[i].tid == f->tid && ix->v[i].s < hi; i++)
        add_iv(&e, ix->v[i].s, ix->v[i].e, lo, hi, ix->v[i].cause);
    /* entries that started before the window and still ran in it */
    for (size_t i = at; i-- > 0 && ix->v[i].tid == f->tid && ix->v[i].maxe > lo;)
        add_iv(&e, ix->v[i].s, ix->v[i].e, lo, hi, ix->v[i].cause);
    for (size_t i = 0; i < n_extra && extra[i].start_ns < hi; i++) /* by start */
        add_iv(&e, extra[i].start_ns, end_of(extra[i].start_ns, extra[i].dur_ns), lo, hi,
               jst_compiler_cause(extra[i].compiler));
    /* the process's compiles on other threads that ran in the window: the
     * thread waited for them (XLA's threads, a compile thread pool), where
     * nothing of its own explains the time */
    for (unsigned c = 0; c < JST_CAUSE_MAX_; c++) {
        size_t a = 0, b = ix->mn[c]; /* the first merged interval that ends after lo */
        while (a < b) {
            size_t m = a + (b - a) / 2;
            if (ix->mv[c][m][1] <= lo)
                a = m + 1;
            else
                b = m;
        }
        for (size_t i = a; i < ix->mn[c] && ix->mv[c][i][0] < hi; i++)
            add_iv(&e, ix->mv[c][i][0], ix->mv[c][i][1], lo, hi, OTHER_THREAD(c));
    }
    uint64_t rest = sweep(&e, lo, hi, f->blame);
    free(e.v);
    f->graphs = jst_graphs_within(ix->p, f->tid, lo, hi);
    /* rest * min(sampled, window) / max(window, dur): a window shorter than
     * the first call vouches only for its own part of it. */
    uint64_t w = window ? window : f->dur_ns;
    double share =
        w ? (double)(sampled < w ? sampled : w) / (double)(w > f->dur_ns ? w : f->dur_ns) : 0.0;
    uint64_t py = (uint64_t)((double)rest * share + 0.5);
    py = py < rest ? py : rest;
    f->blame[JST_CAUSE_PYTHON] += py;
    f->blame[JST_CAUSE_UNEXPLAINED] += rest - py;
}

/* A launch's sort key, by thread, then start, then trace order. */
struct launch_key {
    uint64_t tid, start_ns;
    size_t i; /* into p->launches */
};

static int cmp_launch(const void *a, const void *b)
{
    const struct launch_key *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The first compile on thread tid that started in [lo, hi), by start order. */
static const struct jst_compile *first_compile(const struct fc_ix *ix, uint64_t tid, uint64_t lo,
                                               uint64_t hi, unsigned *fw)
{
    const struct jst_compile *first = NULL;
    uint64_t longest = 0;
    *fw = 0;
    for (size_t i = ix_find(ix, tid, lo); i < ix->n && ix->v[i].tid == tid && ix->v[i].s < hi;
         i++) {
        const struct jst_compile *c = ix->v[i].c;
        if (!c)
            continue;
        if (!first)
            first = c;
        if (c->framework && c->dur_ns >= longest) {
            longest = c->dur_ns;
            *fw = c->framework;
        }
    }
    return first;
}

/* The start of the thread's first CUDA graph capture in [lo, hi), or 0: a
 * first call's work too (a server captures its graphs before the first
 * request's kernel). */
static uint64_t first_graph(const struct fc_ix *ix, uint64_t tid, uint64_t lo, uint64_t hi)
{
    for (size_t i = ix_find(ix, tid, lo); i < ix->n && ix->v[i].tid == tid && ix->v[i].s < hi;
         i++)
        if (!ix->v[i].c && !ix->v[i].call && ix->v[i].cause == JST_CAUSE_GRAPH_CAPTURE &&
            ix->v[i].s >= lo)
            return ix->v[i].s;
    return 0;
}

/* The innermost of frames ("func\tfile\tline", innermost first) that is the
 * program's own: not Python's standard library, not a framework's, not an
 * installed package's; "func (file:line)" as a new string, or NULL. */
/* Is file inside a framework's cache directory (Inductor writes the code it
 * generates there and runs it: that is the framework's frame, not the
 * program's)? */
static int in_fw_cache(const struct jst_process *p, const char *file)
{
    for (size_t k = 0; k < p->n_fw_caches; k++)
        if (jst_path_under(file, p->fw_caches[k].path))
            return 1;
    return 0;
}

static char *user_frame(const struct jst_process *p, char *const *frames, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *f = frames[i], *a = f ? strchr(f, '\t') : NULL,
                   *b = a ? strchr(a + 1, '\t') : NULL;
        if (!b)
            continue;
        size_t fl = (size_t)(b - a - 1);
        char *file = malloc(fl + 1);
        if (!file)
            return NULL;
        memcpy(file, a + 1, fl);
        file[fl] = 0;
        int own = !jst_sym_pystd_file(file) && !jst_framework_of_file(file) &&
                  !strstr(file, "site-packages/") && !strstr(file, "dist-packages/") &&
                  file[0] != '<' && !in_fw_cache(p, file);
        if (!own) {
            free(file);
            continue;
        }
        size_t l = (size_t)(a - f) + fl + strlen(b + 1) + 8;
        char *s = malloc(l);
        if (s)
            snprintf(s, l, "%.*s (%s:%s)", (int)(a - f), f, file, b + 1);
        free(file);
        return s;
    }
    return NULL;
}

/* f's call site (the program's frame under its compiles' stacks, else under
 * its samples) and function (the framework compile that holds its work). */
static void name_call(const struct fc_ix *ix, struct jst_first_call *f, uint64_t lo)
{
    const struct jst_process *p = ix->p;
    uint64_t hi = end_of(f->start_ns, f->dur_ns);
    for (size_t i = ix_find(ix, f->tid, lo);
         i < ix->n && ix->v[i].tid == f->tid && ix->v[i].s < hi && (!f->call_site || !f->function);
         i++) {
        const struct jst_compile *c = ix->v[i].c;
        if (!c)
            continue;
        const struct jst_stack *s = c->stack_id ? jst_model_stack(p, c->stack_id) : NULL;
        if (!f->call_site && s && s->n_py)
            f->call_site = user_frame(p, s->py_frames, s->n_py);
        const struct jst_compile *holder = jst_compiler_encloses(c->compiler) ? c
                                           : c->has_parent ? &p->compiles[c->parent]
                                                           : NULL;
        /* a build tool's program is no compiled function */
        if (!f->function && holder && holder->what && !holder->what_is_detail &&
            holder->compiler != JST_CMP_BUILD)
            f->function = strdup(holder->what);
    }
    /* else the kernel of the first module load after the framework's first
     * compile (a Triton kernel's cubin; the launch may be a library's gemm),
     * or, when the framework compiled nothing (its cache hit), in the window */
    uint64_t from = f->start_ns;
    int fw_seen = !f->top_framework;
    for (size_t i = ix_find(ix, f->tid, f->start_ns);
         !fw_seen && i < ix->n && ix->v[i].tid == f->tid && ix->v[i].s < hi; i++)
        if (ix->v[i].c && ix->v[i].c->framework) {
            from = ix->v[i].s;
            fw_seen = 1;
        }
    int any_fw_compile = fw_seen && f->top_framework;
    /* the launched kernel when one of those loads holds it (the compiled
     * module's first kernel may be a helper of it), else that first kernel */
    const char *first = NULL;
    for (size_t i = ix_find(ix, f->tid, from);
         f->top_framework && !f->function && i < ix->n && ix->v[i].tid == f->tid && ix->v[i].s < hi;
         i++) {
        const struct jst_call_ev *ld = ix->v[i].call;
        if (!ld || ld->verdict == JST_V_NONE || !ld->n_kernels || !ld->kernels[0] ||
            (!any_fw_compile && ix->v[i].s < f->start_ns))
            continue;
        if (!first)
            first = ld->kernels[0];
        for (size_t k = 0; f->kernel && k < ld->n_kernels && !f->function; k++)
            if (ld->kernels[k] && !strcmp(ld->kernels[k], f->kernel))
                f->function = strdup(f->kernel);
    }
    if (!f->function && first)
        f->function = strdup(first);
    size_t a = 0, b = ix->n_samp; /* the launch's samples, by before_seq */
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (p->samples[ix->samp[m]].before_seq < f->launch_seq)
            a = m + 1;
        else
            b = m;
    }
    for (size_t i = a; !f->call_site && i < ix->n_samp; i++) {
        const struct jst_sample_ev *s = &p->samples[ix->samp[i]];
        if (s->before_seq != f->launch_seq)
            break;
        if (s->n_py)
            f->call_site = user_frame(ix->p, s->py, s->n_py);
    }
}

static void name_compiles(const struct fc_ix *ix, uint64_t tid, uint64_t lo, uint64_t hi,
                          const char *kernel)
{
    for (size_t i = ix_find(ix, tid, lo);
         kernel && i < ix->n && ix->v[i].tid == tid && ix->v[i].s < hi; i++) {
        struct jst_compile *c = ix->v[i].c;
        if (c && !c->kernel)
            c->kernel = strdup(kernel);
    }
}

/* The compiles of a process's descendants (copies), by start, with the pid
 * of the process that ran each and of its parent (the pool's owner). */
struct fc_extra {
    struct jst_compile *v;
    uint64_t *worker, *owner;
    size_t n;
};

/* Whether a descendant's compile started in [lo, hi); the earliest start in *t. */
static int extra_first(const struct fc_extra *x, uint64_t lo, uint64_t hi, uint64_t *t)
{
    size_t a = 0, b = x ? x->n : 0;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (x->v[m].start_ns < lo)
            a = m + 1;
        else
            b = m;
    }
    if (!x || a >= x->n || x->v[a].start_ns >= hi)
        return 0;
    *t = x->v[a].start_ns;
    return 1;
}

/* f's pools: the descendants' compiles that ran in it, by the workers'
 * parent, each pool's time the union of its compiles' intervals there. */
static void pools_of(struct jst_first_call *f, const struct fc_extra *x)
{
    uint64_t lo = f->start_ns, hi = end_of(f->start_ns, f->dur_ns);
    uint64_t(*iv)[2] = x && x->n ? malloc(x->n * sizeof *iv) : NULL;
    uint64_t *seen = x && x->n ? malloc(x->n * sizeof *seen) : NULL;
    for (size_t i = 0; iv && seen && i < x->n && x->v[i].start_ns < hi; i++) {
        /* a build's compiles are its tree's, not a pool's */
        if (end_of(x->v[i].start_ns, x->v[i].dur_ns) <= lo || x->v[i].in_build)
            continue;
        size_t k = 0;
        while (k < f->n_pools && f->pools[k].pid != x->owner[i])
            k++;
        if (k == f->n_pools) {
            struct jst_fc_pool *nv = realloc(f->pools, (k + 1) * sizeof *nv);
            if (!nv)
                break;
            f->pools = nv;
            memset(&nv[k], 0, sizeof nv[k]);
            nv[k].pid = x->owner[i];
            f->n_pools++;
        }
        unsigned c = x->v[i].compiler < JST_CMP_MAX_ ? x->v[i].compiler : 0;
        f->pools[k].runs[c]++;
    }
    for (size_t k = 0; iv && seen && k < f->n_pools; k++) {
        struct jst_fc_pool *pl = &f->pools[k];
        size_t n_iv = 0, n_seen = 0;
        for (size_t i = 0; i < x->n && x->v[i].start_ns < hi; i++) {
            uint64_t s = x->v[i].start_ns, e = end_of(s, x->v[i].dur_ns);
            if (x->owner[i] != pl->pid || e <= lo || x->v[i].in_build)
                continue;
            iv[n_iv][0] = s > lo ? s : lo;
            iv[n_iv][1] = e < hi ? e : hi;
            n_iv++;
            size_t j = 0;
            while (j < n_seen && seen[j] != x->worker[i])
                j++;
            if (j == n_seen)
                seen[n_seen++] = x->worker[i];
        }
        n_iv = jst_iv_merge(iv, n_iv);
        for (size_t j = 0; j < n_iv; j++)
            pl->wall_ns += iv[j][1] - iv[j][0];
        pl->n_workers = n_seen;
    }
    free(iv);
    free(seen);
}

static void first_calls_derive(struct jst_process *p, const struct fc_extra *x)
{
    size_t n = 0, cap = 0;
    struct fc_ix ix;
    if (!p->n_compiles && !p->n_samples && !(x && x->n) && !p->graphs.n_spans)
        return; /* a first call needs compile work, graph capture or samples before its launch */
    if (ix_build(&ix, p) < 0) {
        p->n_oom++;
        return;
    }
    struct launch_key *l = malloc((p->n_launches ? p->n_launches : 1) * sizeof *l);
    if (!l) {
        p->n_oom++;
        ix_free(&ix);
        return;
    }
    for (size_t i = 0; i < p->n_launches; i++)
        if (p->launches[i].start_ns)
            l[n++] = (struct launch_key){p->launches[i].tid, p->launches[i].start_ns, i};
    /* keys, not pointers: half a million launches sort without a cache
     * miss per comparison */
    qsort(l, n, sizeof *l, cmp_launch);
    uint64_t floor0 = p->proc_start_ns ? p->proc_start_ns : 0;
    for (size_t i = 0; i < n; i++) {
        const struct jst_launch *c = &p->launches[l[i].i];
        const struct jst_launch *prev = i ? &p->launches[l[i - 1].i] : NULL;
        uint64_t lo = prev && prev->tid == c->tid ? end_of(prev->start_ns, prev->dur_ns) : floor0;
        if (lo > c->start_ns)
            lo = c->start_ns;
        /* set-up is what ended before the call's compile work began: a
         * context the call itself created lazily, after it compiled, is part
         * of the call */
        unsigned fw = 0;
        const struct jst_compile *w0 = first_compile(&ix, c->tid, lo, c->start_ns, &fw);
        uint64_t setup = setup_end(&ix, c->tid, w0 ? w0->start_ns : c->start_ns);
        if (setup > lo)
            lo = setup;
        if (lo > c->start_ns)
            lo = c->start_ns;
        fw = 0;
        const struct jst_compile *w = first_compile(&ix, c->tid, lo, c->start_ns, &fw);
        uint64_t window = 0, first = 0, sampled = take_samples(&ix, c->seq, NULL, &window, &first);
        uint64_t x0 = 0;
        int in_x = extra_first(x, lo, c->start_ns, &x0);
        uint64_t g0 = first_graph(&ix, c->tid, lo, c->start_ns);
        if (!w && !sampled && !in_x && !g0)
            continue;
        /* From the first compile (its own or a descendant's) or the first
         * sample, whichever came first; samples without times: the window
         * before the launch. Never before the thread's previous launch. */
        uint64_t start = w ? w->start_ns : c->start_ns;
        if (in_x && x0 < start)
            start = x0;
        uint64_t from_samples = first                            ? first
                                : window && c->start_ns > window ? c->start_ns - window
                                                                 : start;
        if (sampled && from_samples < start)
            start = from_samples;
        if (g0 && g0 < start)
            start = g0;
        if (start < lo)
            start = lo;
        if (p->n_first_calls == cap) {
            size_t nc = cap ? cap * 2 : 8;
            struct jst_first_call *v = realloc(p->first_calls, nc * sizeof *v);
            if (!v) {
                p->n_oom++;
                break;
            }
            p->first_calls = v;
            cap = nc;
        }
        struct jst_first_call *f = &p->first_calls[p->n_first_calls++];
        memset(f, 0, sizeof *f);
        f->kernel = c->name ? strdup(c->name) : NULL;
        f->tid = c->tid;
        f->start_ns = start;
        f->dur_ns = c->start_ns - start;
        f->launch_seq = c->seq;
        f->top_framework = fw;
        take_samples(&ix, c->seq, f, &window, &first);
        blame(&ix, f, x ? x->v : NULL, x ? x->n : 0, sampled, window);
        scale_phases(f);
        pools_of(f, x);
        for (size_t j = 0; x && !f->top_framework && j < x->n && x->v[j].start_ns < c->start_ns;
             j++)
            if (x->v[j].framework && end_of(x->v[j].start_ns, x->v[j].dur_ns) > f->start_ns)
                f->top_framework = x->v[j].framework;
        name_compiles(&ix, c->tid, lo, c->start_ns, c->name);
        name_call(&ix, f, lo);
    }
    free(l);
    ix_free(&ix);
}

void jst_first_calls_derive(struct jst_process *p)
{
    first_calls_derive(p, NULL);
}

uint64_t jst_first_calls_wall(const struct jst_process *p,
                              int (*pick)(const struct jst_compile *, const void *),
                              const void *arg)
{
    size_t n = p->n_first_calls, nu = 0, k = 0;
    uint64_t(*u)[2] = malloc((p->n_compiles + 1) * sizeof *u);
    uint64_t(*w)[2] = malloc((n + 1) * sizeof *w), sum = 0;
    if (!u || !w) {
        free(u), free(w);
        return 0;
    }
    for (size_t c = 0; c < p->n_compiles; c++) /* the chosen compiles' union */
        if (!pick || pick(&p->compiles[c], arg)) {
            u[nu][0] = p->compiles[c].start_ns;
            u[nu++][1] = end_of(p->compiles[c].start_ns, p->compiles[c].dur_ns);
        }
    nu = jst_iv_merge(u, nu);
    for (size_t i = 0; i < n; i++) { /* the windows it overlaps */
        uint64_t s = p->first_calls[i].start_ns, e = end_of(s, p->first_calls[i].dur_ns);
        size_t a = 0, b = nu;
        while (a < b) {
            size_t m = a + (b - a) / 2;
            if (u[m][1] <= s)
                a = m + 1;
            else
                b = m;
        }
        if (a < nu && u[a][0] < e && e > s) {
            w[k][0] = s;
            w[k++][1] = e;
        }
    }
    k = jst_iv_merge(w, k);
    for (size_t i = 0; i < k; i++)
        sum += w[i][1] - w[i][0];
    free(u), free(w);
    return sum;
}

const struct jst_first_call *jst_slowest_first_call(const struct jst_process *p)
{
    const struct jst_first_call *best = NULL;
    for (size_t i = 0; i < p->n_first_calls; i++)
        if (!best || p->first_calls[i].dur_ns > best->dur_ns)
            best = &p->first_calls[i];
    return best;
}

/* The names FW_CACHE records give the frameworks' caches. */
static const char *const fw_cache_names[JST_FW_MAX_] = {
    [JST_FW_TRITON] = "triton", [JST_FW_INDUCTOR] = "inductor", [JST_FW_XLA] = "jax",
    [JST_FW_NUMBA] = "numba",   [JST_FW_CUPY] = "cupy",
};

const struct jst_fw_cache *jst_fw_cache_of(const struct jst_process *p, unsigned framework)
{
    const char *name = framework < JST_FW_MAX_ ? fw_cache_names[framework] : NULL;
    for (size_t i = 0; name && i < p->n_fw_caches; i++)
        if (p->fw_caches[i].framework && !strcmp(p->fw_caches[i].framework, name))
            return &p->fw_caches[i];
    return NULL;
}

const char *jst_fw_cache_outcome(const struct jst_process *p, unsigned framework, int compiled)
{
    const struct jst_fw_cache *s = jst_fw_cache_of(p, framework);
    int exists = s && s->has_exists && s->exists;
    /* no directory (JAX's cache is off until one is set), none can be made
     * there, or it cannot be written */
    int disabled = s && (!s->path || s->not_dir || (exists && !s->writable));
    const char *said = jst_fw_events_outcome(p, framework);
    if (said && !strcmp(said, "miss"))
        return disabled ? "disabled" : "miss";
    if (said && !compiled)
        return "hit";
    if (compiled)
        return disabled ? "disabled" : "miss";
    if (exists && s->has_entries && (s->entries || s->entries_more))
        return "hit";
    return disabled ? "disabled" : "unknown";
}

/* Keeps the first calls that had compile work (the driver's JIT, a runtime
 * compiler, a compiler child, a framework's compile; a child process's
 * counts once linked), and those whose sampled Python was a framework's
 * whose cache hit (what is left of its first call when nothing compiled)
 * and that launched what the framework made (its function is named: a
 * kernel it loaded from its cache, a module it ran; not torch.ones' fill
 * kernel launched while torch's compiler was being imported). One found from samples
 * alone, before a launch that followed only module loads and driver start-up, is the program's own
 * Python, not a compile: a slow machine (or an emulator) gives a trivial
 * first kernel samples that a fast one does not. */
static void keep_compiling(struct jst_process *p, unsigned compiled)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_first_calls; i++) {
        struct jst_first_call *f = &p->first_calls[i];
        unsigned fw = f->top_framework < JST_FW_MAX_ ? f->top_framework : 0;
        f->cache = fw ? jst_fw_cache_outcome(p, fw, (compiled >> fw) & 1) : NULL;
        if (f->blame[JST_CAUSE_DRIVER_JIT] || f->blame[JST_CAUSE_RUNTIME_COMPILER] ||
            f->blame[JST_CAUSE_SUBPROCESS] || f->blame[JST_CAUSE_FRAMEWORK_COMPILE] ||
            f->blame[JST_CAUSE_BUILD] || f->blame[JST_CAUSE_GRAPH_CAPTURE] ||
            (f->cache && !strcmp(f->cache, "hit") && f->blame[JST_CAUSE_PYTHON] &&
             f->function)) {
            p->first_calls[n++] = *f;
            continue;
        }
        jst_first_call_free(f);
    }
    p->n_first_calls = n;
}

static const struct jst_compile *g_sort_v; /* qsort has no context argument */
static int cmp_start(const void *a, const void *b)
{
    uint64_t x = g_sort_v[*(const size_t *)a].start_ns, y = g_sort_v[*(const size_t *)b].start_ns;
    return x < y ? -1 : x > y;
}

/* The compiles of p's descendants in the run, by start; 0 when none. */
static int extra_of(const struct jst_run *run, const struct jst_process *p, struct fc_extra *x)
{
    size_t n = 0;
    memset(x, 0, sizeof *x);
    for (size_t k = 0; k < run->n_procs; k++)
        if (run->procs[k].n_compiles && jst_model_descends(run, &run->procs[k], p))
            n += run->procs[k].n_compiles;
    if (!n)
        return 0;
    struct jst_compile *v = malloc(n * sizeof *v);
    size_t *ix = malloc(n * sizeof *ix);
    uint64_t *worker = malloc(n * sizeof *worker), *owner = malloc(n * sizeof *owner);
    x->v = malloc(n * sizeof *x->v);
    x->worker = malloc(n * sizeof *x->worker);
    x->owner = malloc(n * sizeof *x->owner);
    if (!v || !ix || !worker || !owner || !x->v || !x->worker || !x->owner) {
        free(v), free(ix), free(worker), free(owner);
        free(x->v), free(x->worker), free(x->owner);
        memset(x, 0, sizeof *x);
        return 0;
    }
    n = 0;
    for (size_t k = 0; k < run->n_procs; k++) {
        struct jst_process *ch = &run->procs[k];
        if (!ch->n_compiles || !jst_model_descends(run, ch, p))
            continue;
        for (size_t j = 0; j < ch->n_compiles; j++) {
            ch->compiles[j].child_of = ch->ppid;
            ix[n] = n;
            worker[n] = ch->pid;
            owner[n] = ch->ppid;
            v[n++] = ch->compiles[j];
        }
    }
    g_sort_v = v;
    qsort(ix, n, sizeof *ix, cmp_start);
    for (size_t i = 0; i < n; i++) {
        x->v[i] = v[ix[i]];
        x->worker[i] = worker[ix[i]];
        x->owner[i] = owner[ix[i]];
    }
    x->n = n;
    free(v), free(ix), free(worker), free(owner);
    return 1;
}

/* The first calls of each process that has descendants with compiles are
 * derived again with those compiles (jst_compiles_link in compiles.h); then
 * the first calls without compile work are dropped (keep_compiling). */
/* A child the program waited for is a build when it built: a trace of the
 * run that descends from it (or is its own, after an exec) compiled (a
 * followed process records what it runs), or it is a build tool by name
 * (ninja, make: one the preload could not enter). A driver JIT or cache load
 * in such a trace is that program's own start, not a build: a CUDA program
 * the program ran and waited for is no build. Otherwise (nvidia-smi, git, a
 * health check) it made no compile: its record makes no row, so it is no
 * cause, no late compile, no culprit and no fix. The processes with such
 * records are derived again without them. */
static int compiled_itself(const struct jst_process *q)
{
    for (size_t k = 0; k < q->n_compiles; k++) {
        const struct jst_compile *c = &q->compiles[k];
        if (c->compiler != JST_CMP_DRIVER &&
            (c->compiler != JST_CMP_BUILD || jst_build_tool_name(c->what)))
            return 1;
    }
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void drop_inert_builds(struct jst_run *run)
{
    /* again from the start: traces added since may descend from a child
     * judged before */
    for (size_t i = 0; i < run->n_procs; i++) {
        struct jst_process *p = &run->procs[i];
        if (!p->n_inert_builds)
            continue;
        free(p->inert_builds);
        p->inert_builds = NULL;
        p->n_inert_builds = 0;
        jst_compiles_derive(p);
        jst_first_calls_derive(p);
    }
    /* every pid that a trace which compiled has or descends from (its
     * parent's, and up its chain of traced ancestors), sorted */
    unsigned char *on = calloc(run->n_procs + 1, 1);
    uint64_t *pids = malloc((2 * run->n_procs + 1) * sizeof *pids);
    size_t np = 0;
    for (size_t i = 0; pids && on && i < run->n_procs; i++) {
        if (!compiled_itself(&run->procs[i]))
            continue;
        const struct jst_process *q = &run->procs[i];
        for (int d = 0; q && d < 64 && !on[q - run->procs]; d++, q = jst_model_parent(run, q)) {
            on[q - run->procs] = 1;
            pids[np++] = q->pid;
            pids[np++] = q->ppid;
        }
    }
    free(on);
    if (!pids)
        return;
    qsort(pids, np, sizeof *pids, cmp_u64);
    for (size_t i = 0; i < run->n_procs; i++) {
        struct jst_process *p = &run->procs[i];
        size_t n = 0;
        for (size_t j = 0; j < p->n_compiles; j++) {
            const struct jst_compile *c = &p->compiles[j];
            if (c->compiler != JST_CMP_BUILD || !c->pid || jst_build_tool_name(c->what) ||
                bsearch(&c->pid, pids, np, sizeof *pids, cmp_u64))
                continue;
            uint64_t *v = realloc(p->inert_builds, (p->n_inert_builds + 1) * sizeof *v);
            if (!v) {
                p->n_oom++;
                break;
            }
            p->inert_builds = v;
            p->inert_builds[p->n_inert_builds++] = c->pid;
            n++;
        }
        if (n) {
            jst_compiles_derive(p);
            jst_first_calls_derive(p);
        }
    }
    free(pids);
}

/* A compiler that a program ran through system() or popen() (nvcc runs
 * cicc, ptxas and gcc so) is recorded twice when the shell is traced too:
 * the program's row for the command line, and the shell's for the compiler
 * it ran. The shell's row of the same compiler inside the program's row is
 * that compile again: it makes no row (the program's row keeps the call
 * site), so that nothing is counted twice. */
static int held_by_shell_row(const struct jst_process *par, const struct jst_compile *c)
{
    uint64_t e = c->start_ns + c->dur_ns;
    for (size_t k = 0; k < par->n_compiles; k++) {
        const struct jst_compile *r = &par->compiles[k];
        if ((r->spawn_how == JST_SPAWN_SYSTEM || r->spawn_how == JST_SPAWN_POPEN) &&
            r->compiler == c->compiler && r->start_ns <= c->start_ns &&
            e <= r->start_ns + r->dur_ns)
            return 1;
    }
    return 0;
}

static void drop_shell_dups(struct jst_run *run)
{
    for (size_t i = 0; i < run->n_procs; i++) {
        struct jst_process *ch = &run->procs[i];
        const struct jst_process *par = jst_model_parent(run, ch);
        if (!par || !par->n_compiles)
            continue;
        size_t n = 0;
        for (size_t j = 0; j < ch->n_compiles; j++) {
            const struct jst_compile *c = &ch->compiles[j];
            if (!c->spawn_how || !held_by_shell_row(par, c))
                continue;
            uint64_t *v = realloc(ch->shell_dups, (ch->n_shell_dups + 1) * sizeof *v);
            if (!v) {
                ch->n_oom++;
                break;
            }
            ch->shell_dups = v;
            ch->shell_dups[ch->n_shell_dups++] = c->start_ns;
            n++;
        }
        if (n) {
            jst_compiles_derive(ch);
            jst_first_calls_derive(ch);
        }
    }
}

void jst_compiles_link(struct jst_run *run)
{
    drop_inert_builds(run);
    drop_shell_dups(run);
    jst_compiles_link_builds(run);
    for (size_t i = 0; i < run->n_procs; i++) {
        struct jst_process *p = &run->procs[i];
        struct fc_extra x;
        if (!p->pid || !extra_of(run, p, &x))
            continue;
        for (size_t f = 0; f < p->n_first_calls; f++)
            jst_first_call_free(&p->first_calls[f]);
        free(p->first_calls);
        p->first_calls = NULL;
        p->n_first_calls = 0;
        first_calls_derive(p, &x);
        free(x.v);
        free(x.worker);
        free(x.owner);
    }
    /* the frameworks that compiled in each process, or in one it started
     * (each process's own, carried up its ancestors) */
    unsigned *own = calloc(run->n_procs + 1, sizeof *own);
    unsigned *all = calloc(run->n_procs + 1, sizeof *all);
    for (size_t i = 0; own && all && i < run->n_procs; i++) {
        const struct jst_process *p = &run->procs[i];
        for (size_t k = 0; k < p->n_compiles; k++) {
            const struct jst_compile *c = &p->compiles[k];
            /* a compile the framework says hit its cache compiled nothing */
            if (c->framework < JST_FW_MAX_ && jst_compile_compiled(c))
                own[i] |= 1u << c->framework;
        }
    }
    for (size_t i = 0; own && all && i < run->n_procs; i++) {
        all[i] |= own[i];
        const struct jst_process *a = own[i] ? jst_model_parent(run, &run->procs[i]) : NULL;
        for (int d = 0; a && d < 64; d++, a = jst_model_parent(run, a)) /* as deep as any tree */
            all[a - run->procs] |= own[i];
    }
    for (size_t i = 0; i < run->n_procs; i++) {
        struct jst_process *p = &run->procs[i];
        unsigned compiled = own && all ? all[i] : ~0u;
        keep_compiling(p, compiled);
        /* a framework's compile: its cache's outcome */
        for (size_t k = 0; k < p->n_compiles; k++) {
            struct jst_compile *c = &p->compiles[k];
            if (c->framework && !c->cache) /* not a driver JIT's own outcome */
                c->cache = jst_fw_cache_outcome(
                    p, c->framework,
                    jst_compile_compiled(c) || ((compiled >> c->framework) & 1));
        }
    }
    free(own);
    free(all);
}
