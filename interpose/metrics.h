/*
 * Prometheus metrics at exit and live, JITSTALL_PROM_DIR (interpose/metrics.c).
 */
#ifndef JST_INTERPOSE_METRICS_H
#define JST_INTERPOSE_METRICS_H

#include <stdint.h>
#include "trace.h"

/* Reads JITSTALL_PROM_DIR; called once with the rest of the configuration. */
void jst_metrics_init(void);
/* Sees every record the process writes; returns at once when off. */
void jst_metrics_observe(const struct jst_rec *r);
/* Writes the file; self_ns is jitstall's own time (0: not known). */
void jst_metrics_write(uint64_t self_ns);
/* JITSTALL_LIVE_MS as ns when the file is also written live, else 0. */
uint64_t jst_metrics_live_ns(void);
/* The background thread's turn (interpose/ready.c): writes the live file
 * when due; returns the ns until the next write, 0 when there is none. */
uint64_t jst_metrics_tick(uint64_t now);
/* In a forked child: the parent's figures are not the child's. */
void jst_metrics_atfork_child(void);

#endif
