/*
 * `jitstall export --format otlp`: the traces as OpenTelemetry traces in the
 * OTLP/JSON encoding (an ExportTraceServiceRequest), which an OpenTelemetry
 * Collector's file receiver or any OTLP/HTTP client can ship to Jaeger, Tempo
 * or another backend. One trace per process: a root span for the process's
 * traced life, and a child span per driver call that matters (init, context,
 * loads, link steps, runtime compiles, first launches). Resource attributes
 * follow OpenTelemetry's semantic conventions (service.*, process.*, host.*);
 * jitstall's own are under "jitstall.". docs/fleet.md lists them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "late.h"
#include "curesult.h"
#include "check_util.h"
#include "export_fleet.h"
#include "fixes.h"
#include "image.h"
#include "jsonw.h"
#include "report_compiles.h"
#include "samplefn.h"
#include "symbolize.h"
#include "trace.h"

#define SPAN_KIND_INTERNAL 1
#define STATUS_ERROR 2

/* Monotonic ns to Unix ns, through the trace's anchor pair. */
static uint64_t unix_ns(const struct jst_process *p, uint64_t mono)
{
    if (!p->realtime_ns || !p->mono_ns)
        return mono;
    return mono >= p->mono_ns ? p->realtime_ns + (mono - p->mono_ns)
                              : p->realtime_ns - (p->mono_ns - mono);
}

/* OTLP/JSON carries 64-bit integers as decimal strings. */
static void kns(struct jst_json *j, const char *key, uint64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%" PRIu64, v);
    jst_json_kstr(j, key, b);
}

static void hex_id(char *out, const uint64_t *w, size_t words)
{
    for (size_t i = 0; i < words; i++)
        sprintf(out + 16 * i, "%016" PRIx64, w[i]);
}

/* Attributes: {"key": K, "value": {"stringValue": V}} and friends. */
/* {"key": k, "value": {...: v}}: opens the value object; attr_end closes. */
static void attr_begin(struct jst_json *j, const char *k)
{
    jst_json_obj(j);
    jst_json_kstr(j, "key", k);
    jst_json_key(j, "value");
    jst_json_obj(j);
}

static void attr_end(struct jst_json *j)
{
    jst_json_end(j);
    jst_json_end(j);
}

static void attr_str(struct jst_json *j, const char *k, const char *v)
{
    if (!v)
        return;
    attr_begin(j, k);
    jst_json_kstr(j, "stringValue", v);
    attr_end(j);
}

static void attr_int(struct jst_json *j, const char *k, uint64_t v)
{
    attr_begin(j, k);
    kns(j, "intValue", v);
    attr_end(j);
}

static void attr_bool(struct jst_json *j, const char *k, int v)
{
    attr_begin(j, k);
    jst_json_kbool(j, "boolValue", v);
    attr_end(j);
}

static void attr_strs(struct jst_json *j, const char *k, char *const *v, size_t n, int demangle)
{
    if (!n)
        return;
    attr_begin(j, k);
    jst_json_key(j, "arrayValue");
    jst_json_obj(j);
    jst_json_key(j, "values");
    jst_json_arr(j);
    for (size_t i = 0; i < n; i++) {
        char buf[1024];
        jst_json_obj(j);
        jst_json_kstr(j, "stringValue", demangle ? jst_demangle(v[i], buf, sizeof buf) : v[i]);
        jst_json_end(j);
    }
    jst_json_end(j); /* values */
    jst_json_end(j); /* arrayValue */
    attr_end(j);
}

static int span_worthy(unsigned call)
{
    switch (call) {
    case JST_CALL_cuModuleGetFunction:
    case JST_CALL_cuLibraryGetKernel:
    case JST_CALL_cuKernelGetFunction:
    case JST_CALL_cuModuleUnload:
    case JST_CALL_cuLibraryUnload:
        return 0; /* lookups and unloads cost nothing worth a span */
    default:
        return call > 0 && call < JST_CALL_MAX_;
    }
}

/* OTEL_RESOURCE_ATTRIBUTES: "k1=v1,k2=v2", values percent-encoded, as every
 * OpenTelemetry SDK reads it. Parsed into buf; returns how many (at most
 * max); malformed items are skipped. */
