/*
 * The fleet view of `jitstall report` (implementation: analyzer/fleet.c):
 * the runs of one program (same executable and command) grouped, with the
 * spread of their times (p50, p95, max), the culprits and fixes they share
 * and how many runs each hit, the hosts and GPUs seen, and the worst run.
 * Built from the report's view (report_view.h), so it agrees with the
 * per-process detail; written as text, Markdown and JSON (groups[]).
 */
#ifndef JST_ANALYZER_FLEET_H
#define JST_ANALYZER_FLEET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "report_view.h"

/* More processes than this and report folds the per-process detail into the
 * fleet view (--per-process shows it again). */
#define FL_DETAIL_MAX 8

/* p50, p95 and max over the runs that have the measure (nearest rank). */
struct fl_stat {
    size_t n; /* runs that have it */
    uint64_t p50, p95, max;
};

/* Culprit groups of the report named per fleet culprit (more are counted). */
#define FL_GROUPS_MAX 4

/* A culprit (one image, or one of the report's groups of compiles) or a fix
 * (by text) over the runs of a group. */
struct fl_count {
    const char *text;             /* the culprit's name, or the fix's text (owned by the report) */
    size_t runs;                  /* runs it appeared in */
    uint64_t ns;                  /* time lost (culprit) or saved (fix), summed over those runs */
    size_t last;                  /* the last run counted (internal) */
    uint64_t key[2];              /* what tells it apart from another of the same text (internal) */
    size_t groups[FL_GROUPS_MAX]; /* a culprit: its groups in rv_report.groups; a fix: SIZE_MAX */
    size_t n_groups;
    size_t n; /* loads or compiles (culprit), loads (fix) counted */
};

struct fl_group {
    const struct jst_process *first; /* the first run: its executable and command */
    size_t *procs;                   /* indexes into rv_report.procs, in report order */
    size_t n;
    struct fl_stat ttfk, jit, first_call;
    struct fl_count *culprits, *fixes; /* ranked: runs, then time */
    size_t n_culprits, n_fixes;
    const char **hosts; /* distinct, in order of first sight */
    size_t n_hosts;
    char **gpus; /* distinct "NVIDIA H200 (sm_90)" */
    size_t n_gpus;
    size_t worst; /* index into rv_report.procs: the longest time to first kernel
                     (the most JIT when no run launched a kernel) */
};

struct fl_fleet {
    struct fl_group *v; /* in order of each program's first run */
    size_t n;
    size_t most_runs; /* runs of the largest group */
    char **labels;    /* culprit names by module of the report (fl_count.text) */
    size_t n_labels;
};

/* Groups n processes by program (same executable and command): group_of[i]
 * is the group of procs[i], numbered in order of first sight. Returns the
 * number of groups. Linear in n. */
size_t fl_group_of(const struct jst_process *const *procs, size_t n, size_t *group_of);
/* The executable a group is known by: the path, else argv[0]. */
const char *fl_exe(const struct jst_process *p);
/* p50, p95 and max of n values (sorted here), by nearest rank; pct 1..100. */
uint64_t fl_percentile(uint64_t *v, size_t n, unsigned pct);
void fl_stat_of(uint64_t *v, size_t n, struct fl_stat *s);

/* Groups r's processes. 0, or -1 when out of memory. */
int fl_build(struct fl_fleet *f, const struct rv_report *r);
void fl_free(struct fl_fleet *f);

/* The first-call time of p (the longest wait of a kernel's first call), or
 * 0 with nothing in *ns when the trace does not measure it. This is the one
 * place where the fleet view reads that measure. */
int fl_first_call_ns(const struct jst_process *p, uint64_t *ns);

/* The answer a report of many runs opens with: the fleet's line (what the
 * largest culprit cost of all the culprits' time, and the first fix), then
 * one line per program, at most max of them. */
void fl_answer(FILE *f, const struct fl_fleet *fl, const struct rv_report *r, size_t max);
/* The section "Programs" (text and Markdown). */
void fl_write_text(FILE *f, const struct fl_fleet *fl, const struct rv_report *r, int colour);
void fl_write_markdown(FILE *f, const struct fl_fleet *fl, const struct rv_report *r);
/* groups[] of report --json (docs/report-json.md). */
struct jst_json;
void fl_write_json(struct jst_json *j, const struct fl_fleet *fl, const struct rv_report *r);

#endif
