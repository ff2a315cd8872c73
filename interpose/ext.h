/*
 * Optional parts of the preload that the hooks call into: CUPTI ground truth
 * (interpose/cupti.c) and the in-process JIT budget alert (interpose/budget.c).
 */
#ifndef JST_INTERPOSE_EXT_H
#define JST_INTERPOSE_EXT_H

#include <stdint.h>

/* JITSTALL_CUPTI=1: load libcupti and enable JIT activity. Safe to call twice. */
void jst_cupti_start(void);
/* Flushes CUPTI buffers into the trace (JST_REC_CUPTI_JIT). Called at exit. */
void jst_cupti_flush(void);

/* Reads JITSTALL_BUDGET_MS / JITSTALL_FAIL_EXIT_CODE and arms the exit check. */
void jst_budget_install(void);
/* Says, once, what was wrong with those variables; called when the process
 * first tries to trace. */
void jst_budget_warn(void);
/* Called by the hooks for every load that JIT-compiled (label: source or path). */
void jst_budget_note_jit(const char *label, uint64_t jit_ns);

#endif
