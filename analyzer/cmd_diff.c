/*
 * `jitstall diff A B`: compares two runs (traces, directories, or a baseline
 * file as A), for example before and after a fix: time to first kernel, JIT
 * time per module, and the modules that appeared, disappeared or changed
 * verdict. Processes are paired by executable and arguments, modules by image
 * hash, else by library and first kernel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "check_util.h"
#include "cli.h"
#include "jsonw.h"
#include "report_compiles.h"
#include "samplefn.h"
#include "trace.h"
#include "utf8.h"
#include "xalloc.h"
#include "openreg.h"

static const char usage_text[] =
    "usage: jitstall diff [--json] A B\n"
    "\n"
    "Compare two runs, e.g. before and after a fix. A and B are each a trace or a\n"
    "directory of traces; A may also be a file written by 'jitstall baseline'.\n"
    "For each process: time to first kernel, JIT time, and per module its JIT\n"
    "time and whether it appeared, disappeared or changed verdict.\n"
    "\n"
    "  --json      machine-readable output (schema in jitstall-diff(1))\n"
    "  -h, --help  show this help\n"
    "\n"
    "exit codes: 0 compared, 2 usage error or unreadable input\n";

/* One side of the comparison: a run read from traces, or a baseline. */
struct side {
    const char *path;
    struct jst_run run;
    struct jst_baseline base;
    int is_baseline;
    struct jst_psum *procs;
    size_t n;
};

/* A regular file whose first non-blank byte is '{' is a baseline, not a trace. */
static int looks_like_json(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    FILE *f = jst_fopen_regular(path);
    if (!f)
        return 0;
    int c;
    while ((c = fgetc(f)) == ' ' || c == '\n' || c == '\t' || c == '\r')
        ;
    fclose(f);
    return c == '{';
}

static int load_side(struct side *s, const char *path)
{
    memset(s, 0, sizeof(*s));
    s->path = path;
    if (looks_like_json(path)) {
        char err[512];
        if (jst_baseline_read(path, &s->base, err, sizeof err) < 0) {
            jst_errorf("diff", "%s: %s", path, err);
            return JST_EXIT_USAGE;
        }
        s->is_baseline = 1;
        s->procs = s->base.procs;
        s->n = s->base.n_procs;
        return JST_EXIT_OK;
    }
    char *paths[1] = {(char *)path};
    int rc = jst_run_load("diff", paths, 1, &s->run, 0);
    if (rc != JST_EXIT_OK)
        return rc;
    s->procs = jst_xcalloc(s->run.n_procs, sizeof(*s->procs));
    s->n = s->run.n_procs;
    for (size_t i = 0; i < s->n; i++)
        if (jst_psum_from_process(&s->run.procs[i], &s->procs[i]) < 0)
            jst_xalloc_die();
    return JST_EXIT_OK;
}

static void free_side(struct side *s)
{
    if (s->is_baseline) {
        jst_baseline_free(&s->base);
        return;
    }
    for (size_t i = 0; s->procs && i < s->n; i++)
        jst_psum_free(&s->procs[i]);
    free(s->procs);
    jst_model_free(&s->run);
}

static const char *vname(unsigned v)
{
    const char *n = jst_verdict_name(v);
    return n ? n : "?";
}

static const char *cname(unsigned c)
{
    const char *n = jst_cache_name(c);
    return n ? n : "?";
}

/* "(+1.0 ms, +12%)" */
static const char *delta(uint64_t a, uint64_t b, char *buf, size_t n)
{
    char d[64];
    if (a == b) {
        snprintf(buf, n, "(same)");
        return buf;
    }
    jst_fmt_ms(a > b ? a - b : b - a, d, sizeof d);
    if (a)
        snprintf(buf, n, "(%c%s, %+.0f%%)", b > a ? '+' : '-', d,
                 ((double)b - (double)a) * 100.0 / (double)a);
    else
        snprintf(buf, n, "(+%s)", d);
    return buf;
}

static const char *mod_status(const struct jst_pmod *a, const struct jst_pmod *b)
{
    if (!a)
        return "appeared";
    if (!b)
        return "disappeared";
    return a->verdict != b->verdict || a->jit != b->jit ? "changed" : "same";
}

