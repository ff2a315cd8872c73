/*
 * The terminal form of `jitstall report`: headline per process, culprits,
 * fixes, JIT cache state, and a table when there are several processes.
 * Colour only when asked (the caller checks isatty and NO_COLOR).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "compiles.h"
#include "fixes.h"
#include "report_compiles.h"
#include "fleet.h"
#include "report_queries.h"
#include "report_view.h"
#include "utf8.h"
#include "trace.h"

struct tw {
    FILE *f;
    int colour;
};

static const char *C(const struct tw *t, const char *code)
{
    return t->colour ? code : "";
}
#define BOLD "\033[1m"
#define RED "\033[31m"
#define GREEN "\033[32m"
#define YELLOW "\033[33m"
#define RESET "\033[0m"

/* A string from a trace, safe for a terminal: escaped by the CLI's one rule
 * (utf8.h). Rotating buffers, so that several may appear in one printf. */
#define S(s) jst_text(s)

static void heading(const struct tw *t, const char *s)
{
    fprintf(t->f, "\n%s%s%s\n", C(t, BOLD), s, C(t, RESET));
}

static void args_line(const struct jst_process *p, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < p->argc && used + 1 < n; i++) {
        int w = snprintf(buf + used, n - used, "%s%s", i ? " " : "", S(p->argv[i]));
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (used >= n && n > 4)
        memcpy(buf + n - 4, "...", 4);
}

static void breakdown_line(const struct tw *t, const char *label, uint64_t v, uint64_t whole,
                           const char *detail, const char *colour)
{
    char d[32];
    fprintf(t->f, "    %s%-18s %10s %5.1f%%%s", C(t, colour), label, rv_dur(v, d, sizeof(d)),
            rv_pct(v, whole), C(t, RESET));
    if (detail && *detail)
        fprintf(t->f, "  %s", detail);
    fputc('\n', t->f);
}

/* The JIT line's detail. Loads on several threads overlap: the line shows
 * the wall time they took together, and here the work they did. */
static void jit_detail(const struct jst_process *p, char *line, size_t n)
{
    char a[32], b[32], w[32];
    if (p->ttfk_jit_overlap > 1)
        snprintf(line, n, "%s of work in %zu overlapping loads; compile %s, cache load %s",
                 rv_dur(p->ttfk_jit_work_ns, w, sizeof(w)), p->ttfk_jit_overlap,
                 rv_dur(p->ttfk_jit_compile_ns, a, sizeof(a)),
                 rv_dur(p->ttfk_jit_cache_load_ns, b, sizeof(b)));
    else
        snprintf(line, n, "compile %s, cache load %s", rv_dur(p->ttfk_jit_compile_ns, a, sizeof(a)),
                 rv_dur(p->ttfk_jit_cache_load_ns, b, sizeof(b)));
}

