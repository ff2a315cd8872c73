/*
 * `jitstall export [--format chrome|prometheus|otlp] -o FILE TRACE|DIR...`.
 * chrome (here): the traces as Chrome Trace Event JSON for ui.perfetto.dev
 * and chrome://tracing. One track per thread; each hooked call is a complete
 * ("X") event with the JIT and cache detail in args; first kernel launches
 * are instant markers; CUPTI JIT records get a track of their own.
 * prometheus and otlp, for fleets: analyzer/export_prom.c, export_otlp.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "compiles.h"
#include "curesult.h"
#include "check_util.h"
#include "cli.h"
#include "export_fleet.h"
#include "fixes.h"
#include "hashidx.h"
#include "image.h"
#include "jsonw.h"
#include "otlp_push.h"
#include "outfile.h"
#include "report_compiles.h"
#include "samplefn.h"
#include "xalloc.h"
#include "trace.h"

static const char usage_text[] =
    "usage: jitstall export [--format chrome|perfetto|prometheus|otlp] [-o FILE]\n"
    "                       [--endpoint URL] TRACE|DIR...\n"
    "\n"
    "Write the traces in another tool's format:\n"
    "  chrome      a timeline for ui.perfetto.dev or chrome://tracing (Chrome\n"
    "              Trace Event JSON): a track per thread, one event per hooked\n"
    "              driver call with its verdict, JIT source, kernels and cache\n"
    "              outcome, and a marker at each function's first launch;\n"
    "              'perfetto' is another name for it\n"
    "  prometheus  cold-start JIT metrics as Prometheus text, for node_exporter's\n"
    "              textfile collector: one series set per program and labels\n"
    "  otlp        OpenTelemetry traces (OTLP/JSON): a trace per process, a span\n"
    "              per driver call that matters; sent to a collector when an\n"
    "              endpoint is set (--endpoint, OTEL_EXPORTER_OTLP_ENDPOINT or\n"
    "              OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)\n"
    "\n"
    "  -f, --format FORMAT  output format: chrome (the default), perfetto,\n"
    "                       prometheus, otlp\n"
    "  -o, --output FILE    write to FILE (default: standard output, unless the\n"
    "                       spans are sent to a collector)\n"
    "  --endpoint URL       POST the OTLP spans to URL/v1/traces over OTLP/HTTP\n"
    "                       (implies --format otlp)\n"
    "  -h, --help           show this help\n"
    "\n"
    "exit codes: 0 written (and sent), 2 usage error, unreadable input, or a\n"
    "collector that refused the spans or could not be reached\n";

/* The pseudo thread id of the CUPTI track: real thread ids are never 0. */
#define CUPTI_TID 0

static uint64_t anchor_of(const struct jst_process *p)
{
    if (p->proc_start_ns)
        return p->proc_start_ns;
    if (p->mono_ns)
        return p->mono_ns;
    return p->n_calls ? p->calls[0].start_ns : 0;
}

/* Nanoseconds from base (negative before it); written in microseconds, the
 * Trace Event format's unit, by jst_json_kusec. */
static int64_t rel_ns(uint64_t ns, uint64_t base)
{
    return ns >= base ? (int64_t)(ns - base) : -(int64_t)(base - ns);
}

static int is_launch(unsigned call)
{
    return call == JST_CALL_cuLaunchKernel || call == JST_CALL_cuLaunchKernelEx;
}

/* The functions a process has launched so far, so that only each one's first
 * launch gets a marker: an open-addressing set of launch keys (never 0). */
struct launched {
    uint64_t *keys;
    size_t cap, n;
};

/* A launch's function: its CUfunction handle, else a hash of its name. */
static uint64_t launch_key(const struct jst_call_ev *c)
{
    uint64_t h = 0xcbf29ce484222325ull;
    if (c->func)
        return c->func;
    for (const unsigned char *q = (const unsigned char *)(c->name ? c->name : ""); *q; q++) {
        h ^= *q;
        h *= 0x100000001b3ull;
    }
    return h | 1ull << 63;
}