#define MAX_ENV_ATTRS 64
static size_t env_attrs(char *buf, size_t n, const char **k, const char **v, size_t max)
{
    const char *env = getenv("OTEL_RESOURCE_ATTRIBUTES");
    size_t m = 0;
    if (!env || !*env)
        return 0;
    snprintf(buf, n, "%s", env);
    char *save = NULL;
    for (char *it = strtok_r(buf, ",", &save); it && m < max; it = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(it, '=');
        if (!eq)
            continue;
        *eq = 0;
        char *key = it, *val = eq + 1;
        while (*key == ' ')
            key++;
        for (char *e = key + strlen(key); e > key && e[-1] == ' ';)
            *--e = 0;
        while (*val == ' ')
            val++;
        for (char *e = val + strlen(val); e > val && e[-1] == ' ';)
            *--e = 0;
        char *w = val;
        for (char *r = val; *r; r++) { /* %XX */
            if (r[0] == '%' && r[1] && r[2] && strchr("0123456789abcdefABCDEF", r[1]) &&
                strchr("0123456789abcdefABCDEF", r[2])) {
                char h[3] = {r[1], r[2], 0};
                *w++ = (char)strtol(h, NULL, 16);
                r += 2;
            } else {
                *w++ = *r;
            }
        }
        *w = 0;
        if (*key) {
            k[m] = key;
            v[m++] = val;
        }
    }
    return m;
}

static int in_env(const char *key, const char *const *k, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(k[i], key))
            return 1;
    return 0;
}

/* The process's resource. OTEL_SERVICE_NAME names the service, else
 * OTEL_RESOURCE_ATTRIBUTES' service.name, else the JITSTALL_LABELS service,
 * else the executable; the other OTEL_RESOURCE_ATTRIBUTES are added and win
 * over jitstall's attributes of the same key. */
static void resource(struct jst_json *j, const struct jst_process *p)
{
    struct jst_label lab[JST_MAX_LABELS];
    size_t nl = jst_export_labels(p, lab);
    const char *service = jst_exe_base(p), *version = NULL;
    for (size_t i = 0; i < nl; i++) {
        if (!strcmp(lab[i].name, "service"))
            service = lab[i].value;
        else if (!strcmp(lab[i].name, "version"))
            version = lab[i].value;
    }
    static char ebuf[8192];
    const char *ek[MAX_ENV_ATTRS], *ev[MAX_ENV_ATTRS];
    size_t ne = env_attrs(ebuf, sizeof ebuf, ek, ev, MAX_ENV_ATTRS);
    for (size_t i = 0; i < ne; i++)
        if (!strcmp(ek[i], "service.name"))
            service = ev[i];
    const char *sn = getenv("OTEL_SERVICE_NAME");
    if (sn && *sn)
        service = sn;
    jst_json_key(j, "resource");
    jst_json_obj(j);
    jst_json_key(j, "attributes");
    jst_json_arr(j);
    attr_str(j, "service.name", service);
    for (size_t i = 0; i < ne; i++)
        if (strcmp(ek[i], "service.name"))
            attr_str(j, ek[i], ev[i]);
#define ATTR_STR(key, val)                                                                         \
    do {                                                                                           \
        if (!in_env(key, ek, ne))                                                                  \
            attr_str(j, key, val);                                                                 \
    } while (0)
    ATTR_STR("service.version", version);
    ATTR_STR("host.name", p->host);
    if (!in_env("process.pid", ek, ne))
        attr_int(j, "process.pid", p->pid);
    if (p->ppid && !in_env("process.parent_pid", ek, ne))
        attr_int(j, "process.parent_pid", p->ppid);
    ATTR_STR("process.executable.name", jst_exe_base(p));
    ATTR_STR("process.executable.path", p->exe);
    if (!in_env("process.command_args", ek, ne))
        attr_strs(j, "process.command_args", p->argv, p->argc, 0);
    ATTR_STR("telemetry.sdk.name", "jitstall");
    ATTR_STR("telemetry.sdk.version", JITSTALL_VERSION);
    if (p->n_devices) {
        char b[64];
        snprintf(b, sizeof b, "sm_%u%u", p->devices[0].cc_major, p->devices[0].cc_minor);
        ATTR_STR("jitstall.gpu_arch", b);
        ATTR_STR("jitstall.gpu_name", p->devices[0].name);
        snprintf(b, sizeof b, "%" PRIu64 ".%" PRIu64, p->devices[0].driver_version / 1000,
                 p->devices[0].driver_version % 1000 / 10);
        ATTR_STR("jitstall.driver_version", b);
    }
    for (size_t i = 0; i < nl; i++)
        if (strcmp(lab[i].name, "service") && strcmp(lab[i].name, "version")) {
            char key[JST_LABEL_NAME_MAX + 16];
            snprintf(key, sizeof key, "jitstall.label.%.63s", lab[i].name);
            ATTR_STR(key, lab[i].value);
        }
#undef ATTR_STR
    jst_json_end(j);
    jst_json_end(j);
}

