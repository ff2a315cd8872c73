/*
 * Compiles and first calls in `jitstall report` (analyzer/report_compiles.c).
 */
#ifndef JST_ANALYZER_REPORT_COMPILES_H
#define JST_ANALYZER_REPORT_COMPILES_H

#include <stdio.h>
#include "report_view.h"

struct jst_json;
/* Adds compiles[] and first_calls[] to the open process object. */
void rv_compiles_json(struct jst_json *j, const struct jst_process *p);
/* The per-compiler line and the first calls with their blame, under a process. */
void rv_compiles_text(FILE *f, const struct jst_process *p);
void rv_compiles_markdown(FILE *f, const struct rv_report *r);
/* The pool workers of p (jst_model_is_pool_worker), one line each with its
 * compiles, under p: the report shows them there, not as processes. */
void rv_workers_text(FILE *f, const struct rv_report *r, const struct jst_process *p);
/* Whether the text report shows p as a process of its own: not a pool
 * worker (unless every process is asked for). */
int rv_proc_shown(const struct rv_report *r, const struct jst_process *p);
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

#endif
