/*
 * jitstall's own cost in the process (interpose/cost.c) and the lazily
 * loaded libraries (interpose/lazylib.c).
 */
#ifndef JST_INTERPOSE_COST_H
#define JST_INTERPOSE_COST_H

#include <stdint.h>

/* Where the preload's own time goes; JITSTALL_DEBUG=1 prints one line per
 * phase at exit. The phases overlap the per-event total (JST_COST_EVENTS). */
enum jst_cost_phase {
    JST_COST_LIBS,        /* the unwinder's library: glibc's at open, libunwind later */
    JST_COST_OPEN,        /* creating the trace file, PROCESS record */
    JST_COST_CACHE_START, /* JIT cache walk at start */
    JST_COST_MODMAP,      /* initial module map: build-ids */
    JST_COST_EXT,         /* CUPTI and budget set-up */
    JST_COST_LOOKUP,      /* mapping what cuGetProcAddress returns to our wrappers */
    JST_COST_INSPECT,     /* image inspection before loads */
    JST_COST_UNWIND,      /* stack captures */
    JST_COST_EVENTS,      /* hooked calls, all of jitstall's work in them */
    JST_COST_PROGRESS,    /* progress records while a call is in flight */
    JST_COST_CACHE_EXIT,  /* JIT cache walk at exit */
    JST_COST_EXIT,        /* everything at exit up to the END record */
    JST_COST_FLUSH,       /* ending the zstd stream after END */
    JST_COST_SAMPLE,      /* the sampler thread's reads of Python frames */
    JST_COST_N
};

/* Adds ns to a phase (relaxed atomic add). */
void jst_cost_add(enum jst_cost_phase phase, uint64_t ns);
/* Own time so far outside the real driver: events, exit, the rest. */
uint64_t jst_cost_self_ns(void);
/* JITSTALL_DEBUG=1: one line per phase on stderr. */
void jst_cost_print(void);
/* A forked child starts from zero. */
void jst_cost_atfork_child(void);

/* dlopen libunwind once (idempotent, lock-free). */
void jst_lazylib_load(void);
/* Before the trace opens: makes ready the unwinder the first captures use
 * (glibc's, or libunwind when JITSTALL_UNWIND_AFTER=0); may dlopen. */
void jst_lazylib_prepare(void);
/* Why libunwind could not be loaded (one line), or NULL when it was. */
const char *jst_lazylib_missing(void);
/* The caller's stack: glibc's backtrace() for the first JITSTALL_UNWIND_AFTER
 * captures, libunwind's unw_backtrace after (glibc's again if it is missing). */
int jst_unw_backtrace(void **buf, int n);

#endif