static void write_process(const struct tw *t, const struct rv_report *r, const struct rv_proc *rp)
{
    const struct jst_process *p = rp->p;
    char a[32], b[32], j[32], line[512];

    fprintf(t->f, "\n%sProcess %" PRIu64 "%s  %s\n", C(t, BOLD), p->pid, C(t, RESET),
            S(rv_exe_name(p)));
    args_line(p, line, sizeof(line));
    if (line[0])
        fprintf(t->f, "  command    %s\n", line);
    fprintf(t->f, "  trace      %s%s\n", S(p->trace_path),
            p->damage                     ? " (damaged)"
            : p->truncated && p->ended_by ? " (ended by its parent)"
            : p->truncated                ? " (truncated)"
                                          : "");
    for (size_t i = 0; i < p->n_devices; i++) {
        const struct jst_device *d = &p->devices[i];
        fprintf(t->f, "  GPU %-6u %s, sm_%u%u", d->ordinal, S(d->name), d->cc_major, d->cc_minor);
        if (d->driver_version)
            fprintf(t->f, ", driver %" PRIu64 ".%" PRIu64, d->driver_version / 1000,
                    d->driver_version % 1000 / 10);
        fputc('\n', t->f);
    }
    if (p->first_launch_ns || p->ttfk_in_flight) {
        fprintf(t->f, "  %sTime to first kernel  %s%s%s%s\n", C(t, BOLD),
                p->ttfk_in_flight ? "more than " : "", rv_dur(p->ttfk_ns, a, sizeof(a)),
                C(t, RESET), p->ttfk_in_flight ? " (no kernel yet: a call still in flight)" : "");
        jit_detail(p, line, sizeof(line));
        breakdown_line(t, "JIT", p->ttfk_jit_ns, p->ttfk_ns, line, p->ttfk_jit_ns ? RED : "");
        snprintf(line, sizeof(line), "cuInit %s, context %s", rv_dur(p->init_ns, a, sizeof(a)),
                 rv_dur(p->ctx_ns, b, sizeof(b)));
        breakdown_line(t, "init + context", p->init_ns + p->ctx_ns, p->ttfk_ns, line, "");
        breakdown_line(t, "SASS module loads", p->sass_load_ns, p->ttfk_ns, NULL, "");
        if (p->rtc_ns)
            breakdown_line(t, "runtime compile", p->rtc_ns, p->ttfk_ns, "NVRTC / nvJitLink", RED);
        if (p->graphs.ttfk_ns)
            breakdown_line(t, "CUDA graph capture", p->graphs.ttfk_ns, p->ttfk_ns,
                           "capture and instantiation", RED);
        breakdown_line(t, "before the driver", p->pre_driver_ns, p->ttfk_ns,
                       "start to the first driver call", "");
        breakdown_line(t, "everything else", p->other_ns, p->ttfk_ns, NULL, "");
    } else {
        fprintf(t->f, "  Time to first kernel  unknown: no kernel launch in the trace\n");
    }
    rv_ready_text(t->f, p);
    fprintf(t->f, "  JIT in the whole run  %s in %zu %s (compile %s, cache load %s)\n",
            rv_dur(p->jit_ns, j, sizeof(j)), rp->n_jit_loads,
            rp->n_jit_loads == 1 ? "load" : "loads", rv_dur(p->jit_compile_ns, a, sizeof(a)),
            rv_dur(p->jit_cache_load_ns, b, sizeof(b)));
    rv_graphs_text(t->f, p);
    if (p->self_ns)
        fprintf(t->f, "  jitstall's own cost: %s\n", rv_dur(p->self_ns, a, sizeof(a)));
    rv_compiles_text(t->f, p);
    rv_builds_text(t->f, r->run, p, 0);
    rv_workers_text(t->f, r, p);
    rv_queries_text(t->f, r, p);
    for (size_t i = 0; i < rp->n_missing; i++)
        fprintf(t->f, "  %smissing%s    %s\n", C(t, YELLOW), C(t, RESET), S(rp->missing[i]));
    for (size_t i = 0; i < p->n_notes; i++)
        fprintf(t->f, "  note       %s\n", S(p->notes[i]));
    (void)r;
}

static void write_table(const struct tw *t, const struct rv_report *r)
{
    char a[32], b[32], c[32], d[32], e[32];
    heading(t, "Processes");
    fprintf(t->f, "  %-8s %12s %12s %12s %12s %12s  %s\n", "pid", "1st kernel", "JIT", "compile",
            "cache load", "projected", "program");
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        if (!rv_proc_shown(r, p))
            continue; /* a pool's worker: under its parent */
        fprintf(t->f, "  %-8" PRIu64 " %12s %12s %12s %12s %12s  %s\n", p->pid,
                p->first_launch_ns ? rv_dur(p->ttfk_ns, a, sizeof(a)) : "-",
                rv_dur(p->jit_ns, b, sizeof(b)), rv_dur(p->jit_compile_ns, c, sizeof(c)),
                rv_dur(p->jit_cache_load_ns, d, sizeof(d)),
                p->first_launch_ns ? rv_dur(r->procs[i].projected_ttfk_ns, e, sizeof(e)) : "-",
                S(rv_exe_name(p)));
    }
    fprintf(t->f, "  %-8s %12s %12s %12s %12s %12s  %s\n", "total", rv_dur(r->ttfk_max_ns, a, 32),
            rv_dur(r->jit_ns, b, 32), rv_dur(r->jit_compile_ns, c, 32),
            rv_dur(r->jit_cache_load_ns, d, 32), rv_dur(r->projected_ttfk_max_ns, e, 32),
            "(1st kernel and projected: the slowest process; JIT: the sum)");
}