/* Adds key; 1 when it was not there yet (or the set cannot grow), else 0. */
static int launched_add(struct launched *s, uint64_t key)
{
    if (!key)
        key = 1;
    if (2 * (s->n + 1) > s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        uint64_t *nk = calloc(nc, sizeof(*nk));
        if (!nk)
            return 1;
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->keys[i])
                continue;
            size_t h = (size_t)(s->keys[i] * 0x9e3779b97f4a7c15ull) & (nc - 1);
            while (nk[h])
                h = (h + 1) & (nc - 1);
            nk[h] = s->keys[i];
        }
        free(s->keys);
        s->keys = nk;
        s->cap = nc;
    }
    size_t h = (size_t)(key * 0x9e3779b97f4a7c15ull) & (s->cap - 1);
    while (s->keys[h]) {
        if (s->keys[h] == key)
            return 0;
        h = (h + 1) & (s->cap - 1);
    }
    s->keys[h] = key;
    s->n++;
    return 1;
}

static void meta(struct jst_json *j, const char *what, uint64_t pid, uint64_t tid, const char *name)
{
    jst_json_obj(j);
    jst_json_kstr(j, "name", what);
    jst_json_kstr(j, "ph", "M");
    jst_json_ku64(j, "pid", pid);
    jst_json_ku64(j, "tid", tid);
    jst_json_key(j, "args");
    jst_json_obj(j);
    jst_json_kstr(j, "name", name);
    jst_json_end(j);
    jst_json_end(j);
}

static void instant(struct jst_json *j, const char *name, const char *scope, uint64_t pid,
                    uint64_t tid, int64_t ts)
{
    jst_json_obj(j);
    jst_json_kstr(j, "name", name);
    jst_json_kstr(j, "cat", "marker");
    jst_json_kstr(j, "ph", "i");
    jst_json_kstr(j, "s", scope);
    jst_json_ku64(j, "pid", pid);
    jst_json_ku64(j, "tid", tid);
    jst_json_kusec(j, "ts", ts);
    jst_json_end(j);
}

/* A complete ("X") event up to its args; the caller adds them and ends it. */
static void complete_begin(struct jst_json *j, const char *name, const char *cat, uint64_t pid,
                           uint64_t tid, int64_t ts, int64_t dur)
{
    jst_json_obj(j);
    jst_json_kstr(j, "name", name);
    jst_json_kstr(j, "cat", cat);
    jst_json_kstr(j, "ph", "X");
    jst_json_ku64(j, "pid", pid);
    jst_json_ku64(j, "tid", tid);
    jst_json_kusec(j, "ts", ts);
    jst_json_kusec(j, "dur", dur);
}

/* Args that the trace may not have: written only when it has them (NULL or
 * 0 is "not recorded"), so the viewer shows no empty rows. */
static void opt_str(struct jst_json *j, const char *key, const char *s)
{
    if (s)
        jst_json_kstr(j, key, s);
}

static void opt_u64(struct jst_json *j, const char *key, uint64_t v)
{
    if (v)
        jst_json_ku64(j, key, v);
}

static void opt_hex(struct jst_json *j, const char *key, uint64_t v)
{
    char buf[32];
    if (!v)
        return;
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
    jst_json_kstr(j, key, buf);
}

static void opt_ms(struct jst_json *j, const char *key, uint64_t ns)
{
    if (ns)
        jst_json_kdouble(j, key, (double)ns / 1e6);
}

