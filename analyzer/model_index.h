/*
 * What keeps the model linear and its memory bounded (implementation:
 * analyzer/model_index.c): calls folded into counts while reading, interned
 * call strings, indexes by seq and stack id built once per process, the
 * per-process means the fix estimates need, and the union of the JIT time
 * before the first launch.
 */
#ifndef JST_ANALYZER_MODEL_INDEX_H
#define JST_ANALYZER_MODEL_INDEX_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"
#include "trace.h"

#include "ixfind.h" /* struct jst_seq_pos */

/* 1 when the call record rec is one the model does not keep (see jst_run's
 * keep_calls): it is then counted and its times folded into p. */
int jst_model_fold_call(struct jst_process *p, const struct jst_record *rec, unsigned call);
/* Adds call record rec to p->launches when it is a kernel launch. call: the
 * record's call id, read once for both. */
void jst_model_note_launch(struct jst_process *p, const struct jst_record *rec, unsigned call);
/* The interned copy of a string field, NULL when the field is not text or
 * memory ran out (then counted in p->n_oom). */
char *jst_model_intern(struct jst_process *p, const struct jst_field *f);
/* Builds the seq and stack indexes and the link flags; before derive's sums. */
void jst_model_index(struct jst_process *p);
/* Means and sums the fix estimates use; after the link flags. */
void jst_model_estimates(struct jst_process *p);
/* ttfk_jit_work_ns from ttfk_jit_ns, then ttfk_jit_ns becomes the union of
 * those loads' intervals, cut at the first launch, and ttfk_jit_overlap the
 * number of them that overlap another. 0 on success, -1 out of memory (the
 * sums are then kept). */
int jst_model_jit_union(struct jst_process *p);
/* The first call with this seq, or NULL. */
const struct jst_call_ev *jst_model_call_by_seq(const struct jst_process *p, uint64_t seq);
/* Its index in p->calls, or -1. */
long jst_model_call_index(const struct jst_process *p, uint64_t seq);
void jst_model_index_free(struct jst_process *p);
/* Tying CUPTI records to loads: build, then find the first call (in call
 * order) whose span holds t among the JIT events (pass 0) or all loads
 * (pass 1), -1 if none; then free. */
void jst_model_span_build(struct jst_process *p);
long jst_model_span_find(const struct jst_process *p, int pass, uint64_t t);
void jst_model_span_free(struct jst_process *p);

#endif