/* A chain's callers (its first frame is the call site) and a fix. */
static void write_chain_fix(const struct tw *t, const struct rv_chain *ch, const char *fix)
{
    for (size_t k = 1; k < ch->n_stack; k++)
        fprintf(t->f, "     called by  %s\n", S(ch->stack[k].text));
    if (ch->stack_more)
        fprintf(t->f, "     called by  ... %zu more\n", ch->stack_more);
    if (fix)
        fprintf(t->f, "     fix        %s%s%s\n", C(t, GREEN), S(fix), C(t, RESET));
}

static void write_module_culprit(const struct tw *t, const struct rv_report *r, size_t g,
                                 size_t num)
{
    char buf[2048], d[32];
    const struct rv_group *gr = &r->groups[g];
    const struct rv_module *m = gr->m;
    fprintf(t->f, "  %zu. %s%s%s  %s", num, C(t, gr->lost_ns ? RED : YELLOW),
            gr->lost_ns ? rv_dur(gr->lost_ns, d, sizeof(d)) : "failed", C(t, RESET),
            S(rv_origin(m, buf, sizeof(buf))));
    if (gr->n > 1)
        fprintf(t->f, "  [%zu %s, %s]", gr->n, jst_is_rtc_call(m->c->call) ? "calls" : "loads",
                rv_group_pids(r, g, buf, sizeof(buf)));
    else if (r->n_procs > 1)
        fprintf(t->f, "  [pid %" PRIu64 "]", m->p->pid);
    fputc('\n', t->f);
    if (m->c->in_flight)
        fprintf(t->f, "     %sin flight%s  %s\n", C(t, RED), C(t, RESET),
                rv_in_flight_str(m->p, m->c, buf, sizeof(buf)));
    const char *api = m->c->call_name ? m->c->call_name : jst_call_name(m->c->call);
    const char *kind = m->c->image_kind ? jst_image_kind_name(m->c->image_kind) : NULL;
    int rtc = jst_is_rtc_call(m->c->call); /* no image, verdict or driver cache */
    if (!rtc) {
        fprintf(t->f, "     loaded by  %s", S(api));
        if (kind && m->c->image_size)
            fprintf(t->f, " (%s, %s)", kind, rv_bytes(m->c->image_size, d, sizeof(d)));
        else if (kind)
            fprintf(t->f, " (%s)", kind);
        fputc('\n', t->f);
    }
    fprintf(t->f, "     %-10s %s\n", rtc ? "what" : "verdict",
            S(rv_verdict_str(m, buf, sizeof(buf))));
    if (m->c->n_kernels)
        fprintf(t->f, "     kernels    %zu: %s\n", m->c->n_kernels,
                S(rv_kernels_short(m, 3, buf, sizeof(buf))));
    if (!rtc)
        fprintf(t->f, "     cache      %s\n", S(rv_group_cache_str(gr, buf, sizeof(buf))));
    fprintf(t->f, "     call site  %s\n", m->call_site ? S(m->call_site) : "(no stack recorded)");
    write_chain_fix(t, &m->chain, m->fix);
}

/* A compile that no driver or library call made (a compiler subprocess, a
 * framework's own compile). */
