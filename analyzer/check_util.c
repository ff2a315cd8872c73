/*
 * Per-process module summaries and cross-run matching shared by `jitstall
 * diff`, `check` and `baseline`, plus loading and formatting helpers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_util.h"
#include "origin.h"
#include "xalloc.h"
#include "cli.h"
#include "fixes.h"
#include "hashidx.h"
#include "image.h"
#include "outfile.h"
#include "report_compiles.h"
#include "symbolize.h"
#include "trace.h"
#include "utf8.h"

const char *jst_exe_base(const struct jst_process *p)
{
    const char *e = p->exe;
    if ((!e || !*e) && p->argc > 0)
        e = p->argv[0];
    if (!e || !*e)
        return "unknown";
    const char *slash = strrchr(e, '/');
    return slash && slash[1] ? slash + 1 : e;
}

uint64_t jst_argv_hash(const struct jst_process *p)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 1; i < p->argc; i++) {
        for (const unsigned char *s = (const unsigned char *)p->argv[i]; s && *s; s++) {
            h ^= *s;
            h *= 0x100000001b3ull;
        }
        h ^= 0xff; /* separator: ("ab","c") differs from ("a","bc") */
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t jst_load_jit_ns(const struct jst_process *p, const struct jst_call_ev *c)
{
    return jst_is_jit_event(p, c) ? c->dur_ns : 0;
}

int jst_cache_rank(unsigned cache)
{
    switch (cache) {
    case JST_C_HIT:
        return 0;
    case JST_C_MISS_STORED:
        return 1;
    case JST_C_UNKNOWN:
        return 2;
    case JST_C_MISS_NOT_STORED:
        return 3;
    default:
        return -1;
    }
}

void jst_pcgroup_key(const struct jst_compile *c, const char **kernel, const char **what)
{
    const char *slash = c->what ? strrchr(c->what, '/') : NULL;
    *kernel = slash && c->kernel ? c->kernel : NULL;
    *what = *kernel ? NULL : slash && slash[1] ? slash + 1 : c->what;
}

static int str_cmp0(const char *a, const char *b)
{
    return a == b ? 0 : !a ? -1 : !b ? 1 : strcmp(a, b);
}

int jst_pcgroup_cmp(const struct jst_pcgroup *a, const struct jst_pcgroup *b)
{
    if (a->compiler != b->compiler)
        return a->compiler < b->compiler ? -1 : 1;
    if (a->framework != b->framework)
        return a->framework < b->framework ? -1 : 1;
    int k = str_cmp0(a->kernel, b->kernel);
    return k ? k : str_cmp0(a->what, b->what);
}

static int cmp_pcgroup(const void *a, const void *b)
{
    return jst_pcgroup_cmp(a, b);
}

const struct jst_pcgroup *jst_pcgroup_find(const struct jst_psum *s, const struct jst_pcgroup *g)
{
    if (!s->n_groups)
        return NULL;
    return bsearch(g, s->groups, s->n_groups, sizeof(*s->groups), cmp_pcgroup);
}

const char *jst_pcgroup_label(const struct jst_pcgroup *g, char *buf, size_t n)
{
    const char *k = jst_compiler_name(g->compiler);
    int sub = jst_compiler_cause(g->compiler) == JST_CAUSE_SUBPROCESS;
    if (g->kernel)
        snprintf(buf, n, "%s for %s", k ? k : "?", jst_text(g->kernel));
    else
        snprintf(buf, n, "%s%s%s", k ? k : "?", g->what ? (sub ? " -> " : " ") : "",
                 g->what ? jst_text(g->what) : "");
    return buf;
}

/* The process's compiles (the driver's aside) grouped by key, in key order:
 * sorted, then each run of equal keys summed. */
