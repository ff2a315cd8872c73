/*
 * `jitstall report --markdown`: the same content as the text report, as
 * GitHub-flavoured Markdown for a CI job summary or a pull-request comment.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "fixes.h"
#include "report_compiles.h"
#include "utf8.h"
#include "report_queries.h"
#include "fleet.h"
#include "report_view.h"
#include "trace.h"

/* Text inside a table cell: '|' and newlines would break the row, and
 * Markdown specials are escaped so that paths and C++ names show as written. */
static void md_text(FILE *f, const char *s)
{
    jst_text_put_md(f, s ? s : "");
}

/* Inline code: backticks inside are replaced, since a cell cannot hold a
 * longer fence reliably; '|' is escaped for tables. */
static void md_code(FILE *f, const char *s)
{
    fputc('`', f);
    for (s = s ? jst_text(s) : ""; *s; s++) {
        if (*s == '`')
            fputc('\'', f);
        else if (*s == '|')
            fputs("\\|", f);
        else
            fputc(*s, f);
    }
    fputc('`', f);
}

/* The length of the command, variable or path that starts at s, or 0: the
 * parts of a fix a reader copies into a shell or a build file. */
static size_t md_command_len(const char *s, const char *start)
{
    static const char *const cmds[] = {"nvcc ",       "ptxas ",         "-gencode ",
                                       "docker run ", "jitstall warm ", "-arch="};
    if (s > start && s[-1] != ' ' && s[-1] != '(')
        return 0; /* only at the start of a word */
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
        size_t n = strlen(cmds[k]);
        if (strncmp(s, cmds[k], n))
            continue;
        /* Up to the end of the clause: ')', ',', ';' or " to"/" or". */
        size_t len = n;
        while (s[len] && s[len] != ')' && s[len] != ';' && strncmp(s + len, ", ", 2) &&
               strncmp(s + len, " to ", 4) && strncmp(s + len, " or ", 4) &&
               strncmp(s + len, " (", 2))
            len++;
        while (len > n && (s[len - 1] == ' ' || s[len - 1] == '.'))
            len--;
        return len;
    }
    if (!strncmp(s, "CUDA_", 5) || !strncmp(s, "JITSTALL_", 9) || (s[0] == '/' && s[1] != ' ')) {
        size_t len = 0; /* a variable (with its value) or a path */
        while (s[len] && s[len] != ' ' && s[len] != ',' && s[len] != ';' && s[len] != ')' &&
               s[len] != '(' && !(s[len] == ':' && s[len + 1] == ' '))
            len++;
        while (len && s[len - 1] == '.')
            len--;
        return len;
    }
    return 0;
}

/* A fix's text with its commands, variables and paths in code spans, so that
 * they can be copied as they are; the rest as text. */
static void md_fix(FILE *f, const char *s)
{
    const char *start = s, *plain = s;
    char buf[1024];
    while (s && *s) {
        size_t len = md_command_len(s, start);
        if (!len || len >= sizeof buf) {
            s++;
            continue;
        }
        for (const char *q = plain; q < s; q++) {
            char one[2] = {*q, 0};
            md_text(f, one);
        }
        memcpy(buf, s, len);
        buf[len] = '\0';
        md_code(f, buf);
        s += len;
        plain = s;
    }
    md_text(f, plain);
}

/* Two tables rather than one of twelve columns, which scrolls sideways in a
 * GitHub job summary: the headline figures, then where the time went. */