static void write_compile_culprit(const struct tw *t, const struct rv_report *r, size_t g,
                                  size_t num)
{
    char buf[2048], d[32];
    const struct rv_group *gr = &r->groups[g];
    const struct rv_compile *x = gr->k;
    const struct jst_compile *k = x->k;
    fprintf(t->f, "  %zu. %s%s%s  %s", num, C(t, RED), rv_dur(gr->lost_ns, d, sizeof(d)),
            C(t, RESET), S(rv_compile_origin(k, buf, sizeof(buf))));
    if (gr->n > 1)
        fprintf(t->f, "  [%zu compiles, %s]", gr->n, rv_group_pids(r, g, buf, sizeof(buf)));
    else if (r->n_procs > 1)
        fprintf(t->f, "  [pid %" PRIu64 "]", x->p->pid);
    fputc('\n', t->f);
    /* the facts start with "still compiling when the trace ends" when so */
    if (k->in_flight)
        fprintf(t->f, "     %sin flight%s  %s\n", C(t, RED), C(t, RESET),
                S(rv_compile_facts(k, buf, sizeof(buf))));
    else
        fprintf(t->f, "     compiled   %s\n", S(rv_compile_facts(k, buf, sizeof(buf))));
    if (k->cache)
        fprintf(t->f, "     cache      %s\n", S(k->cache));
    fprintf(t->f, "     call site  %s\n",
            x->call_site ? S(x->call_site) : S(rv_compile_no_site(k)));
    write_chain_fix(t, &x->chain, x->fix);
}

static void write_culprits(const struct tw *t, const struct rv_report *r, size_t max)
{
    heading(t, "Culprits, ranked by time lost");
    /* graph capture, one entry for the run, takes its place by time */
    uint64_t graphs = rv_graphs_culprit_ns(r);
    size_t num = 1;
    for (size_t g = 0; g < r->n_groups && g < max; g++) {
        if (graphs && graphs > r->groups[g].lost_ns) {
            rv_graphs_culprit_text(t->f, r, num++);
            graphs = 0;
        }
        if (r->groups[g].m)
            write_module_culprit(t, r, g, num++);
        else
            write_compile_culprit(t, r, g, num++);
    }
    if (graphs)
        rv_graphs_culprit_text(t->f, r, num);
    if (r->n_groups > max)
        fprintf(t->f, "  ... %zu more (jitstall report --per-process shows them all)\n",
                r->n_groups - max);
    if (!r->n_groups && rv_any_first_calls(r))
        fprintf(t->f, "  none among the loads: no load needed the JIT or failed; where the first "
                      "calls' time went is under \"First calls\" above\n");
    else if (!r->n_groups)
        fprintf(t->f, "  none: no load needed the JIT or failed\n");
    size_t sass = 0;
    for (size_t i = 0; i < r->n_mods; i++)
        sass += !r->mods[i].culprit;
    if (sass)
        fprintf(t->f, "  (%zu other %s loaded without JIT)\n", sass,
                sass == 1 ? "module" : "modules");
}

/* Only when some image was compiled at once by several processes. */
static void write_races(const struct tw *t, const struct rv_report *r)
{
    char d[32];
    if (!r->races.n)
        return;
    heading(t, "Compiled at once in several processes (one cold cache)");
    for (size_t i = 0; i < r->races.n; i++) {
        const struct jst_race *x = &r->races.v[i];
        fprintf(t->f, "  %zu. %s%s%s  %s\n", i + 1, C(t, RED), rv_dur(x->jit_ns, d, sizeof(d)),
                C(t, RESET), S(x->origin ? x->origin : "(image in memory)"));
        fprintf(t->f, "     compiled %zu times at once in %zu processes (pid", x->compiles,
                x->processes);
        for (size_t k = 0; k < x->processes && k < 8; k++)
            fprintf(t->f, "%s %" PRIu64, k ? "," : (x->processes > 1 ? "s" : ""), x->pids[k]);
        fprintf(t->f, "%s), %s in all\n", x->processes > 8 ? ", ..." : "",
                rv_dur(x->jit_ns, d, sizeof(d)));
    }
    fprintf(t->f, "  (each compiled the whole image; the fix is under Fixes)\n");
}

