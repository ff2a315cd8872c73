/*
 * The compiles and first calls of a process in `jitstall report`'s three
 * forms (analyzer/compiles.h has the model). Text and Markdown show a
 * process's first calls only when one of them is not its first kernel's
 * (which the time-to-first-kernel breakdown already explains), and the
 * compiles only when some compiler other than the driver ran; JSON always
 * has both.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "compiles.h"
#include "fixes.h"
#include "jsonw.h"
#include "late.h"
#include "report_compiles.h"
#include "utf8.h"
#include "report_view.h"
#include "samplefn.h"
#include "symclass.h"
#include "symbolize.h"

#define STACK_MAX 64

static void put_clean(FILE *f, const char *s, int md);

static void json_frames(struct jst_json *j, struct jst_symbolizer **sym,
                        const struct jst_process *p, const struct jst_compile *c)
{
    static struct jst_frame fr[STACK_MAX];
    char buf[1024];
    size_t n = 0;
    if (c->stack_id && jst_model_stack(p, c->stack_id)) {
        if (!*sym)
            *sym = jst_symbolizer_new(p);
        if (*sym)
            n = jst_symbolize_stack(*sym, c->stack_id, c->seq, fr, STACK_MAX);
    }
    int site = n ? jst_call_site(fr, n) : -1;
    jst_json_kstr(j, "call_site", site >= 0 ? jst_frame_str(&fr[site], buf, sizeof buf) : NULL);
    jst_json_key(j, "stack");
    jst_json_arr(j);
    for (size_t i = site >= 0 ? (size_t)site : 0; i < n; i++) {
        if (fr[i].internal)
            continue;
        jst_json_obj(j);
        jst_json_kstr(j, "func", fr[i].func[0] ? fr[i].func : NULL);
        jst_json_kstr(j, "file", fr[i].file[0] ? fr[i].file : NULL);
        jst_json_kopt_u64(j, "line", fr[i].line != 0, fr[i].line);
        jst_json_kstr(j, "object", fr[i].python ? "python" : fr[i].module);
        jst_json_end(j);
    }
    jst_json_end(j);
}

/* A compile's late keys: whether it began after ready, the request it
 * stalled and its warm-up fix. */
static void json_late(struct jst_json *j, const struct jst_process *p, const struct jst_compile *c)
{
    char fix[1024];
    const struct jst_query *q = c->late ? jst_late_request(p, c) : NULL;
    jst_json_kbool(j, "late", c->late);
    jst_json_kstr(j, "request", q ? q->name : NULL);
    jst_json_kstr(j, "late_fix", c->late ? jst_late_fix(c, fix, sizeof fix) : NULL);
}

static void json_compile(struct jst_json *j, struct jst_symbolizer **sym,
                         const struct jst_process *p, const struct jst_compile *c)
{
    jst_json_obj(j);
    jst_json_kstr(j, "compiler", jst_compiler_name(c->compiler));
    jst_json_kstr(j, "framework", jst_framework_name(c->framework));
    jst_json_ku64(j, "start_ns", c->start_ns);
    jst_json_ku64(j, "dur_ns", c->dur_ns);
    jst_json_ku64(j, "tid", c->tid);
    json_frames(j, sym, p, c);
    jst_json_kstr(j, "target", c->target);
    jst_json_kstr(j, "cache", c->cache);
    jst_json_kstr(j, "stage", c->stage);
    jst_json_kstr(j, "what", c->what);
    jst_json_kstr(j, "kernel", c->kernel);
    jst_json_kopt_u64(j, "pid", c->pid != 0, c->pid);
    jst_json_kopt_i64(j, "exit_status", c->has_exit, c->exit_status);
    jst_json_kbool(j, "in_flight", c->in_flight);
    jst_json_kopt_u64(j, "parent", c->has_parent, c->parent);
    jst_json_kopt_u64(j, "parent_pid", c->parent_pid != 0, c->parent_pid);
    jst_json_kstr(j, "dir", c->dir);
    json_late(j, p, c);
    char fix[1024];
    /* in the Culprits as the call it is, or as a compile of its own */
    jst_json_kbool(j, "culprit",
                   c->call ? jst_model_is_culprit(p, c->call) : jst_compile_is_culprit(c));
    jst_json_kstr(j, "fix", jst_fix_for_compile(p, c, fix, sizeof fix));
    jst_json_end(j);
}

