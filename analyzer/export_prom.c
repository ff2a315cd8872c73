/*
 * `jitstall export --format prometheus`: cold-start JIT figures as
 * Prometheus text (exposition format 0.0.4), the format node_exporter's
 * textfile collector reads. One sample set per program and label set, so the
 * series a fleet produces stay bounded: no pid, no paths beyond the program
 * name. docs/fleet.md lists the metrics and shows queries and an alert.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "check_util.h"
#include "export_fleet.h"
#include "labels.h"
#include "fixes.h"
#include "late.h"
#include "model.h"
#include "report_compiles.h"
#include "samplefn.h"
#include "trace.h"

/* The metric families, in output order. */
enum {
    M_TTFK,
    M_JIT,
    M_COMPILE,
    M_CACHE_LOAD,
    M_RTC,
    M_SELF,
    M_LOADS,
    M_CACHE,
    M_PROCS,
    M_START,
    M_CMP_SECONDS, /* per compiler (analyzer/compiles.h) */
    M_CMP_COUNT,
    M_FIRST_CALL,
    M_FIRST_CALL_PHASE, /* that first call's Python by phase (analyzer/samplefn.h) */
    M_FW_CACHE,         /* framework caches by outcome */
    M_READY,            /* time to ready, slowest process of the set */
    M_LATE,             /* compiles after ready (analyzer/late.h) */
    M_LATE_SECONDS,
    M_GRAPHS, /* CUDA graph capture (analyzer/graphs.h) */
    M_GRAPH_SECONDS,
    M_N_
};

static const struct {
    const char *name, *help;
} fams[M_N_] = {
    [M_TTFK] = {"jitstall_time_to_first_kernel_seconds",
                "Process start to its first kernel launch (slowest process of the set)."},
    [M_JIT] = {"jitstall_jit_seconds", "Time in the driver's PTX JIT, compile and cache load."},
    [M_COMPILE] = {"jitstall_jit_compile_seconds", "PTX JIT time that compiled (cache missed)."},
    [M_CACHE_LOAD] = {"jitstall_jit_cache_load_seconds", "PTX JIT time served from the JIT cache."},
    [M_RTC] = {"jitstall_runtime_compile_seconds",
               "Time in runtime compilers (NVRTC, nvJitLink) before the first launch."},
    [M_SELF] = {"jitstall_self_seconds", "Time jitstall itself spent in the process."},
    [M_LOADS] = {"jitstall_loads", "Module loads and link steps, by verdict."},
    [M_CACHE] = {"jitstall_jit_cache_outcomes", "JIT loads by JIT cache outcome."},
    [M_PROCS] = {"jitstall_processes", "Processes traced in the set."},
    [M_START] = {"jitstall_last_start_timestamp_seconds",
                 "Unix time of the latest process start in the set."},
    [M_CMP_SECONDS] = {"jitstall_compile_seconds",
                       "Time in compiles, by compiler (driver JIT, runtime compilers, compiler "
                       "subprocesses, framework compiles)."},
    [M_CMP_COUNT] = {"jitstall_compiles", "Compiles, by compiler."},
    [M_FIRST_CALL] = {"jitstall_first_call_seconds",
                      "The slowest first call of a kernel: compile work before its first launch "
                      "(slowest process of the set)."},
    [M_FIRST_CALL_PHASE] = {"jitstall_first_call_phase_seconds",
                            "The sampled Python time of that slowest first call, by phase "
                            "(cache_key, import, trace, pattern_matcher, lower, typing, autotune, "
                            "other)."},
    [M_FW_CACHE] = {"jitstall_framework_cache_outcomes",
                    "Processes by the outcome of a framework's compile cache (Triton, Inductor, "
                    "XLA, Numba, CuPy): hit, miss, disabled or unknown."},
    [M_READY] = {"jitstall_ready_seconds",
                 "Process start to the moment it said it was ready (JITSTALL_READY; slowest "
                 "process of the set)."},
    [M_LATE] = {"jitstall_late_compiles_total",
                "Compiles that started after the process said it was ready, any compiler: each "
                "stalled a request."},
    [M_LATE_SECONDS] = {"jitstall_late_compile_seconds_total",
                        "Time in compiles that started after the process said it was ready."},
    [M_GRAPHS] = {"jitstall_graphs_captured", "CUDA graphs captured (cuStreamEndCapture)."},
    [M_GRAPH_SECONDS] = {"jitstall_graph_capture_seconds",
                         "Time capturing and instantiating CUDA graphs (wall time per thread)."},
};

