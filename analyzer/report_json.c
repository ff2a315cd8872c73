/*
 * `jitstall report --json`: the report as one JSON object. The keys are
 * documented in docs/report-json.md; the keys it marks stable never change
 * meaning, others may be added.
 */
#include <inttypes.h>
#include <stdio.h>
#include "budget.h"
#include "compiles.h"
#include "fixes.h"
#include "curesult.h"
#include "fleet.h"
#include "jsonw.h"
#include "report_compiles.h"
#include "report_queries.h"
#include "report_view.h"
#include "trace.h"

static void json_cache_state(struct jst_json *j, const char *key, const struct jst_cache_state *s)
{
    jst_json_key(j, key);
    if (!s->present) {
        jst_json_null(j);
        return;
    }
    jst_json_obj(j);
    jst_json_kbool(j, "exists", s->exists);
    jst_json_kbool(j, "writable", s->writable);
    jst_json_kbool(j, "disabled", s->disabled);
    jst_json_ku64(j, "size_bytes", s->size_bytes);
    jst_json_ku64(j, "entries", s->entries);
    jst_json_ku64(j, "max_bytes", s->max_bytes);
    jst_json_end(j);
}

static void json_str_or_null(struct jst_json *j, const char *key, const char *s)
{
    jst_json_kstr(j, key, s && *s ? s : NULL);
}

/* The chain, innermost first, with keys that fit a Python frame as well
 * (object "python"); then how many frames the depth limit left out. */
static void json_stack(struct jst_json *j, const struct rv_chain *m)
{
    jst_json_key(j, "stack");
    jst_json_arr(j);
    for (size_t i = 0; i < m->n_stack; i++) {
        const struct rv_frame *f = &m->stack[i];
        jst_json_obj(j);
        jst_json_kstr(j, "func", f->func);
        jst_json_kstr(j, "file", f->file);
        jst_json_kopt_u64(j, "line", f->line != 0, f->line);
        jst_json_kstr(j, "object", f->object);
        jst_json_ku64(j, "offset", f->offset);
        jst_json_end(j);
    }
    jst_json_end(j);
    jst_json_ku64(j, "stack_more", m->stack_more);
}

static void json_module(struct jst_json *j, const struct rv_module *m)
{
    const struct jst_call_ev *c = m->c;
    const char *api = c->call_name ? c->call_name : jst_call_name(c->call);
    const char *verdict = c->verdict ? jst_verdict_name(c->verdict) : NULL;
    jst_json_obj(j);
    /* stable keys */
    if (!verdict && jst_is_jit_event(m->p, c))
        verdict = "ptx_jit";
    jst_json_kstr(j, "verdict", verdict ? verdict : "none");
    json_str_or_null(j, "jit_from", c->jit_from);
    json_str_or_null(j, "sass_arch", c->sass_arch);
    /* A cache outcome this jitstall has no name for (a newer preload's) is
     * still a cache outcome: "unknown", never null (the key is a string). */
    const char *cache = c->cache                                    ? jst_cache_name(c->cache)
                        : c->in_flight && jst_is_jit_event(m->p, c) ? "unknown"
                                                                    : "none";
    jst_json_kstr(j, "cache", cache ? cache : "unknown");
    jst_json_ku64(j, "dur_ns", c->dur_ns);
    jst_json_key(j, "kernels");
    jst_json_arr(j);
    for (size_t i = 0; i < c->n_kernels; i++)
        jst_json_str(j, m->kernels ? m->kernels[i] : c->kernels[i]);
    jst_json_end(j);
    json_str_or_null(j, "source", jst_load_origin(c));
    jst_json_kstr(j, "call_site", m->call_site);
    json_stack(j, &m->chain);
    jst_json_kstr(j, "fix", m->fix);
    jst_json_kbool(j, "in_flight", c->in_flight);
    /* additional keys */
    jst_json_ku64(j, "pid", m->p->pid);
    jst_json_ku64(j, "seq", c->seq);
    jst_json_ku64(j, "tid", c->tid);
    jst_json_kstr(j, "call", api);
    jst_json_ki64(j, "result", c->result);
    jst_json_kstr(j, "result_name", jst_is_rtc_call(c->call) ? NULL : jst_curesult_name(c->result));
    jst_json_kbool(j, "culprit", m->culprit);
    jst_json_kbool(j, "jit", jst_is_jit_event(m->p, c));
    jst_json_ku64(j, "lost_ns", m->lost_ns);
    jst_json_ku64(j, "saves_ns", m->saves_ns);
    jst_json_ku64(j, "start_ns", c->start_ns);
    json_str_or_null(j, "reason", c->reason);
    if (c->cache == JST_C_MISS_NOT_STORED && c->cache_reason)
        jst_json_kstr(j, "cache_reason", jst_cache_reason_name(c->cache_reason));
    else
        jst_json_knull(j, "cache_reason");
    jst_json_ku64(j, "cache_new_bytes", c->cache_new_bytes);
    jst_json_ku64(j, "cache_new_entries", c->cache_new_entries);
    json_str_or_null(j, "path", c->path);
    json_str_or_null(j, "read_from", c->read_from);
    json_str_or_null(j, "rtc_program", c->rtc_made);
    json_str_or_null(j, "name", c->name);
    jst_json_kstr(j, "image_kind", c->image_kind ? jst_image_kind_name(c->image_kind) : NULL);
    jst_json_ku64(j, "image_size", c->image_size);
    jst_json_key(j, "image_hash"); /* the image's content hash, as text names it when unnamed */
    if (c->image_hash) {
        char h[24];
        snprintf(h, sizeof h, "0x%016" PRIx64, c->image_hash);
        jst_json_str(j, h);
    } else {
        jst_json_null(j);
    }
    jst_json_ku64(j, "ptx_size", c->ptx_size);
    jst_json_kopt_u64(j, "target_cc", c->target_cc != 0, c->target_cc);
    jst_json_kstrv(j, "kernels_mangled", c->kernels, c->n_kernels);
    jst_json_kstrv(j, "entries", c->entries, c->n_entries);
    jst_json_key(j, "cupti");
    if (c->cupti_compile_ns || c->cupti_cache_load_ns || c->cupti_cache_store_ns) {
        jst_json_obj(j);
        jst_json_ku64(j, "compile_ns", c->cupti_compile_ns);
        jst_json_ku64(j, "cache_load_ns", c->cupti_cache_load_ns);
        jst_json_ku64(j, "cache_store_ns", c->cupti_cache_store_ns);
        jst_json_end(j);
    } else {
        jst_json_null(j);
    }
    jst_json_end(j);
}