static void json_first_call(struct jst_json *j, const struct jst_first_call *f)
{
    jst_json_obj(j);
    jst_json_kstr(j, "kernel", f->kernel);
    jst_json_ku64(j, "tid", f->tid);
    jst_json_ku64(j, "start_ns", f->start_ns);
    jst_json_ku64(j, "dur_ns", f->dur_ns);
    jst_json_kstr(j, "framework", jst_framework_name(f->top_framework));
    jst_json_kstr(j, "call_site", f->call_site);
    jst_json_kstr(j, "function", f->function);
    jst_json_kstr(j, "cache", f->cache);
    jst_json_key(j, "blame");
    jst_json_arr(j);
    for (unsigned c = 0; c < JST_CAUSE_MAX_; c++) {
        if (!f->blame[c])
            continue;
        jst_json_obj(j);
        jst_json_kstr(j, "cause", jst_cause_name(c));
        jst_json_ku64(j, "dur_ns", f->blame[c]);
        if (c == JST_CAUSE_GRAPH_CAPTURE)
            jst_json_ku64(j, "graphs", f->graphs);
        jst_json_end(j);
    }
    jst_json_end(j);
    jst_json_key(j, "samples");
    jst_json_arr(j);
    for (size_t i = 0; i < f->n_samples; i++) {
        const struct jst_sample_fn *s = &f->samples[i];
        jst_json_obj(j);
        jst_json_kstr(j, "func", s->func);
        jst_json_kstr(j, "file", s->file[0] ? s->file : NULL);
        jst_json_kopt_u64(j, "line", s->line != 0, s->line);
        jst_json_ku64(j, "dur_ns", s->dur_ns);
        jst_json_end(j);
    }
    jst_json_end(j);
    jst_json_key(j, "phases");
    jst_json_arr(j);
    for (size_t i = 0; i < f->n_phases; i++) {
        const struct jst_fc_phase *x = &f->phases[i];
        jst_json_obj(j);
        jst_json_kstr(j, "phase", jst_phase_name(x->phase));
        jst_json_kstr(j, "func", x->func);
        jst_json_kstr(j, "file", x->file && x->file[0] ? x->file : NULL);
        jst_json_ku64(j, "dur_ns", x->dur_ns);
        jst_json_end(j);
    }
    jst_json_end(j);
    jst_json_key(j, "pools");
    jst_json_arr(j);
    for (size_t i = 0; i < f->n_pools; i++) {
        const struct jst_fc_pool *pl = &f->pools[i];
        jst_json_obj(j);
        jst_json_ku64(j, "pid", pl->pid);
        jst_json_ku64(j, "workers", pl->n_workers);
        jst_json_key(j, "runs");
        jst_json_obj(j);
        for (unsigned c = 1; c < JST_CMP_MAX_; c++)
            if (pl->runs[c])
                jst_json_ku64(j, jst_compiler_name(c), pl->runs[c]);
        jst_json_end(j);
        jst_json_ku64(j, "dur_ns", pl->wall_ns);
        jst_json_end(j);
    }
    jst_json_end(j);
    jst_json_end(j);
}

/* A first call's name: the framework's function and the program's call
 * site that asked for it ("add_kernel from main (/app/tri.py:30)"), either
 * alone when the other is unknown, else the kernel that launched first. */
const char *rv_first_call_name(const struct jst_first_call *f, char *buf, size_t n)
{
    /* the kernel stands for the function when none is known (the first
     * call of a kernel a build made, or a C program's) */
    const char *fn = f->function ? f->function : f->call_site ? f->kernel : NULL;
    if (fn && f->call_site)
        snprintf(buf, n, "%s from %s", fn, f->call_site);
    else
        snprintf(buf, n, "%s",
                 f->function    ? f->function
                 : f->call_site ? f->call_site
                 : f->kernel    ? f->kernel
                                : "?");
    return buf;
}

const char *rv_fw_cache_result(const struct jst_process *p, unsigned fw, int *used)
{
    const char *o = NULL;
    for (size_t i = 0; !o && i < p->n_compiles; i++)
        if (p->compiles[i].framework == fw)
            o = jst_fw_cache_outcome(p, fw, 1);
    for (size_t i = 0; !o && i < p->n_first_calls; i++)
        if (p->first_calls[i].top_framework == fw)
            o = p->first_calls[i].cache;
    *used = o != NULL;
    return o ? o : jst_fw_cache_outcome(p, fw, 0);
}

int rv_first_call_kernel_aside(const struct jst_first_call *f)
{
    return f->kernel && f->function && strcmp(f->function, f->kernel);
}

/* "4 workers: ptxas 12 runs, 0.3 s" */
static const char *pool_str(const struct jst_fc_pool *pl, char *buf, size_t n)
{
    char a[32];
    int w = snprintf(buf, n, "%zu %s:", pl->n_workers, pl->n_workers == 1 ? "worker" : "workers");
    for (unsigned c = 1; c < JST_CMP_MAX_ && w > 0 && (size_t)w < n; c++)
        if (pl->runs[c])
            w += snprintf(buf + w, n - (size_t)w, " %s %zu %s,", jst_compiler_name(c), pl->runs[c],
                          pl->runs[c] == 1 ? "run" : "runs");
    if (w > 0 && (size_t)w < n)
        snprintf(buf + w, n - (size_t)w, " %s", rv_dur(pl->wall_ns, a, sizeof a));
    return buf;
}

/* The pools whose compiles a first call of p waited for, once each (from its
 * slowest first call that has them). */