/* The attributes of one call's span: what it did and, for a load, the
 * verdict, cache outcome, kernels, call site and fix. */
static void call_attrs(struct jst_json *j, const struct jst_process *p, const struct jst_call_ev *c,
                       struct jst_symbolizer *sym)
{
    char buf[2048];
    attr_str(j, "jitstall.call", c->call_name ? c->call_name : jst_call_name(c->call));
    attr_str(j, "jitstall.route", jst_route_name(c->route));
    attr_int(j, "thread.id", c->tid);
    attr_int(j, "jitstall.result", (uint64_t)c->result);
    if (c->verdict) {
        attr_str(j, "jitstall.verdict", jst_verdict_name(c->verdict));
        attr_str(j, "jitstall.jit_from", c->jit_from);
        attr_str(j, "jitstall.sass_arch", c->sass_arch);
        attr_str(j, "jitstall.reason", c->reason);
        attr_str(j, "jitstall.source", c->source ? c->source : c->path);
        snprintf(buf, sizeof buf, "0x%016" PRIx64, c->image_hash);
        attr_str(j, "jitstall.image_hash", buf);
        attr_strs(j, "jitstall.kernels", c->kernels, c->n_kernels, 1);
        if (jst_is_jit_event(p, c)) {
            attr_str(j, "jitstall.cache", jst_cache_name(c->cache));
            if (c->cache_reason)
                attr_str(j, "jitstall.cache_reason", jst_cache_reason_name(c->cache_reason));
        }
        if (jst_fix_for_load(p, c, NULL, buf, sizeof buf) && buf[0])
            attr_str(j, "jitstall.fix", buf);
    } else if (c->name) {
        attr_str(j, "jitstall.kernel", c->name);
    }
    struct jst_frame fr;
    if (jst_call_site_frame(sym, c, &fr) == 0) {
        attr_str(j, "code.function.name", fr.func[0] ? fr.func : NULL);
        attr_str(j, "code.file.path", fr.file[0] ? fr.file : NULL);
        if (fr.line)
            attr_int(j, "code.line.number", fr.line);
        attr_str(j, "jitstall.call_site", jst_frame_str(&fr, buf, sizeof buf));
    }
}

static void span_head(struct jst_json *j, const char *trace, uint64_t id, uint64_t parent,
                      const char *name, uint64_t start, uint64_t end)
{
    char sid[17], pid[17];
    hex_id(sid, &id, 1);
    jst_json_obj(j);
    jst_json_kstr(j, "traceId", trace);
    jst_json_kstr(j, "spanId", sid);
    if (parent) {
        hex_id(pid, &parent, 1);
        jst_json_kstr(j, "parentSpanId", pid);
    }
    jst_json_kstr(j, "name", name);
    jst_json_ku64(j, "kind", SPAN_KIND_INTERNAL);
    kns(j, "startTimeUnixNano", start);
    kns(j, "endTimeUnixNano", end > start ? end : start);
}

/* Whether call c is a late compile (started after the process said it was
 * ready): the compile model's row of c says (compiles are in start order). */
static int call_is_late(const struct jst_process *p, const struct jst_call_ev *c)
{
    size_t lo = 0, hi = p->n_compiles;
    if (!p->ready.present)
        return 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->compiles[mid].start_ns < c->start_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < p->n_compiles && p->compiles[lo].start_ns == c->start_ns; lo++)
        if (p->compiles[lo].call == c)
            return p->compiles[lo].late;
    return 0;
}

/* One span for call c, a child of the process's root span. */
static void call_span(struct jst_json *j, const struct jst_process *p, const struct jst_call_ev *c,
                      const char *trace, uint64_t root, struct jst_symbolizer *sym)
{
    char name[300];
    const char *cn = c->call_name ? c->call_name : jst_call_name(c->call);
    if (c->call == JST_CALL_cuLaunchKernel || c->call == JST_CALL_cuLaunchKernelEx)
        snprintf(name, sizeof name, "first launch %s", c->name ? c->name : "?");
    else
        snprintf(name, sizeof name, "%s", cn ? cn : "?");
    uint64_t sid = jst_hash64(&c->seq, sizeof c->seq) ^ root;
    span_head(j, trace, sid ? sid : 2, root, name, unix_ns(p, c->start_ns),
              unix_ns(p, c->start_ns + c->dur_ns));
    jst_json_key(j, "attributes");
    jst_json_arr(j);
    call_attrs(j, p, c, sym);
    if (call_is_late(p, c))
        attr_bool(j, "jitstall.late", 1);
    jst_json_end(j);
    if (c->result) {
        char msg[160], rs[96];
        if (jst_is_rtc_call(c->call))
            snprintf(rs, sizeof rs, "%" PRId64, c->result);
        else
            jst_curesult_str(rs, sizeof rs, c->result);
        snprintf(msg, sizeof msg, "%s returned %s", cn ? cn : "call", rs);
        jst_json_key(j, "status");
        jst_json_obj(j);
        jst_json_ku64(j, "code", STATUS_ERROR);
        jst_json_kstr(j, "message", msg);
        jst_json_end(j);
    }
    jst_json_end(j);
}

