/*
 * Compiles and first calls in `jitstall report` (analyzer/report_compiles.c).
 */
#ifndef JST_ANALYZER_REPORT_COMPILES_H
#define JST_ANALYZER_REPORT_COMPILES_H

#include <stdio.h>
#include "graphs.h"
#include "report_view.h"

struct jst_json;
/* Adds compiles[] and first_calls[] to the open process object. */
void rv_compiles_json(struct jst_json *j, const struct jst_process *p);
/* The per-compiler line and the first calls with their blame, under a process. */
void rv_compiles_text(FILE *f, const struct jst_process *p);
/* Each build tool's row of p and the compiles under it, as a tree (text, or
 * Markdown when md): those of its descendants' traces in run too. */
struct jst_run;
void rv_builds_text(FILE *f, const struct jst_run *run, const struct jst_process *p, int md);
void rv_compiles_markdown(FILE *f, const struct rv_report *r);
/* The pool workers of p (jst_model_is_pool_worker), one line each with its
 * compiles, under p: the report shows them there, not as processes. */
void rv_workers_text(FILE *f, const struct rv_report *r, const struct jst_process *p);
/* Whether the text report shows p as a process of its own: not a pool
 * worker (unless every process is asked for). */
int rv_proc_shown(const struct rv_report *r, const struct jst_process *p);
/* A process another of the run started that launched no kernel, loaded no
 * module and compiled nothing (driver start-up alone is allowed) (a worker pool's idle parent, a helper
 * script): the answer lines count it instead of giving it a line. */
int rv_proc_quiet(const struct rv_report *r, const struct jst_process *p);
/* Whether text and Markdown show p's first calls. */
int rv_first_calls_shown(const struct jst_process *p);
struct rv_report;
/* Whether any process of the report shows first calls. */
int rv_any_first_calls(const struct rv_report *r);
/* "first call of K took X, slower than time to first kernel (Y)", or NULL. */
/* A first call's name: "FUNCTION from CALL_SITE", either alone, else its
 * first kernel's name. */
struct jst_first_call;
const char *rv_first_call_name(const struct jst_first_call *f, char *buf, size_t n);
/* Whether that name leaves out the kernel that launched first (then shown
 * beside it: "first kernel K"). */
int rv_first_call_kernel_aside(const struct jst_first_call *f);
/* The outcome of framework fw's cache in p as framework_caches[] says it
 * ("hit", "miss", "disabled", "unknown"); *used: fw compiled or had a first
 * call in p. */
const char *rv_fw_cache_result(const struct jst_process *p, unsigned fw, int *used);
const char *rv_first_call_headline(const struct jst_process *p, char *buf, size_t n);

/* Ready and late compiles (analyzer/late.h): "Time to ready" under the
 * time to first kernel; the late compiles' own section (text, Markdown);
 * ttr_ns, ready_spec, late_compiles, late_compile_ns in the process object. */
void rv_ready_text(FILE *f, const struct jst_process *p);
void rv_late_text(FILE *f, const struct jst_process *p);
void rv_late_markdown(FILE *f, const struct rv_report *r);
void rv_ready_json(struct jst_json *j, const struct jst_process *p);
/* CUDA graph capture (analyzer/report_graphs.c): the process's `graphs`
 * object, its "CUDA graphs" line and the Markdown list; the words of that
 * line ("8 captured, 40.8 ms, instantiate 16.8 ms"), or NULL when none. */
void rv_graphs_json(struct jst_json *j, const struct jst_process *p);
void rv_graphs_text(FILE *f, const struct jst_process *p);
void rv_graphs_markdown(FILE *f, const struct rv_report *r);
const char *rv_graphs_words(const struct jst_process *p, char *buf, size_t n);
/* Whether graph capture is a main cause of p's start: the largest cause of
 * one of its first calls, or the largest part of its time to first kernel.
 * Then it is a culprit: "CUDA graph capture: 8 captured, ..." (else NULL),
 * listed under Culprits with its fix (Markdown says so in its list). */
int rv_graphs_main(const struct jst_process *p);
const char *rv_graphs_culprit(const struct jst_process *p, char *buf, size_t n);
/* The run's graph capture as one culprit, ranked with the others by its time
 * (capture and instantiation in every process where it is a main cause):
 * its time, or 0 when it is none. */
uint64_t rv_graphs_culprit_ns(const struct rv_report *r);
/* Its entry: number num in the text list, or a row of the Markdown table. */
void rv_graphs_culprit_text(FILE *f, const struct rv_report *r, size_t num);
void rv_graphs_culprit_md(FILE *f, const struct rv_report *r, size_t num);
#define RV_GRAPHS_FIX JST_GRAPHS_FIX

#endif