static void text_module(const struct jst_pmod *a, const struct jst_pmod *b, void *unused)
{
    (void)unused;
    char lab[1024], x[64], y[64], d[96];
    const struct jst_pmod *m = b ? b : a;
    const char *st = mod_status(a, b);
    printf("  %-11s %s: ", st, jst_text(jst_pmod_label(m, lab, sizeof lab)));
    if (a && b) {
        if (a->verdict != b->verdict)
            printf("%s -> %s", vname(a->verdict), vname(b->verdict));
        else
            printf("%s", vname(b->verdict));
        if (a->jit || b->jit)
            printf(", JIT %s -> %s %s", jst_fmt_ms(a->jit_ns, x, sizeof x),
                   jst_fmt_ms(b->jit_ns, y, sizeof y), delta(a->jit_ns, b->jit_ns, d, sizeof d));
        if ((a->jit || b->jit) && a->cache != b->cache)
            printf(", cache %s -> %s", cname(a->cache), cname(b->cache));
        else if (b->jit)
            printf(", cache %s", cname(b->cache));
    } else {
        printf("%s", vname(m->verdict));
        if (m->jit)
            printf(", JIT %s, cache %s", jst_fmt_ms(m->jit_ns, x, sizeof x), cname(m->cache));
    }
    putchar('\n');
}

/* Framework fw's cache outcome in a process ("hit", "miss", ...), or NULL:
 * no record of that cache (or a baseline written before they were kept). */
static const char *fw_cache(const struct jst_psum *s, unsigned fw)
{
    return s ? s->fw_cache[fw] : NULL;
}

/* The sampled Python time of the process's slowest first call by phase
 * (zeros for a baseline's process or none). */
static void phase_ns(const struct jst_psum *s, uint64_t *ns)
{
    memset(ns, 0, JST_PHASE_MAX_ * sizeof(*ns));
    const struct jst_first_call *f = s && s->p ? jst_slowest_first_call(s->p) : NULL;
    for (size_t k = 0; f && k < f->n_phases; k++)
        if (f->phases[k].phase < JST_PHASE_MAX_)
            ns[f->phases[k].phase] += f->phases[k].dur_ns;
}

/* What a first call's framework changed: a cache outcome that differs
 * (miss -> hit), and each phase of the slowest first call whose time
 * differs (runs only: a baseline keeps no phases). */
static void text_framework(const struct jst_psum *a, const struct jst_psum *b)
{
    char x[64], y[64], d[96], lab[64];
    for (unsigned fw = 1; fw < JST_FW_MAX_; fw++) {
        const char *oa = fw_cache(a, fw), *ob = fw_cache(b, fw);
        if ((oa || ob) && (!oa || !ob || strcmp(oa, ob))) {
            snprintf(lab, sizeof lab, "%s cache", jst_framework_name(fw));
            printf("  %-21s %s -> %s\n", lab, oa ? jst_text(oa) : "none",
                   ob ? jst_text(ob) : "none");
        }
    }
    if (!a->p || !b->p)
        return;
    uint64_t pa[JST_PHASE_MAX_], pb[JST_PHASE_MAX_];
    phase_ns(a, pa);
    phase_ns(b, pb);
    for (unsigned k = 0; k < JST_PHASE_MAX_; k++)
        if (pa[k] != pb[k])
            printf("  first call phase %-15s %s -> %s %s\n", jst_phase_name(k),
                   jst_fmt_ms(pa[k], x, sizeof x), jst_fmt_ms(pb[k], y, sizeof y),
                   delta(pa[k], pb[k], d, sizeof d));
}

static void json_framework(struct jst_json *j, const struct jst_psum *a, const struct jst_psum *b)
{
    jst_json_key(j, "framework_caches");
    jst_json_arr(j);
    for (unsigned fw = 1; fw < JST_FW_MAX_; fw++) {
        const char *oa = fw_cache(a, fw), *ob = fw_cache(b, fw);
        if (!oa && !ob)
            continue;
        jst_json_obj(j);
        jst_json_kstr(j, "framework", jst_framework_name(fw));
        jst_json_kstr(j, "a", oa);
        jst_json_kstr(j, "b", ob);
        jst_json_end(j);
    }
    jst_json_end(j);
    uint64_t pa[JST_PHASE_MAX_], pb[JST_PHASE_MAX_];
    phase_ns(a, pa);
    phase_ns(b, pb);
    jst_json_key(j, "first_call_phases");
    jst_json_arr(j);
    for (unsigned k = 0; k < JST_PHASE_MAX_; k++) {
        if (!pa[k] && !pb[k])
            continue;
        jst_json_obj(j);
        jst_json_kstr(j, "phase", jst_phase_name(k));
        jst_json_kopt_u64(j, "a_ns", a && a->p, pa[k]);
        jst_json_kopt_u64(j, "b_ns", b && b->p, pb[k]);
        jst_json_end(j);
    }
    jst_json_end(j);
}

