/*
 * Inside the preload: Python frames sampled before first launches
 * (interpose/sampler.c).
 */
#ifndef JST_INTERPOSE_SAMPLER_H
#define JST_INTERPOSE_SAMPLER_H

#include <stdint.h>

/* A recorded driver or runtime-compiler call on this thread (compiles: it
 * was compile work: a load, link step or runtime compile). It registers the
 * thread for sampling when it runs Python, and starts the sampler thread
 * when none runs. */
void jst_sampler_call(int compiles);
/* Other compile work on this thread (a compiler child reaped, an XLA range):
 * marks a registered thread only; registers nothing, starts no thread, and
 * is async-signal-safe. */
void jst_sampler_event(int compiles);
/* This thread's first launch of a function, recorded with seq: its window's
 * samples are written (when compile work came before) or dropped. */
void jst_sampler_first_launch(uint64_t seq);
/* May the preload start a thread of its own (the sampler, the progress
 * thread)? Not while the calling thread runs under a seccomp filter, whose
 * filters a new thread inherits: the filter may kill the process for the
 * clone. Then 0, and the trace says so once. */
int jst_thread_allowed(void);
/* In a forked child: nothing is sampled until a thread registers again. */
void jst_sampler_atfork_child(void);

#endif