static int psum_groups(const struct jst_process *p, struct jst_psum *s)
{
    s->has_groups = 1;
    if (!p->n_compiles)
        return 0;
    s->groups = calloc(p->n_compiles, sizeof(*s->groups));
    if (!s->groups)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < p->n_compiles; i++) {
        const struct jst_compile *c = &p->compiles[i];
        if (c->compiler == JST_CMP_DRIVER || !c->compiler || c->compiler >= JST_CMP_MAX_)
            continue;
        struct jst_pcgroup *g = &s->groups[n++];
        g->compiler = c->compiler;
        g->framework = c->framework < JST_FW_MAX_ ? c->framework : 0;
        jst_pcgroup_key(c, &g->kernel, &g->what);
        g->count = 1;
        g->dur_ns = c->dur_ns;
        g->cache = c->cache;
        g->longest = c;
    }
    if (n)
        qsort(s->groups, n, sizeof(*s->groups), cmp_pcgroup);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        struct jst_pcgroup *g = &s->groups[i], *last = w ? &s->groups[w - 1] : NULL;
        if (last && !jst_pcgroup_cmp(last, g)) {
            last->count++;
            last->dur_ns =
                last->dur_ns + g->dur_ns < last->dur_ns ? UINT64_MAX : last->dur_ns + g->dur_ns;
            if (g->longest->dur_ns > last->longest->dur_ns)
                last->longest = g->longest;
            if (!last->cache)
                last->cache = g->cache;
            continue;
        }
        s->groups[w++] = *g;
    }
    s->n_groups = w;
    return 0;
}

int jst_psum_from_process(const struct jst_process *p, struct jst_psum *s)
{
    memset(s, 0, sizeof(*s));
    s->exe = jst_exe_base(p);
    s->argv_hash = jst_argv_hash(p);
    s->pid = p->pid;
    s->has_ttfk = p->first_launch_ns != 0;
    s->ttfk_ns = p->ttfk_ns;
    s->jit_ns = p->jit_ns;
    s->partial = jst_partial_why(p) != NULL;
    s->p = p;
    s->has_cmp = 1;
    unsigned char seen[JST_CMP_MAX_] = {0};
    for (size_t i = 0; i < p->n_compiles; i++) {
        unsigned k = p->compiles[i].compiler;
        if (!k || k >= JST_CMP_MAX_)
            continue;
        if (!seen[k]) {
            seen[k] = 1;
            s->cmp_ns[k] = jst_compiler_wall(p, k); /* wall time: parallel ones once */
        }
        s->cmp_n[k] += jst_compile_counts(&p->compiles[i]); /* a framework's stage: no */
    }
    const struct jst_first_call *fc = jst_slowest_first_call(p);
    s->first_call_ns = fc ? fc->dur_ns : 0;
    s->graph_ns = jst_graphs_ns(p);
    s->graphs = p->graphs.count;
    for (unsigned fw = 1; fw < JST_FW_MAX_; fw++) {
        const struct jst_fw_cache *r = jst_fw_cache_of(p, fw);
        int used;
        if (r) {
            s->fw_cache[fw] = rv_fw_cache_result(p, fw, &used);
            s->fw_path[fw] = r->path;
        }
    }
    if (psum_groups(p, s) < 0)
        return -1;
    if (!p->n_calls)
        return 0;
    s->mods = calloc(p->n_calls, sizeof(*s->mods));
    if (!s->mods)
        return -1;
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct jst_call_ev *c = &p->calls[i];
        if (!jst_model_is_module(p, c))
            continue;
        int jit = jst_is_jit_event(p, c);
        struct jst_pmod *m = &s->mods[s->n_mods++];
        m->hash = c->image_hash;
        m->origin = jst_load_origin(c);
        m->kernels = (const char **)c->kernels;
        m->n_kernels = c->n_kernels;
        if (!m->n_kernels && c->name) {
            m->kernels = (const char **)&c->name;
            m->n_kernels = 1;
        }
        /* Values this jitstall has no name for (written by a newer preload)
         * become "none" and "unknown", so a baseline written from them can be
         * read back and every message names them. */
        m->verdict = jst_verdict_name(c->verdict) ? c->verdict : JST_V_NONE;
        m->jit = jit;
        m->jit_ns = jst_load_jit_ns(p, c);
        m->cache = !jit ? JST_C_NONE : jst_cache_name(c->cache) ? c->cache : JST_C_UNKNOWN;
        m->jit_from = c->jit_from;
        m->sass_arch = c->sass_arch;
        m->ev = c;
    }
    return 0;
}