static void pools_text(FILE *f, const struct jst_process *p)
{
    const struct jst_first_call *best = NULL;
    char buf[512], k[64] = "";
    for (size_t i = 0; i < p->n_first_calls; i++)
        if (p->first_calls[i].n_pools && (!best || p->first_calls[i].dur_ns > best->dur_ns))
            best = &p->first_calls[i];
    for (size_t i = 0; best && i < best->n_pools; i++) {
        const struct jst_fc_pool *pl = &best->pools[i];
        if (pl->pid != p->pid) /* the workers of a child of this process */
            snprintf(k, sizeof k, " (a pool of pid %" PRIu64 ")", pl->pid);
        char nm[1024];
        fprintf(f, "  Pool       %s%s, in the first call of ", pool_str(pl, buf, sizeof buf), k);
        put_clean(f, rv_first_call_name(best, nm, sizeof nm), 0);
        fputc('\n', f);
    }
}

/* Each framework cache of p as found at start, with its outcome in p:
 * that of the framework's compiles or first calls, else from the record
 * alone (used: false, the framework was not seen compiling or running). */
static void json_fw_caches(struct jst_json *j, const struct jst_process *p)
{
    jst_json_key(j, "framework_caches");
    jst_json_arr(j);
    for (unsigned fw = 1; fw < JST_FW_MAX_; fw++) {
        const struct jst_fw_cache *s = jst_fw_cache_of(p, fw);
        if (!s)
            continue;
        int used = 0;
        const char *o = rv_fw_cache_result(p, fw, &used);
        jst_json_obj(j);
        jst_json_kstr(j, "framework", s->framework);
        jst_json_kstr(j, "path", s->path);
        jst_json_kbool(j, "used", used);
        jst_json_kstr(j, "outcome", o);
        jst_json_end(j);
    }
    jst_json_end(j);
}

void rv_compiles_json(struct jst_json *j, const struct jst_process *p)
{
    struct jst_symbolizer *sym = NULL;
    rv_ready_json(j, p);
    rv_graphs_json(j, p);
    jst_json_key(j, "compiles");
    jst_json_arr(j);
    for (size_t i = 0; i < p->n_compiles; i++)
        json_compile(j, &sym, p, &p->compiles[i]);
    jst_json_end(j);
    if (sym)
        jst_symbolizer_free(sym);
    jst_json_key(j, "first_calls");
    jst_json_arr(j);
    for (size_t i = 0; i < p->n_first_calls; i++)
        json_first_call(j, &p->first_calls[i]);
    jst_json_end(j);
    char h[1024];
    jst_json_kstr(j, "first_call_headline", rv_first_call_headline(p, h, sizeof h));
    json_fw_caches(j, p);
}

/* Whether text and Markdown show p's first calls: some first call is not
 * the process's first kernel's, or its framework's cache hit. */
int rv_first_calls_shown(const struct jst_process *p)
{
    for (size_t i = 0; i < p->n_first_calls; i++)
        if (p->first_calls[i].start_ns + p->first_calls[i].dur_ns != p->first_launch_ns ||
            (p->first_calls[i].cache && !strcmp(p->first_calls[i].cache, "hit")))
            return 1;
    return 0;
}

static int other_compilers(const struct jst_process *p)
{
    for (size_t i = 0; i < p->n_compiles; i++)
        if (p->compiles[i].compiler != JST_CMP_DRIVER)
            return 1;
    return 0;
}

/* Per compiler: how many compiles and their wall time (parallel ones once). */
static void per_compiler(const struct jst_process *p, size_t *n, uint64_t *ns)
{
    memset(n, 0, JST_CMP_MAX_ * sizeof *n);
    memset(ns, 0, JST_CMP_MAX_ * sizeof *ns);
    unsigned char seen[JST_CMP_MAX_] = {0};
    for (size_t i = 0; i < p->n_compiles; i++) {
        unsigned k = p->compiles[i].compiler < JST_CMP_MAX_ ? p->compiles[i].compiler : 0;
        if (!k)
            continue;
        if (!seen[k]) {
            seen[k] = 1;
            ns[k] = jst_compiler_wall(p, k);
        }
        n[k] += jst_compile_counts(&p->compiles[i]); /* a framework's stage: no */
    }
}

/* Text from a trace, by the CLI's one rule (utf8.h). */
static void put_clean(FILE *f, const char *s, int md)
{
    if (md)
        jst_text_put_md(f, s ? s : "");
    else
        jst_text_put(f, s ? s : "");
}

/* The innermost Python frame of a compile's stack that is not Python's
 * standard library (a framework's "make_cubin (compiler.py:300)", not
 * subprocess.py's wait), else the innermost one; "" when it has none (native
 * call sites are in the Culprits). */
