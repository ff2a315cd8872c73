/*
 * `jitstall check`: fails a CI job when a run brings back a JIT stall. It
 * checks each process of the traces against budgets (JIT time, time to first
 * kernel, JIT'd modules, forbidden verdicts, required cache outcome) and,
 * with --baseline, against a known-good run. Every regression is one line
 * saying what, how much, which module, which call site and the fix; --junit
 * and --github carry the same lines to CI servers.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check_ctx.h"
#include "check_util.h"
#include "cli.h"
#include "outfile.h"
#include "xalloc.h"
#include "fixes.h"
#include "report_view.h"
#include "symbolize.h"
#include "trace.h"
static const char usage_text[] =
    "usage: jitstall check [BUDGETS] [--baseline FILE] [--tolerance PCT] [--junit FILE]\n"
    "                      [--github] TRACE|DIR...\n"
    "\n"
    "Check every process of the traces; exit 1 when one is over a budget or worse\n"
    "than the baseline. Each regression prints one line: what, how much, which\n"
    "module, which call site, and the fix.\n"
    "\n"
    "budgets (per process):\n"
    "  --max-jit-ms N          at most N ms spent in PTX JIT (compile or cache load)\n"
    "  --max-ttfk-ms N         at most N ms from process start to the first kernel launch\n"
    "  --max-jit-ms pNN=N, --max-ttfk-ms pNN=N\n"
    "                          the same as a percentile (p50, p95, ... or max=N) over\n"
    "                          the runs of each program (same executable and command)\n"
    "  --max-jit-modules N     at most N modules JIT-compiled\n"
    "  --forbid-verdict V      no module with verdict V (repeatable): sass, ptx_jit,\n"
    "                          forced_jit, no_compatible, jit_disabled, damaged\n"
    "  --require-cache C       every JIT'd module's cache outcome at least as good as C:\n"
    "                          hit, miss_stored, unknown (hit < miss_stored < unknown\n"
    "                          < miss_not_stored)\n"
    "  --max-compile-ms [C=]N  at most N ms compiling, by any compiler (wall time, overlaps\n"
    "                          counted once) or by compiler C: driver, nvrtc, nvjitlink,\n"
    "                          nvvm, nvptxcompiler, ptxas, nvcc, cicc, nvlink, fatbinary,\n"
    "                          host_cc, xla, build, framework (repeatable)\n"
    "  --max-compiles [C=]N    at most N compiles, by any compiler or by C (repeatable)\n"
    "  --max-first-call-ms N   every kernel's first call (compile work before its first\n"
    "                          launch) took at most N ms\n"
    "  --max-late-compiles N   at most N compiles after the process said it was ready\n"
    "                          (JITSTALL_READY), by any compiler: each stalled a request\n"
    "  --max-late-ms N         at most N ms compiling after ready (compiles summed)\n"
    "  --max-graph-capture-ms N at most N ms capturing and instantiating CUDA graphs\n"
    "  --max-query-ms NAME=N   the query NAME (a top-level NVTX range, as the report\n"
    "                          names it: query1, query1#2) took at most N ms\n"
    "                          (repeatable); fails when no process has it\n"
    "baseline:\n"
    "  --baseline FILE         compare with a file from 'jitstall baseline': new JIT'd\n"
    "                          modules, JIT time, time to first kernel or a query's\n"
    "                          time grown beyond the tolerance, cache outcomes that\n"
    "                          got worse\n"
    "  --tolerance PCT         allowed growth in percent (default 20)\n"
    "  --min-delta-ms N        ignore growth smaller than N ms (default 1)\n"
    "output:\n"
    "  --junit FILE            write JUnit XML: one testcase per budget per process\n"
    "  --github                print GitHub Actions ::error / ::warning annotations\n"
    "  -q, --quiet             print only regressions and the summary\n"
    "  -h, --help              show this help\n"
    "\n"
    "A load, link step or runtime compile still in flight when a trace ends (the\n"
    "process was killed during it, or is still running) fails the check, budgets\n"
    "or not.\n"
    "\n"
    "exit codes: 0 within budget, 1 a regression, 2 usage error or unreadable input\n";

/* ---- options ---- */