void jst_psum_free(struct jst_psum *s)
{
    free(s->groups);
    s->groups = NULL;
    s->n_groups = 0;
    free(s->mods);
    s->mods = NULL;
    s->n_mods = 0;
}

static int streq0(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return !strcmp(a, b);
}

/* Keys of jst_match_first for processes (pass 0: program and arguments,
 * pass 1: program) and modules (pass 0: image hash, pass 1: origin and first
 * kernel, or the first kernel alone: a runtime compile has no origin; pass
 * 2: the origin alone, for a module rebuilt in place whose kernels were not
 * recorded on one side, e.g. PTX before and SASS after; pass 3: the same set
 * of kernels, in any order, for an image in memory rebuilt, whose hash
 * changed and which has no origin). */
struct match_ctx {
    const void *a, *b;
    int pass, n_passes;
    size_t size; /* of one element of a and b */
    int (*key)(const void *x, int pass, uint64_t *h);
    int (*same)(const void *x, const void *y, int pass);
};

static int match_hash_a(const void *ctx, size_t i, uint64_t *h)
{
    const struct match_ctx *m = ctx;
    return m->key((const char *)m->a + i * m->size, m->pass, h);
}

static int match_hash_b(const void *ctx, size_t k, uint64_t *h)
{
    const struct match_ctx *m = ctx;
    return m->key((const char *)m->b + k * m->size, m->pass, h);
}

static int match_same(const void *ctx, size_t i, size_t k)
{
    const struct match_ctx *m = ctx;
    return m->same((const char *)m->a + i * m->size, (const char *)m->b + k * m->size, m->pass);
}

static int procs_key(const void *p, int pass, uint64_t *h)
{
    const struct jst_psum *s = p;
    *h = jst_hash_str(JST_HASH_SEED, s->exe);
    if (pass == 0)
        *h = jst_hash_u64(*h, s->argv_hash);
    return 1;
}

static int procs_same(const void *px, const void *py, int pass)
{
    const struct jst_psum *x = px, *y = py;
    return !strcmp(x->exe, y->exe) && (pass != 0 || x->argv_hash == y->argv_hash);
}

/* The passes of a matching: the closest key first, then looser ones for
 * what is left. */
static void match_passes(struct match_ctx *mc, size_t na, size_t nb, long *a_to_b)
{
    char *used = calloc(nb ? nb : 1, 1);
    for (size_t i = 0; i < na; i++)
        a_to_b[i] = -1;
    if (!used)
        return;
    struct jst_match_keys keys = {mc, match_hash_a, match_hash_b, match_same};
    for (mc->pass = 0; mc->pass < mc->n_passes; mc->pass++)
        jst_match_first(&keys, na, nb, a_to_b, used);
    free(used);
}

void jst_match_procs(const struct jst_psum *a, size_t na, const struct jst_psum *b, size_t nb,
                     long *a_to_b)
{
    struct match_ctx mc = {a, b, 0, 2, sizeof(*a), procs_key, procs_same};
    match_passes(&mc, na, nb, a_to_b);
}

static const char *first_kernel(const struct jst_pmod *m)
{
    return m->n_kernels ? m->kernels[0] : NULL;
}

static int mods_key(const void *p, int pass, uint64_t *h)
{
    const struct jst_pmod *m = p;
    if (pass == 0) {
        *h = m->hash;
        return m->hash != 0;
    }
    if (pass == 2) {
        *h = jst_hash_str(JST_HASH_SEED, m->origin);
        return m->origin != NULL;
    }
    if (pass == 3) { /* order-free: a sum over the names */
        *h = m->n_kernels;
        for (size_t k = 0; k < m->n_kernels; k++)
            *h += m->kernels[k] ? jst_hash_str(JST_HASH_SEED, m->kernels[k]) : 0;
        return m->n_kernels != 0 && !m->origin; /* images in memory only */
    }
    *h = jst_hash_str(jst_hash_str(JST_HASH_SEED, m->origin), first_kernel(m));
    return m->origin != NULL || first_kernel(m) != NULL; /* a runtime compile: its name */
}

