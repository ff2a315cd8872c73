/*
 * The model's rules and the figures every subcommand shows, derived from a
 * process as read (analyzer/model_load.c): time to first kernel and its
 * breakdown, and the process's JIT time split into compile and cache load.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "curesult.h"
#include "image.h"
#include "model.h"
#include "compiles.h"
#include "hashidx.h"
#include "model_index.h"
#include "trace.h"

#define CU_JIT_INPUT_PTX 1
#define CU_JIT_INPUT_NVVM 5

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t ev_end(uint64_t start, uint64_t dur)
{
    return sat_add(start, dur);
}

static int is_launch(unsigned call)
{
    return call == JST_CALL_cuLaunchKernel || call == JST_CALL_cuLaunchKernelEx;
}

static int is_link_add(unsigned call)
{
    return call == JST_CALL_cuLinkAddData || call == JST_CALL_cuLinkAddFile;
}

/* PTX handed to cuLinkAdd* is compiled right there; LTO-IR (NVVM) is
 * compiled when the link completes. */
static int link_input_is(const struct jst_call_ev *c, unsigned input)
{
    return c->has_jit_input && c->jit_input == input;
}

int jst_is_jit_event(const struct jst_process *p, const struct jst_call_ev *c)
{
    if (c->verdict == JST_V_PTX_JIT || c->verdict == JST_V_FORCED_JIT)
        return 1;
    if (c->verdict != JST_V_NONE)
        return 0;
    if (is_link_add(c->call))
        return link_input_is(c, CU_JIT_INPUT_PTX);
    (void)p;
    return c->call == JST_CALL_cuLinkComplete && c->link_nvvm; /* see jst_model_index */
}

int jst_model_is_module(const struct jst_process *p, const struct jst_call_ev *c)
{
    return c->verdict != JST_V_NONE || jst_is_jit_event(p, c) ||
           (jst_is_rtc_call(c->call) && !jst_call_is_cache_probe(p, c)) || c->in_flight;
}

int jst_model_is_partial(const struct jst_process *p)
{
    return (p->truncated && !p->ended_by) || p->damage || p->n_oom;
}

const char *jst_trace_stop_words(const struct jst_process *p)
{
    switch (p->trace_stop) {
    case JST_STOP_DISK_FULL:
        return "the disk was full";
    case JST_STOP_FILE_LIMIT:
        return "the process's file-size limit (ulimit -f) was reached";
    case JST_STOP_NO_FDS:
        return "file descriptors ran short, and jitstall gave its trace up";
    case JST_STOP_WRITE_ERROR:
        return "writing the trace failed";
    default:
        return NULL;
    }
}

int jst_model_before_first_kernel(const struct jst_process *p, const struct jst_call_ev *c)
{
    return !p->first_launch_ns || c->start_ns < p->first_launch_ns;
}

int jst_model_is_culprit(const struct jst_process *p, const struct jst_call_ev *c)
{
    return jst_is_jit_event(p, c) || jst_is_rtc_call(c->call) || c->in_flight ||
           c->verdict == JST_V_NO_COMPATIBLE || c->verdict == JST_V_JIT_DISABLED ||
           c->verdict == JST_V_DAMAGED || c->verdict == JST_V_PTX_TOO_NEW;
}

/* Ties a CUPTI JIT record to the load it belongs to: by the recorded load
 * sequence number, else the JIT event whose time span contains its start (on
 * any thread: CUPTI does not say which), else any load containing it. */
static struct jst_call_ev *cupti_owner(struct jst_process *p, const struct jst_cupti_ev *e)
{
    if (e->load_seq) {
        long i = jst_model_call_index(p, e->load_seq);
        if (i >= 0)
            return &p->calls[i];
    }
    for (int pass = 0; pass < 2; pass++) {
        long i = jst_model_span_find(p, pass, e->start_ns);
        if (i >= 0)
            return &p->calls[i];
    }
    return NULL;
}

/* First pass over the calls: calls in flight get their duration so far,
 * and the process its first event, last end and first launch. Returns the
 * first event's start; *last_end grows to the latest end. */
