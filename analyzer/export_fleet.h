/*
 * Fleet exports of `jitstall export`: Prometheus text
 * (analyzer/export_prom.c) and OTLP/JSON traces (analyzer/export_otlp.c).
 * docs/fleet.md describes both.
 */
#ifndef JST_ANALYZER_EXPORT_FLEET_H
#define JST_ANALYZER_EXPORT_FLEET_H

#include <stdio.h>
#include "labels.h"
#include "model.h"

/* 0, or -1 when writing failed or memory ran out. */
int jst_export_prometheus(FILE *f, const struct jst_run *run);
int jst_export_otlp(FILE *f, const struct jst_run *run);
/* The labels the process was given in JITSTALL_LABELS (docs/fleet.md), in
 * lab (JST_MAX_LABELS at most); returns how many. */
size_t jst_export_labels(const struct jst_process *p, struct jst_label *lab);

#endif