static void json_devices(struct jst_json *j, const struct jst_process *p)
{
    jst_json_key(j, "devices");
    jst_json_arr(j);
    for (size_t i = 0; i < p->n_devices; i++) {
        const struct jst_device *d = &p->devices[i];
        jst_json_obj(j);
        jst_json_ku64(j, "ordinal", d->ordinal);
        jst_json_kstr(j, "name", d->name);
        jst_json_ku64(j, "cc", d->cc_major * 10 + d->cc_minor);
        jst_json_ku64(j, "driver_version", d->driver_version);
        jst_json_end(j);
    }
    jst_json_end(j);
}

/* Where the time to first kernel went (docs/report-json.md). */
static void json_ttfk_breakdown(struct jst_json *j, const struct jst_process *p)
{
    jst_json_key(j, "ttfk_breakdown");
    jst_json_obj(j);
    jst_json_ku64(j, "jit_ns", p->ttfk_jit_ns);
    jst_json_ku64(j, "jit_compile_ns", p->ttfk_jit_compile_ns);
    jst_json_ku64(j, "jit_cache_load_ns", p->ttfk_jit_cache_load_ns);
    jst_json_ku64(j, "init_ns", p->init_ns);
    jst_json_ku64(j, "ctx_ns", p->ctx_ns);
    jst_json_ku64(j, "sass_load_ns", p->sass_load_ns);
    jst_json_ku64(j, "pre_driver_ns", p->pre_driver_ns);
    jst_json_ku64(j, "other_ns", p->other_ns);
    jst_json_ku64(j, "rtc_ns", p->rtc_ns);
    jst_json_ku64(j, "jit_work_ns", p->ttfk_jit_work_ns);
    jst_json_ku64(j, "jit_overlap_loads", p->ttfk_jit_overlap);
    jst_json_end(j);
}

/* Every cache directory of the run (the text report shows the first few):
 * its start state from the first process that used it, its end state from
 * the last. */
static void json_caches(struct jst_json *j, const struct rv_report *r)
{
    jst_json_key(j, "caches");
    jst_json_arr(j);
    for (size_t i = 0; i < r->n_caches; i++) {
        const struct rv_cache *c = &r->caches[i];
        const struct jst_cache_state *s = &c->first->cache_start, *e = &c->last->cache_end;
        jst_json_obj(j);
        jst_json_kstr(j, "path", c->path);
        jst_json_kbool(j, "from_env", (s->present && s->from_env) || (e->present && e->from_env));
        jst_json_ku64(j, "processes", c->n_procs);
        json_cache_state(j, "start", s);
        json_cache_state(j, "end", e);
        jst_json_end(j);
    }
    jst_json_end(j);
}