static void write_headline(FILE *f, const struct rv_report *r)
{
    char a[32], b[32], c[32], d[32], e[32], g[32], h[32], k[32], m[32], rt[32];
    fputs("| pid | program | time to first kernel | JIT | projected after fixes |\n"
          "| ---: | --- | ---: | ---: | ---: |\n",
          f);
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        int l = p->first_launch_ns != 0;
        char ttfk_open[48];
        snprintf(ttfk_open, sizeof(ttfk_open), "more than %s (in flight)",
                 rv_dur(p->ttfk_ns, a, 32));
        fprintf(f, "| %" PRIu64 " | ", p->pid);
        md_code(f, rv_exe_name(p));
        fprintf(f, " | %s | %s | %s |\n",
                l                   ? rv_dur(p->ttfk_ns, a, 32)
                : p->ttfk_in_flight ? ttfk_open
                                    : "no launch",
                rv_dur(p->ttfk_jit_ns, b, 32),
                l ? rv_dur(r->procs[i].projected_ttfk_ns, k, 32) : "-");
    }
    if (r->n_procs > 1)
        fprintf(f, "| **total** | %zu processes | %s (slowest) | %s (whole runs) | %s |\n",
                r->n_procs, rv_dur(r->ttfk_max_ns, a, 32), rv_dur(r->jit_ns, b, 32),
                rv_dur(r->projected_ttfk_max_ns, e, 32));
    fputs("\nWhere the time to first kernel went:\n\n"
          "| pid | JIT compile | JIT cache load | init + context | SASS loads | "
          "runtime compile | before the driver | everything else |\n"
          "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
          f);
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        fprintf(f, "| %" PRIu64 " | %s | %s | %s | %s | %s | %s | %s |\n", p->pid,
                rv_dur(p->ttfk_jit_compile_ns, c, 32), rv_dur(p->ttfk_jit_cache_load_ns, d, 32),
                rv_dur(p->init_ns + p->ctx_ns, e, 32), rv_dur(p->sass_load_ns, g, 32),
                rv_dur(p->rtc_ns, rt, 32), rv_dur(p->pre_driver_ns, m, 32),
                rv_dur(p->other_ns, h, 32));
    }
    if (r->n_procs > 1)
        fprintf(f, "| **total** | %s | %s | | | | | |\n", rv_dur(r->jit_compile_ns, c, 32),
                rv_dur(r->jit_cache_load_ns, d, 32));
    fputs("\nJIT, compile and cache load count the time before the first kernel launch.\n", f);
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct rv_proc *rp = &r->procs[i];
        const struct jst_process *p = rp->p;
        if (p->ttfk_jit_overlap > 1)
            fprintf(f,
                    "Process %" PRIu64 ": JIT before the first kernel was %s of work in %zu "
                    "overlapping loads, %s of wall time.\n",
                    p->pid, rv_dur(p->ttfk_jit_work_ns, a, 32), p->ttfk_jit_overlap,
                    rv_dur(p->ttfk_jit_ns, b, 32));
        if (p->jit_ns != p->ttfk_jit_work_ns)
            fprintf(f, "Process %" PRIu64 " spent %s in JIT over the whole run (%zu %s).\n", p->pid,
                    rv_dur(p->jit_ns, a, 32), rp->n_jit_loads,
                    rp->n_jit_loads == 1 ? "load" : "loads");
        if (p->self_ns)
            fprintf(f, "Process %" PRIu64 ": jitstall's own cost: %s.\n", p->pid,
                    rv_dur(p->self_ns, a, 32));
        for (size_t q = 0; q < rp->n_missing; q++) {
            fprintf(f, "\n> **Missing** (pid %" PRIu64 "): ", p->pid);
            md_text(f, rp->missing[q]);
            fputc('\n', f);
        }
    }
}

/* A section's heading, then the sentence that stands for it when it has no
 * entries, else the header of its table (NULL: a list follows). Returns 1
 * when its n entries are to follow, 0 when there are none. */
static int md_section(FILE *f, const char *title, size_t n, const char *none, const char *table)
{
    fprintf(f, "\n### %s\n\n", title);
    if (!n)
        fprintf(f, "%s\n", none);
    else if (table)
        fputs(table, f);
    return n != 0;
}