static void write_fixes(const struct tw *t, const struct rv_report *r, int fold)
{
    char d[32], e[32];
    heading(t, "Fixes, ranked by time saved");
    for (size_t i = 0; i < r->fixes.n; i++) {
        const struct jst_fix *f = &r->fixes.v[i];
        if (f->saves_ns)
            fprintf(t->f, "  %zu. saves %-9s %s%s%s\n", i + 1, rv_dur(f->saves_ns, d, sizeof(d)),
                    C(t, GREEN), S(f->text), C(t, RESET));
        else
            fprintf(t->f, "  %zu. %-15s %s%s%s\n", i + 1,
                    f->kind == JST_FIX_FRAMEWORK_COST ? "(per process)" : "(failed load)",
                    C(t, GREEN), S(f->text), C(t, RESET));
    }
    if (!r->fixes.n) {
        fprintf(t->f, "  nothing to fix\n");
        return;
    }
    for (size_t i = 0; i < r->n_procs && !fold; i++) {
        const struct jst_process *p = r->procs[i].p;
        if (!p->first_launch_ns)
            continue;
        if (r->n_procs > 1)
            fprintf(t->f, "  Projected time to first kernel of pid %" PRIu64 ": %s (now %s)\n",
                    p->pid, rv_dur(r->procs[i].projected_ttfk_ns, d, sizeof(d)),
                    rv_dur(p->ttfk_ns, e, sizeof(e)));
        else
            fprintf(t->f, "  Projected time to first kernel with these fixes: %s%s%s (now %s)\n",
                    C(t, BOLD), rv_dur(r->procs[i].projected_ttfk_ns, d, sizeof(d)), C(t, RESET),
                    rv_dur(p->ttfk_ns, e, sizeof(e)));
        /* When a first call is slower than the first kernel, the fixes are
         * for it: say what they make of the slowest one. */
        char h[512], pid[40] = "";
        if (!rv_first_call_headline(p, h, sizeof h))
            continue;
        if (r->n_procs > 1)
            snprintf(pid, sizeof pid, " of pid %" PRIu64, p->pid);
        fprintf(t->f, "  Projected slowest first call%s with these fixes: %s%s%s (now %s)\n", pid,
                C(t, BOLD), rv_dur(jst_fixes_projected_first_call(p), d, sizeof(d)), C(t, RESET),
                rv_dur(jst_slowest_first_call(p)->dur_ns, e, sizeof(e)));
    }
}

static void cache_line(const struct tw *t, const char *label, const struct jst_cache_state *s)
{
    char buf[256];
    fprintf(t->f, "  %-9s %s\n", label, rv_cache_state_str(s, buf, sizeof(buf)));
}

/* Cache directories the text report shows; JSON's caches[] has them all. */
#define RV_TEXT_CACHES 5

static void write_cache(const struct tw *t, const struct rv_report *r)
{
    char a[32];
    heading(t, "JIT cache");
    if (!r->n_caches) {
        fprintf(t->f, "  not recorded\n");
        return;
    }
    for (size_t i = 0; i < r->n_caches && i < RV_TEXT_CACHES; i++) {
        const struct rv_cache *c = &r->caches[i];
        const struct jst_cache_state *s = &c->first->cache_start, *e = &c->last->cache_end;
        int from_env = (s->present && s->from_env) || (e->present && e->from_env);
        fprintf(t->f, "  path      %s (%s)", S(c->path),
                from_env ? "CUDA_CACHE_PATH" : "default, CUDA_CACHE_PATH not set");
        if (c->n_procs > 1)
            fprintf(t->f, ", used by %zu processes", c->n_procs);
        fputc('\n', t->f);
        cache_line(t, "at start", s);
        cache_line(t, "at exit", e);
        if (s->present && e->present) {
            int64_t db = (int64_t)(e->size_bytes - s->size_bytes);
            int64_t de = (int64_t)(e->entries - s->entries);
            if (!db && !de && s->exists == e->exists)
                fprintf(t->f, "  change    none during the run\n");
            else
                fprintf(t->f, "  change    %s%s, %+" PRId64 " %s during the run%s\n",
                        db < 0 ? "-" : "+", rv_bytes(db < 0 ? (uint64_t)-db : (uint64_t)db, a, 32),
                        de, (de == 1 || de == -1) ? "entry" : "entries",
                        !s->exists && e->exists ? " (created)" : "");
        }
    }
    size_t left = 0;
    for (size_t i = RV_TEXT_CACHES; i < r->n_caches; i++)
        left +=
            3 + (r->caches[i].first->cache_start.present && r->caches[i].last->cache_end.present);
    if (r->n_caches > RV_TEXT_CACHES)
        fprintf(t->f,
                "  ... %zu more cache directories (%zu lines left out; jitstall report --json "
                "lists every one under \"caches\")\n",
                r->n_caches - RV_TEXT_CACHES, left);
}