static const char *py_site(const struct jst_process *p, const struct jst_compile *c, char *buf,
                           size_t n)
{
    const struct jst_stack *s = jst_model_stack(p, c->stack_id);
    buf[0] = 0;
    const char *fr = NULL, *t1 = NULL, *t2 = NULL;
    for (size_t i = 0; s && i < s->n_py; i++) {
        const char *f = s->py_frames[i], *a = f ? strchr(f, '\t') : NULL,
                   *b = a ? strchr(a + 1, '\t') : NULL;
        if (!b)
            continue;
        char file[4096];
        snprintf(file, sizeof file, "%.*s", (int)(b - a - 1), a + 1);
        int std = jst_sym_pystd_file(file);
        if (!fr || !std) {
            fr = f, t1 = a, t2 = b;
            if (!std)
                break;
        }
    }
    if (!fr)
        return buf;
    const char *base = t1 + 1;
    for (const char *q = t1 + 1; q < t2; q++)
        if (*q == '/')
            base = q + 1;
    snprintf(buf, n, "%.*s (%.*s:%s)", (int)(t1 - fr), fr, (int)(t2 - base), base, t2 + 1);
    return buf;
}

#define RV_COMPILES_SHOWN 5

/* ---- build trees: a build tool's row, then each compile under it (in this
 * process or a descendant's trace), with its target, output and time ---- */

#define RV_TREE_LINES 24
#define RV_TREE_DEPTH 6

/* Is x (a compile of process q) a direct child of row i of process p? */
static int child_of(const struct jst_process *q, const struct jst_compile *x,
                    const struct jst_process *p, size_t i)
{
    if (!x->has_parent || x->parent != i)
        return 0;
    return x->parent_pid ? x->parent_pid == p->pid : q == p;
}

static void tree_line(FILE *f, int md, unsigned depth, const struct jst_compile *c,
                      const struct jst_compile *same)
{
    char a[32];
    const char *target = c->target ? c->target : same ? same->target : NULL;
    const char *what = c->what ? c->what : same ? same->what : NULL;
    const char *dir = c->dir ? c->dir : same ? same->dir : NULL;
    int64_t st = c->has_exit && c->exit_status ? c->exit_status
                 : same && same->has_exit      ? same->exit_status
                                               : 0;
    if (md)
        fprintf(f, "%*s- ", (int)(2 * depth), "");
    else
        fprintf(f, "    %*s%s", (int)(2 * depth), "", depth ? "`- " : "");
    put_clean(f, jst_compiler_name(c->compiler), md);
    fprintf(f, " %s", rv_dur(c->dur_ns, a, sizeof a));
    if (target) {
        fputs("  ", f);
        put_clean(f, target, md);
    }
    if (what) {
        fputs(c->compiler == JST_CMP_BUILD ? "  " : "  -> ", f);
        put_clean(f, what, md);
    }
    if (dir) {
        fputs(" in ", f);
        put_clean(f, dir, md);
    }
    if (st)
        fprintf(f, "  (exit %" PRId64 ")", st);
    fputc('\n', f);
}

/* A step run through `sh -c` is recorded twice: by its parent, which read the
 * compiler from the shell's command, and by the shell's own trace, as its
 * child. When row i's only child is the same compiler, the tree shows one
 * row (the parent's time: what the build waited) and the child's children
 * below it. Returns that child, or NULL. */
static const struct jst_compile *same_only_child(const struct jst_run *run,
                                                 const struct jst_process *p, size_t i,
                                                 const struct jst_process **qp, size_t *xp)
{
    const struct jst_compile *one = NULL;
    for (size_t k = 0; k < run->n_procs; k++) {
        const struct jst_process *q = &run->procs[k];
        for (size_t x = 0; x < q->n_compiles; x++)
            if (child_of(q, &q->compiles[x], p, i)) {
                if (one)
                    return NULL;
                one = &q->compiles[x];
                *qp = q;
                *xp = x;
            }
    }
    if (!one || one->compiler != p->compiles[i].compiler || one->compiler == JST_CMP_BUILD)
        return NULL;
    return one;
}

/* Row i of p and, below it, its children (any process of the run), by
 * start; *lines counts what is printed. */
static void tree_of(FILE *f, int md, const struct jst_run *run, const struct jst_process *p,
                    size_t i, unsigned depth, size_t *lines)
{
    if (*lines >= RV_TREE_LINES) {
        if ((*lines)++ == RV_TREE_LINES)
            fprintf(f, "    %*s... (all in --json)\n", (int)(2 * depth), "");
        return;
    }
    (*lines)++;
    const struct jst_process *sq = NULL;
    size_t sx = 0;
    const struct jst_compile *same = same_only_child(run, p, i, &sq, &sx);
    tree_line(f, md, depth, &p->compiles[i], same);
    if (depth >= RV_TREE_DEPTH)
        return;
    if (same) { /* its children are this row's */
        p = sq;
        i = sx;
    }
    for (size_t k = 0; k < run->n_procs; k++) {
        const struct jst_process *q = &run->procs[k];
        for (size_t x = 0; x < q->n_compiles; x++)
            if (child_of(q, &q->compiles[x], p, i))
                tree_of(f, md, run, q, x, depth + 1, lines);
    }
}