/* A framework cache's outcomes, as framework_caches[] names them. */
static const char *const fw_outcomes[] = {"hit", "miss", "disabled", "unknown"};
#define N_FW_OUTCOMES (sizeof fw_outcomes / sizeof fw_outcomes[0])

/* One program and label set: the figures summed (times of JIT) or maxed
 * (time to first kernel) over its processes. A family with one sample per
 * set keeps its value at its own index. */
struct fset {
    char labels[4096]; /* program="...",host="...",... without braces */
    double v[M_N_];
    int has[M_N_]; /* M_TTFK, M_SELF: some process had the figure */
    uint64_t loads[JST_V_DAMAGED + 1];
    uint64_t cache[JST_C_UNKNOWN + 1];
    double cmp_s[JST_CMP_MAX_];
    uint64_t cmp_n[JST_CMP_MAX_];
    double phase_s[JST_PHASE_MAX_]; /* the slowest first call's, M_FIRST_CALL's */
    uint64_t fw_cache[JST_FW_MAX_][N_FW_OUTCOMES];
    int has_fw[JST_FW_MAX_];
};

/* The most bytes of one escaped label value: a long path or name is cut
 * (at a whole character) rather than crowd out the labels after it. */
#define PROM_VALUE_MAX 256

/* A label value as the exposition format wants it, by the same rule as the
 * preload's file (common/labels.c): valid UTF-8 (a byte that is not part of
 * a well-formed sequence becomes U+FFFD), backslash, double quote and
 * newline escaped, cut at a whole character to fit n bytes. */
static size_t put_value(char *out, size_t n, const char *v)
{
    return jst_prom_value(out, n, v);
}

/* Appends name="value" whole, or nothing when the set is full: a label is
 * never left without its value or its closing quote. */
static void add_label(char *buf, size_t n, const char *name, const char *value)
{
    char v[PROM_VALUE_MAX];
    put_value(v, sizeof v, value);
    size_t len = strlen(buf);
    int w = snprintf(buf + len, n - len, "%s%s=\"%s\"", len ? "," : "", name, v);
    if (w < 0 || (size_t)w >= n - len)
        buf[len] = '\0';
}

/* The labels of a process: program, host, GPU arch, driver version, then
 * the user's JITSTALL_LABELS as recorded in the trace's environment. */
static void proc_labels(const struct jst_process *p, char *buf, size_t n)
{
    char v[64];
    buf[0] = '\0';
    add_label(buf, n, "program", jst_exe_base(p));
    add_label(buf, n, "host", p->host ? p->host : "");
    const struct jst_device *d = p->n_devices ? &p->devices[0] : NULL;
    snprintf(v, sizeof v, "sm_%u%u", d ? d->cc_major : 0, d ? d->cc_minor : 0);
    add_label(buf, n, "gpu_arch", d ? v : "");
    if (d && d->driver_version)
        snprintf(v, sizeof v, "%" PRIu64 ".%" PRIu64, d->driver_version / 1000,
                 d->driver_version % 1000 / 10);
    else
        v[0] = '\0';
    add_label(buf, n, "driver_version", v);
    struct jst_label lab[JST_MAX_LABELS];
    size_t nl = jst_export_labels(p, lab);
    for (size_t i = 0; i < nl; i++)
        add_label(buf, n, lab[i].name, lab[i].value);
}

