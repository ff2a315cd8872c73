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

#endif
