/*
 * The Queries part of the report (implementation: analyzer/report_queries.c),
 * called by the text, Markdown and JSON writers. Each writes nothing for a
 * process without NVTX ranges.
 */
#ifndef JST_ANALYZER_REPORT_QUERIES_H
#define JST_ANALYZER_REPORT_QUERIES_H

#include <stdio.h>
#include "report_view.h"

struct jst_json;

/* "first query 'q' took 3.20 s, 2.90 s of it JIT in ORIGIN", or NULL when no
 * query of p has JIT inside it. */
const char *rv_query_headline(const struct rv_report *r, const struct jst_process *p, char *buf,
                              size_t n);
void rv_queries_text(FILE *f, const struct rv_report *r, const struct jst_process *p);
void rv_queries_markdown(FILE *f, const struct rv_report *r);
/* Adds first_jit_query, query_headline and queries[] to the open process object. */
void rv_queries_json(struct jst_json *j, const struct rv_report *r, const struct jst_process *p);

#endif
