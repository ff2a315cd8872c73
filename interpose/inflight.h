/*
 * Inside the preload: calls begun and not yet returned (interpose/inflight.c).
 */
#ifndef JST_INTERPOSE_INFLIGHT_H
#define JST_INTERPOSE_INFLIGHT_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include "event.h"
#include "trace.h"

/* Starts ev's BEGIN record in buf (type, a seq taken now and kept for the
 * call record, the common call fields); the caller adds what it knows. */
void jst_inflight_open(struct jst_event *ev, struct jst_rec *r, void *buf, size_t cap);
/* Writes the BEGIN record, flushed, and counts ev as in flight (the
 * progress thread writes while any call is). may_compile: the call may run
 * long (a JIT, a link step, a runtime compile); the first such call starts
 * the progress thread, a short one never does. */
void jst_inflight_emit(struct jst_event *ev, const struct jst_rec *r, int may_compile);
/* ev returned: no longer in flight. */
void jst_inflight_close(struct jst_event *ev);
/* Starts the background thread for the live work (interpose/ready.c), if
 * it is not running yet; the trace is open. */
void jst_inflight_host_start(void);
/* In a forked child: nothing is in flight, and no progress thread runs. */
void jst_inflight_atfork_child(void);

#endif
