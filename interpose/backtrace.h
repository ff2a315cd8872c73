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
/* Fills libunwind's caches (a few hundred us, once per process) without
 * recording anything: called when the trace opens, so that the first captured
 * load does not pay for it. */
void jst_bt_warm(void);
/* Writes the initial module map (JST_REC_MODMAP, JST_MOD_INITIAL). */
void jst_modmap_initial(void);
/* After a dlopen/dlclose returns: write what appeared or went. */
void jst_modmap_refresh(int event);

#endif
