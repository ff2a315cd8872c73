/*
 * Reading one record into the model (implementation: analyzer/model_read.c),
 * for analyzer/model.c, which reads files and directories record by record.
 * Which field goes where is the table in analyzer/model_schema.h.
 */
#ifndef JST_ANALYZER_MODEL_READ_H
#define JST_ANALYZER_MODEL_READ_H

#include <stddef.h>
#include "model.h"
#include "trace.h"

/* BEGIN records of one file, kept apart until its end (resolve_begins). */
struct jst_begins {
    struct jst_call_ev *v;
    size_t n;
};

/* Grows the array *vp (of *n elements of size sz) by one zeroed element and
 * returns it; NULL when out of memory (counted, jst_model_oom). */
void *jst_model_push(void *vp, size_t *n, size_t sz);
/* Allocations that failed since the last jst_model_oom_reset. */
size_t jst_model_oom(void);
void jst_model_oom_reset(void);
/* Reads rec into p (BEGIN records into b). With keep_calls 0 the calls the
 * model does not keep are folded (jst_run). Returns 1 when a field runs past
 * the record's end. */
int jst_model_read_record(struct jst_process *p, const struct jst_record *rec, int keep_calls,
                          struct jst_begins *b);
/* After the last record: a BEGIN without its call record joins the calls,
 * in flight; the others are dropped. Frees b. */
void jst_model_resolve_begins(struct jst_process *p, struct jst_begins *b);
/* A call's own memory (its strings belong to the process's table). */
void jst_model_free_call(struct jst_call_ev *c);

#endif
