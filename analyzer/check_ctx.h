/*
 * The insides of `jitstall check` shared by its three files: cmd_check.c
 * (options and the run), check_rules.c (budgets, calls in flight, queries and
 * the baseline comparison) and check_out.c (failure lines, warnings, GitHub
 * annotations and JUnit XML).
 */
#ifndef JST_ANALYZER_CHECK_CTX_H
#define JST_ANALYZER_CHECK_CTX_H

#include <stdint.h>
#include <stdio.h>
#include "check_util.h"

#define MAX_FORBID 16
#define MAX_QUERY_GATES 16

/* --max-query-ms NAME=N */
struct qgate {
    const char *name; /* in argv, up to the last '=' */
    size_t len;
    double ms;
    size_t found; /* processes that had it */
};

/* --max-compile-ms [COMPILER=]N and --max-compiles [COMPILER=]N */
#define MAX_COMPILE_GATES 16
struct cgate {
    unsigned compiler; /* enum jst_compiler; 0: every compiler */
    double limit;
};

#define MAX_PCT_GATES 16
enum { PCT_TTFK, PCT_JIT };

/* --max-ttfk-ms p95=N, --max-jit-ms max=N: over the runs of one program */
struct pgate {
    int metric;   /* PCT_TTFK or PCT_JIT */
    unsigned pct; /* 1..99, or 100 for max */
    double ms;
};

struct opts {
    double max_jit_ms, max_ttfk_ms; /* < 0: unset */
    struct pgate pct[MAX_PCT_GATES];
    size_t n_pct;
    long max_jit_modules; /* < 0: unset */
    unsigned forbid[MAX_FORBID];
    size_t n_forbid;
    int require_cache; /* rank, < 0: unset */
    struct qgate query[MAX_QUERY_GATES];
    size_t n_query;
    struct cgate compile_ms[MAX_COMPILE_GATES], compiles[MAX_COMPILE_GATES];
    size_t n_compile_ms, n_compiles;
    double max_first_call_ms; /* < 0: unset */
    double max_late_compiles, max_late_ms; /* compiles after ready (late.h); < 0: unset */
    double max_graph_capture_ms;           /* CUDA graph capture (graphs.h); < 0: unset */
    const char *baseline, *junit;
    double tolerance, min_delta_ms;
    int github, quiet;
    int no_budget; /* no budget and no baseline given */
};

/* Where a failure line's module was loaded from, when DWARF says. */
struct cloc {
    char *file; /* NULL: unknown */
    unsigned line;
};

/* One JUnit testcase: a budget of one process and its failure lines. */
struct ccase {
    char name[64];
    const char *type; /* failure type: "budget" or "regression" */
    char *skipped;    /* why it was not checked, or NULL */
    char **lines;
    char **details;    /* one per line: "; call site S; fix: F" of its module, or NULL */
    struct cloc *locs; /* one per line */
    size_t n;
    double secs; /* JUnit time: the measured time this case is about */
};

struct cproc {
    struct jst_psum s;
    const struct jst_psum *base; /* matched baseline process or NULL */
    struct ccase *cases;
    size_t n_cases;
    struct jst_symbolizer *sym;
    int sym_tried;
    /* The call site mod_detail() just described, taken by the next
     * fail_line() (mod_detail is always an argument of that call). */
    struct cloc site;
    /* The same for the text after the module: its call site and fix, kept
     * apart so that the terminal shows them once per process. */
    char *pend_detail;
    char classname[300]; /* JUnit classname, stable across runs */
};

struct ctx {
    struct opts o;
    struct cproc *procs;
    size_t n_procs;
    size_t n_fail_lines;
};

/* ---- check_compiles.c: budgets on every compiler's compiles and first calls ---- */
/* Parses [COMPILER=]N into g (opt names the option in errors); 0 or -1. */
int chk_parse_compile_gate(const char *opt, const char *arg, struct cgate *g, size_t *n);
void chk_compile_budgets(struct ctx *x, struct cproc *cp);

/* ---- check_out.c: what a check says ---- */

/* One "warning: ..." line on stderr (and a GitHub warning annotation). */
void chk_warn(const struct ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a case; the pointer is valid until the next chk_add_case on cp. */
struct ccase *chk_add_case(struct cproc *cp, const char *name, const char *type);
/* Records one failure line of case c: "<exe>[<pid>] <case>: <text>". */
void chk_fail_line(struct ctx *x, struct cproc *cp, struct ccase *c, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* "improved <exe>[<pid>] <what>: ..." on stdout, unless --quiet. */
void chk_improved(const struct ctx *x, const struct cproc *cp, const char *what, const char *fmt,
                  ...) __attribute__((format(printf, 4, 5)));
/* cp's symbolizer, made on first use (NULL when it cannot be). */
struct jst_symbolizer *chk_symbolizer(struct cproc *cp);
/* "; module M (verdict ..., cache ...); call site S; fix: F" for one module. */
const char *chk_mod_detail(struct cproc *cp, const struct jst_pmod *m, char *buf, size_t n);
/* The call site and fix the next failure line of cp is about: its detail,
 * "; call site S; fix: F" ("; fix: F" when site is NULL), which the
 * terminal shows once per process. */
void chk_set_detail(struct cproc *cp, const char *site, const char *fix);
void chk_github_escape(FILE *f, const char *s);
void chk_github_error_head(const struct cloc *loc);
/* Writes the JUnit XML report to path: 0, or -1 after one error line. */
int chk_write_junit(const struct ctx *x, const char *path);
/* Every failure line on stdout (GitHub error annotations with --github). */
void chk_print_case_lines(const struct ctx *x);
/* Gives each process its JUnit classname, stable across runs. */
void chk_set_classnames(struct ctx *x);

/* ---- check_rules.c: what a check checks ---- */

void chk_budgets(struct ctx *x, struct cproc *cp);
void chk_in_flight(struct ctx *x, struct cproc *cp);
void chk_queries(struct ctx *x, struct cproc *cp);
/* A --max-query-ms gate no process had: said once, after every process. */
void chk_queries_found(struct ctx *x);
/* Compares cp with its baseline process cp->base. */
void chk_baseline(struct ctx *x, struct cproc *cp);

/* ---- check_fleet.c: percentile budgets over the runs of one program ---- */

/* "pNN=N" or "max=N" for opt (metric PCT_TTFK or PCT_JIT): 0, or -1 after
 * one error line. */
int chk_parse_pct(const char *opt, const char *arg, struct opts *o, int metric);
/* Every percentile budget on every program of the run. */
void chk_percentiles(struct ctx *x);

#endif
