/*
 * One hooked call being recorded: taking the guard and the errno the program
 * left, the fields every call record starts with, and what jitstall's own
 * work on the call cost. Every handler (hooks_*.c, procaddr.c) goes through
 * here.
 */
#include <errno.h>
#include <stdint.h>

#include "backtrace.h"
#include "children.h"
#include "cost.h"
#include "event.h"
#include "sampler.h"
#include "state.h"

int jst_event_begin(struct jst_event *ev, const struct jst_hook *h, int route)
{
    if (jst_guard || atomic_load_explicit(&jst_state, memory_order_relaxed) == JST_ST_OFF)
        return 0;
    int saved = errno;
    jst_spawn_hooked(); /* children reaped in a signal handler (spawn.c) */
    jst_guard++;
    uint64_t t0 = jst_now_ns();
    if (!jst_trace()) {
        jst_guard--;
        errno = saved;
        return 0;
    }
    jst_modmap_check();
    ev->hook = h;
    ev->route = route;
    ev->saved_errno = saved;
    ev->start_ns = ev->dur_ns = 0;
    ev->stack_id = 0;
    ev->tid = jst_tid();
    ev->seq = 0;
    ev->in_flight = 0;
    ev->self_t0 = t0;
    /* Loads, link steps and runtime compiles are compile work (sampler.c). */
    unsigned c = h ? h->call_id : 0;
    jst_sampler_call((c >= JST_CALL_cuModuleLoad && c <= JST_CALL_cuModuleLoadFatBinary) ||
                     c == JST_CALL_cuLibraryLoadData || c == JST_CALL_cuLibraryLoadFromFile ||
                     (c >= JST_CALL_cuLinkAddData && c <= JST_CALL_cuLinkComplete) ||
                     (c >= JST_CALL_nvrtcCompileProgram && c <= JST_CALL_nvPTXCompilerCompile));
    return 1;
}

int jst_event_begin_stack(struct jst_event *ev, const struct jst_hook *h, int route)
{
    if (!jst_event_begin(ev, h, route))
        return 0;
    ev->stack_id = jst_bt_capture();
    return 1;
}

/* Own time of ev so far: since jst_event_begin, less the real call. */
static uint64_t event_self_ns(const struct jst_event *ev)
{
    uint64_t t = jst_now_ns() - ev->self_t0;
    return t > ev->dur_ns ? t - ev->dur_ns : 0;
}

void jst_event_end(struct jst_event *ev)
{
    jst_cost_add(JST_COST_EVENTS, event_self_ns(ev));
    jst_guard--;
    errno = ev->saved_errno;
}

void jst_event_record(const struct jst_event *ev, struct jst_rec *r, void *buf, size_t cap,
                      int result)
{
    jst_rec_begin(r, buf, cap, JST_REC_CALL);
    jst_rec_u64(r, JST_F_SEQ, ev->seq ? ev->seq : jst_next_seq());
    jst_rec_u64(r, JST_F_CALL_ID, ev->hook->call_id);
    jst_rec_str(r, JST_F_CALL, ev->hook->name);
    jst_rec_u64(r, JST_F_ROUTE, (uint64_t)ev->route);
    jst_rec_u64(r, JST_F_TID, ev->tid);
    jst_rec_u64(r, JST_F_START_NS, ev->start_ns);
    jst_rec_u64(r, JST_F_DUR_NS, ev->dur_ns);
    jst_rec_u64(r, JST_F_RESULT, (uint64_t)(unsigned)result);
    if (ev->stack_id)
        jst_rec_u64(r, JST_F_STACK_ID, ev->stack_id);
    jst_rec_u64(r, JST_F_SELF_NS, event_self_ns(ev));
}

void jst_event_emit_simple(struct jst_event *ev, int result, uint16_t key, uint64_t v, int flush)
{
    uint8_t buf[512];
    struct jst_rec rec;
    jst_event_record(ev, &rec, buf, sizeof buf, result);
    if (key)
        jst_rec_u64(&rec, key, v);
    jst_emit(&rec, flush);
}
