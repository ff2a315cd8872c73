/*
 * Late compiles: compiles that started after the process said it was ready
 * (implementation: analyzer/late.c). The compile model marks them
 * (jst_compile.late); this file answers what report, check and export ask of
 * them: how many and how long, the request each stalled, and their fix.
 */
#ifndef JST_ANALYZER_LATE_H
#define JST_ANALYZER_LATE_H

#include <stddef.h>
#include <stdint.h>

struct jst_process;
struct jst_compile;
struct jst_query;
struct jst_run;
struct jst_fixes;

/* How many of p's compiles are late; their summed time into *ns. */
size_t jst_late_count(const struct jst_process *p, uint64_t *ns);
/* The request (NVTX query) a late compile stalled: the query that was open
 * when it started, on its thread when one is, else on any thread; NULL. */
const struct jst_query *jst_late_request(const struct jst_process *p, const struct jst_compile *c);
/* What a compile made, for a fix or a line: its kernel, else "the runtime
 * compile (NVRTC) of compute_90" (its compiler and what it made). Returns buf. */
const char *jst_late_subject(const struct jst_compile *c, char *buf, size_t n);
/* "the warm-up does not compile K (shape, dtype); add it to the warm-up or
 * ship it". Returns buf. */
const char *jst_late_fix(const struct jst_compile *c, char *buf, size_t n);
/* Adds one warm-up fix per late compile subject to out (JST_FIX_WARMUP); its
 * saving is the time the late compiles took. 0, or -1 (memory). */
int jst_fixes_late(const struct jst_run *run, struct jst_fixes *out);

#endif