static int parse_num(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v) || v < 0) {
        jst_errorf("check", "%s: '%s' is not a non-negative number", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_modules(const char *arg, long *out)
{
    double v;
    if (parse_num("--max-jit-modules", arg, &v) < 0)
        return -1;
    if (v != floor(v) || v > 1e9) {
        jst_errorf("check", "--max-jit-modules: '%s' is not a whole number", arg);
        return -1;
    }
    *out = (long)v;
    return 0;
}

/* Adds a verdict to --forbid-verdict's set (once; at most MAX_FORBID). */
static int parse_forbid(const char *arg, struct opts *o)
{
    int found = -1;
    for (unsigned k = JST_V_SASS; jst_verdict_name(k); k++)
        if (!strcmp(jst_verdict_name(k), arg))
            found = (int)k;
    if (found < 0) {
        jst_errorf("check",
                   "--forbid-verdict: unknown verdict '%s' (one of sass, ptx_jit, "
                   "forced_jit, no_compatible, jit_disabled, damaged)",
                   arg);
        return -1;
    }
    size_t k = 0;
    while (k < o->n_forbid && o->forbid[k] != (unsigned)found)
        k++;
    if (k == o->n_forbid && o->n_forbid < MAX_FORBID)
        o->forbid[o->n_forbid++] = (unsigned)found;
    return 0;
}

/* --require-cache takes an outcome; what is kept is its rank. */
static int parse_cache(const char *arg, int *rank)
{
    int r = -1;
    for (unsigned k = JST_C_HIT; jst_cache_name(k); k++)
        if (!strcmp(jst_cache_name(k), arg))
            r = jst_cache_rank(k);
    if (r < 0 || r == 3) {
        jst_errorf("check", "--require-cache: '%s' is not one of hit, miss_stored, unknown", arg);
        return -1;
    }
    *rank = r;
    return 0;
}

/* --max-query-ms NAME=MS: NAME may hold '=', so MS follows the last one. */
static int parse_query(const char *arg, struct opts *o)
{
    const char *eq = strrchr(arg, '=');
    if (!eq || eq == arg) {
        jst_errorf("check", "--max-query-ms: '%s' is not NAME=MS", arg);
        return -1;
    }
    if (o->n_query == MAX_QUERY_GATES) {
        jst_errorf("check", "--max-query-ms: at most %d queries", MAX_QUERY_GATES);
        return -1;
    }
    struct qgate *g = &o->query[o->n_query];
    if (parse_num("--max-query-ms", eq + 1, &g->ms) < 0)
        return -1;
    g->name = arg;
    g->len = (size_t)(eq - arg);
    o->n_query++;
    return 0;
}

enum {
    O_JIT = 256,
    O_TTFK,
    O_MODS,
    O_FORBID,
    O_CACHE,
    O_BASE,
    O_TOL,
    O_DELTA,
    O_JUNIT,
    O_GH,
    O_QUERY,
    O_COMPILE_MS,
    O_COMPILES,
    O_FIRST_CALL,
    O_LATE,
    O_LATE_MS,
    O_GRAPH_MS
};
static const struct option check_longopts[] = {
    {"max-jit-ms", required_argument, NULL, O_JIT},
    {"max-ttfk-ms", required_argument, NULL, O_TTFK},
    {"max-jit-modules", required_argument, NULL, O_MODS},
    {"forbid-verdict", required_argument, NULL, O_FORBID},
    {"require-cache", required_argument, NULL, O_CACHE},
    {"max-query-ms", required_argument, NULL, O_QUERY},
    {"max-compile-ms", required_argument, NULL, O_COMPILE_MS},
    {"max-compiles", required_argument, NULL, O_COMPILES},
    {"max-first-call-ms", required_argument, NULL, O_FIRST_CALL},
    {"max-late-compiles", required_argument, NULL, O_LATE},
    {"max-late-ms", required_argument, NULL, O_LATE_MS},
    {"max-graph-capture-ms", required_argument, NULL, O_GRAPH_MS},
    {"baseline", required_argument, NULL, O_BASE},
    {"tolerance", required_argument, NULL, O_TOL},
    {"min-delta-ms", required_argument, NULL, O_DELTA},
    {"junit", required_argument, NULL, O_JUNIT},
    {"github", no_argument, NULL, O_GH},
    {"quiet", no_argument, NULL, 'q'},
    JST_CLI_HELP_END,
};

static int check_option(int c, const char *arg, void *ctx)
{
    struct opts *o = ctx;
    switch (c) {
    case O_JIT:
        if (strchr(arg, '='))
            return chk_parse_pct("--max-jit-ms", arg, o, PCT_JIT);
        return parse_num("--max-jit-ms", arg, &o->max_jit_ms);
    case O_TTFK:
        if (strchr(arg, '='))
            return chk_parse_pct("--max-ttfk-ms", arg, o, PCT_TTFK);
        return parse_num("--max-ttfk-ms", arg, &o->max_ttfk_ms);
    case O_MODS:
        return parse_modules(arg, &o->max_jit_modules);
    case O_FORBID:
        return parse_forbid(arg, o);
    case O_CACHE:
        return parse_cache(arg, &o->require_cache);
    case O_QUERY:
        return parse_query(arg, o);
    case O_COMPILE_MS:
        return chk_parse_compile_gate("--max-compile-ms", arg, o->compile_ms, &o->n_compile_ms);
    case O_COMPILES:
        return chk_parse_compile_gate("--max-compiles", arg, o->compiles, &o->n_compiles);
    case O_FIRST_CALL:
        return parse_num("--max-first-call-ms", arg, &o->max_first_call_ms);
    case O_LATE:
        return parse_num("--max-late-compiles", arg, &o->max_late_compiles);
    case O_LATE_MS:
        return parse_num("--max-late-ms", arg, &o->max_late_ms);
    case O_GRAPH_MS:
        return parse_num("--max-graph-capture-ms", arg, &o->max_graph_capture_ms);
    case O_BASE:
        o->baseline = arg;
        return 0;
    case O_TOL:
        return parse_num("--tolerance", arg, &o->tolerance);
    case O_DELTA:
        return parse_num("--min-delta-ms", arg, &o->min_delta_ms);
    case O_JUNIT:
        o->junit = arg;
        return 0;
    case O_GH:
        o->github = 1;
        return 0;
    default: /* -q */
        o->quiet = 1;
        return 0;
    }
}

static const struct jst_cli check_cli = {
    "check", "qh", check_longopts, usage_text, "trace or directory", check_option,
};

/* Pairs each process with its baseline process; warns about baseline
 * processes this run does not have. Returns how many processes matched. */
static size_t match_baseline(struct ctx *x, const struct jst_psum *sums, long *map,
                             const struct jst_baseline *base)
{
    jst_match_procs(sums, x->n_procs, base->procs, base->n_procs, map);
    char *used = jst_xcalloc(base->n_procs + 1, 1);
    size_t matched = 0;
    for (size_t i = 0; i < x->n_procs; i++)
        if (map[i] >= 0) {
            x->procs[i].base = &base->procs[map[i]];
            used[map[i]] = 1;
            matched++;
        }
    for (size_t k = 0; k < base->n_procs; k++)
        if (!used[k])
            chk_warn(x, "baseline process %s (pid %llu) has no match in this run",
                     base->procs[k].exe, (unsigned long long)base->procs[k].pid);
    free(used);
    return matched;
}

/* A baseline none of whose processes is in this run compared nothing: the
 * gate would pass whatever the run did. That is a failure of its own. */
static void fail_unmatched_baseline(struct ctx *x, const struct jst_baseline *base)
{
    char line[1024];
    int len = snprintf(line, sizeof line,
                       "baseline: no process of this run matches the baseline %s (it has ",
                       x->o.baseline);
    for (size_t k = 0; k < base->n_procs && k < 4 && len > 0 && (size_t)len < sizeof line; k++)
        len += snprintf(line + len, sizeof line - (size_t)len, "%s%s", k ? ", " : "",
                        base->procs[k].exe);
    if (len > 0 && (size_t)len < sizeof line)
        snprintf(line + len, sizeof line - (size_t)len,
                 "%s): nothing was compared; record the baseline from the same program",
                 base->n_procs > 4 ? ", ..." : "");
    if (x->o.github) {
        struct cloc none = {NULL, 0};
        chk_github_error_head(&none);
        chk_github_escape(stdout, line);
        fputc('\n', stdout);
    } else {
        printf("FAIL %s\n", line);
    }
    x->n_fail_lines++;
}

/* With --github and GITHUB_STEP_SUMMARY set (GitHub Actions sets it for
 * every step), the check's verdict and the Markdown report are appended to
 * the job summary, where Actions users look. A summary that cannot be
 * written is a warning: the check's own status stands. */
static void write_step_summary(const struct ctx *x, const struct jst_run *run, const char *verdict)
{
    const char *path = getenv("GITHUB_STEP_SUMMARY");
    if (!x->o.github || !path || !*path)
        return;
    FILE *f = fopen(path, "a");
    if (!f) {
        jst_warnf("check", "GITHUB_STEP_SUMMARY %s: %s", path, strerror(errno));
        return;
    }
    struct rv_report r;
    if (rv_build(&r, run, NULL, 0) < 0)
        jst_xalloc_die();
    fprintf(f, "### %s\n\n", verdict);
    int w = rv_write_markdown(&r, f);
    fputc('\n', f);
    rv_free(&r);
    if (w < 0 || ferror(f) | (fclose(f) != 0))
        jst_warnf("check", "GITHUB_STEP_SUMMARY %s: write failed", path);
}

/* Runs every check on every process; returns how many processes failed. */
static size_t run_checks(struct ctx *x, size_t *n_checks)
{
    size_t failed_procs = 0;
    for (size_t i = 0; i < x->n_procs; i++) {
        struct cproc *cp = &x->procs[i];
        size_t before = x->n_fail_lines;
        chk_budgets(x, cp);
        chk_in_flight(x, cp);
        chk_queries(x, cp);
        if (x->o.baseline)
            chk_baseline(x, cp);
        failed_procs += x->n_fail_lines > before;
        *n_checks += cp->n_cases;
    }
    if (x->o.n_query && x->n_procs) {
        int had = 0;
        for (size_t k = 0; k < x->procs[0].n_cases; k++)
            had |= x->procs[0].cases[k].n != 0;
        size_t before = x->n_fail_lines;
        chk_queries_found(x);
        failed_procs += !had && x->n_fail_lines > before;
    }
    if (x->o.n_pct) {
        /* Percentile cases land on each program's worst run: count the
         * cases added, and the runs that had no failure before. */
        char *had = jst_xcalloc(x->n_procs + 1, 1);
        size_t *cases = jst_xcalloc(x->n_procs + 1, sizeof(*cases));
        for (size_t i = 0; i < x->n_procs; i++) {
            cases[i] = x->procs[i].n_cases;
            for (size_t k = 0; k < x->procs[i].n_cases; k++)
                had[i] |= x->procs[i].cases[k].n != 0;
        }
        chk_percentiles(x);
        for (size_t i = 0; i < x->n_procs; i++) {
            *n_checks += x->procs[i].n_cases - cases[i];
            int now = 0;
            for (size_t k = cases[i]; k < x->procs[i].n_cases; k++)
                now |= x->procs[i].cases[k].n != 0;
            failed_procs += now && !had[i];
        }
        free(had);
        free(cases);
    }
    return failed_procs;
}

static void free_procs(struct ctx *x)
{
    for (size_t i = 0; i < x->n_procs; i++) {
        struct cproc *cp = &x->procs[i];
        for (size_t k = 0; k < cp->n_cases; k++) {
            for (size_t l = 0; l < cp->cases[k].n; l++) {
                free(cp->cases[k].lines[l]);
                free(cp->cases[k].details[l]);
                free(cp->cases[k].locs[l].file);
            }
            free(cp->cases[k].lines);
            free(cp->cases[k].details);
            free(cp->cases[k].locs);
            free(cp->cases[k].skipped);
        }
        free(cp->cases);
        free(cp->site.file);
        free(cp->pend_detail);
        if (cp->sym)
            jst_symbolizer_free(cp->sym);
        jst_psum_free(&cp->s);
    }
    free(x->procs);
}

/* The options over their defaults: JST_CLI_GO, or the exit status. */
static int check_opts(int argc, char **argv, struct opts *o)
{
    o->max_jit_ms = o->max_ttfk_ms = -1;
    o->max_jit_modules = -1;
    o->require_cache = -1;
    o->max_first_call_ms = -1;
    o->max_late_compiles = o->max_late_ms = -1;
    o->max_graph_capture_ms = -1;
    o->tolerance = 20;
    o->min_delta_ms = 1;
    int r = jst_cli_parse(&check_cli, argc, argv, o);
    /* With nothing to check, only calls in flight can fail: decided once the
     * traces are read. */
    o->no_budget = o->max_jit_ms < 0 && o->max_ttfk_ms < 0 && o->max_jit_modules < 0 &&
                   !o->n_forbid && o->require_cache < 0 && !o->baseline && !o->n_query &&
                   !o->n_pct && !o->n_compile_ms && !o->n_compiles && o->max_first_call_ms < 0 &&
                   o->max_late_compiles < 0 && o->max_late_ms < 0 && o->max_graph_capture_ms < 0;
    return r;
}

static int cmd_check(int argc, char **argv)
{
    struct ctx x;
    memset(&x, 0, sizeof x);
    int r = check_opts(argc, argv, &x.o);
    if (r != JST_CLI_GO)
        return r;
    struct jst_baseline base;
    memset(&base, 0, sizeof base);
    if (x.o.baseline) {
        char err[512];
        if (jst_baseline_read(x.o.baseline, &base, err, sizeof err) < 0) {
            jst_errorf("check", "--baseline %s: %s", x.o.baseline, err);
            return JST_EXIT_USAGE;
        }
    }
    /* --junit's file is tried before any check runs, so that a path that
     * cannot be written is said at once (exit 2), never after a verdict. */
    if (x.o.junit && jst_outfile_probe("check --junit", x.o.junit) < 0) {
        jst_baseline_free(&base);
        return JST_EXIT_USAGE;
    }
    struct jst_run run = {0};
    int rc = jst_run_load("check", argv + optind, argc - optind, &run, 1);
    if (rc != JST_EXIT_OK) {
        jst_model_free(&run);
        jst_baseline_free(&base);
        return rc;
    }
    size_t n_in_flight = 0;
    for (size_t i = 0; i < run.n_procs; i++)
        n_in_flight += run.procs[i].n_in_flight;
    if (x.o.no_budget && !n_in_flight) {
        jst_errorf("check", "nothing to check: give a budget (--max-jit-ms, --max-ttfk-ms, "
                            "--max-jit-modules, --forbid-verdict, --require-cache, "
                            "--max-query-ms, --max-compile-ms, --max-compiles, "
                            "--max-first-call-ms, --max-late-compiles, --max-late-ms, "
                            "--max-graph-capture-ms) or "
                            "--baseline");
        jst_model_free(&run);
        return JST_EXIT_USAGE;
    }
    for (size_t i = 0; i < run.n_procs; i++) {
        char why[512];
        if (jst_partial_str(&run.procs[i], why, sizeof why))
            chk_warn(&x, "%s: partial trace (%s); checked what it holds",
                     run.procs[i].trace_path ? run.procs[i].trace_path : "?", why);
    }

    x.n_procs = run.n_procs;
    x.procs = jst_xcalloc(run.n_procs, sizeof(*x.procs));
    struct jst_psum *sums = jst_xcalloc(run.n_procs, sizeof(*sums));
    long *map = jst_xcalloc(run.n_procs, sizeof(*map));
    for (size_t i = 0; i < run.n_procs; i++) {
        if (jst_psum_from_process(&run.procs[i], &x.procs[i].s) < 0)
            jst_xalloc_die();
        sums[i] = x.procs[i].s;
    }
    chk_set_classnames(&x);
    int unmatched = 0;
    if (x.o.baseline)
        unmatched = base.n_procs && !match_baseline(&x, sums, map, &base);
    size_t n_checks = 0, failed_procs = run_checks(&x, &n_checks);
    chk_print_case_lines(&x);
    if (unmatched)
        fail_unmatched_baseline(&x, &base);

    int junit_err = x.o.junit ? chk_write_junit(&x, x.o.junit) : 0;
    char verdict[256];
    if (x.n_fail_lines)
        snprintf(verdict, sizeof verdict,
                 "jitstall check: FAILED: %zu regression%s in %zu of %zu process%s", x.n_fail_lines,
                 x.n_fail_lines == 1 ? "" : "s", failed_procs, run.n_procs,
                 run.n_procs == 1 ? "" : "es");
    else
        snprintf(verdict, sizeof verdict,
                 "jitstall check: OK: %zu process%s within budget (%zu check%s)", run.n_procs,
                 run.n_procs == 1 ? "" : "es", n_checks, n_checks == 1 ? "" : "s");
    printf("%s\n", verdict);
    fflush(stdout);
    write_step_summary(&x, &run, verdict);

    free_procs(&x);
    free(sums);
    free(map);
    jst_baseline_free(&base);
    jst_model_free(&run);
    /* A regression outranks a JUnit file that failed to write at the end
     * (said on stderr): the check's verdict is never hidden behind exit 2. */
    if (x.n_fail_lines)
        return JST_EXIT_FAIL;
    return junit_err ? JST_EXIT_USAGE : JST_EXIT_OK;
}

JST_COMMAND(check, cmd_check, "fail a CI job on JIT budgets or a regression from a baseline")