/* The JIT cache the process used, at its start and at its exit. */
static void json_cache(struct jst_json *j, const struct jst_process *p)
{
    jst_json_key(j, "cache");
    jst_json_obj(j);
    const char *cp = p->cache_start.present ? p->cache_start.path : p->cache_end.path;
    jst_json_kstr(j, "path", cp);
    jst_json_kbool(j, "from_env",
                   (p->cache_start.present && p->cache_start.from_env) ||
                       (p->cache_end.present && p->cache_end.from_env));
    json_cache_state(j, "start", &p->cache_start);
    json_cache_state(j, "end", &p->cache_end);
    jst_json_end(j);
}

static void json_process(struct jst_json *j, const struct rv_report *r, const struct rv_proc *rp)
{
    const struct jst_process *p = rp->p;
    char arch[16];
    jst_json_obj(j);
    /* stable keys */
    jst_json_ku64(j, "pid", p->pid);
    jst_json_kstr(j, "exe", p->exe);
    jst_json_kopt_u64(j, "ttfk_ns", p->first_launch_ns || p->ttfk_in_flight, p->ttfk_ns);
    jst_json_kbool(j, "ttfk_in_flight", p->ttfk_in_flight);
    jst_json_ku64(j, "jit_ns", p->jit_ns);
    jst_json_ku64(j, "jit_compile_ns", p->jit_compile_ns);
    jst_json_ku64(j, "jit_cache_load_ns", p->jit_cache_load_ns);
    /* jitstall's own time; null: not in the trace */
    jst_json_kopt_u64(j, "self_ns", p->self_ns != 0, p->self_ns);
    jst_json_key(j, "modules");
    jst_json_arr(j);
    for (size_t i = 0; i < rp->n_mods; i++)
        json_module(j, &r->mods[r->proc_mods[rp->mods_at + i]]);
    jst_json_end(j);
    /* additional keys */
    jst_json_ku64(j, "ppid", p->ppid);
    jst_json_kstrv(j, "argv", p->argv, p->argc);
    jst_json_kstr(j, "host", p->host);
    jst_json_kstr(j, "trace", p->trace_path);
    jst_json_ku64(j, "format_version", p->format_version);
    jst_json_kbool(j, "complete", !p->truncated && !p->damage);
    jst_json_kbool(j, "truncated", p->truncated);
    jst_json_kopt_u64(j, "ended_by_parent", p->ended_by != 0, p->ended_by);
    jst_json_kstr(j, "trace_stop",
                  p->truncated && jst_trace_stop_words(p) ? jst_trace_stop_name(p->trace_stop)
                                                          : NULL);
    jst_json_kstr(j, "damage", p->damage);
    jst_json_kstrv(j, "missing", rp->missing, rp->n_missing);
    jst_json_kstr(j, "gpu_arch", rv_gpu_arch(p, arch, sizeof(arch)));
    json_devices(j, p);
    jst_json_kopt_u64(j, "first_launch_ns", p->first_launch_ns != 0, p->first_launch_ns);
    jst_json_kopt_u64(j, "projected_ttfk_ns", p->first_launch_ns != 0, rp->projected_ttfk_ns);
    jst_json_kopt_u64(j, "projected_first_call_ns", jst_slowest_first_call(p) != NULL,
                      jst_fixes_projected_first_call(p));
    json_ttfk_breakdown(j, p);
    jst_json_ku64(j, "jit_loads", rp->n_jit_loads);
    json_cache(j, p);
    jst_json_kopt_i64(j, "exit_status", p->has_end, p->exit_status);
    rv_queries_json(j, r, p);
    rv_compiles_json(j, p);
    jst_json_kstrv(j, "notes", p->notes, p->n_notes);
    jst_json_end(j);
}

/* "startup": the start-up budget, when report shows it (analyzer/budget.h). */
static int rv_startup_json(struct jst_json *j, const struct rv_report *r)
{
    double b = r->has_budget ? r->budget_s : -1;
    struct jst_startup s;
    if (!jst_startup_shown(r, r->k8s, b))
        return 0;
    if (jst_startup_compute(r, b, &s) < 0)
        return -1;
    jst_startup_json(j, &s);
    return 0;
}

static const char *fix_kind_name(unsigned k)
{
    switch (k) {
    case JST_FIX_GENCODE:
        return "gencode";
    case JST_FIX_UNFORCE_JIT:
        return "unforce_jit";
    case JST_FIX_CACHE_VOLUME:
        return "cache_volume";
    case JST_FIX_CACHE_ENABLE:
        return "cache_enable";
    case JST_FIX_CACHE_WRITABLE:
        return "cache_writable";
    case JST_FIX_CACHE_MAXSIZE:
        return "cache_maxsize";
    case JST_FIX_CACHE_DIR:
        return "cache_dir";
    case JST_FIX_ALLOW_JIT:
        return "failed_load";
    case JST_FIX_RTC_CACHE:
        return "rtc_cache";
    case JST_FIX_FATBIN_FILE:
        return "fatbin_file";
    case JST_FIX_PTX_FILE:
        return "ptx_file";
    case JST_FIX_PTX_DATA:
        return "ptx_data";
    case JST_FIX_NVRTC_PTX:
        return "nvrtc_ptx";
    case JST_FIX_THIRD_PARTY:
        return "third_party";
    case JST_FIX_RACE:
        return "race";
    case JST_FIX_CACHE_REWARM:
        return "cache_rewarm";
    case JST_FIX_PTX_TOO_NEW:
        return "ptx_too_new";
    case JST_FIX_WARMUP:
        return "warmup";
    case JST_FIX_GRAPH_CAPTURE:
        return "graph_capture";
    default:
        return jst_fix_fw_kind_name(k) ? jst_fix_fw_kind_name(k) : "other";
    }
}