static void text_totals(const struct jst_psum *a, const struct jst_psum *b)
{
    char x[64], y[64], d[96];
    if (a->has_ttfk && b->has_ttfk)
        printf("  time to first kernel  %s -> %s %s\n", jst_fmt_ms(a->ttfk_ns, x, sizeof x),
               jst_fmt_ms(b->ttfk_ns, y, sizeof y), delta(a->ttfk_ns, b->ttfk_ns, d, sizeof d));
    else
        printf("  time to first kernel  %s -> %s\n",
               a->has_ttfk ? jst_fmt_ms(a->ttfk_ns, x, sizeof x) : "no launch",
               b->has_ttfk ? jst_fmt_ms(b->ttfk_ns, y, sizeof y) : "no launch");
    printf("  JIT time              %s -> %s %s\n", jst_fmt_ms(a->jit_ns, x, sizeof x),
           jst_fmt_ms(b->jit_ns, y, sizeof y), delta(a->jit_ns, b->jit_ns, d, sizeof d));
    /* The driver's JIT is the line above; every other compiler alike. */
    for (unsigned k = JST_CMP_DRIVER + 1; k < JST_CMP_MAX_; k++) {
        if (!a->cmp_n[k] && !b->cmp_n[k])
            continue;
        printf("  compile %-13s %s -> %s %s (%zu -> %zu)\n", jst_compiler_name(k),
               jst_fmt_ms(a->cmp_ns[k], x, sizeof x), jst_fmt_ms(b->cmp_ns[k], y, sizeof y),
               delta(a->cmp_ns[k], b->cmp_ns[k], d, sizeof d), (size_t)a->cmp_n[k],
               (size_t)b->cmp_n[k]);
    }
    if (a->first_call_ns || b->first_call_ns)
        printf("  slowest first call    %s -> %s %s\n", jst_fmt_ms(a->first_call_ns, x, sizeof x),
               jst_fmt_ms(b->first_call_ns, y, sizeof y),
               delta(a->first_call_ns, b->first_call_ns, d, sizeof d));
    if (a->graphs || b->graphs)
        printf("  CUDA graph capture    %s -> %s %s (%zu -> %zu graphs)\n",
               jst_fmt_ms(a->graph_ns, x, sizeof x), jst_fmt_ms(b->graph_ns, y, sizeof y),
               delta(a->graph_ns, b->graph_ns, d, sizeof d), (size_t)a->graphs, (size_t)b->graphs);
    text_framework(a, b);
}

static void text_alone(const char *where, const struct jst_psum *s)
{
    char x[64], y[64];
    size_t jit = 0;
    for (size_t i = 0; i < s->n_mods; i++)
        jit += s->mods[i].jit != 0;
    printf("%s (pid %llu): only in %s; time to first kernel %s, JIT %s, %zu module%s (%zu JIT'd)\n",
           jst_text(s->exe), (unsigned long long)s->pid, jst_text(where),
           s->has_ttfk ? jst_fmt_ms(s->ttfk_ns, x, sizeof x) : "no launch",
           jst_fmt_ms(s->jit_ns, y, sizeof y), s->n_mods, s->n_mods == 1 ? "" : "s", jit);
}

static void json_hash(struct jst_json *j, const char *key, const struct jst_pmod *m)
{
    char buf[32];
    if (!m) {
        jst_json_knull(j, key);
        return;
    }
    snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)m->hash);
    jst_json_kstr(j, key, buf);
}