static uint64_t derive_span(struct jst_process *p, uint64_t *last_end)
{
    uint64_t first_start = p->fold_first_start;
    p->first_launch_ns = p->fold_first_launch;
    p->n_in_flight = 0;
    for (size_t i = 0; i < p->n_calls; i++) {
        struct jst_call_ev *c = &p->calls[i];
        if (c->in_flight) { /* it had run at least until the last record */
            c->dur_ns = p->last_record_ns > c->start_ns ? p->last_record_ns - c->start_ns : 0;
            p->n_in_flight++;
        }
        c->cupti_compile_ns = c->cupti_cache_load_ns = c->cupti_cache_store_ns = 0;
        if (c->start_ns && (!first_start || c->start_ns < first_start))
            first_start = c->start_ns;
        if (ev_end(c->start_ns, c->dur_ns) > *last_end)
            *last_end = ev_end(c->start_ns, c->dur_ns);
        if (is_launch(c->call) && c->start_ns &&
            (!p->first_launch_ns || c->start_ns < p->first_launch_ns))
            p->first_launch_ns = c->start_ns;
    }
    return first_start;
}

/* CUPTI's JIT records, added to the loads they belong to. */
static void derive_cupti(struct jst_process *p, uint64_t *last_end)
{
    if (p->n_cupti)
        jst_model_span_build(p);
    for (size_t i = 0; i < p->n_cupti; i++) {
        struct jst_cupti_ev *e = &p->cupti[i];
        struct jst_call_ev *c = cupti_owner(p, e);
        uint64_t d = e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0;
        if (e->end_ns > *last_end)
            *last_end = e->end_ns;
        if (!c)
            continue;
        if (e->op == JST_CUPTI_COMPILE)
            c->cupti_compile_ns = sat_add(c->cupti_compile_ns, d);
        else if (e->op == JST_CUPTI_CACHE_LOAD)
            c->cupti_cache_load_ns = sat_add(c->cupti_cache_load_ns, d);
        else if (e->op == JST_CUPTI_CACHE_STORE)
            c->cupti_cache_store_ns = sat_add(c->cupti_cache_store_ns, d);
    }
    jst_model_span_free(p);
}

/* The sums: JIT time (all, and before the first launch) split into compile
 * and cache load, and the other parts of the time to first kernel. */
static void derive_sums(struct jst_process *p)
{
    p->jit_ns = p->jit_compile_ns = p->jit_cache_load_ns = 0;
    p->ttfk_jit_ns = p->ttfk_jit_compile_ns = p->ttfk_jit_cache_load_ns = 0;
    p->init_ns = p->ctx_ns = p->sass_load_ns = p->other_ns = p->pre_driver_ns = 0;
    p->rtc_ns = 0;
    for (size_t i = 0; i < p->n_calls; i++) {
        struct jst_call_ev *c = &p->calls[i];
        int before = jst_model_before_first_kernel(p, c);
        if (jst_is_jit_event(p, c)) {
            uint64_t load = 0;
            if (c->cupti_compile_ns || c->cupti_cache_load_ns)
                load = c->cupti_cache_load_ns < c->dur_ns ? c->cupti_cache_load_ns : c->dur_ns;
            else if (c->cache == JST_C_HIT)
                load = c->dur_ns;
            uint64_t comp = c->dur_ns - load;
            p->jit_ns = sat_add(p->jit_ns, c->dur_ns);
            p->jit_compile_ns = sat_add(p->jit_compile_ns, comp);
            p->jit_cache_load_ns = sat_add(p->jit_cache_load_ns, load);
            if (before) {
                p->ttfk_jit_ns = sat_add(p->ttfk_jit_ns, c->dur_ns);
                p->ttfk_jit_compile_ns = sat_add(p->ttfk_jit_compile_ns, comp);
                p->ttfk_jit_cache_load_ns = sat_add(p->ttfk_jit_cache_load_ns, load);
            }
            continue;
        }
        if (!before)
            continue;
        if (jst_is_rtc_call(c->call))
            p->rtc_ns = sat_add(p->rtc_ns, c->dur_ns);
        else if (c->call == JST_CALL_cuInit)
            p->init_ns = sat_add(p->init_ns, c->dur_ns);
        else if (c->call == JST_CALL_cuCtxCreate || c->call == JST_CALL_cuDevicePrimaryCtxRetain)
            p->ctx_ns = sat_add(p->ctx_ns, c->dur_ns);
        else if (c->verdict == JST_V_SASS)
            p->sass_load_ns = sat_add(p->sass_load_ns, c->dur_ns);
    }
}