/* The answer first: one line per process (at most FL_DETAIL_MAX), or with
 * many runs the fleet's line and one per program. */
static void write_answer(const struct tw *t, const struct rv_report *r, const struct fl_fleet *fl)
{
    char line[4096];
    fputs(C(t, BOLD), t->f);
    if (fl->most_runs > 1) {
        fl_answer(t->f, fl, r, 5);
    } else if (r->n_procs == 1) {
        fprintf(t->f, "%s\n", S(rv_answer_proc(r, &r->procs[0], line, sizeof line)));
    } else {
        /* the processes shown as such: a pool's workers and a build's
         * helpers are their parent's (its Workers line, its build tree) */
        size_t shown = 0, said = 0, quiet = 0;
        for (size_t i = 0; i < r->n_procs; i++) {
            if (!rv_proc_shown(r, r->procs[i].p))
                continue;
            if (rv_proc_quiet(r, r->procs[i].p)) {
                quiet++;
                continue;
            }
            if (shown++ >= FL_DETAIL_MAX)
                continue;
            said++;
            fprintf(t->f, "pid %" PRIu64 " %s: %s\n", r->procs[i].p->pid,
                    S(rv_exe_name(r->procs[i].p)),
                    S(rv_answer_proc(r, &r->procs[i], line, sizeof line)));
        }
        if (shown > said)
            fprintf(t->f, "... and %zu more processes\n", shown - said);
        if (quiet)
            fprintf(t->f, "(and %zu child process%s that launched no kernel, loaded no module and compiled nothing)\n",
                    quiet, quiet == 1 ? "" : "es");
    }
    fputs(C(t, RESET), t->f);
    fputc('\n', t->f);
}

int rv_write_text(const struct rv_report *r, FILE *f, int colour)
{
    struct tw t = {f, colour};
    struct fl_fleet fl;
    if (fl_build(&fl, r) < 0)
        return -1;
    write_answer(&t, r, &fl);
    fprintf(f, "%sjitstall report%s: %zu %s", C(&t, BOLD), C(&t, RESET), r->n_procs,
            r->n_procs == 1 ? "process" : "processes");
    if (r->partial)
        fprintf(f, " %s(partial: some traces are truncated or damaged)%s", C(&t, YELLOW),
                C(&t, RESET));
    fputc('\n', f);
    char ended[128];
    for (size_t at = 0; jst_model_ended_line(r->run, &at, ended, sizeof ended);)
        fprintf(f, "%s\n", ended); /* workers a pool ended: no END, nothing lost */
    for (size_t i = 0; i < r->n_errors; i++)
        fprintf(f, "%sunreadable%s  %s\n", C(&t, YELLOW), C(&t, RESET), S(r->errors[i].msg));
    /* Many processes: the fleet view, and the detail one option away. */
    size_t shown = 0; /* the processes shown as such (pool workers go under their parent) */
    for (size_t i = 0; i < r->n_procs; i++)
        shown += rv_proc_shown(r, r->procs[i].p) != 0;
    int fold = shown > FL_DETAIL_MAX && !r->per_process;
    if (fl.most_runs > 1)
        fl_write_text(f, &fl, r, colour);
    fl_free(&fl);
    if (fold) {
        fprintf(f,
                "\n(the detail of each of the %zu processes: jitstall report --per-process, or "
                "--pid PID for one)\n",
                r->n_procs);
    } else {
        if (shown > 1)
            write_table(&t, r);
        for (size_t i = 0; i < r->n_procs; i++)
            if (rv_proc_shown(r, r->procs[i].p))
                write_process(&t, r, &r->procs[i]);
    }
    write_culprits(&t, r, fold ? 10 : (size_t)-1);
    write_races(&t, r);
    write_fixes(&t, r, fold);
    write_cache(&t, r);
    fflush(f);
    return ferror(f) ? -1 : 0;
}