/* Compiles that are no call (compiler subprocesses, framework compile
 * ranges) and first calls: one span each, children of the root. */
static void compile_spans(struct jst_json *j, const struct jst_process *p, const char *trace,
                          uint64_t root)
{
    char name[1600];
    struct jst_fc_index fx;
    jst_fc_index_init(&fx, p);
    for (size_t i = 0; i < p->n_compiles; i++) {
        const struct jst_compile *c = &p->compiles[i];
        if (c->call)
            continue;
        uint64_t key[3] = {c->start_ns, c->tid, c->compiler};
        uint64_t sid = jst_hash64(key, sizeof key) ^ root;
        snprintf(name, sizeof name, "compile %s", jst_compiler_name(c->compiler));
        span_head(j, trace, sid ? sid : 3, root, name, unix_ns(p, c->start_ns),
                  unix_ns(p, c->start_ns + c->dur_ns));
        jst_json_key(j, "attributes");
        jst_json_arr(j);
        attr_str(j, "jitstall.compiler", jst_compiler_name(c->compiler));
        if (c->framework)
            attr_str(j, "jitstall.framework", jst_framework_name(c->framework));
        if (c->target)
            attr_str(j, "jitstall.target", c->target);
        if (c->stage)
            attr_str(j, "jitstall.stage", c->stage);
        if (c->cache)
            attr_str(j, "jitstall.cache", c->cache);
        if (c->what)
            attr_str(j, "jitstall.what", c->what);
        if (c->kernel)
            attr_str(j, "jitstall.kernel", c->kernel);
        const struct jst_first_call *fc = jst_fc_index_of(&fx, c);
        if (fc) { /* the first call it was for */
            char nm[1024];
            attr_str(j, "jitstall.first_call", rv_first_call_name(fc, nm, sizeof nm));
        }
        if (c->pid)
            attr_int(j, "jitstall.child_pid", c->pid);
        attr_int(j, "jitstall.thread_id", c->tid);
        if (c->late)
            attr_bool(j, "jitstall.late", 1);
        jst_json_end(j);
        jst_json_end(j);
    }
    jst_fc_index_free(&fx);
    for (size_t i = 0; i < p->n_first_calls; i++) {
        const struct jst_first_call *f = &p->first_calls[i];
        uint64_t key[3] = {f->start_ns, f->tid, 0xf1c5};
        uint64_t sid = jst_hash64(key, sizeof key) ^ root;
        char nm[1536];
        snprintf(name, sizeof name, "first call %s", jst_first_call_title(f, nm, sizeof nm));
        span_head(j, trace, sid ? sid : 4, root, name, unix_ns(p, f->start_ns),
                  unix_ns(p, f->start_ns + f->dur_ns));
        jst_json_key(j, "attributes");
        jst_json_arr(j);
        if (f->function)
            attr_str(j, "jitstall.function", f->function);
        if (f->call_site)
            attr_str(j, "jitstall.call_site", f->call_site);
        if (f->kernel)
            attr_str(j, "jitstall.kernel", f->kernel);
        if (f->top_framework)
            attr_str(j, "jitstall.framework", jst_framework_name(f->top_framework));
        if (f->cache)
            attr_str(j, "jitstall.cache", f->cache);
        /* Its Python time by phase: sampled shares, no intervals of their
         * own, so attributes beside the blame table, not child spans. */
        for (size_t k = 0; k < f->n_phases; k++) {
            char an[64];
            snprintf(an, sizeof an, "jitstall.phase.%s_ns", jst_phase_name(f->phases[k].phase));
            attr_int(j, an, f->phases[k].dur_ns);
        }
        for (unsigned k = 0; k < JST_CAUSE_MAX_; k++) {
            char an[64];
            if (!f->blame[k])
                continue;
            snprintf(an, sizeof an, "jitstall.blame.%s_ns", jst_cause_name(k));
            attr_int(j, an, f->blame[k]);
        }
        jst_json_end(j);
        jst_json_end(j);
    }
}

