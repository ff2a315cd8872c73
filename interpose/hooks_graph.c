/*
 * The hooked calls of CUDA graph capture: every variant of
 * cuStreamBeginCapture (and cuStreamBeginCaptureToGraph), cuStreamEndCapture
 * and cuGraphInstantiate (WithFlags, WithParams), each recorded as one call
 * with the stream, the graph and the executable graph it made. The analyzer
 * pairs a begin with the end on the same stream (analyzer/graphs.c): a
 * server captures one graph per batch size, hundreds of calls, so the hooks
 * are thin: no inspection, and the caller's stack only for the process's
 * first capture. A begin and an end end their block (one write each), so
 * that a reader of the live trace (`jitstall status`) sees a capture open
 * while it runs and closed once it is; instantiations wait for the next
 * flush. Each wrapper has the exact signature of the
 * variant it stands for, calls the real function exactly once with the same
 * arguments, and returns its result unchanged.
 */
#include <errno.h>
#include <stdint.h>

#include "state.h"
#include "hooks_wrap.h"

/* Whether this is the process's first capture: the only one whose stack is
 * taken (where the program captures from; the rest repeat it). */
static atomic_int graph_first_done;

static int graph_begin(struct jst_event *ev, struct jst_hook *h, int route)
{
    if (atomic_load_explicit(&graph_first_done, memory_order_relaxed) ||
        atomic_exchange(&graph_first_done, 1))
        return jst_event_begin(ev, h, route);
    return jst_event_begin_stack(ev, h, route);
}

/* The record of one call: the stream or executable graph (handle) and the
 * graph, each 0 when there is none. */
static void graph_record(struct jst_event *ev, CUresult r, uint64_t handle, uint64_t graph,
                         int flush)
{
    uint8_t buf[512];
    struct jst_rec rec;
    jst_event_record(ev, &rec, buf, sizeof buf, r);
    jst_rec_u64(&rec, JST_F_HANDLE, handle);
    if (graph)
        jst_rec_u64(&rec, JST_F_GRAPH, graph);
    jst_emit(&rec, flush);
    jst_event_end(ev);
}

/* ---- cuStreamBeginCapture ---- */

#define JST_BEGIN1_P (CUstream hStream)
#define JST_BEGIN1_A (hStream)
typedef CUresult(*begin1_fn) JST_BEGIN1_P;
static CUresult h_begin1(struct jst_hook *h, int route, CUstream hStream)
{
    JST_HOOK_RUN(begin1_fn, JST_BEGIN1_A, graph_begin(&ev, h, route));
    graph_record(&ev, r, (uint64_t)(uintptr_t)hStream, 0, 1);
    return r;
}
JST_WRAP(cuStreamBeginCapture, JST_BEGIN1_P, JST_BEGIN1_A, h_begin1)
JST_WRAP(cuStreamBeginCapture_ptsz, JST_BEGIN1_P, JST_BEGIN1_A, h_begin1)

#define JST_BEGIN2_P (CUstream hStream, CUstreamCaptureMode mode)
#define JST_BEGIN2_A (hStream, mode)
typedef CUresult(*begin2_fn) JST_BEGIN2_P;
static CUresult h_begin2(struct jst_hook *h, int route, CUstream hStream, CUstreamCaptureMode mode)
{
    JST_HOOK_RUN(begin2_fn, JST_BEGIN2_A, graph_begin(&ev, h, route));
    graph_record(&ev, r, (uint64_t)(uintptr_t)hStream, 0, 1);
    return r;
}
JST_WRAP(cuStreamBeginCapture_v2, JST_BEGIN2_P, JST_BEGIN2_A, h_begin2)
JST_WRAP(cuStreamBeginCapture_v2_ptsz, JST_BEGIN2_P, JST_BEGIN2_A, h_begin2)

#define JST_BEGIN_TG_P                                                                             \
    (CUstream hStream, CUgraph hGraph, const CUgraphNode *dependencies,                            \
     const CUgraphEdgeData *dependencyData, size_t numDependencies, CUstreamCaptureMode mode)