/* Both modules name the same kernels (each name once in each). */
static int same_kernel_set(const struct jst_pmod *x, const struct jst_pmod *y)
{
    if (x->n_kernels != y->n_kernels || !x->n_kernels)
        return 0;
    for (size_t i = 0; i < x->n_kernels; i++) {
        size_t k = 0;
        while (k < y->n_kernels && !streq0(x->kernels[i], y->kernels[k]))
            k++;
        if (k == y->n_kernels)
            return 0;
    }
    return 1;
}

static int mods_same(const void *px, const void *py, int pass)
{
    const struct jst_pmod *x = px, *y = py;
    if (pass == 0)
        return x->hash == y->hash;
    if (pass == 2)
        return x->origin && streq0(x->origin, y->origin);
    if (pass == 3)
        return !x->origin && !y->origin && same_kernel_set(x, y);
    return streq0(x->origin, y->origin) && streq0(first_kernel(x), first_kernel(y));
}

void jst_match_mods(const struct jst_pmod *a, size_t na, const struct jst_pmod *b, size_t nb,
                    long *a_to_b)
{
    struct match_ctx mc = {a, b, 0, 4, sizeof(*a), mods_key, mods_same};
    match_passes(&mc, na, nb, a_to_b);
}

const char *jst_partial_why(const struct jst_process *p)
{
    if (!jst_model_is_partial(p))
        return NULL;
    if (p->damage)
        return p->damage;
    if (p->truncated)
        return "truncated: the stream ended early or without an END record";
    if (p->n_oom)
        return "incomplete: jitstall ran out of memory reading it, records were dropped";
    return NULL;
}

const char *jst_partial_str(const struct jst_process *p, char *buf, size_t n)
{
    const char *why = jst_partial_why(p);
    if (p->n_oom) /* the reader stopped there: it reads as truncated too */
        snprintf(buf, n, "out of memory while reading: %llu records or fields dropped",
                 (unsigned long long)p->n_oom);
    else if (!p->damage && p->truncated && jst_trace_stop_words(p))
        snprintf(buf, n, "truncated: jitstall stopped writing it because %s",
                 jst_trace_stop_words(p));
    else
        snprintf(buf, n, "%s", why ? why : "");
    return why ? buf : NULL;
}

/* Adds one path to run: 0, or -1 with the reason, "PATH: ...", in err. */
static int load_one(const char *path, struct jst_run *run, char *err, size_t errlen)
{
    char why[512] = "";
    size_t before = run->n_unreadable;
    size_t pl = strlen(path);
    if (jst_model_add(run, path, why, sizeof why) < 0) {
        /* The model's message usually starts with the path already. */
        if (!strncmp(why, path, pl) && why[pl] == ':')
            snprintf(err, errlen, "%s", why);
        else
            snprintf(err, errlen, "%s: %s", path, why[0] ? why : "cannot read");
        return -1;
    }
    if (run->n_unreadable > before) {
        snprintf(err, errlen, "%s: %zu file(s) could not be read%s%s", path,
                 run->n_unreadable - before, why[0] ? ": " : "", why);
        return -1;
    }
    return 0;
}

/* Names the files that images in memory were read from (origin.c), so
 * that every command calls such a load by its file. */
static void name_files(struct jst_run *run)
{
    for (size_t i = 0; i < run->n_procs; i++)
        jst_origin_name_files(&run->procs[i]);
}

static void warn_partial(const char *cmd, const struct jst_run *run)
{
    char why[512];
    for (size_t i = 0; i < run->n_procs; i++)
        if (jst_partial_str(&run->procs[i], why, sizeof why))
            jst_warnf(cmd, "%s: partial trace (%s); using what it holds",
                      run->procs[i].trace_path ? run->procs[i].trace_path : "?", why);
}

int jst_run_load(const char *cmd, char **paths, int n, struct jst_run *run, int quiet_partial)
{
    int bad = 0;
    for (int i = 0; i < n; i++) {
        char err[1024];
        if (load_one(paths[i], run, err, sizeof err) < 0) {
            jst_errorf(cmd, "%s", err);
            bad = 1;
        }
    }
    if (bad)
        return JST_EXIT_USAGE;
    if (!run->n_procs) {
        jst_errorf(cmd, "no traces found in %s%s", n > 0 ? paths[0] : "(nothing)",
                   n > 1 ? " ..." : "");
        return JST_EXIT_USAGE;
    }
    name_files(run);
    if (!quiet_partial)
        warn_partial(cmd, run);
    return JST_EXIT_OK;
}