static void md_callers_fix(FILE *f, const char *call_site, const struct rv_chain *ch,
                           const char *fix, const char *no_site)
{
    char buf[2048];
    if (call_site)
        md_code(f, call_site);
    if (call_site && (ch->n_stack > 1 || ch->stack_more)) {
        fputs("<br>called by ", f);
        md_code(f, rv_callers_compact(ch, buf, sizeof(buf)));
    }
    if (!call_site)
        md_text(f, no_site);
    fputs(" | ", f);
    if (fix)
        md_fix(f, fix);
    else
        fputs("-", f);
    fputs(" |\n", f);
}

static void md_module_culprit(FILE *f, const struct rv_report *r, size_t g)
{
    char buf[2048];
    const struct rv_module *m = r->groups[g].m;
    md_code(f, rv_origin(m, buf, sizeof(buf)));
    fputs(" | ", f);
    if (m->c->in_flight) {
        fputs("**", f);
        md_text(f, rv_in_flight_str(m->p, m->c, buf, sizeof(buf)));
        fputs("**; ", f);
    }
    md_text(f, rv_verdict_str(m, buf, sizeof(buf)));
    fputs(" | ", f);
    if (m->c->n_kernels) {
        fprintf(f, "%zu: ", m->c->n_kernels);
        md_code(f, rv_kernels_short(m, 3, buf, sizeof(buf)));
    } else {
        fputs("-", f);
    }
    fputs(" | ", f);
    md_text(f, rv_group_cache_str(&r->groups[g], buf, sizeof(buf)));
    fputs(" | ", f);
    md_callers_fix(f, m->call_site, &m->chain, m->fix, "no stack recorded");
}

/* A compile that no driver or library call made: the module column names
 * the compile, the verdict column says what is known of it. */
static void md_compile_culprit(FILE *f, const struct rv_report *r, size_t g)
{
    char buf[2048];
    const struct rv_compile *x = r->groups[g].k;
    const struct jst_compile *k = x->k;
    md_code(f, rv_compile_origin(k, buf, sizeof(buf)));
    fputs(" | ", f);
    md_text(f, rv_compile_facts(k, buf, sizeof(buf)));
    fputs(" | ", f);
    if (k->kernel)
        md_code(f, k->kernel);
    else
        fputs("-", f);
    fputs(" | ", f);
    md_text(f, k->cache ? k->cache : "-");
    fputs(" | ", f);
    md_callers_fix(f, x->call_site, &x->chain, x->fix, rv_compile_no_site(k));
}

static void write_culprits(FILE *f, const struct rv_report *r)
{
    char buf[2048], d[32];
    if (!md_section(
            f, "Culprits, ranked by time lost", r->n_groups + (rv_graphs_culprit_ns(r) != 0),
            rv_any_first_calls(r) ? "None among the loads: no load needed the JIT or failed; "
                                    "where the first calls' time went is under each process's "
                                    "first calls."
                                  : "None: no load needed the JIT or failed.",
            "| # | time lost | loads | module | verdict | kernels | cache | call site | fix |\n"
            "| ---: | ---: | --- | --- | --- | --- | --- | --- | --- |\n"))
        return;
    uint64_t graphs = rv_graphs_culprit_ns(r); /* one row, placed by its time */
    size_t num = 1;
    for (size_t g = 0; g < r->n_groups; g++) {
        const struct rv_group *gr = &r->groups[g];
        if (graphs && graphs > gr->lost_ns) {
            rv_graphs_culprit_md(f, r, num++);
            graphs = 0;
        }
        fprintf(f, "| %zu | %s | ", num++,
                gr->lost_ns ? rv_dur(gr->lost_ns, d, sizeof(d)) : "failed");
        if (gr->n > 1)
            fprintf(f, "%zu, %s | ", gr->n, rv_group_pids(r, g, buf, sizeof(buf)));
        else
            fprintf(f, "pid %" PRIu64 " | ", gr->m ? gr->m->p->pid : gr->k->p->pid);
        if (gr->m)
            md_module_culprit(f, r, g);
        else
            md_compile_culprit(f, r, g);
    }
    if (graphs)
        rv_graphs_culprit_md(f, r, num);
}

