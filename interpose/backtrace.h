/*
 * Stack capture and the module map, for the preload (implementation:
 * interpose/backtrace.c, interpose/modmap.c).
 */
#ifndef JST_INTERPOSE_BACKTRACE_H
#define JST_INTERPOSE_BACKTRACE_H

#include <stdint.h>

/* Captures the caller's stack with libunwind and returns its id; a stack seen
 * before returns the same id, and a new one is written as JST_REC_STACK first.
 * 0 when capture is off or failed. Never called on the hot launch path. */
uint64_t jst_bt_capture(void);
/* Writes the initial module map (JST_REC_MODMAP, JST_MOD_INITIAL). */
void jst_modmap_initial(void);
/* After a dlopen/dlclose returns: write what appeared or went. */
void jst_modmap_refresh(int event);
/* Before a recorded event: refreshes the map when the loader's counters
 * moved since the last event. */
void jst_modmap_check(void);
/* How many objects the loader has added (g[0]) and removed (g[1]) so far,
 * 0 and 0 if unknown: a change means a dlopen or dlclose happened. */
void jst_dl_generation(unsigned long long g[2]);

#endif