static void json_module(const struct jst_pmod *a, const struct jst_pmod *b, void *ctx)
{
    struct jst_json *j = ctx;
    const struct jst_pmod *m = b ? b : a;
    jst_json_obj(j);
    jst_json_kstr(j, "status", mod_status(a, b));
    jst_json_kstr(j, "source", m->origin);
    jst_json_key(j, "kernels");
    jst_json_arr(j);
    for (size_t k = 0; k < m->n_kernels; k++)
        jst_json_str(j, m->kernels[k]);
    jst_json_end(j);
    json_hash(j, "image_hash_a", a);
    json_hash(j, "image_hash_b", b);
    jst_json_kstr(j, "verdict_a", a ? vname(a->verdict) : NULL);
    jst_json_kstr(j, "verdict_b", b ? vname(b->verdict) : NULL);
    jst_json_kopt_u64(j, "jit_a_ns", a != NULL, a ? a->jit_ns : 0);
    jst_json_kopt_u64(j, "jit_b_ns", b != NULL, b ? b->jit_ns : 0);
    jst_json_kstr(j, "cache_a", a ? cname(a->cache) : NULL);
    jst_json_kstr(j, "cache_b", b ? cname(b->cache) : NULL);
    jst_json_end(j);
}

/* Calls fn on every module pair of a matched process: B's modules in load
 * order (with A's match, or NULL), then those only A had (B NULL). */
static void each_module_pair(const struct jst_psum *a, const struct jst_psum *b,
                             void (*fn)(const struct jst_pmod *, const struct jst_pmod *, void *),
                             void *ctx)
{
    long *map = jst_xcalloc(b->n_mods + 1, sizeof(*map));
    char *used = jst_xcalloc(a->n_mods + 1, 1);
    jst_match_mods(b->mods, b->n_mods, a->mods, a->n_mods, map);
    for (size_t i = 0; i < b->n_mods; i++)
        if (map[i] >= 0)
            used[map[i]] = 1;
    for (size_t i = 0; i < b->n_mods; i++)
        fn(map[i] >= 0 ? &a->mods[map[i]] : NULL, &b->mods[i], ctx);
    for (size_t k = 0; k < a->n_mods; k++)
        if (!used[k])
            fn(&a->mods[k], NULL, ctx);
    free(map);
    free(used);
}

static void json_process(struct jst_json *j, const struct jst_psum *a, const struct jst_psum *b)
{
    const struct jst_psum *s = a ? a : b;
    jst_json_obj(j);
    jst_json_kstr(j, "exe", s->exe);
    jst_json_kstr(j, "status", a && b ? "matched" : a ? "only_a" : "only_b");
    jst_json_kopt_u64(j, "pid_a", a != NULL, a ? a->pid : 0);
    jst_json_kopt_u64(j, "pid_b", b != NULL, b ? b->pid : 0);
    jst_json_kopt_u64(j, "ttfk_a_ns", a && a->has_ttfk, a ? a->ttfk_ns : 0);
    jst_json_kopt_u64(j, "ttfk_b_ns", b && b->has_ttfk, b ? b->ttfk_ns : 0);
    jst_json_kopt_i64(j, "ttfk_delta_ns", a && b && a->has_ttfk && b->has_ttfk,
                      a && b ? (int64_t)(b->ttfk_ns - a->ttfk_ns) : 0);
    jst_json_kopt_u64(j, "jit_a_ns", a != NULL, a ? a->jit_ns : 0);
    jst_json_kopt_u64(j, "jit_b_ns", b != NULL, b ? b->jit_ns : 0);
    jst_json_kopt_i64(j, "jit_delta_ns", a && b, a && b ? (int64_t)(b->jit_ns - a->jit_ns) : 0);
    jst_json_key(j, "compilers");
    jst_json_arr(j);
    for (unsigned k = 1; k < JST_CMP_MAX_; k++) {
        if (!(a && a->cmp_n[k]) && !(b && b->cmp_n[k]))
            continue;
        jst_json_obj(j);
        jst_json_kstr(j, "compiler", jst_compiler_name(k));
        jst_json_kopt_u64(j, "a_ns", a != NULL, a ? a->cmp_ns[k] : 0);
        jst_json_kopt_u64(j, "b_ns", b != NULL, b ? b->cmp_ns[k] : 0);
        jst_json_kopt_u64(j, "a_count", a != NULL, a ? a->cmp_n[k] : 0);
        jst_json_kopt_u64(j, "b_count", b != NULL, b ? b->cmp_n[k] : 0);
        jst_json_end(j);
    }
    jst_json_end(j);
    jst_json_kopt_u64(j, "first_call_a_ns", a != NULL, a ? a->first_call_ns : 0);
    jst_json_kopt_u64(j, "first_call_b_ns", b != NULL, b ? b->first_call_ns : 0);
    jst_json_kopt_u64(j, "graph_capture_a_ns", a != NULL, a ? a->graph_ns : 0);
    jst_json_kopt_u64(j, "graph_capture_b_ns", b != NULL, b ? b->graph_ns : 0);
    jst_json_kopt_u64(j, "graphs_a", a != NULL, a ? a->graphs : 0);
    jst_json_kopt_u64(j, "graphs_b", b != NULL, b ? b->graphs : 0);
    json_framework(j, a, b);
    jst_json_key(j, "modules");
    jst_json_arr(j);
    if (a && b)
        each_module_pair(a, b, json_module, j);
    else
        for (size_t i = 0; i < s->n_mods; i++)
            json_module(a ? &s->mods[i] : NULL, b ? &s->mods[i] : NULL, j);
    jst_json_end(j);
    jst_json_end(j);
}