static void call_args(struct jst_json *j, const struct jst_process *p, const struct jst_call_ev *c)
{
    jst_json_key(j, "args");
    jst_json_obj(j);
    jst_json_ku64(j, "seq", c->seq);
    jst_json_ki64(j, "result", c->result);
    opt_str(j, "result_name", jst_is_rtc_call(c->call) ? NULL : jst_curesult_name(c->result));
    opt_str(j, "route", c->route ? jst_route_name(c->route) : NULL);
    opt_str(j, "name", c->name);
    opt_str(j, "path", c->path);
    opt_hex(j, "handle", c->handle);
    opt_hex(j, "func", c->func);
    if (c->verdict != JST_V_NONE || jst_is_jit_event(p, c)) {
        jst_json_kstr(j, "verdict", jst_verdict_name(c->verdict));
        jst_json_kbool(j, "jit", jst_is_jit_event(p, c));
        opt_str(j, "reason", c->reason);
        opt_str(j, "jit_from", c->jit_from);
        opt_str(j, "sass_arch", c->sass_arch);
        opt_str(j, "source", c->source);
        opt_str(j, "image_kind", jst_image_kind_name(c->image_kind));
        opt_hex(j, "image_hash", c->image_hash);
        opt_u64(j, "image_size", c->image_size);
        opt_u64(j, "ptx_size", c->ptx_size);
        jst_json_key(j, "kernels");
        jst_json_arr(j);
        for (size_t k = 0; k < c->n_kernels; k++) {
            char dem[1024];
            jst_json_str(j, jst_demangle(c->kernels[k], dem, sizeof dem));
        }
        jst_json_end(j);
        jst_json_kstr(j, "cache", jst_cache_name(c->cache) ? jst_cache_name(c->cache) : "?");
        opt_str(j, "cache_reason",
                c->cache == JST_C_MISS_NOT_STORED ? jst_cache_reason_name(c->cache_reason) : NULL);
        opt_u64(j, "cache_new_bytes", c->cache_new_bytes);
        opt_ms(j, "cupti_compile_ms", c->cupti_compile_ns);
        opt_ms(j, "cupti_cache_load_ms", c->cupti_cache_load_ns);
        opt_ms(j, "cupti_cache_store_ms", c->cupti_cache_store_ns);
    }
    jst_json_end(j);
}

/* One thread_name per distinct thread, in order of first appearance. */
static void export_threads(struct jst_json *j, const struct jst_process *p)
{
    char buf[1024];
    uint64_t pid = p->pid;
    uint64_t *tids = calloc(p->n_calls + 1, sizeof(*tids));
    size_t nt = 0;
    struct jst_hidx seen_tid = {0}; /* a scan of the threads per call was quadratic */
    for (size_t i = 0; tids && i < p->n_calls; i++) {
        uint64_t h = jst_hash_u64(JST_HASH_SEED, p->calls[i].tid);
        size_t cur = 0, p1;
        while ((p1 = jst_hidx_next(&seen_tid, h, &cur)) != 0 && tids[p1 - 1] != p->calls[i].tid)
            ;
        if (p1)
            continue;
        if (jst_hidx_add(&seen_tid, h, nt) < 0)
            break;
        tids[nt++] = p->calls[i].tid;
        if (p->calls[i].tid == pid)
            snprintf(buf, sizeof buf, "main thread %llu", (unsigned long long)pid);
        else
            snprintf(buf, sizeof buf, "thread %llu", (unsigned long long)p->calls[i].tid);
        meta(j, "thread_name", pid, p->calls[i].tid, buf);
    }
    free(tids);
    jst_hidx_free(&seen_tid);
}

/* Every call as a complete event, and markers for each function's first
 * launch and for the first kernel. */
static void export_calls(struct jst_json *j, const struct jst_process *p, uint64_t base)
{
    char buf[1024], a[64];
    uint64_t pid = p->pid;
    struct launched seen = {NULL, 0, 0};
    int first_kernel_marked = 0;
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct jst_call_ev *c = &p->calls[i];
        const char *name = c->call_name ? c->call_name : jst_call_name(c->call);
        int jit = jst_is_jit_event(p, c);
        const char *cat = jit                        ? "jit"
                          : c->verdict != JST_V_NONE ? "load"
                          : is_launch(c->call)       ? "launch"
                                                     : "driver";
        complete_begin(j, name ? name : "call", cat, pid, c->tid, rel_ns(c->start_ns, base),
                       (int64_t)c->dur_ns);
        call_args(j, p, c);
        jst_json_end(j);

        if (!is_launch(c->call))
            continue;
        char dem[512];
        const char *k = c->name ? jst_demangle(c->name, dem, sizeof dem) : "?";
        /* A marker for each function's first launch only, not every launch. */
        if (launched_add(&seen, launch_key(c))) {
            snprintf(buf, sizeof buf, "first launch: %s", k);
            instant(j, buf, "t", pid, c->tid, rel_ns(c->start_ns, base));
        }
        if (!first_kernel_marked && c->start_ns == p->first_launch_ns) {
            first_kernel_marked = 1;
            snprintf(buf, sizeof buf, "first kernel: %s (time to first kernel %s)", k,
                     jst_fmt_ms(p->ttfk_ns, a, sizeof a));
            instant(j, buf, "p", pid, c->tid, rel_ns(c->start_ns, base));
        }
    }
    free(seen.keys);
}