int jst_run_load_lenient(const char *cmd, char **paths, int n, struct jst_run *run,
                         struct jst_load_errs *errs)
{
    errs->msg = jst_xcalloc((size_t)n, sizeof(*errs->msg));
    errs->n = 0;
    for (int i = 0; i < n; i++) {
        char err[1024];
        if (load_one(paths[i], run, err, sizeof err) < 0)
            errs->msg[errs->n++] = jst_xstrdup(err);
    }
    if (!run->n_procs) {
        for (size_t k = 0; k < errs->n; k++)
            jst_errorf(cmd, "%s", errs->msg[k]);
        jst_errorf(cmd, "no readable trace");
        return JST_EXIT_USAGE;
    }
    name_files(run);
    warn_partial(cmd, run);
    return JST_EXIT_OK;
}

/* jst_outfile_write's writer for jst_run_write: the run and the caller's fn. */
struct run_write {
    const struct jst_run *run;
    int (*fn)(FILE *f, const struct jst_run *run, void *ctx);
    void *ctx;
};

static int run_write_fn(FILE *f, void *ctx)
{
    const struct run_write *w = ctx;
    return w->fn(f, w->run, w->ctx);
}

int jst_run_write(const char *cmd, char **paths, int n, int keep_calls, const char *out,
                  int (*fn)(FILE *f, const struct jst_run *run, void *ctx), void *ctx,
                  const char *note)
{
    struct jst_run run = {0};
    run.keep_calls = keep_calls;
    int rc = jst_run_load(cmd, paths, n, &run, 0);
    if (rc == JST_EXIT_OK) {
        struct run_write w = {&run, fn, ctx};
        rc = jst_outfile_write(cmd, out, run.n_procs, run_write_fn, &w, note);
    }
    jst_model_free(&run);
    return rc;
}

void jst_load_errs_free(struct jst_load_errs *errs)
{
    for (size_t k = 0; k < errs->n; k++)
        free(errs->msg[k]);
    free(errs->msg);
    errs->msg = NULL;
    errs->n = 0;
}

const char *jst_fmt_ms(uint64_t ns, char *buf, size_t n)
{
    double ms = (double)ns / 1e6;
    snprintf(buf, n, ns && ns < 1000000 ? "%.3f ms" : "%.1f ms", ms);
    return buf;
}

const char *jst_load_label(const struct jst_call_ev *c, char *buf, size_t n)
{
    const char *o = jst_load_origin(c);
    const char *api = c->call_name ? c->call_name : jst_call_name(c->call);
    if (jst_is_rtc_call(c->call))
        snprintf(buf, n, "%s%s%s", api ? api : "?", c->name && *c->name ? " for " : "",
                 c->name ? c->name : "");
    else if (o)
        snprintf(buf, n, "%s", o);
    else if (c->read_from) /* the file its bytes came from (origin.c) */
        snprintf(buf, n, "%s (via %s)", c->read_from, api ? api : "?");
    else if (c->rtc_made) /* the NVRTC program that made it (origin.c) */
        snprintf(buf, n, "NVRTC program %s (via %s)", c->rtc_made, api ? api : "?");
    else if (c->name && *c->name)
        snprintf(buf, n, "%s (via %s)", c->name, api ? api : "?");
    else
        snprintf(buf, n, "(image in memory 0x%016llx, via %s)", (unsigned long long)c->image_hash,
                 api ? api : "?");
    return buf;
}

