/*
 * `jitstall report`: reads traces (files or directories of them) and explains
 * a slow first GPU query, as text, Markdown or JSON (see report_view.h).
 * The --help text below is the man page's SYNOPSIS and OPTIONS, word for
 * word (docs/jitstall-report.1.md; tests/golden checks they agree).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "budget.h"
#include "check_util.h"
#include "cli.h"
#include "xalloc.h"
#include "model.h"
#include "report_view.h"
#include "symbolize.h"

static const char report_help[] =
    "usage: jitstall report [--json | --markdown] [--per-process | --pid PID]\n"
    "                       [--stack-depth N] [--k8s] [--budget SECONDS] TRACE|DIR...\n"
    "\n"
    "Explains a slow first GPU query: for each process, the time to its first\n"
    "kernel launch and how much of it the driver's PTX JIT took; the modules\n"
    "that were JIT-compiled, ranked by time lost; exact fixes, ranked by time\n"
    "saved; and the state of the JIT cache.\n"
    "\n"
    "options:\n"
    "  --json       write one JSON object (schema: report-json.md)\n"
    "  --markdown   write GitHub Markdown, for a CI job summary or a PR comment\n"
    "  --per-process\n"
    "               show every process's detail; by default more than 8 processes\n"
    "               are shown as the fleet view only (runs of one program grouped)\n"
    "  --pid PID    report only the process PID (repeatable)\n"
    "  --stack-depth N\n"
    "               show at most N frames of each culprit's call chain (default\n"
    "               16); 0 or 'all' shows the whole chain, down to main\n"
    "  --k8s        add the start-up budget over the runs (p50, p95, p99, max of\n"
    "               the time to ready, else to first kernel) and a Kubernetes\n"
    "               startupProbe that covers p99 with a 25% margin\n"
    "  --budget SECONDS\n"
    "               say how many runs a start-up budget of SECONDS would have\n"
    "               killed\n"
    "  -h, --help   show this help\n"
    "\n"
    "TRACE is a .jst file written by libjitstall.so. DIR is a directory of them\n"
    "(every *.jst in it: forked children, MPI or torchrun ranks, several runs).\n"
    "TRACE '-' is standard input. Colour is used only on a terminal, never when\n"
    "NO_COLOR is set or TERM=dumb; the global --color=auto|always|never decides.\n"
    "\n"
    "exit status: 0 report written, also for a truncated or damaged trace (the\n"
    "report says what is missing); 2 usage error, a path that does not exist,\n"
    "no readable trace, or an input that is not a readable trace (the report\n"
    "of the others is still written; the reason is on stderr).\n";

enum { OUT_TEXT, OUT_JSON, OUT_MARKDOWN };

static int use_colour(void)
{
    return jst_cli_colour(STDOUT_FILENO);
}

/* N of --stack-depth: a count, or "all" (0, no limit). -1 when invalid. */
static long parse_depth(const char *s)
{
    if (!strcmp(s, "all"))
        return 0;
    char *end;
    if (!*s || *s == '-' || *s == '+')
        return -1;
    unsigned long v = strtoul(s, &end, 10);
    return *end || v > 100000 ? -1 : (long)v;
}

enum { O_DEPTH = 256, O_PER_PROCESS, O_PID, O_K8S, O_BUDGET };

#define MAX_PIDS 64

struct report_opts {
    int fmt;
    long depth;
    int per_process;
    uint64_t pids[MAX_PIDS];
    size_t n_pids;
    int k8s;
    double budget_s; /* < 0: none */
};

static int report_option(int c, const char *arg, void *ctx)
{
    struct report_opts *o = ctx;
    if (c == O_PER_PROCESS) {
        o->per_process = 1;
        return 0;
    }
    if (c == O_K8S) {
        o->k8s = 1;
        return 0;
    }
    if (c == O_BUDGET) {
        char *end;
        double v = strtod(arg, &end);
        if (!*arg || *end || !(v >= 0 && v <= 1e9)) {
            jst_errorf("report", "--budget needs a number of seconds, not '%s'", arg);
            return -1;
        }
        o->budget_s = v;
        return 0;
    }
    if (c == O_PID) {
        char *end;
        unsigned long long v = strtoull(arg, &end, 10);
        if (!*arg || *arg == '-' || *end) {
            jst_errorf("report", "--pid needs a process id, not '%s'", arg);
            return -1;
        }
        if (o->n_pids == MAX_PIDS) {
            jst_errorf("report", "--pid: at most %d", MAX_PIDS);
            return -1;
        }
        o->pids[o->n_pids++] = v;
        return 0;
    }
    if (c == O_DEPTH) {
        o->depth = parse_depth(arg);
        if (o->depth < 0) {
            jst_errorf("report", "--stack-depth needs a number of frames or 'all', not '%s'", arg);
            return -1;
        }
        return 0;
    }
    int want = c == 'j' ? OUT_JSON : OUT_MARKDOWN;
    if (o->fmt != OUT_TEXT && o->fmt != want) {
        jst_errorf("report", "--json and --markdown exclude each other");
        return -1;
    }
    o->fmt = want;
    return 0;
}