static void export_cupti(struct jst_json *j, const struct jst_process *p, uint64_t base)
{
    char buf[1024];
    uint64_t pid = p->pid;
    for (size_t i = 0; i < p->n_cupti; i++) {
        const struct jst_cupti_ev *e = &p->cupti[i];
        const char *op = jst_cupti_op_name(e->op);
        snprintf(buf, sizeof buf, "CUPTI JIT %s", op ? op : "activity");
        complete_begin(j, buf, "cupti", pid, CUPTI_TID, rel_ns(e->start_ns, base),
                       e->end_ns > e->start_ns ? (int64_t)(e->end_ns - e->start_ns) : 0);
        jst_json_key(j, "args");
        jst_json_obj(j);
        jst_json_kstr(j, "op", op ? op : "?");
        opt_u64(j, "load_seq", e->load_seq);
        opt_str(j, "cache_path", e->cache_path);
        opt_u64(j, "cache_size", e->cache_size);
        jst_json_end(j);
        jst_json_end(j);
    }
}

/* Compiles that are not driver or library calls (those are slices already):
 * compiler subprocesses and framework compile ranges; and each first call as
 * a slice over its window, with its blame table as args. */
static void export_compiles(struct jst_json *j, const struct jst_process *p, uint64_t base)
{
    char buf[1024];
    struct jst_fc_index fx;
    jst_fc_index_init(&fx, p);
    for (size_t i = 0; i < p->n_compiles; i++) {
        const struct jst_compile *c = &p->compiles[i];
        if (c->call)
            continue;
        /* a framework's row by its framework and stage: "triton lower: add_kernel" */
        if (c->compiler == JST_CMP_FRAMEWORK)
            snprintf(buf, sizeof buf, "%s %s%s%s",
                     jst_framework_name(c->framework) ? jst_framework_name(c->framework) : "framework",
                     c->stage ? c->stage : "compile", c->what ? ": " : "", c->what ? c->what : "");
        else
            snprintf(buf, sizeof buf, "%s%s%s", jst_compiler_name(c->compiler),
                     c->what ? ": " : "", c->what ? c->what : "");
        complete_begin(j, buf, "compile", p->pid, c->tid, rel_ns(c->start_ns, base),
                       (int64_t)c->dur_ns);
        jst_json_key(j, "args");
        jst_json_obj(j);
        jst_json_kstr(j, "compiler", jst_compiler_name(c->compiler));
        opt_str(j, "framework", jst_framework_name(c->framework));
        opt_str(j, "target", c->target);
        opt_str(j, "stage", c->stage);
        opt_str(j, "cache", c->cache);
        opt_str(j, "what", c->what);
        opt_str(j, "kernel", c->kernel);
        const struct jst_first_call *fc = jst_fc_index_of(&fx, c);
        if (fc) /* the first call it was for, as that call's slice is named */
            opt_str(j, "first_call", rv_first_call_name(fc, buf, sizeof buf));
        opt_u64(j, "pid", c->pid);
        if (c->has_exit)
            jst_json_ki64(j, "exit_status", c->exit_status);
        jst_json_end(j);
        jst_json_end(j);
    }
    jst_fc_index_free(&fx);
    for (size_t i = 0; i < p->n_first_calls; i++) {
        const struct jst_first_call *f = &p->first_calls[i];
        char dem[512], nm[1536];
        const char *kern = f->kernel ? jst_demangle(f->kernel, dem, sizeof dem) : NULL;
        /* Named as the report names it; the kernel alone (demangled) when
         * neither the function nor the call site is known. */
        snprintf(buf, sizeof buf, "first call: %s",
                 f->function || f->call_site ? jst_first_call_title(f, nm, sizeof nm)
                 : kern                      ? kern
                                             : "?");
        complete_begin(j, buf, "first_call", p->pid, f->tid, rel_ns(f->start_ns, base),
                       (int64_t)f->dur_ns);
        jst_json_key(j, "args");
        jst_json_obj(j);
        opt_str(j, "function", f->function);
        opt_str(j, "call_site", f->call_site);
        opt_str(j, "kernel", kern);
        opt_str(j, "framework", jst_framework_name(f->top_framework));
        opt_str(j, "cache", f->cache);
        for (unsigned k = 0; k < JST_CAUSE_MAX_; k++)
            if (f->blame[k])
                opt_ms(j, jst_cause_name(k), f->blame[k]);
        /* The Python time by phase (sampled shares, no intervals of their
         * own: args, not slices), in ms, largest first. */
        if (f->n_phases) {
            jst_json_key(j, "phases");
            jst_json_obj(j);
            for (size_t k = 0; k < f->n_phases; k++)
                opt_ms(j, jst_phase_name(f->phases[k].phase), f->phases[k].dur_ns);
            jst_json_end(j);
        }
        jst_json_end(j);
        jst_json_end(j);
    }
}