static void fold_process(struct fset *s, const struct jst_process *p)
{
    s->v[M_PROCS]++;
    if (p->first_launch_ns) {
        double t = (double)p->ttfk_ns / 1e9;
        if (!s->has[M_TTFK] || t > s->v[M_TTFK])
            s->v[M_TTFK] = t;
        s->has[M_TTFK] = 1;
    }
    s->v[M_JIT] += (double)p->jit_ns / 1e9;
    s->v[M_COMPILE] += (double)p->jit_compile_ns / 1e9;
    s->v[M_CACHE_LOAD] += (double)p->jit_cache_load_ns / 1e9;
    s->v[M_RTC] += (double)p->rtc_ns / 1e9;
    if (p->self_ns) {
        s->v[M_SELF] += (double)p->self_ns / 1e9;
        s->has[M_SELF] = 1;
    }
    double start = p->realtime_ns && p->mono_ns && p->proc_start_ns
                       ? (double)(p->realtime_ns - (p->mono_ns - p->proc_start_ns)) / 1e9
                       : (double)p->realtime_ns / 1e9;
    if (start > s->v[M_START])
        s->v[M_START] = start;
    size_t seen[JST_CMP_MAX_] = {0};
    for (size_t k = 0; k < p->n_compiles; k++) {
        unsigned cc = p->compiles[k].compiler;
        if (cc && cc < JST_CMP_MAX_) {
            if (!seen[cc]++) /* this process's wall time: parallel compiles once */
                s->cmp_s[cc] += (double)jst_compiler_wall(p, cc) / 1e9;
            s->cmp_n[cc] += jst_compile_counts(&p->compiles[k]);
        }
    }
    if (p->ready.present) {
        double t = (double)p->ttr_ns / 1e9;
        if (!s->has[M_READY] || t > s->v[M_READY])
            s->v[M_READY] = t;
        s->has[M_READY] = 1;
    }
    uint64_t late_ns = 0;
    s->v[M_LATE] += (double)jst_late_count(p, &late_ns);
    s->v[M_LATE_SECONDS] += (double)late_ns / 1e9;
    s->v[M_GRAPHS] += (double)p->graphs.count;
    s->v[M_GRAPH_SECONDS] += (double)jst_graphs_ns(p) / 1e9;
    const struct jst_first_call *fc = jst_slowest_first_call(p);
    if (fc && (!s->has[M_FIRST_CALL] || (double)fc->dur_ns / 1e9 > s->v[M_FIRST_CALL])) {
        s->v[M_FIRST_CALL] = (double)fc->dur_ns / 1e9;
        s->has[M_FIRST_CALL] = 1;
        memset(s->phase_s, 0, sizeof s->phase_s);
        for (size_t k = 0; k < fc->n_phases; k++)
            if (fc->phases[k].phase < JST_PHASE_MAX_)
                s->phase_s[fc->phases[k].phase] += (double)fc->phases[k].dur_ns / 1e9;
    }
    for (unsigned fw = 1; fw < JST_FW_MAX_; fw++) {
        int used = 0;
        if (!jst_fw_cache_of(p, fw))
            continue;
        const char *o = rv_fw_cache_result(p, fw, &used);
        for (size_t k = 0; k < N_FW_OUTCOMES; k++)
            if (o && !strcmp(o, fw_outcomes[k]))
                s->fw_cache[fw][k]++;
        s->has_fw[fw] = 1;
    }
    for (size_t k = 0; k < p->n_calls; k++) {
        const struct jst_call_ev *c = &p->calls[k];
        if (c->verdict && c->verdict <= JST_V_DAMAGED)
            s->loads[c->verdict]++;
        if (jst_is_jit_event(p, c) && c->cache <= JST_C_UNKNOWN)
            s->cache[c->cache]++;
    }
}

/* Seconds to the nanosecond, counts exactly; a Unix timestamp keeps its
 * milliseconds (%g would round it to 1.79613795e+09). */
static void put_sample(FILE *f, const char *name, const char *labels, const char *extra, double v)
{
    fprintf(f, v >= 1e6 ? "%s{%s%s} %.3f\n" : "%s{%s%s} %.9g\n", name, labels, extra ? extra : "",
            v);
}

/* One sample per value of an enum (verdict, cache outcome), labelled with
 * its name. */
static void put_counts(FILE *f, const char *name, const struct fset *s, const char *label,
                       const char *(*value_name)(unsigned), const uint64_t *counts, unsigned lo,
                       unsigned hi)
{
    char extra[64];
    for (unsigned v = lo; v <= hi; v++) {
        snprintf(extra, sizeof extra, ",%s=\"%s\"", label, value_name(v));
        put_sample(f, name, s->labels, extra, (double)counts[v]);
    }
}