static const struct option report_longopts[] = {
    {"json", no_argument, NULL, 'j'},
    {"markdown", no_argument, NULL, 'm'},
    {"stack-depth", required_argument, NULL, O_DEPTH},
    {"per-process", no_argument, NULL, O_PER_PROCESS},
    {"pid", required_argument, NULL, O_PID},
    {"k8s", no_argument, NULL, O_K8S},
    {"budget", required_argument, NULL, O_BUDGET},
    JST_CLI_HELP_END,
};
/* Options may follow the traces (`report DIR --json`), as in the other
 * commands; `--` ends them. */
static const struct jst_cli report_cli = {
    "report", "h", report_longopts, report_help, "trace", report_option,
};

static int cmd_report(int argc, char **argv)
{
    struct report_opts o = {OUT_TEXT, RV_STACK_DEPTH_DEFAULT, 0, {0}, 0, 0, -1};
    int rc = jst_cli_parse(&report_cli, argc, argv, &o);
    if (rc != JST_CLI_GO)
        return rc;
    int i = optind;
    for (int k = i; k < argc; k++) {
        struct stat st;
        if (strcmp(argv[k], "-") && stat(argv[k], &st) != 0) {
            jst_errorf("report", "%s: no such file or directory", argv[k]);
            return JST_EXIT_USAGE;
        }
    }

    struct jst_run run = {0};
    struct jst_load_errs errs;
    rc = jst_run_load_lenient("report", argv + i, argc - i, &run, &errs);
    if (rc != JST_EXIT_OK)
        goto out;
    /* --pid: the chosen processes move to the front and the report sees
     * only them; the count is put back before the run is freed. */
    size_t all = run.n_procs;
    if (o.n_pids) {
        size_t kept = 0;
        for (size_t k = 0; k < run.n_procs; k++)
            for (size_t q = 0; q < o.n_pids; q++)
                if (run.procs[k].pid == o.pids[q]) {
                    struct jst_process t = run.procs[kept];
                    run.procs[kept++] = run.procs[k];
                    run.procs[k] = t;
                    break;
                }
        if (!kept) {
            jst_errorf("report", "--pid: no such process in the traces");
            rc = JST_EXIT_USAGE;
            goto out;
        }
        run.n_procs = kept;
    }
    struct rv_report r;
    if (rv_build_depth(&r, &run, errs.msg, errs.n, (size_t)o.depth) < 0)
        jst_xalloc_die();
    r.per_process = o.per_process || o.n_pids;
    r.k8s = o.k8s;
    r.has_budget = o.budget_s >= 0;
    r.budget_s = o.budget_s;
    int w;
    if (o.fmt == OUT_JSON)
        w = rv_write_json(&r, stdout);
    else if (o.fmt == OUT_MARKDOWN)
        w = rv_write_markdown(&r, stdout);
    else
        w = rv_write_text(&r, stdout, use_colour());
    if (w >= 0 && o.fmt != OUT_JSON && jst_startup_shown(&r, o.k8s, o.budget_s)) {
        struct jst_startup su;
        if (jst_startup_compute(&r, o.budget_s, &su) < 0)
            jst_xalloc_die();
        jst_startup_write(stdout, &su, o.k8s, o.fmt == OUT_MARKDOWN);
    }
    if (w < 0) {
        jst_errorf("report", "cannot write the report to standard output");
        rc = JST_EXIT_USAGE;
    }
    rv_free(&r);
    jst_symbolize_cache_clear();
    run.n_procs = all;
    /* An input that is not a readable trace: the report of the others is
     * written, and the status says that something was left out (exit 2,
     * the reason on stderr), as in every other reader. */
    for (size_t k = 0; k < errs.n; k++) {
        jst_errorf("report", "%s", errs.msg[k]);
        rc = JST_EXIT_USAGE;
    }
out:
    jst_load_errs_free(&errs);
    jst_model_free(&run);
    return rc;
}

JST_COMMAND(report, cmd_report, "explain a slow first GPU query from traces, with exact fixes")