static void write_races(FILE *f, const struct rv_report *r)
{
    char d[32];
    if (!r->races.n)
        return;
    fputs("\n### Compiled at once in several processes (one cold cache)\n\n", f);
    for (size_t i = 0; i < r->races.n; i++) {
        const struct jst_race *x = &r->races.v[i];
        fprintf(f, "%zu. **%s**: ", i + 1, rv_dur(x->jit_ns, d, sizeof(d)));
        md_fix(f, x->text);
        fputc('\n', f);
    }
}

static void write_fixes(FILE *f, const struct rv_report *r)
{
    char d[32], e[32];
    if (!md_section(f, "Fixes, ranked by time saved", r->fixes.n, "Nothing to fix.", NULL))
        return;
    for (size_t i = 0; i < r->fixes.n; i++) {
        const struct jst_fix *x = &r->fixes.v[i];
        if (x->saves_ns)
            fprintf(f, "%zu. **saves %s**: ", i + 1, rv_dur(x->saves_ns, d, sizeof(d)));
        else if (x->kind == JST_FIX_FRAMEWORK_COST)
            fprintf(f, "%zu. **per-process cost, no saving**: ", i + 1);
        else
            fprintf(f, "%zu. **fixes a failed load**: ", i + 1);
        md_fix(f, x->text);
        fputc('\n', f);
    }
    fputc('\n', f);
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        if (!p->first_launch_ns)
            continue;
        fprintf(f, "Projected time to first kernel");
        if (r->n_procs > 1)
            fprintf(f, " of pid %" PRIu64, p->pid);
        fprintf(f, " with these fixes: **%s** (now %s).\n",
                rv_dur(r->procs[i].projected_ttfk_ns, d, sizeof(d)),
                rv_dur(p->ttfk_ns, e, sizeof(e)));
        char h[512];
        if (!rv_first_call_headline(p, h, sizeof h))
            continue;
        fprintf(f, "\nProjected slowest first call");
        if (r->n_procs > 1)
            fprintf(f, " of pid %" PRIu64, p->pid);
        fprintf(f, " with these fixes: **%s** (now %s).\n",
                rv_dur(jst_fixes_projected_first_call(p), d, sizeof(d)),
                rv_dur(jst_slowest_first_call(p)->dur_ns, e, sizeof(e)));
    }
}

static void state_cell(FILE *f, const struct jst_cache_state *s)
{
    char buf[256];
    md_text(f, rv_cache_state_str(s, buf, sizeof(buf)));
}

/* Cache directories the Markdown table shows; JSON's caches[] has them all. */
#define RV_MD_CACHES 5

static void write_cache(FILE *f, const struct rv_report *r)
{
    char a[32];
    if (!md_section(f, "JIT cache", r->n_caches, "Not recorded.",
                    "| path | set by | at start | at exit | change during the run |\n"
                    "| --- | --- | --- | --- | --- |\n"))
        return;
    for (size_t i = 0; i < r->n_caches && i < RV_MD_CACHES; i++) {
        const struct rv_cache *c = &r->caches[i];
        const struct jst_cache_state *s = &c->first->cache_start, *e = &c->last->cache_end;
        int from_env = (s->present && s->from_env) || (e->present && e->from_env);
        fputs("| ", f);
        md_code(f, c->path);
        fprintf(f, " | %s | ", from_env ? "CUDA\\_CACHE\\_PATH" : "default");
        state_cell(f, s);
        fputs(" | ", f);
        state_cell(f, e);
        fputs(" | ", f);
        if (s->present && e->present) {
            int64_t db = (int64_t)(e->size_bytes - s->size_bytes);
            int64_t de = (int64_t)(e->entries - s->entries);
            if (!db && !de && s->exists == e->exists)
                fputs("none", f);
            else
                fprintf(f, "%s%s, %+" PRId64 " %s%s", db < 0 ? "-" : "+",
                        rv_bytes(db < 0 ? (uint64_t)-db : (uint64_t)db, a, 32), de,
                        (de == 1 || de == -1) ? "entry" : "entries",
                        !s->exists && e->exists ? " (created)" : "");
        } else {
            fputs("unknown", f);
        }
        fputs(" |\n", f);
    }
    if (r->n_caches > RV_MD_CACHES)
        fprintf(f,
                "\n%zu more cache directories, left out (`jitstall report --json` lists every one "
                "under `caches`).\n",
                r->n_caches - RV_MD_CACHES);
}