void jst_ptx_too_new_cause(char *buf, size_t n, unsigned isa, unsigned driver_cuda,
                           const char *release)
{
    char made[96] = "", drv[96] = "", cv[16];
    unsigned mk = jst_ptx_isa_cuda(isa), max = jst_cuda_max_ptx_isa(driver_cuda);
    if (isa && mk)
        snprintf(made, sizeof made, "PTX ISA %u.%u (CUDA %s toolkit)", isa / 10, isa % 10,
                 jst_cuda_str(cv, sizeof cv, mk));
    else if (isa)
        snprintf(made, sizeof made, "PTX ISA %u.%u (a toolkit newer than this driver)", isa / 10,
                 isa % 10);
    else
        snprintf(made, sizeof made, "PTX of a newer toolkit");
    size_t bl = release ? strcspn(release, ".") : 0;
    if (driver_cuda && bl)
        snprintf(drv, sizeof drv, "this driver (%.*s, CUDA %s)", (int)bl, release,
                 jst_cuda_str(cv, sizeof cv, driver_cuda));
    else if (driver_cuda)
        snprintf(drv, sizeof drv, "this driver (CUDA %s)",
                 jst_cuda_str(cv, sizeof cv, driver_cuda));
    else
        snprintf(drv, sizeof drv, "this driver");
    if (max)
        snprintf(buf, n, "%s; %s supports up to %u.%u", made, drv, max / 10, max % 10);
    else
        snprintf(buf, n, "%s; %s does not support it", made, drv);
}

/* A JIT load refused with CUDA_ERROR_UNSUPPORTED_PTX_VERSION, or failed
 * with PTX newer than its device's driver JITs: the preload does not compare
 * versions (it would link the version tables into every process), so the
 * verdict ptx_too_new is given here. Such a load compiled nothing: it is not
 * a JIT event. */
static void derive_ptx_too_new(struct jst_process *p)
{
    for (size_t i = 0; i < p->n_calls; i++) {
        struct jst_call_ev *c = &p->calls[i];
        if ((c->verdict != JST_V_PTX_JIT && c->verdict != JST_V_FORCED_JIT) || c->result == 0)
            continue;
        const struct jst_device *dv = NULL;
        for (size_t k = 0; k < p->n_devices; k++)
            if (!dv || (c->has_load_device && p->devices[k].ordinal == c->load_device))
                dv = &p->devices[k];
        unsigned drv = dv ? (unsigned)dv->driver_version : 0;
        unsigned max = jst_cuda_max_ptx_isa(drv);
        if (c->result != JST_CUDA_ERROR_UNSUPPORTED_PTX_VERSION &&
            !(c->ptx_isa && max && c->ptx_isa > max))
            continue;
        c->verdict = JST_V_PTX_TOO_NEW;
        c->ptx_isa_driver = max;
        c->ptx_driver_cuda = drv;
        char why[256];
        jst_ptx_too_new_cause(why, sizeof why, c->ptx_isa, drv, dv ? dv->driver_release : NULL);
        const char *r = p->strs ? jst_strtab_intern(p->strs, why, strlen(why)) : NULL;
        if (r)
            c->reason = (char *)r;
    }
}

/* The entries a load's record lists ("cubin sm_90a none") as an image's, for
 * the shared rule; 0 when a list may have been cut (the preload writes 256
 * at most) or an entry cannot be read. */
static int entries_image(const struct jst_call_ev *c, struct jst_entry *e, size_t max,
                         struct jst_image *img)
{
    memset(img, 0, sizeof *img);
    if (!c->n_entries || c->n_entries >= max)
        return 0;
    for (size_t i = 0; i < c->n_entries; i++) {
        char kind[8], arch[24];
        unsigned var = 0;
        memset(&e[i], 0, sizeof e[i]);
        if (sscanf(c->entries[i], "%7s %23s", kind, arch) != 2)
            return 0;
        e[i].kind = !strcmp(kind, "ptx")     ? JST_E_PTX
                    : !strcmp(kind, "cubin") ? JST_E_CUBIN
                    : !strcmp(kind, "ltoir") ? JST_E_LTOIR
                                             : 0;
        e[i].sm = jst_arch_parse(arch, &var);
        e[i].variant = var;
        if (!e[i].kind || !e[i].sm)
            return 0;
    }
    img->entries = e;
    img->n_entries = c->n_entries;
    return 1;
}