const char *jst_pmod_label(const struct jst_pmod *m, char *buf, size_t n)
{
    char dem[512] = "";
    int len;
    /* The run's own loads are named as the report names them; a baseline's
     * by what it kept. */
    int named_input = m->ev && !m->origin && m->ev->name && *m->ev->name && !m->ev->n_kernels;
    if (m->ev)
        len = (int)strlen(jst_load_label(m->ev, buf, n));
    else if (m->origin)
        len = snprintf(buf, n, "%s", m->origin);
    else
        len = snprintf(buf, n, "(image in memory 0x%016llx)", (unsigned long long)m->hash);
    /* A link input's or runtime compile's name is already in the label. */
    if (named_input || (m->ev && jst_is_rtc_call(m->ev->call)))
        return buf;
    if (len < 0 || (size_t)len >= n || !m->n_kernels || !m->kernels[0])
        return buf;
    jst_demangle(m->kernels[0], dem, sizeof dem);
    if (m->n_kernels > 1)
        snprintf(buf + len, n - (size_t)len, " [%s, +%zu more]", dem[0] ? dem : m->kernels[0],
                 m->n_kernels - 1);
    else
        snprintf(buf + len, n - (size_t)len, " [%s]", dem[0] ? dem : m->kernels[0]);
    return buf;
}

int jst_call_site_frame(struct jst_symbolizer *sym, const struct jst_call_ev *c,
                        struct jst_frame *out)
{
    if (!c->stack_id || !sym)
        return -1;
    struct jst_frame frames[64];
    size_t nf = jst_symbolize_stack(sym, c->stack_id, c->seq, frames, 64);
    int site = jst_call_site(frames, nf);
    if (site < 0)
        return -1;
    *out = frames[site];
    return 0;
}

const char *jst_call_site_str(struct jst_symbolizer *sym, const struct jst_call_ev *c, char *buf,
                              size_t n)
{
    if (!c->stack_id) {
        snprintf(buf, n, "unknown (no stack recorded)");
        return buf;
    }
    if (!sym) {
        snprintf(buf, n, "unknown (stack %llu not symbolized)", (unsigned long long)c->stack_id);
        return buf;
    }
    /* Room for the native frames and the Python frames merged in. */
    enum { NF = 256 };
    struct jst_frame *frames = malloc(NF * sizeof *frames);
    if (!frames) {
        snprintf(buf, n, "unknown (out of memory)");
        return buf;
    }
    size_t nf = jst_symbolize_stack(sym, c->stack_id, c->seq, frames, NF);
    int site = jst_call_site(frames, nf);
    if (site >= 0)
        jst_frame_str(&frames[site], buf, n);
    else if (nf)
        jst_frame_str(&frames[0], buf, n);
    else
        snprintf(buf, n, "unknown (stack %llu missing)", (unsigned long long)c->stack_id);
    free(frames);
    return buf;
}

const char *jst_first_call_title(const struct jst_first_call *f, char *buf, size_t n)
{
    char nm[1024];
    rv_first_call_name(f, nm, sizeof nm);
    if (rv_first_call_kernel_aside(f))
        snprintf(buf, n, "%s (first kernel %s)", nm, f->kernel);
    else
        snprintf(buf, n, "%s", nm);
    return buf;
}

void jst_fc_index_init(struct jst_fc_index *x, const struct jst_process *p)
{
    memset(x, 0, sizeof(*x));
    x->p = p;
    for (size_t i = 0; !x->scan && i < p->n_first_calls; i++)
        if (p->first_calls[i].kernel &&
            jst_hidx_add(&x->ix, jst_hash_str(JST_HASH_SEED, p->first_calls[i].kernel), i) < 0)
            x->scan = 1;
}

const struct jst_first_call *jst_fc_index_of(const struct jst_fc_index *x,
                                             const struct jst_compile *c)
{
    const struct jst_process *p = x->p;
    if (!c->kernel)
        return NULL;
    if (x->scan) {
        for (size_t i = 0; i < p->n_first_calls; i++)
            if (p->first_calls[i].kernel && !strcmp(p->first_calls[i].kernel, c->kernel))
                return &p->first_calls[i];
        return NULL;
    }
    /* the earliest first call of that kernel, as the scan finds it */
    const struct jst_first_call *best = NULL;
    size_t cur = 0, pos1;
    while ((pos1 = jst_hidx_next(&x->ix, jst_hash_str(JST_HASH_SEED, c->kernel), &cur)))
        if (!strcmp(p->first_calls[pos1 - 1].kernel, c->kernel) &&
            (!best || &p->first_calls[pos1 - 1] < best))
            best = &p->first_calls[pos1 - 1];
    return best;
}

void jst_fc_index_free(struct jst_fc_index *x)
{
    jst_hidx_free(&x->ix);
}