/* The answer first, as the text report gives it: one line per process, or
 * the fleet's and one per program; each a quoted line. */
static void write_answer(FILE *f, const struct rv_report *r, const struct fl_fleet *fl)
{
    char line[4096];
    if (fl->most_runs > 1) {
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        if (!m)
            return;
        fl_answer(m, fl, r, 5);
        fclose(m);
        for (char *s = buf, *e; s && *s; s = e ? e + 1 : NULL) {
            e = strchr(s, '\n');
            if (e)
                *e = '\0';
            fputs("> ", f);
            md_text(f, s);
            fputs("\n>\n", f);
        }
        free(buf);
    } else {
        /* as the text: a pool's workers, a build's helpers and quiet
         * children are not lines of their own */
        size_t said = 0, quiet = 0;
        for (size_t i = 0; i < r->n_procs; i++) {
            if (r->n_procs > 1 && !rv_proc_shown(r, r->procs[i].p))
                continue;
            if (r->n_procs > 1 && rv_proc_quiet(r, r->procs[i].p)) {
                quiet++;
                continue;
            }
            if (said++ >= FL_DETAIL_MAX)
                continue;
            fputs("> ", f);
            if (r->n_procs > 1)
                fprintf(f, "pid %" PRIu64 ": ", r->procs[i].p->pid);
            md_text(f, rv_answer_proc(r, &r->procs[i], line, sizeof line));
            fputs("\n>\n", f);
        }
        if (said > FL_DETAIL_MAX)
            fprintf(f, "> ... and %zu more processes\n>\n", said - FL_DETAIL_MAX);
        if (quiet)
            fprintf(f, "> (and %zu child process%s that launched no kernel, loaded no module and compiled nothing)\n>\n",
                    quiet, quiet == 1 ? "" : "es");
    }
    fputc('\n', f);
}

int rv_write_markdown(const struct rv_report *r, FILE *f)
{
    struct fl_fleet answer_fl;
    if (fl_build(&answer_fl, r) < 0)
        return -1;
    write_answer(f, r, &answer_fl);
    fl_free(&answer_fl);
    fprintf(f, "## jitstall report: %zu %s%s\n\n", r->n_procs,
            r->n_procs == 1 ? "process" : "processes",
            r->partial ? " (partial: some traces are truncated or damaged)" : "");
    char ended[128];
    for (size_t at = 0; jst_model_ended_line(r->run, &at, ended, sizeof ended);)
        fprintf(f, "%s.\n\n", ended);
    for (size_t i = 0; i < r->n_errors; i++) {
        fputs("> **Unreadable:** ", f);
        md_text(f, r->errors[i].msg);
        fputs("\n\n", f);
    }
    struct fl_fleet fl;
    if (fl_build(&fl, r) < 0)
        return -1;
    if (fl.most_runs > 1)
        fl_write_markdown(f, &fl, r);
    fl_free(&fl);
    if (r->n_procs > FL_DETAIL_MAX && !r->per_process)
        fprintf(f,
                "\nThe detail of each of the %zu processes: `jitstall report --markdown "
                "--per-process`.\n\n",
                r->n_procs);
    else
        write_headline(f, r);
    rv_queries_markdown(f, r);
    rv_compiles_markdown(f, r);
    rv_graphs_markdown(f, r);
    write_culprits(f, r);
    write_races(f, r);
    write_fixes(f, r);
    write_cache(f, r);
    fflush(f);
    return ferror(f) ? -1 : 0;
}
