/*
 * Builds the view `jitstall report` prints (report_view.h): modules ranked by
 * time lost, their symbolized call sites and fixes, cache directories, what
 * each trace is missing, and totals. Also the formatting helpers the text,
 * Markdown and JSON writers share.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "image.h"
#include "report_view.h"
#include "symbolize.h"
#include "trace.h"

#define MAX_FRAMES 256 /* native frames and the Python frames merged in */

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

const char *rv_dur(uint64_t ns, char *buf, size_t n)
{
    if (ns < 1000)
        snprintf(buf, n, "%" PRIu64 " ns", ns);
    else if (ns < 1000000)
        snprintf(buf, n, "%.1f us", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, n, "%.1f ms", (double)ns / 1e6);
    else
        snprintf(buf, n, "%.2f s", (double)ns / 1e9);
    return buf;
}

const char *rv_bytes(uint64_t b, char *buf, size_t n)
{
    if (b < 1024)
        snprintf(buf, n, "%" PRIu64 " B", b);
    else if (b < (1ull << 20))
        snprintf(buf, n, "%.1f KiB", (double)b / 1024.0);
    else if (b < (1ull << 30))
        snprintf(buf, n, "%.1f MiB", (double)b / (1024.0 * 1024.0));
    else
        snprintf(buf, n, "%.1f GiB", (double)b / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

double rv_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

const char *rv_exe_name(const struct jst_process *p)
{
    if (p->exe && *p->exe)
        return p->exe;
    if (p->argc && p->argv[0] && *p->argv[0])
        return p->argv[0];
    return "?";
}

const char *rv_gpu_arch(const struct jst_process *p, char *buf, size_t n)
{
    if (!p->n_devices)
        return NULL;
    snprintf(buf, n, "sm_%u%u", p->devices[0].cc_major, p->devices[0].cc_minor);
    return buf;
}

/* Appends to buf (of size n, holding a string) without overflowing. */
static void cat(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t n, const char *fmt, ...)
{
    size_t len = strnlen(buf, n);
    if (len + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, n - len, fmt, ap);
    va_end(ap);
}

const char *rv_kernels_short(const struct rv_module *m, size_t max, char *buf, size_t n)
{
    size_t k = m->c->n_kernels;
    buf[0] = '\0';
    if (!k) {
        cat(buf, n, "-");
        return buf;
    }
    for (size_t i = 0; i < k && i < max; i++) {
        const char *name = m->kernels ? m->kernels[i] : m->c->kernels[i];
        if (strlen(name) > 80)
            cat(buf, n, "%s%.77s...", i ? ", " : "", name);
        else
            cat(buf, n, "%s%s", i ? ", " : "", name);
    }
    if (k > max)
        cat(buf, n, " and %zu more", k - max);
    return buf;
}

const char *rv_cache_str(const struct jst_call_ev *c, char *buf, size_t n)
{
    const char *name = c->cache ? jst_cache_name(c->cache) : NULL;
    buf[0] = '\0';
    if (!name) {
        cat(buf, n, "-");
        return buf;
    }
    cat(buf, n, "%s", name);
    if (c->cache == JST_C_MISS_NOT_STORED && c->cache_reason) {
        const char *r = jst_cache_reason_name(c->cache_reason);
        cat(buf, n, " (%s)", r ? r : "?");
    }
    if (c->cache_new_bytes || c->cache_new_entries) {
        char b[32];
        cat(buf, n, " (+%s, %" PRIu64 " %s)", rv_bytes(c->cache_new_bytes, b, sizeof(b)),
            c->cache_new_entries, c->cache_new_entries == 1 ? "entry" : "entries");
    }
    return buf;
}

const char *rv_verdict_str(const struct rv_module *m, char *buf, size_t n)
{
    const struct jst_call_ev *c = m->c;
    const char *v = c->verdict ? jst_verdict_name(c->verdict) : NULL;
    buf[0] = '\0';
    if (jst_is_rtc_call(c->call)) {
        cat(buf, n, "%s",
            c->call == JST_CALL_nvrtcCompileProgram ? "runtime compile (NVRTC)"
                                                    : "runtime link (nvJitLink)");
        if (c->result != 0)
            cat(buf, n, " (the call failed: result %" PRId64 ")", c->result);
        return buf;
    }
    if (!v)
        v = jst_is_jit_event(m->p, c) ? "ptx_jit (link)" : "-";
    cat(buf, n, "%s", v);
    if (c->reason && *c->reason)
        cat(buf, n, ": %s", c->reason);
    else if (c->verdict == JST_V_SASS && c->sass_arch)
        cat(buf, n, ": SASS %s", c->sass_arch);
    if (c->result != 0)
        cat(buf, n, " (the call failed: CUresult %" PRId64 ")", c->result);
    return buf;
}

const char *rv_origin(const struct rv_module *m, char *buf, size_t n)
{
    const char *o = jst_load_origin(m->c);
    const char *api = m->c->call_name ? m->c->call_name : jst_call_name(m->c->call);
    if (jst_is_rtc_call(m->c->call))
        snprintf(buf, n, "%s%s%s", api ? api : "?", m->c->name && *m->c->name ? " for " : "",
                 m->c->name ? m->c->name : "");
    else if (o)
        snprintf(buf, n, "%s", o);
    else if (m->c->name && *m->c->name)
        snprintf(buf, n, "%s (via %s)", m->c->name, api ? api : "?");
    else
        snprintf(buf, n, "(image in memory, via %s)", api ? api : "?");
    return buf;
}

const char *rv_cache_state_str(const struct jst_cache_state *s, char *buf, size_t n)
{
    char a[32], b[32];
    buf[0] = '\0';
    if (!s->present) {
        cat(buf, n, "not recorded");
        return buf;
    }
    if (s->exists)
        cat(buf, n, "exists, %s, %s in %" PRIu64 " %s", s->writable ? "writable" : "not writable",
            rv_bytes(s->size_bytes, a, sizeof(a)), s->entries,
            s->entries == 1 ? "entry" : "entries");
    else
        cat(buf, n, "does not exist (%s)", s->writable ? "can be created" : "cannot be created");
    cat(buf, n, "; max %s", rv_bytes(s->max_bytes, b, sizeof(b)));
    if (s->disabled)
        cat(buf, n, "; CUDA_CACHE_DISABLE=1");
    return buf;
}

static int is_module(const struct jst_process *p, const struct jst_call_ev *c)
{
    return c->verdict != JST_V_NONE || jst_is_jit_event(p, c) || jst_is_rtc_call(c->call);
}

static int is_culprit(const struct jst_process *p, const struct jst_call_ev *c)
{
    return jst_is_jit_event(p, c) || jst_is_rtc_call(c->call) ||
           c->verdict == JST_V_NO_COMPATIBLE || c->verdict == JST_V_JIT_DISABLED ||
           c->verdict == JST_V_DAMAGED;
}

static char *call_site(struct jst_symbolizer **sym, const struct jst_process *p,
                       const struct jst_call_ev *c, struct jst_frame *frames)
{
    char buf[1024];
    if (!c->stack_id)
        return NULL;
    if (!jst_model_stack(p, c->stack_id)) {
        snprintf(buf, sizeof(buf), "stack %" PRIu64 " is not in the trace", c->stack_id);
        return strdup(buf);
    }
    if (!*sym)
        *sym = jst_symbolizer_new(p);
    if (!*sym)
        return strdup("cannot symbolize (symbolizer unavailable)");
    size_t n = jst_symbolize_stack(*sym, c->stack_id, c->seq, frames, MAX_FRAMES);
    if (n == 0)
        return strdup("empty stack");
    int i = jst_call_site(frames, n);
    if (i < 0) {
        jst_frame_str(&frames[0], buf, sizeof(buf) - 48);
        strcat(buf, " (every frame is inside CUDA or jitstall)");
    } else {
        jst_frame_str(&frames[i], buf, sizeof(buf));
    }
    return strdup(buf);
}

static void add_missing(struct rv_proc *rp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void add_missing(struct rv_proc *rp, const char *fmt, ...)
{
    char *s = NULL;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    if (!s)
        return;
    char **nv = realloc(rp->missing, (rp->n_missing + 1) * sizeof(char *));
    if (!nv) {
        free(s);
        return;
    }
    rp->missing = nv;
    rp->missing[rp->n_missing++] = s;
}

/* One line per thing the trace lacks, so a partial report says what it
 * cannot show. */
static void find_missing(struct rv_proc *rp)
{
    const struct jst_process *p = rp->p;
    if (p->damage)
        add_missing(rp, "the trace is damaged (%s); events after that point are missing",
                    p->damage);
    else if (p->truncated)
        add_missing(rp, "the trace is truncated: it has no END record (the process was killed, "
                        "crashed or is still running); events not yet written are missing");
    if (!p->pid && !p->exe)
        add_missing(rp, "no process record: pid, program and start time are unknown");
    else if (!p->proc_start_ns)
        add_missing(rp, "process start time not recorded: time to first kernel counts from "
                        "when tracing started");
    if (!p->first_launch_ns)
        add_missing(rp, "no kernel launch recorded: there is no time to first kernel");
    if (!p->n_devices && p->n_calls)
        add_missing(rp, "no device record: the GPU architecture is unknown");
    if (!p->cache_start.present)
        add_missing(rp, "JIT cache state at start not recorded");
    if (!p->cache_end.present)
        add_missing(rp, "JIT cache state at exit not recorded");
}

static int cmp_mod(const void *a, const void *b)
{
    const struct rv_module *x = a, *y = b;
    if (x->culprit != y->culprit)
        return x->culprit ? -1 : 1;
    if (x->lost_ns != y->lost_ns)
        return x->lost_ns > y->lost_ns ? -1 : 1;
    if (x->saves_ns != y->saves_ns)
        return x->saves_ns > y->saves_ns ? -1 : 1;
    if (x->c->dur_ns != y->c->dur_ns)
        return x->c->dur_ns > y->c->dur_ns ? -1 : 1;
    if (x->p != y->p)
        return x->p < y->p ? -1 : 1; /* procs are one array, in run order */
    return x->c->seq < y->c->seq ? -1 : x->c->seq > y->c->seq;
}

static const struct jst_cache_state *cache_state(const struct jst_process *p)
{
    if (p->cache_start.present && p->cache_start.path)
        return &p->cache_start;
    if (p->cache_end.present && p->cache_end.path)
        return &p->cache_end;
    return NULL;
}

static int str_eq(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

static int same_group(const struct rv_module *a, const struct rv_module *b)
{
    const struct jst_call_ev *x = a->c, *y = b->c;
    return str_eq(jst_load_origin(x), jst_load_origin(y)) && str_eq(x->name, y->name) &&
           x->call == y->call && x->verdict == y->verdict && str_eq(x->reason, y->reason) &&
           str_eq(x->jit_from, y->jit_from) && x->cache == y->cache &&
           x->cache_reason == y->cache_reason && x->result == y->result &&
           x->n_kernels == y->n_kernels && str_eq(a->call_site, b->call_site) &&
           str_eq(a->fix, b->fix);
}

static int cmp_group(const void *a, const void *b)
{
    const struct rv_group *x = a, *y = b;
    if (x->lost_ns != y->lost_ns)
        return x->lost_ns > y->lost_ns ? -1 : 1;
    return x->m < y->m ? -1 : x->m > y->m; /* mods are ranked: keep their order */
}

/* Groups the culprits (mods is already ranked), then ranks the groups. */
static int build_groups(struct rv_report *r)
{
    r->groups = calloc(r->n_mods ? r->n_mods : 1, sizeof(*r->groups));
    if (!r->groups)
        return -1;
    for (size_t i = 0; i < r->n_mods; i++) {
        struct rv_module *m = &r->mods[i];
        if (!m->culprit)
            continue;
        size_t g;
        for (g = 0; g < r->n_groups; g++)
            if (same_group(r->groups[g].m, m))
                break;
        if (g == r->n_groups)
            r->groups[r->n_groups++] = (struct rv_group){m, 0, 0};
        r->groups[g].n++;
        r->groups[g].lost_ns = sat_add(r->groups[g].lost_ns, m->lost_ns);
    }
    if (r->n_groups)
        qsort(r->groups, r->n_groups, sizeof(*r->groups), cmp_group);
    for (size_t i = 0; i < r->n_mods; i++)
        for (size_t g = 0; r->mods[i].culprit && g < r->n_groups; g++)
            if (same_group(r->groups[g].m, &r->mods[i])) {
                r->mods[i].group = g;
                break;
            }
    return 0;
}

const char *rv_group_pids(const struct rv_report *r, size_t g, char *buf, size_t n)
{
    size_t shown = 0, more = 0;
    uint64_t last = UINT64_MAX;
    buf[0] = '\0';
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        int member = 0;
        for (size_t k = 0; k < r->n_mods && !member; k++)
            member = r->mods[k].culprit && r->mods[k].group == g && r->mods[k].p == p;
        if (!member || p->pid == last)
            continue;
        last = p->pid;
        if (shown < 6)
            cat(buf, n, "%s%" PRIu64, shown ? ", " : "", p->pid);
        else
            more++;
        shown++;
    }
    if (more)
        cat(buf, n, " and %zu more", more);
    if (shown > 1) {
        char tmp[512];
        snprintf(tmp, sizeof(tmp), "pids %s", buf);
        snprintf(buf, n, "%s", tmp);
    } else {
        char tmp[512];
        snprintf(tmp, sizeof(tmp), "pid %s", buf);
        snprintf(buf, n, "%s", tmp);
    }
    return buf;
}

static uint64_t wall_end(const struct jst_process *p)
{
    return p->realtime_ns + (p->end_ns > p->mono_ns ? p->end_ns - p->mono_ns : 0);
}

/* Processes share a cache entry when they used the same directory with the
 * same settings; its start state is the earliest process's, its end state the
 * latest's (by wall-clock time, comparable across hosts). */
static int build_caches(struct rv_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        const struct jst_cache_state *s = cache_state(p);
        if (!s)
            continue;
        size_t j;
        for (j = 0; j < r->n_caches; j++) {
            const struct jst_cache_state *o = cache_state(r->caches[j].first);
            if (!strcmp(o->path, s->path) && o->disabled == s->disabled &&
                o->max_bytes == s->max_bytes)
                break;
        }
        if (j == r->n_caches) {
            struct rv_cache *nv = realloc(r->caches, (r->n_caches + 1) * sizeof(*nv));
            if (!nv)
                return -1;
            r->caches = nv;
            r->caches[j] = (struct rv_cache){s->path, p, p, 0};
            r->n_caches++;
        }
        struct rv_cache *c = &r->caches[j];
        if (p->realtime_ns < c->first->realtime_ns)
            c->first = p;
        if (wall_end(p) >= wall_end(c->last))
            c->last = p;
        c->path = cache_state(c->first)->path;
        c->n_procs++;
    }
    return 0;
}

int rv_build(struct rv_report *r, const struct jst_run *run, char **errors, size_t n_errors)
{
    memset(r, 0, sizeof(*r));
    r->run = run;
    r->procs = calloc(run->n_procs ? run->n_procs : 1, sizeof(*r->procs));
    r->errors = calloc(n_errors ? n_errors : 1, sizeof(*r->errors));
    struct jst_frame *frames = calloc(MAX_FRAMES, sizeof(*frames));
    if (!r->procs || !r->errors || !frames)
        goto oom;
    for (size_t i = 0; i < n_errors; i++)
        if (!(r->errors[r->n_errors++].msg = strdup(errors[i])))
            goto oom;
    if (jst_fixes_compute(run, &r->fixes) < 0)
        goto oom;

    size_t n_mods = 0;
    for (size_t i = 0; i < run->n_procs; i++)
        for (size_t k = 0; k < run->procs[i].n_calls; k++)
            n_mods += is_module(&run->procs[i], &run->procs[i].calls[k]);
    r->mods = calloc(n_mods ? n_mods : 1, sizeof(*r->mods));
    if (!r->mods)
        goto oom;

    for (size_t i = 0; i < run->n_procs; i++) {
        const struct jst_process *p = &run->procs[i];
        struct rv_proc *rp = &r->procs[r->n_procs++];
        struct jst_symbolizer *sym = NULL;
        rp->p = p;
        rp->projected_ttfk_ns = jst_fixes_projected_ttfk(p);
        find_missing(rp);
        if (p->truncated || p->damage)
            r->partial = 1;
        for (size_t k = 0; k < p->n_calls; k++) {
            const struct jst_call_ev *c = &p->calls[k];
            if (!is_module(p, c))
                continue;
            struct rv_module *m = &r->mods[r->n_mods++];
            char fix[512];
            m->p = p;
            m->c = c;
            m->culprit = is_culprit(p, c);
            m->lost_ns = jst_is_jit_event(p, c) || jst_is_rtc_call(c->call) ? c->dur_ns : 0;
            m->saves_ns = jst_fix_load_saves(p, c);
            rp->n_jit_loads += jst_is_jit_event(p, c);
            jst_fix_for_load(p, c, NULL, fix, sizeof(fix));
            if (fix[0] && !(m->fix = strdup(fix)))
                goto oom_sym;
            m->call_site = call_site(&sym, p, c, frames);
            if (c->n_kernels) {
                m->kernels = calloc(c->n_kernels, sizeof(char *));
                if (!m->kernels)
                    goto oom_sym;
                for (size_t q = 0; q < c->n_kernels; q++) {
                    char d[1024];
                    jst_demangle(c->kernels[q], d, sizeof(d));
                    if (!(m->kernels[q] = strdup(d[0] ? d : c->kernels[q])))
                        goto oom_sym;
                }
            }
            continue;
        oom_sym:
            if (sym)
                jst_symbolizer_free(sym);
            goto oom;
        }
        if (sym)
            jst_symbolizer_free(sym);
        if (p->ttfk_ns > r->ttfk_max_ns)
            r->ttfk_max_ns = p->ttfk_ns;
        if (rp->projected_ttfk_ns > r->projected_ttfk_max_ns)
            r->projected_ttfk_max_ns = rp->projected_ttfk_ns;
        r->jit_ns = sat_add(r->jit_ns, p->jit_ns);
        r->jit_compile_ns = sat_add(r->jit_compile_ns, p->jit_compile_ns);
        r->jit_cache_load_ns = sat_add(r->jit_cache_load_ns, p->jit_cache_load_ns);
    }
    if (r->n_mods)
        qsort(r->mods, r->n_mods, sizeof(*r->mods), cmp_mod);
    if (build_caches(r) < 0 || build_groups(r) < 0)
        goto oom;
    free(frames);
    return 0;
oom:
    free(frames);
    rv_free(r);
    return -1;
}

void rv_free(struct rv_report *r)
{
    for (size_t i = 0; i < r->n_mods; i++) {
        free(r->mods[i].call_site);
        free(r->mods[i].fix);
        if (r->mods[i].kernels)
            for (size_t q = 0; q < r->mods[i].c->n_kernels; q++)
                free(r->mods[i].kernels[q]);
        free(r->mods[i].kernels);
    }
    free(r->mods);
    for (size_t i = 0; i < r->n_procs; i++) {
        for (size_t q = 0; q < r->procs[i].n_missing; q++)
            free(r->procs[i].missing[q]);
        free(r->procs[i].missing);
    }
    free(r->procs);
    for (size_t i = 0; i < r->n_errors; i++)
        free(r->errors[i].msg);
    free(r->errors);
    free(r->caches);
    free(r->groups);
    jst_fixes_free(&r->fixes);
    memset(r, 0, sizeof(*r));
}
