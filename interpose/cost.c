/*
 * jitstall's own cost: time the preload spent on its own work, excluding the
 * real driver calls, split by phase. The total goes into the END record
 * (JST_F_SELF_NS) and the Prometheus file; JITSTALL_DEBUG=1 prints the
 * phases, so one run on a real GPU tells where start-up and exit time goes.
 */
#include <stdatomic.h>

#include "cost.h"
#include "state.h"

static _Atomic uint64_t cost_ns[JST_COST_N];
static _Atomic uint64_t cost_calls[JST_COST_N];

static const char *const cost_names[JST_COST_N] = {
    [JST_COST_LIBS] = "load unwinder",
    [JST_COST_OPEN] = "open trace + PROCESS",
    [JST_COST_CACHE_START] = "cache walk at start",
    [JST_COST_MODMAP] = "module map",
    [JST_COST_EXT] = "CUPTI + budget set-up",
    [JST_COST_LOOKUP] = "cuGetProcAddress mapping",
    [JST_COST_INSPECT] = "image inspection",
    [JST_COST_UNWIND] = "stack capture",
    [JST_COST_EVENTS] = "hooked calls (own work)",
    [JST_COST_PROGRESS] = "progress records",
    [JST_COST_CACHE_EXIT] = "cache walk at exit",
    [JST_COST_EXIT] = "exit up to END",
    [JST_COST_FLUSH] = "final flush",
    [JST_COST_SAMPLE] = "Python frame samples",
};

void jst_cost_add(enum jst_cost_phase phase, uint64_t ns)
{
    atomic_fetch_add_explicit(&cost_ns[phase], ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&cost_calls[phase], 1, memory_order_relaxed);
}

/* The disjoint parts: every event's own work (which holds loading libunwind,
 * opening the trace, inspection and unwinds), the mapping of each pointer
 * cuGetProcAddress returns (cudart asks for hundreds at start, none of them
 * an event), the progress thread's records and the work at exit. NVTX range
 * records are not counted. */
uint64_t jst_cost_self_ns(void)
{
    return atomic_load(&cost_ns[JST_COST_EVENTS]) + atomic_load(&cost_ns[JST_COST_LOOKUP]) +
           atomic_load(&cost_ns[JST_COST_PROGRESS]) + atomic_load(&cost_ns[JST_COST_EXIT]) +
           atomic_load(&cost_ns[JST_COST_SAMPLE]);
}

void jst_cost_print(void)
{
    if (!jst_debug_on)
        return;
    for (int i = 0; i < JST_COST_N; i++)
        jst_dbg("cost: %-26s %8.3f ms in %llu", cost_names[i],
                (double)atomic_load(&cost_ns[i]) / 1e6,
                (unsigned long long)atomic_load(&cost_calls[i]));
    jst_dbg("cost: %-26s %8.3f ms", "own total (self_ns)", (double)jst_cost_self_ns() / 1e6);
}

void jst_cost_atfork_child(void)
{
    for (int i = 0; i < JST_COST_N; i++) {
        atomic_store(&cost_ns[i], 0);
        atomic_store(&cost_calls[i], 0);
    }
}