static void text_process(const struct jst_psum *a, const struct jst_psum *b)
{
    printf("%s (pid %llu -> %llu)\n", jst_text(b->exe), (unsigned long long)a->pid,
           (unsigned long long)b->pid);
    text_totals(a, b);
    each_module_pair(a, b, text_module, NULL);
}

/* The diff as one JSON document; map and used pair A's processes with B's. */
static int write_json(const struct side *A, const struct side *B, const long *map, const char *used)
{
    struct jst_json j;
    jst_json_init(&j, stdout, 1);
    jst_json_obj(&j);
    jst_json_kstr(&j, "a", A->path);
    jst_json_kstr(&j, "b", B->path);
    jst_json_key(&j, "processes");
    jst_json_arr(&j);
    for (size_t i = 0; i < A->n; i++)
        json_process(&j, &A->procs[i], map[i] >= 0 ? &B->procs[map[i]] : NULL);
    for (size_t k = 0; k < B->n; k++)
        if (!used[k])
            json_process(&j, NULL, &B->procs[k]);
    jst_json_end(&j);
    jst_json_end(&j);
    return jst_json_finish(&j);
}

static int write_text(const struct side *A, const struct side *B, const long *map, const char *used)
{
    printf("jitstall diff: A = %s, B = %s\n", jst_text(A->path), jst_text(B->path));
    for (size_t i = 0; i < A->n; i++) {
        if (map[i] >= 0)
            text_process(&A->procs[i], &B->procs[map[i]]);
        else
            text_alone("A", &A->procs[i]);
    }
    for (size_t k = 0; k < B->n; k++)
        if (!used[k])
            text_alone("B", &B->procs[k]);
    return fflush(stdout) != 0 || ferror(stdout);
}

static const struct option diff_longopts[] = {
    {"json", no_argument, NULL, 'j'},
    JST_CLI_HELP_END,
};
static const struct jst_cli diff_cli = {
    "diff", "h", diff_longopts, usage_text, NULL, jst_cli_set_flag,
};

static int cmd_diff(int argc, char **argv)
{
    int json = 0;
    int rc = jst_cli_parse(&diff_cli, argc, argv, &json);
    if (rc != JST_CLI_GO)
        return rc;
    if (argc - optind != 2) {
        jst_errorf("diff", "needs exactly two runs, A and B (see --help)");
        return JST_EXIT_USAGE;
    }
    struct side A, B;
    rc = load_side(&A, argv[optind]);
    if (rc == JST_EXIT_OK)
        rc = load_side(&B, argv[optind + 1]);
    else
        memset(&B, 0, sizeof B);
    if (rc != JST_EXIT_OK) {
        free_side(&A);
        free_side(&B);
        return rc;
    }
    if (B.is_baseline) {
        jst_errorf("diff", "%s: B must be traces, not a baseline", B.path);
        free_side(&A);
        free_side(&B);
        return JST_EXIT_USAGE;
    }

    long *map = jst_xcalloc(A.n + 1, sizeof(*map));
    char *used = jst_xcalloc(B.n + 1, 1);
    jst_match_procs(A.procs, A.n, B.procs, B.n, map);
    for (size_t i = 0; i < A.n; i++)
        if (map[i] >= 0)
            used[map[i]] = 1;

    int werr = json ? write_json(&A, &B, map, used) : write_text(&A, &B, map, used);
    free(map);
    free(used);
    free_side(&A);
    free_side(&B);
    if (werr) {
        jst_errorf("diff", "cannot write to standard output");
        return JST_EXIT_USAGE;
    }
    return JST_EXIT_OK;
}

JST_COMMAND(diff, cmd_diff, "compare two runs: time to first kernel, JIT per module")
