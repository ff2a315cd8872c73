/*
 * A start-up budget from past runs (implementation: analyzer/budget.c): the
 * spread of the time to ready over the processes of a report (the time to
 * first kernel for a run that set no ready moment), the Kubernetes
 * startupProbe that covers its p99, and how many runs a given budget would
 * have killed. `jitstall report` shows it when a run said it was ready, or
 * with --k8s or --budget.
 */
#ifndef JST_ANALYZER_BUDGET_H
#define JST_ANALYZER_BUDGET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rv_report;
struct jst_json;

/* The probe's period, and the margin over p99 that it covers. */
#define JST_PROBE_PERIOD_S 10
#define JST_PROBE_MARGIN_PCT 25

struct jst_startup {
    size_t n;         /* runs measured */
    size_t n_ready;   /* of them by their time to ready; the rest by time to first kernel */
    size_t n_unknown; /* runs with neither: not measured */
    uint64_t p50, p95, p99, max; /* ns, nearest rank */
    /* the startupProbe: failure_threshold x JST_PROBE_PERIOD_S >= p99 + margin */
    unsigned failure_threshold;
    /* --budget: set when given */
    int has_budget;
    uint64_t budget_ns;
    size_t killed; /* runs whose time exceeded the budget */
};

/* Measures the report's processes; budget_s < 0: none given. 0, or -1
 * (memory). */
int jst_startup_compute(const struct rv_report *r, double budget_s, struct jst_startup *s);
/* Whether report shows it: some run said it was ready, or it was asked for. */
int jst_startup_shown(const struct rv_report *r, int k8s, double budget_s);
/* The section in text (md: GitHub Markdown), with the startupProbe when k8s. */
void jst_startup_write(FILE *f, const struct jst_startup *s, int k8s, int md);
/* "startup": {...} in the report's JSON object. */
void jst_startup_json(struct jst_json *j, const struct jst_startup *s);

#endif
