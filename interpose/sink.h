/*
 * What the preload's lifecycle (interpose/init.c: exit, exec, fork) asks of
 * the sink (interpose/sink.c: the trace file and its records). The hooks use
 * the sink through state.h (jst_trace, jst_emit, jst_note, ...).
 */
#ifndef JST_INTERPOSE_SINK_H
#define JST_INTERPOSE_SINK_H

#include <stdint.h>

/* This process has a trace open and owns it (not a vfork child). */
int jst_sink_owned(void);
/* 1 the first time, 0 after: the END record is written once. */
int jst_sink_end_once(void);
/* Events numbered so far (the END record's count). */
uint64_t jst_sink_events(void);
/* Writes the JIT cache's state: phase 0 at start, 1 at exit. */
void jst_sink_cache_state(int phase);
/* Stops tracing and ends the file; nothing is written after it. */
void jst_sink_close(void);
/* exec failed: the process goes on in a new file, whose first note links the two. */
void jst_sink_exec_failed(const char *path, int err);
/* In a forked child: forget the parent's file; the next event opens one. */
void jst_sink_atfork_child(void);
/* 1 in a process forked by a traced one (at any depth): it records the
 * compilers it runs in a trace of its own, which it opens for them, and
 * which joins the run by its parent's pid. */
int jst_sink_forked_traced(void);
/* A wait call reaped child pid with status (as waitpid gives it): noted for
 * a REAP record when this process's trace is open. Async-signal-safe. */
void jst_sink_reaped(int pid, int status);

/* Lifecycle (init.c), called by the sink once a trace file is open. */
void jst_lifecycle_opened(void);
/* Lifecycle (init.c), called once with the full configuration, before any
 * state a forked child must not keep exists: sets up the fork handler. */
void jst_lifecycle_arm(void);

#endif
