/*
 * Inside the preload: one hooked call being recorded (interpose/event.c).
 */
#ifndef JST_INTERPOSE_EVENT_H
#define JST_INTERPOSE_EVENT_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include "hooks.h"
#include "trace.h"

/* One hooked call being recorded. */
struct jst_event {
    const struct jst_hook *hook;
    int route;
    int saved_errno;
    uint64_t start_ns, dur_ns;
    uint64_t stack_id;
    uint32_t tid;
    uint64_t seq;  /* taken at BEGIN (inflight.c); 0: taken when the call record is made */
    int in_flight; /* a BEGIN was written and the call has not returned */
    /* When jitstall's own work on this event began (self_ns, cost.c). */
    uint64_t self_t0;
};

/* Starts an event: 1 if this call is to be recorded (guard taken), 0 if the
 * wrapper must just call the real function (guard not taken). */
int jst_event_begin(struct jst_event *ev, const struct jst_hook *h, int route);
/* jst_event_begin, then the caller's stack (loads, link steps, first launches). */
int jst_event_begin_stack(struct jst_event *ev, const struct jst_hook *h, int route);
/* Releases the guard and restores errno to what the real function left. */
void jst_event_end(struct jst_event *ev);
/* Runs the real function with errno as the program left it, timing it. */
#define JST_TIMED(ev, res, expr)                                                                   \
    do {                                                                                           \
        errno = (ev).saved_errno;                                                                  \
        (ev).start_ns = jst_now_ns();                                                              \
        res = expr;                                                                                \
        (ev).dur_ns = jst_now_ns() - (ev).start_ns;                                                \
        (ev).saved_errno = errno;                                                                  \
    } while (0)
/* Starts a record with the fields common to every call. */
void jst_event_record(const struct jst_event *ev, struct jst_rec *r, void *buf, size_t cap,
                      int result);
/* Records a finished call with at most one more field (key 0: none). */
void jst_event_emit_simple(struct jst_event *ev, int result, uint16_t key, uint64_t v, int flush);

#endif
