/*
 * Inside the preload: the moment the program is ready (JITSTALL_READY,
 * interpose/ready.c), and the live work of the preload's background thread.
 */
#ifndef JST_INTERPOSE_READY_H
#define JST_INTERPOSE_READY_H

#include <stdint.h>
#include "trace.h"

/* 1 when JITSTALL_READY is nvtx:NAME and name is NAME (not yet fired). */
int jst_ready_nvtx_is(const char *name);
/* The program said it is ready, on thread tid (0: the preload saw it). The
 * first call counts; its READY record is written at once when the trace is
 * open, else as soon as it opens. */
void jst_ready_fire(uint32_t tid);
/* The moment it fired (CLOCK_MONOTONIC), 0 if not yet. */
uint64_t jst_ready_ns(void);
/* The process's start on the same clock, from its PROCESS record. */
void jst_ready_started(uint64_t proc_start_ns);
/* The trace has just been opened (its opening records written, on the
 * opening thread): the note for a bad spec, and a READY said before. */
void jst_ready_opened(struct jst_writer *w);
/* The first DEVICE record was written (cuInit succeeded): starts the
 * background thread when live work needs it. */
void jst_ready_driver_up(void);
/* The live work, on the preload's background thread only: the file and
 * timer forms of ready, the live metrics file. Returns the ns until it
 * wants to run again, 0 when it has nothing more to do. */
uint64_t jst_live_tick(uint64_t now);
/* 1 when live work wants the background thread in this process. */
int jst_live_wanted(void);
/* In a forked child: its own readiness, its own trace. */
void jst_ready_atfork_child(void);

#endif