void rv_builds_text(FILE *f, const struct jst_run *run, const struct jst_process *p, int md)
{
    for (size_t i = 0; run && i < p->n_compiles; i++) {
        const struct jst_compile *c = &p->compiles[i];
        if (c->compiler != JST_CMP_BUILD || c->in_build)
            continue;
        size_t lines = 0;
        fputs(
            md ? "\nBuild tree (a build tool the program waited for, and the compiles under "
                 "it):\n\n"
               : "  Build tree (a build tool the program waited for, and the compiles under it)\n",
            f);
        tree_of(f, md, run, p, i, 0, &lines);
    }
}

/* The longest compiles that are not the driver's (those are culprits). */
static void top_compiles(FILE *f, const struct jst_process *p)
{
    const struct jst_compile *top[RV_COMPILES_SHOWN];
    size_t n = 0, others = 0;
    char a[32], site[512];
    for (size_t i = 0; i < p->n_compiles; i++) {
        const struct jst_compile *c = &p->compiles[i];
        if (c->compiler == JST_CMP_DRIVER || !jst_compile_counts(c))
            continue; /* a framework's stage is in its compile's row */
        others++;
        size_t k = n < RV_COMPILES_SHOWN ? n++ : RV_COMPILES_SHOWN;
        if (k == RV_COMPILES_SHOWN && c->dur_ns <= top[k - 1]->dur_ns)
            continue;
        if (k == RV_COMPILES_SHOWN)
            k--;
        while (k > 0 && top[k - 1]->dur_ns < c->dur_ns) {
            top[k] = top[k - 1];
            k--;
        }
        top[k] = c;
    }
    for (size_t i = 0; i < n; i++) {
        const struct jst_compile *c = top[i];
        fprintf(f, "    %-13s %10s", jst_compiler_name(c->compiler),
                rv_dur(c->dur_ns, a, sizeof a));
        if (c->framework)
            fprintf(f, "  [%s%s%s]", jst_framework_name(c->framework), c->stage ? ", " : "",
                    c->stage ? c->stage : "");
        if (c->kernel) {
            fputs("  for ", f);
            put_clean(f, c->kernel, 0);
        }
        if (c->what) {
            fputs("  -> ", f);
            put_clean(f, c->what, 0);
        }
        if (c->pid)
            fprintf(f, "  (pid %" PRIu64 "%s", c->pid, c->has_exit ? ", exit " : ")");
        if (c->pid && c->has_exit)
            fprintf(f, "%" PRId64 ")", c->exit_status);
        if (*py_site(p, c, site, sizeof site)) {
            fputs("  at ", f);
            put_clean(f, site, 0);
        }
        fputc('\n', f);
    }
    if (others > n)
        fprintf(f, "    ... and %zu more (all in --json)\n", others - n);
}

const char *rv_first_call_headline(const struct jst_process *p, char *buf, size_t n)
{
    const struct jst_first_call *f = jst_slowest_first_call(p);
    char a[32], b[32], nm[1024];
    if (!f || !rv_first_calls_shown(p) || !p->first_launch_ns || f->dur_ns <= p->ttfk_ns)
        return NULL;
    snprintf(buf, n, "first call of %s took %s, slower than time to first kernel (%s)",
             rv_first_call_name(f, nm, sizeof nm), rv_dur(f->dur_ns, a, sizeof a),
             rv_dur(p->ttfk_ns, b, sizeof b));
    return buf;
}