/* Each CUDA graph capture (begin to end of its stream) as a slice of its
 * thread; instantiations are call slices already. */
static void export_graphs(struct jst_json *j, const struct jst_process *p, uint64_t base)
{
    for (size_t i = 0; i < p->graphs.n_spans; i++) {
        const struct jst_graph_span *g = &p->graphs.spans[i];
        if (g->graph < 0)
            continue;
        complete_begin(j, g->graph ? "CUDA graph capture" : "CUDA graph capture (failed)",
                       "graph_capture", p->pid, g->tid, rel_ns(g->start_ns, base),
                       (int64_t)(g->end_ns - g->start_ns));
        jst_json_end(j);
    }
}

static void export_process(struct jst_json *j, const struct jst_process *p, uint64_t base)
{
    char buf[1024];
    uint64_t pid = p->pid;
    snprintf(buf, sizeof buf, "%s (pid %llu)", jst_exe_base(p), (unsigned long long)pid);
    meta(j, "process_name", pid, pid, buf);
    export_threads(j, p);
    if (p->n_cupti)
        meta(j, "thread_name", pid, CUPTI_TID, "CUPTI JIT activity");

    uint64_t start = anchor_of(p);
    if (start)
        instant(j, "process start", "p", pid, pid, rel_ns(start, base));
    export_calls(j, p, base);
    export_compiles(j, p, base);
    export_graphs(j, p, base);
    export_cupti(j, p, base);
}

static int write_chrome(FILE *f, const struct jst_run *run)
{
    /* Time zero: the earliest process start (or event) of all traces. */
    uint64_t base = 0;
    for (size_t i = 0; i < run->n_procs; i++) {
        const struct jst_process *p = &run->procs[i];
        uint64_t a = anchor_of(p);
        if (a && (!base || a < base))
            base = a;
        for (size_t k = 0; k < p->n_calls; k++)
            if (p->calls[k].start_ns && p->calls[k].start_ns < base)
                base = p->calls[k].start_ns;
        for (size_t k = 0; k < p->n_cupti; k++)
            if (p->cupti[k].start_ns && p->cupti[k].start_ns < base)
                base = p->cupti[k].start_ns;
    }
    struct jst_json j;
    jst_json_init(&j, f, 0);
    jst_json_obj(&j);
    jst_json_key(&j, "traceEvents");
    jst_json_arr(&j);
    for (size_t i = 0; i < run->n_procs; i++) {
        export_process(&j, &run->procs[i], base);
        fputc('\n', f); /* one line per process keeps big exports greppable */
    }
    jst_json_end(&j);
    jst_json_kstr(&j, "displayTimeUnit", "ms");
    jst_json_key(&j, "otherData");
    jst_json_obj(&j);
    jst_json_kstr(&j, "generator", "jitstall " JITSTALL_VERSION);
    jst_json_end(&j);
    jst_json_end(&j);
    return jst_json_finish(&j);
}

struct export_opts {
    const char *out;
    int (*writer)(FILE *, const struct jst_run *);
    int format_given;
    const char *endpoint; /* --endpoint */
};

enum { O_ENDPOINT = 256 };