/* scan's rule for other GPUs' variants, applied to the loads of one
 * process: a load with nothing for its device (jst_image_for_other_gpus),
 * from an ELF object that gave another load that runs there, is a variant
 * the library does not need on this GPU (a runtime that tries each one sees
 * the others fail and goes on), not code that cannot run. */
static void derive_other_gpus(struct jst_process *p)
{
    enum { MAX_SRC = 64 };
    const char *runs[MAX_SRC];
    size_t nr = 0;
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct jst_call_ev *c = &p->calls[i];
        if (!c->source || !jst_verdict_runs(c->verdict) || c->result != 0)
            continue;
        size_t k = 0;
        while (k < nr && strcmp(runs[k], c->source))
            k++;
        if (k == nr && nr < MAX_SRC)
            runs[nr++] = c->source;
    }
    struct jst_entry ents[256];
    for (size_t i = 0; nr && i < p->n_calls; i++) {
        struct jst_call_ev *c = &p->calls[i];
        if (c->verdict != JST_V_NO_COMPATIBLE || !c->source || !c->target_cc)
            continue;
        size_t k = 0;
        while (k < nr && strcmp(runs[k], c->source))
            k++;
        struct jst_image img;
        if (k == nr || !entries_image(c, ents, 256, &img) ||
            !jst_image_for_other_gpus(&img, c->target_cc))
            continue;
        char why[200], gpu[16];
        const char *base = strrchr(c->source, '/');
        snprintf(why, sizeof why, "built for other GPUs only; %.120s has code that runs on %s",
                 base ? base + 1 : c->source,
                 jst_arch_str(gpu, sizeof gpu, 0, c->target_cc, JST_A_PLAIN));
        const char *r = p->strs ? jst_strtab_intern(p->strs, why, strlen(why)) : NULL;
        c->verdict = JST_V_OTHER_GPUS;
        if (r)
            c->reason = (char *)r;
    }
}

void jst_model_derive(struct jst_process *p)
{
    derive_ptx_too_new(p);
    derive_other_gpus(p);
    uint64_t last_end = p->last_record_ns > p->fold_last_end ? p->last_record_ns : p->fold_last_end;
    jst_model_index(p);
    uint64_t first_start = derive_span(p, &last_end);
    derive_cupti(p, &last_end);
    if (!p->has_end || p->end_ns < last_end)
        p->end_ns = p->end_ns > last_end ? p->end_ns : last_end;

    uint64_t anchor = p->proc_start_ns ? p->proc_start_ns : p->mono_ns ? p->mono_ns : first_start;
    p->ttfk_ns = 0;
    if (p->first_launch_ns)
        p->ttfk_ns = p->first_launch_ns > anchor ? p->first_launch_ns - anchor : 0;
    /* No kernel yet and a call still running: the wait so far is a lower
     * bound of the time to first kernel, and it must not read as zero. */
    p->ttfk_in_flight = !p->first_launch_ns && p->n_in_flight && p->end_ns > anchor;
    if (p->ttfk_in_flight)
        p->ttfk_ns = p->end_ns - anchor;
    p->ttr_ns = p->ready.present && p->ready.t_ns > anchor ? p->ready.t_ns - anchor : 0;

    derive_sums(p);
    /* Time before the program first touched the driver is not CUDA's: an
     * interpreter importing its libraries, say. Only known with a real
     * process start. */
    jst_model_jit_union(p);
    jst_model_estimates(p);
    p->pre_driver_ns = 0;
    if (p->proc_start_ns && p->first_launch_ns && first_start > p->proc_start_ns &&
        first_start <= p->first_launch_ns)
        p->pre_driver_ns = first_start - p->proc_start_ns;
    uint64_t known =
        sat_add(sat_add(p->ttfk_jit_ns, p->init_ns), sat_add(p->ctx_ns, p->sass_load_ns));
    known = sat_add(sat_add(known, p->pre_driver_ns), p->rtc_ns);
    p->other_ns = p->ttfk_ns > known ? p->ttfk_ns - known : 0;
    jst_compiles_derive(p);
    jst_graphs_derive(p);
    jst_queries_derive(p);
    jst_first_calls_derive(p);
}