void rv_compiles_text(FILE *f, const struct jst_process *p)
{
    char a[32], h[1024];
    rv_late_text(f, p);
    if (other_compilers(p)) {
        size_t n[JST_CMP_MAX_];
        uint64_t ns[JST_CMP_MAX_];
        per_compiler(p, n, ns);
        fputs("  Compiles   ", f);
        int first = 1;
        for (unsigned k = 1; k < JST_CMP_MAX_; k++) {
            if (!n[k])
                continue;
            fprintf(f, "%s%s %zu (%s)", first ? "" : ", ", jst_compiler_name(k), n[k],
                    rv_dur(ns[k], a, sizeof a));
            first = 0;
        }
        fputc('\n', f);
        top_compiles(f, p);
    }
    pools_text(f, p);
    if (!rv_first_calls_shown(p))
        return;
    if (rv_first_call_headline(p, h, sizeof h)) {
        fputs("  Slowest first call  ", f);
        put_clean(f, h + strlen("first call of "), 0);
        fputc('\n', f);
    }
    fputs("  First calls (compile work before a kernel's first launch, and where it went)\n", f);
    for (size_t i = 0; i < p->n_first_calls; i++) {
        const struct jst_first_call *fc = &p->first_calls[i];
        fputs("    ", f);
        put_clean(f, rv_first_call_name(fc, h, sizeof h), 0);
        fprintf(f, "  %s", rv_dur(fc->dur_ns, a, sizeof a));
        if (fc->top_framework)
            fprintf(f, "  [%s%s%s]", jst_framework_name(fc->top_framework),
                    fc->cache ? ", cache " : "", fc->cache ? fc->cache : "");
        fputc('\n', f);
        if (rv_first_call_kernel_aside(fc)) {
            fputs("      first kernel ", f);
            put_clean(f, fc->kernel, 0);
            fputc('\n', f);
        }
        for (unsigned c = 0; c < JST_CAUSE_MAX_; c++) {
            if (!fc->blame[c])
                continue;
            fprintf(f, "      %-24s %10s %5.1f%%", jst_cause_label(c),
                    rv_dur(fc->blame[c], a, sizeof a), rv_pct(fc->blame[c], fc->dur_ns));
            if (c == JST_CAUSE_GRAPH_CAPTURE)
                fprintf(f, "  %zu graph%s", fc->graphs, fc->graphs == 1 ? "" : "s");
            fputc('\n', f);
            for (size_t k = 0; c == JST_CAUSE_PYTHON && k < fc->n_phases; k++) {
                const struct jst_fc_phase *x = &fc->phases[k];
                char lab[512], fn[256];
                if (!x->dur_ns)
                    continue;
                snprintf(lab, sizeof lab, "%s%s%s%s", jst_phase_label(x->phase),
                         x->func ? " (" : "",
                         x->func ? jst_phase_func_words(x->func, x->file, fn, sizeof fn) : "",
                         x->func ? ")" : "");
                fputs("        ", f);
                put_clean(f, lab, 0);
                /* under the blame's times where the name leaves room */
                fprintf(f, "%*s%10s\n", strlen(lab) < 32 ? (int)(32 - strlen(lab)) : 1, "",
                        rv_dur(x->dur_ns, a, sizeof a));
            }
        }
        for (size_t k = 0; k < fc->n_pools; k++)
            fprintf(f, "        %s\n", pool_str(&fc->pools[k], h, sizeof h));
        for (size_t k = 0; k < fc->n_samples && k < 5; k++) {
            const struct jst_sample_fn *s = &fc->samples[k];
            fputs(k ? "                               " : "      sampled Python (top)     ", f);
            put_clean(f, s->func, 0);
            fputs(" (", f);
            const char *base = strrchr(s->file, '/');
            put_clean(f, base ? base + 1 : s->file, 0);
            fprintf(f, ":%u) %s\n", s->line, rv_dur(s->dur_ns, a, sizeof a));
        }
    }
}

void rv_compiles_markdown(FILE *f, const struct rv_report *r)
{
    char a[32];
    int any = 0;
    rv_late_markdown(f, r);
    for (size_t i = 0; i < r->n_procs; i++)
        rv_builds_text(f, r->run, r->procs[i].p, 1);
    for (size_t i = 0; i < r->n_procs; i++)
        any |= rv_first_calls_shown(r->procs[i].p);
    if (!any)
        return;
    fputs("\nFirst calls (compile work before a kernel's first launch):\n\n"
          "| pid | first call | time | framework | where it went |\n"
          "| ---: | --- | ---: | --- | --- |\n",
          f);
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        if (!rv_first_calls_shown(p))
            continue;
        for (size_t k = 0; k < p->n_first_calls; k++) {
            const struct jst_first_call *fc = &p->first_calls[k];
            char nm[1024];
            fprintf(f, "| %" PRIu64 " | ", p->pid);
            put_clean(f, rv_first_call_name(fc, nm, sizeof nm), 1);
            if (rv_first_call_kernel_aside(fc)) {
                fputs(" (first kernel ", f);
                put_clean(f, fc->kernel, 1);
                fputc(')', f);
            }
            fprintf(f, " | %s | %s%s%s%s | ", rv_dur(fc->dur_ns, a, sizeof a),
                    fc->top_framework ? jst_framework_name(fc->top_framework) : "-",
                    fc->top_framework && fc->cache ? " (cache " : "",
                    fc->top_framework && fc->cache ? fc->cache : "",
                    fc->top_framework && fc->cache ? ")" : "");
            int first = 1;
            for (unsigned c = 0; c < JST_CAUSE_MAX_; c++) {
                if (!fc->blame[c])
                    continue;
                fprintf(f, "%s%s %s (%.0f%%)", first ? "" : ", ", jst_cause_label(c),
                        rv_dur(fc->blame[c], a, sizeof a), rv_pct(fc->blame[c], fc->dur_ns));
                first = 0;
                int opened = 0;
                for (size_t q = 0; c == JST_CAUSE_PYTHON && q < fc->n_phases; q++) {
                    const struct jst_fc_phase *x = &fc->phases[q];
                    if (!x->dur_ns)
                        continue;
                    fprintf(f, "%s%s", opened ? ", " : " [", jst_phase_label(x->phase));
                    opened = 1;
                    if (x->func) {
                        char fn[256];
                        fputs(" (", f);
                        put_clean(f, jst_phase_func_words(x->func, x->file, fn, sizeof fn), 1);
                        fputc(')', f);
                    }
                    fprintf(f, " %s", rv_dur(x->dur_ns, a, sizeof a));
                }
                if (opened)
                    fputc(']', f);
            }
            if (fc->n_samples) {
                fputs("; top sampled: ", f);
                put_clean(f, fc->samples[0].func, 1);
            }
            fputs(" |\n", f);
        }
    }
    for (size_t i = 0; i < r->n_procs; i++) {
        char h[1024];
        const struct jst_process *p = r->procs[i].p;
        if (!rv_first_call_headline(p, h, sizeof h))
            continue;
        fprintf(f, "\n**Process %" PRIu64 "**: ", p->pid);
        put_clean(f, h, 1);
        fputs(".\n", f);
    }
}