/* One sample per compiler that ran in the set: a fleet's series stay
 * bounded by the compiler table, and absent compilers add none. */
static void put_compilers(FILE *f, const char *name, const struct fset *s, int count)
{
    char extra[64];
    for (unsigned k = 1; k < JST_CMP_MAX_; k++) {
        if (!s->cmp_n[k])
            continue;
        snprintf(extra, sizeof extra, ",compiler=\"%s\"", jst_compiler_name(k));
        put_sample(f, name, s->labels, extra, count ? (double)s->cmp_n[k] : s->cmp_s[k]);
    }
}

/* One sample per phase the slowest first call's Python had time in. */
static void put_phases(FILE *f, const char *name, const struct fset *s)
{
    char extra[64];
    for (unsigned k = 0; k < JST_PHASE_MAX_; k++) {
        if (s->phase_s[k] <= 0)
            continue;
        snprintf(extra, sizeof extra, ",phase=\"%s\"", jst_phase_name(k));
        put_sample(f, name, s->labels, extra, s->phase_s[k]);
    }
}

/* Per framework whose cache a process of the set had, one sample per
 * outcome: bounded by the framework and outcome tables. */
static void put_fw_caches(FILE *f, const char *name, const struct fset *s)
{
    char extra[96];
    for (unsigned fw = 1; fw < JST_FW_MAX_; fw++) {
        if (!s->has_fw[fw])
            continue;
        for (size_t k = 0; k < N_FW_OUTCOMES; k++) {
            snprintf(extra, sizeof extra, ",framework=\"%s\",outcome=\"%s\"",
                     jst_framework_name(fw), fw_outcomes[k]);
            put_sample(f, name, s->labels, extra, (double)s->fw_cache[fw][k]);
        }
    }
}

static void write_family(FILE *f, int m, const struct fset *sets, size_t n)
{
    const char *name = fams[m].name;
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, fams[m].help, name,
            m == M_LATE || m == M_LATE_SECONDS ? "counter" : "gauge");
    for (size_t i = 0; i < n; i++) {
        const struct fset *s = &sets[i];
        if (m == M_LOADS)
            put_counts(f, name, s, "verdict", jst_verdict_name, s->loads, JST_V_SASS,
                       JST_V_DAMAGED);
        else if (m == M_CACHE)
            put_counts(f, name, s, "outcome", jst_cache_name, s->cache, JST_C_HIT, JST_C_UNKNOWN);
        else if (m == M_CMP_SECONDS || m == M_CMP_COUNT)
            put_compilers(f, name, s, m == M_CMP_COUNT);
        else if (m == M_FIRST_CALL_PHASE)
            put_phases(f, name, s);
        else if (m == M_FW_CACHE)
            put_fw_caches(f, name, s);
        else if ((m != M_TTFK && m != M_SELF && m != M_FIRST_CALL && m != M_READY) || s->has[m])
            put_sample(f, name, s->labels, NULL, s->v[m]);
    }
}

int jst_export_prometheus(FILE *f, const struct jst_run *run)
{
    struct fset *sets = calloc(run->n_procs + 1, sizeof(*sets));
    if (!sets)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < run->n_procs; i++) {
        char labels[sizeof sets[0].labels];
        proc_labels(&run->procs[i], labels, sizeof labels);
        size_t k = 0;
        while (k < n && strcmp(sets[k].labels, labels))
            k++;
        if (k == n)
            snprintf(sets[n++].labels, sizeof labels, "%s", labels);
        fold_process(&sets[k], &run->procs[i]);
    }
    for (int m = 0; m < M_N_; m++)
        write_family(f, m, sets, n);
    free(sets);
    return ferror(f) ? -1 : 0;
}

size_t jst_export_labels(const struct jst_process *p, struct jst_label *lab)
{
    const char *user = NULL;
    for (size_t i = 0; i < p->n_env; i++)
        if (!strncmp(p->env[i], "JITSTALL_LABELS=", 16))
            user = p->env[i] + 16;
    return jst_parse_labels(user, lab, JST_MAX_LABELS);
}