#define JST_BEGIN_TG_A (hStream, hGraph, dependencies, dependencyData, numDependencies, mode)
typedef CUresult(*begin_tg_fn) JST_BEGIN_TG_P;
static CUresult h_begin_tg(struct jst_hook *h, int route, JST_UNPAREN(JST_BEGIN_TG_P))
{
    JST_HOOK_RUN(begin_tg_fn, JST_BEGIN_TG_A, graph_begin(&ev, h, route));
    graph_record(&ev, r, (uint64_t)(uintptr_t)hStream, (uint64_t)(uintptr_t)hGraph, 1);
    return r;
}
JST_WRAP(cuStreamBeginCaptureToGraph, JST_BEGIN_TG_P, JST_BEGIN_TG_A, h_begin_tg)
JST_WRAP(cuStreamBeginCaptureToGraph_ptsz, JST_BEGIN_TG_P, JST_BEGIN_TG_A, h_begin_tg)

/* ---- cuStreamEndCapture ---- */

#define JST_END_P (CUstream hStream, CUgraph * phGraph)
#define JST_END_A (hStream, phGraph)
typedef CUresult(*end_fn) JST_END_P;
static CUresult h_end(struct jst_hook *h, int route, CUstream hStream, CUgraph *phGraph)
{
    JST_HOOK_PROLOGUE(end_fn, JST_END_A);
    graph_record(&ev, r, (uint64_t)(uintptr_t)hStream, JST_OUT(phGraph), 1);
    return r;
}
JST_WRAP(cuStreamEndCapture, JST_END_P, JST_END_A, h_end)
JST_WRAP(cuStreamEndCapture_ptsz, JST_END_P, JST_END_A, h_end)

/* ---- cuGraphInstantiate ---- */

#define JST_INST1_P                                                                                \
    (CUgraphExec * phGraphExec, CUgraph hGraph, CUgraphNode * phErrorNode, char *logBuffer,        \
     size_t bufferSize)
#define JST_INST1_A (phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize)
typedef CUresult(*inst1_fn) JST_INST1_P;
static CUresult h_inst1(struct jst_hook *h, int route, JST_UNPAREN(JST_INST1_P))
{
    JST_HOOK_PROLOGUE(inst1_fn, JST_INST1_A);
    graph_record(&ev, r, JST_OUT(phGraphExec), (uint64_t)(uintptr_t)hGraph, 0);
    return r;
}
JST_WRAP(cuGraphInstantiate, JST_INST1_P, JST_INST1_A, h_inst1)
JST_WRAP(cuGraphInstantiate_v2, JST_INST1_P, JST_INST1_A, h_inst1)

#define JST_INSTF_P (CUgraphExec * phGraphExec, CUgraph hGraph, unsigned long long flags)
#define JST_INSTF_A (phGraphExec, hGraph, flags)
typedef CUresult(*instf_fn) JST_INSTF_P;
static CUresult h_instf(struct jst_hook *h, int route, JST_UNPAREN(JST_INSTF_P))
{
    JST_HOOK_PROLOGUE(instf_fn, JST_INSTF_A);
    graph_record(&ev, r, JST_OUT(phGraphExec), (uint64_t)(uintptr_t)hGraph, 0);
    return r;
}
JST_WRAP(cuGraphInstantiateWithFlags, JST_INSTF_P, JST_INSTF_A, h_instf)

#define JST_INSTP_P                                                                                \
    (CUgraphExec * phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS * instantiateParams)
#define JST_INSTP_A (phGraphExec, hGraph, instantiateParams)
typedef CUresult(*instp_fn) JST_INSTP_P;
static CUresult h_instp(struct jst_hook *h, int route, JST_UNPAREN(JST_INSTP_P))
{
    JST_HOOK_PROLOGUE(instp_fn, JST_INSTP_A);
    graph_record(&ev, r, JST_OUT(phGraphExec), (uint64_t)(uintptr_t)hGraph, 0);
    return r;
}
JST_WRAP(cuGraphInstantiateWithParams, JST_INSTP_P, JST_INSTP_A, h_instp)
JST_WRAP(cuGraphInstantiateWithParams_ptsz, JST_INSTP_P, JST_INSTP_A, h_instp)