int rv_proc_shown(const struct rv_report *r, const struct jst_process *p)
{
    return r->per_process || !r->run ||
           (!jst_model_is_pool_worker(r->run, p) && !jst_model_is_build_helper(r->run, p));
}

int rv_proc_quiet(const struct rv_report *r, const struct jst_process *p)
{
    if (!r->run || r->per_process || !jst_model_parent(r->run, p) || p->n_launches ||
        p->n_compiles || p->n_in_flight)
        return 0;
    for (size_t i = 0; i < p->n_calls; i++) /* driver start-up alone is no GPU work */
        if (jst_model_is_module(p, &p->calls[i]))
            return 0;
    return 1;
}

#define RV_WORKERS_SHOWN 16

void rv_workers_text(FILE *f, const struct rv_report *r, const struct jst_process *p)
{
    size_t n = 0, shown = 0, ended = 0, runs[JST_CMP_MAX_] = {0};
    char a[32];
    for (size_t i = 0; r->run && i < r->run->n_procs; i++) {
        const struct jst_process *c = &r->run->procs[i];
        if (rv_proc_shown(r, c) || jst_model_parent(r->run, c) != p ||
            jst_model_is_build_helper(r->run, c))
            continue;
        n++;
        ended += c->ended_by != 0;
        for (size_t k = 0; k < c->n_compiles; k++)
            runs[c->compiles[k].compiler < JST_CMP_MAX_ ? c->compiles[k].compiler : 0] +=
                jst_compile_counts(&c->compiles[k]);
    }
    if (!n)
        return;
    fprintf(f, "  Workers    %zu forked", n);
    if (ended)
        fprintf(f, " (%zu ended by this process)", ended);
    fputc(':', f);
    for (unsigned k = 1; k < JST_CMP_MAX_; k++)
        if (runs[k])
            fprintf(f, " %s %zu", jst_compiler_name(k), runs[k]);
    fputc('\n', f);
    for (size_t i = 0; i < r->run->n_procs && shown < RV_WORKERS_SHOWN; i++) {
        const struct jst_process *c = &r->run->procs[i];
        if (rv_proc_shown(r, c) || jst_model_parent(r->run, c) != p ||
            jst_model_is_build_helper(r->run, c))
            continue;
        shown++;
        size_t nk[JST_CMP_MAX_] = {0};
        uint64_t ns[JST_CMP_MAX_] = {0};
        per_compiler(c, nk, ns);
        fprintf(f, "    pid %-8" PRIu64, c->pid);
        int first = 1;
        for (unsigned k = 1; k < JST_CMP_MAX_; k++)
            if (nk[k]) {
                fprintf(f, "%s%s %zu (%s)", first ? " " : ", ", jst_compiler_name(k), nk[k],
                        rv_dur(ns[k], a, sizeof a));
                first = 0;
            }
        if (first)
            fputs(" no compiles", f);
        fputs(c->ended_by ? "  ended by this process\n" : c->has_end ? "\n" : "  (truncated)\n", f);
    }
    if (n > shown)
        fprintf(f, "    ... and %zu more (report --per-process, or --json)\n", n - shown);
}

int rv_any_first_calls(const struct rv_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        if (rv_first_calls_shown(r->procs[i].p))
            return 1;
    return 0;
}

/* ---- ready and late compiles ---- */

void rv_ready_json(struct jst_json *j, const struct jst_process *p)
{
    uint64_t ns = 0;
    size_t n = jst_late_count(p, &ns);
    jst_json_kopt_u64(j, "ttr_ns", p->ready.present, p->ttr_ns);
    jst_json_kopt_u64(j, "ready_ns", p->ready.present, p->ready.t_ns);
    jst_json_kstr(j, "ready_spec", p->ready.present ? p->ready.spec : NULL);
    jst_json_ku64(j, "late_compiles", n);
    jst_json_ku64(j, "late_compile_ns", ns);
}

void rv_ready_text(FILE *f, const struct jst_process *p)
{
    char a[32];
    if (!p->ready.present)
        return;
    fprintf(f, "  Time to ready         %s", rv_dur(p->ttr_ns, a, sizeof a));
    if (p->ready.spec) {
        fputs(" (", f);
        put_clean(f, p->ready.spec, 0);
        fputc(')', f);
    }
    fputc('\n', f);
}