static void export_process(struct jst_json *j, const struct jst_process *p)
{
    /* Ids: a hash of who and when, so the same trace always gives the same
     * ids, and two processes never share one. */
    char who[512];
    snprintf(who, sizeof who, "%s|%" PRIu64 "|%" PRIu64 "|%s", p->host ? p->host : "", p->pid,
             p->realtime_ns, p->exe ? p->exe : "");
    uint64_t tid[2];
    tid[0] = jst_hash64(who, strlen(who));
    strncat(who, "|trace", sizeof who - strlen(who) - 1);
    tid[1] = jst_hash64(who, strlen(who));
    char trace[33];
    hex_id(trace, tid, 2);
    uint64_t root = tid[0] ^ 0x9e3779b97f4a7c15ull;
    if (!root)
        root = 1;
    uint64_t start = p->proc_start_ns ? p->proc_start_ns : p->mono_ns;
    uint64_t end = p->end_ns > start ? p->end_ns : start;

    jst_json_obj(j);
    resource(j, p);
    jst_json_key(j, "scopeSpans");
    jst_json_arr(j);
    jst_json_obj(j);
    jst_json_key(j, "scope");
    jst_json_obj(j);
    jst_json_kstr(j, "name", "jitstall");
    jst_json_kstr(j, "version", JITSTALL_VERSION);
    jst_json_end(j);
    jst_json_key(j, "spans");
    jst_json_arr(j);

    char name[300];
    snprintf(name, sizeof name, "%s cold start", jst_exe_base(p));
    span_head(j, trace, root, 0, name, unix_ns(p, start), unix_ns(p, end));
    jst_json_key(j, "attributes");
    jst_json_arr(j);
    if (p->first_launch_ns)
        attr_int(j, "jitstall.ttfk_ns", p->ttfk_ns);
    attr_int(j, "jitstall.jit_ns", p->jit_ns);
    if (p->ready.present) {
        uint64_t late_ns = 0;
        attr_int(j, "jitstall.ttr_ns", p->ttr_ns);
        attr_int(j, "jitstall.late_compiles", jst_late_count(p, &late_ns));
        attr_int(j, "jitstall.late_compile_ns", late_ns);
    }
    attr_int(j, "jitstall.jit_compile_ns", p->jit_compile_ns);
    attr_int(j, "jitstall.jit_cache_load_ns", p->jit_cache_load_ns);
    attr_int(j, "jitstall.rtc_ns", p->rtc_ns);
    if (p->graphs.count || p->graphs.n_spans) {
        attr_int(j, "jitstall.graphs_captured", p->graphs.count);
        attr_int(j, "jitstall.graph_capture_ns", p->graphs.capture_ns);
        attr_int(j, "jitstall.graph_instantiate_ns", p->graphs.instantiate_ns);
    }
    if (p->self_ns)
        attr_int(j, "jitstall.self_ns", p->self_ns);
    char stopped[64];
    snprintf(stopped, sizeof stopped, "trace stopped: %s",
             jst_trace_stop_name(p->trace_stop) ? jst_trace_stop_name(p->trace_stop) : "?");
    attr_str(j, "jitstall.end",
             p->has_end                ? (p->end_reason ? p->end_reason : "exit")
             : jst_trace_stop_words(p) ? stopped
                                       : "killed, crashed or still running");
    jst_json_end(j);
    jst_json_end(j);

    struct jst_symbolizer *sym = jst_symbolizer_new(p);
    for (size_t k = 0; k < p->n_calls; k++) {
        const struct jst_call_ev *c = &p->calls[k];
        if (!span_worthy(c->call))
            continue;
        call_span(j, p, c, trace, root, sym);
    }
    if (sym)
        jst_symbolizer_free(sym);
    compile_spans(j, p, trace, root);
    jst_json_end(j); /* spans */
    jst_json_end(j); /* scopeSpans[0] */
    jst_json_end(j); /* scopeSpans */
    jst_json_end(j); /* resourceSpans[i] */
}

int jst_export_otlp(FILE *f, const struct jst_run *run)
{
    struct jst_json j;
    jst_json_init(&j, f, 0);
    jst_json_obj(&j);
    jst_json_key(&j, "resourceSpans");
    jst_json_arr(&j);
    for (size_t i = 0; i < run->n_procs; i++) {
        export_process(&j, &run->procs[i]);
        fputc('\n', f);
    }
    jst_json_end(&j);
    jst_json_end(&j);
    return jst_json_finish(&j);
}