/* races[]: one per image compiled at once by several processes. */
static void json_races(struct jst_json *j, const struct rv_report *r)
{
    char hash[24];
    jst_json_key(j, "races");
    jst_json_arr(j);
    for (size_t i = 0; i < r->races.n; i++) {
        const struct jst_race *x = &r->races.v[i];
        snprintf(hash, sizeof(hash), "%016" PRIx64, x->image_hash);
        jst_json_obj(j);
        jst_json_kstr(j, "image_hash", hash);
        jst_json_kstr(j, "source", x->origin);
        jst_json_kstr(j, "cache_path", x->cache_path);
        jst_json_ku64(j, "compiles", x->compiles);
        jst_json_ku64(j, "processes", x->processes);
        jst_json_key(j, "pids");
        jst_json_arr(j);
        for (size_t k = 0; k < x->processes && k < 8; k++)
            jst_json_u64(j, x->pids[k]);
        jst_json_end(j);
        jst_json_ku64(j, "jit_ns", x->jit_ns);
        jst_json_ku64(j, "saves_ns", x->saves_ns);
        jst_json_kstr(j, "fix", x->text);
        jst_json_end(j);
    }
    jst_json_end(j);
}

int rv_write_json(const struct rv_report *r, FILE *f)
{
    struct jst_json j;
    jst_json_init(&j, f, 1);
    jst_json_obj(&j);
    jst_json_key(&j, "processes");
    jst_json_arr(&j);
    for (size_t i = 0; i < r->n_procs; i++)
        json_process(&j, r, &r->procs[i]);
    jst_json_end(&j);
    jst_json_key(&j, "fixes");
    jst_json_arr(&j);
    for (size_t i = 0; i < r->fixes.n; i++) {
        const struct jst_fix *x = &r->fixes.v[i];
        jst_json_obj(&j);
        jst_json_kstr(&j, "text", x->text);
        jst_json_ku64(&j, "saves_ns", x->saves_ns);
        jst_json_kstr(&j, "kind", fix_kind_name(x->kind));
        jst_json_kstr(&j, "target", x->target);
        jst_json_ku64(&j, "loads", x->n_loads);
        jst_json_key(&j, "targets"); /* a fix for several cache directories: each */
        jst_json_arr(&j);
        for (size_t k = 0; k < x->n_targets; k++)
            jst_json_str(&j, x->targets[k]);
        if (!x->n_targets)
            jst_json_str(&j, x->target);
        jst_json_end(&j);
        if (x->kind == JST_FIX_CACHE_MAXSIZE)
            jst_json_ku64(&j, "cache_maxsize", x->new_maxsize);
        jst_json_end(&j);
    }
    jst_json_end(&j);
    json_races(&j, r);
    json_caches(&j, r);
    struct fl_fleet fl;
    if (fl_build(&fl, r) < 0)
        return -1;
    fl_write_json(&j, &fl, r);
    fl_free(&fl);
    if (rv_startup_json(&j, r) < 0)
        return -1;
    jst_json_ku64(&j, "schema_version", 1);
    jst_json_kbool(&j, "partial", r->partial);
    jst_json_key(&j, "totals");
    jst_json_obj(&j);
    jst_json_ku64(&j, "processes", r->n_procs);
    jst_json_ku64(&j, "ttfk_max_ns", r->ttfk_max_ns);
    jst_json_ku64(&j, "projected_ttfk_max_ns", r->projected_ttfk_max_ns);
    jst_json_ku64(&j, "jit_ns", r->jit_ns);
    jst_json_ku64(&j, "jit_compile_ns", r->jit_compile_ns);
    jst_json_ku64(&j, "jit_cache_load_ns", r->jit_cache_load_ns);
    jst_json_end(&j);
    jst_json_key(&j, "unreadable");
    jst_json_arr(&j);
    for (size_t i = 0; i < r->n_errors; i++)
        jst_json_str(&j, r->errors[i].msg);
    jst_json_end(&j);
    jst_json_end(&j);
    return jst_json_finish(&j);
}