/* Where a late compile was asked for: the native call site, then the
 * innermost Python frame of the program; "" when the stack says neither. */
static const char *late_site(struct jst_symbolizer **sym, const struct jst_process *p,
                             const struct jst_compile *c, char *buf, size_t n)
{
    static struct jst_frame fr[STACK_MAX];
    char py[512], nat[1024];
    size_t k = 0;
    nat[0] = 0;
    if (c->stack_id && jst_model_stack(p, c->stack_id)) {
        if (!*sym)
            *sym = jst_symbolizer_new(p);
        if (*sym)
            k = jst_symbolize_stack(*sym, c->stack_id, c->seq, fr, STACK_MAX);
    }
    int site = k ? jst_call_site(fr, k) : -1;
    if (site >= 0)
        jst_frame_str(&fr[site], nat, sizeof nat);
    py_site(p, c, py, sizeof py);
    snprintf(buf, n, "%s%s%s", py, py[0] && nat[0] ? " <- " : "", nat);
    return buf;
}

void rv_late_text(FILE *f, const struct jst_process *p)
{
    uint64_t ns = 0;
    size_t n = jst_late_count(p, &ns);
    char a[32], site[2048], fix[1024];
    struct jst_symbolizer *sym = NULL;
    if (!n)
        return;
    fprintf(f, "  Late compiles  %zu after ready, %s: each stalled a request\n", n,
            rv_dur(ns, a, sizeof a));
    for (size_t i = 0; i < p->n_compiles; i++) {
        const struct jst_compile *c = &p->compiles[i];
        if (!c->late)
            continue;
        const struct jst_query *q = jst_late_request(p, c);
        fprintf(f, "    %-13s %10s%s  ", jst_compiler_name(c->compiler),
                rv_dur(c->dur_ns, a, sizeof a), c->in_flight ? " (still running)" : "");
        put_clean(f, jst_late_subject(c, site, sizeof site), 0);
        if (c->framework)
            fprintf(f, "  [%s]", jst_framework_name(c->framework));
        fprintf(f, "  +%s after ready", rv_dur(c->start_ns - p->ready.t_ns, a, sizeof a));
        if (q) {
            fputs("  in request ", f);
            put_clean(f, q->name, 0);
        }
        fputc('\n', f);
        if (*late_site(&sym, p, c, site, sizeof site)) {
            fputs("      at ", f);
            put_clean(f, site, 0);
            fputc('\n', f);
        }
        fputs("      fix: ", f);
        put_clean(f, jst_late_fix(c, fix, sizeof fix), 0);
        fputc('\n', f);
    }
    if (sym)
        jst_symbolizer_free(sym);
}

void rv_late_markdown(FILE *f, const struct rv_report *r)
{
    char a[32], b[32], fix[1024];
    int any = 0;
    for (size_t i = 0; i < r->n_procs; i++)
        any |= r->procs[i].p->ready.present;
    if (!any)
        return;
    fputs("\nTime to ready:\n\n| pid | time to ready | ready when | time to first kernel | "
          "late compiles |\n| ---: | ---: | --- | ---: | ---: |\n",
          f);
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        uint64_t ns = 0;
        size_t n = jst_late_count(p, &ns);
        if (!p->ready.present)
            continue;
        fprintf(f, "| %" PRIu64 " | %s | ", p->pid, rv_dur(p->ttr_ns, a, sizeof a));
        put_clean(f, p->ready.spec ? p->ready.spec : "-", 1);
        fprintf(f, " | %s | %zu (%s) |\n",
                p->first_launch_ns ? rv_dur(p->ttfk_ns, b, sizeof b) : "no launch", n,
                rv_dur(ns, a, sizeof a));
    }
    any = 0;
    for (size_t i = 0; i < r->n_procs; i++)
        any |= jst_late_count(r->procs[i].p, NULL) != 0;
    if (!any)
        return;
    fputs("\nLate compiles (after ready; each stalled a request):\n\n"
          "| pid | compiler | time | kernel | request | fix |\n"
          "| ---: | --- | ---: | --- | --- | --- |\n",
          f);
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        for (size_t k = 0; k < p->n_compiles; k++) {
            const struct jst_compile *c = &p->compiles[k];
            if (!c->late)
                continue;
            const struct jst_query *q = jst_late_request(p, c);
            fprintf(f, "| %" PRIu64 " | %s | %s | ", p->pid, jst_compiler_name(c->compiler),
                    rv_dur(c->dur_ns, a, sizeof a));
            put_clean(f, jst_late_subject(c, fix, sizeof fix), 1);
            fputs(" | ", f);
            put_clean(f, q ? q->name : "-", 1);
            fputs(" | ", f);
            put_clean(f, jst_late_fix(c, fix, sizeof fix), 1);
            fputs(" |\n", f);
        }
    }
}