static int export_option(int c, const char *arg, void *ctx)
{
    struct export_opts *o = ctx;
    if (c == 'o') {
        o->out = arg;
        return 0;
    }
    if (c == O_ENDPOINT) {
        if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8)) {
            jst_errorf("export", "--endpoint: '%s' is not an http:// or https:// URL", arg);
            return -1;
        }
        o->endpoint = arg;
        return 0;
    }
    o->format_given = 1;
    if (!strcmp(arg, "chrome") || !strcmp(arg, "perfetto"))
        o->writer = write_chrome;
    else if (!strcmp(arg, "prometheus"))
        o->writer = jst_export_prometheus;
    else if (!strcmp(arg, "otlp"))
        o->writer = jst_export_otlp;
    else {
        jst_errorf("export", "unknown format '%s' (supported: chrome, perfetto, prometheus, otlp)",
                   arg);
        return -1;
    }
    return 0;
}

static int write_export(FILE *f, const struct jst_run *run, void *ctx)
{
    const struct export_opts *o = ctx;
    return o->writer(f, run);
}

static const struct option export_longopts[] = {
    {"format", required_argument, NULL, 'f'},
    {"output", required_argument, NULL, 'o'},
    {"endpoint", required_argument, NULL, O_ENDPOINT},
    JST_CLI_HELP_END,
};
static const struct jst_cli export_cli = {
    "export", "f:o:h", export_longopts, usage_text, "trace or directory", export_option,
};

static int write_otlp_file(FILE *f, void *ctx)
{
    return jst_export_otlp(f, ctx);
}

/* The OTLP spans sent to the collector at url, and written to o->out too
 * when -o was given (the file is written first: a collector that refuses
 * loses nothing). */
static int push_otlp(const struct export_opts *o, char **paths, int n, const char *url)
{
    struct jst_run run = {0};
    run.keep_calls = 1;
    int rc = jst_run_load("export", paths, n, &run, 0);
    if (rc != JST_EXIT_OK)
        goto out;
    if (o->out) {
        rc = jst_outfile_write("export", o->out, run.n_procs, write_otlp_file, &run, NULL);
        if (rc != JST_EXIT_OK)
            goto out;
    }
    char *body = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&body, &len);
    if (!m)
        jst_xalloc_die();
    int w = jst_export_otlp(m, &run);
    if (fclose(m) != 0 || w < 0) {
        free(body);
        jst_errorf("export", "cannot build the OTLP spans (out of memory)");
        rc = JST_EXIT_USAGE;
        goto out;
    }
    char err[1024] = "";
    if (jst_otlp_push(url, body, len, err, sizeof err) < 0) {
        jst_errorf("export", "%s%s", err, o->out ? "; the spans are kept in the -o file" : "");
        rc = JST_EXIT_USAGE;
    } else {
        fprintf(stderr, "jitstall export: sent %zu process%s to %s\n", run.n_procs,
                run.n_procs == 1 ? "" : "es", url);
    }
    free(body);
out:
    jst_model_free(&run);
    return rc;
}

static int cmd_export(int argc, char **argv)
{
    struct export_opts o = {NULL, write_chrome, 0, NULL};
    int rc = jst_cli_parse(&export_cli, argc, argv, &o);
    if (rc != JST_CLI_GO)
        return rc;
    if (o.endpoint) {
        if (o.format_given && o.writer != jst_export_otlp) {
            jst_errorf("export", "--endpoint sends OTLP spans: it goes with --format otlp only");
            return JST_EXIT_USAGE;
        }
        o.writer = jst_export_otlp;
    }
    char url[4096];
    if (o.writer == jst_export_otlp && jst_otlp_endpoint(o.endpoint, url, sizeof url))
        return push_otlp(&o, argv + optind, argc - optind, url);
    /* keep_calls: the timeline draws every call */
    return jst_run_write(
        "export", argv + optind, argc - optind, 1, o.out, write_export, &o,
        o.writer == write_chrome ? "; open it in ui.perfetto.dev or chrome://tracing" : NULL);
}

JST_COMMAND(export, cmd_export, "write a Perfetto timeline, Prometheus metrics or OTLP spans")
