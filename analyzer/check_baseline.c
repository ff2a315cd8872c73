/*
 * The baseline file that `jitstall baseline` writes and `jitstall check
 * --baseline` reads: per process (exe basename + argv hash), the time to
 * first kernel, the JIT time and every module with its verdict, JIT time and
 * cache outcome, the compiles of other compilers by group and each framework
 * cache's outcome, and its queries (top-level NVTX ranges) when it has some.
 * The schema is documented in docs/jitstall-baseline.1.md.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "check_util.h"
#include "jsonw.h"
#include "trace.h"
#include "openreg.h"

static void write_hash(struct jst_json *j, const char *key, uint64_t h)
{
    char buf[32];
    snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)h);
    jst_json_kstr(j, key, buf);
}

/* The process's queries (top-level NVTX ranges), only when it has some. */
static void write_queries(struct jst_json *j, const struct jst_process *p)
{
    if (!p->n_queries)
        return;
    jst_json_key(j, "queries");
    jst_json_arr(j);
    for (size_t i = 0; i < p->n_queries; i++) {
        jst_json_obj(j);
        jst_json_kstr(j, "name", p->queries[i].name);
        jst_json_ku64(j, "dur_ns", p->queries[i].dur_ns);
        jst_json_ku64(j, "jit_ns", p->queries[i].jit_ns);
        jst_json_end(j);
    }
    jst_json_end(j);
}

/* "compiles": {"ptxas": {"count": 1, "dur_ns": 400000000}, ...} and
 * "first_call_ns": every compiler alike, by its table name. */
static void write_compiles(struct jst_json *j, const struct jst_psum *s)
{
    jst_json_key(j, "compiles");
    jst_json_obj(j);
    for (unsigned k = 1; k < JST_CMP_MAX_; k++) {
        if (!s->cmp_n[k])
            continue;
        jst_json_key(j, jst_compiler_name(k));
        jst_json_obj(j);
        jst_json_ku64(j, "count", s->cmp_n[k]);
        jst_json_ku64(j, "dur_ns", s->cmp_ns[k]);
        jst_json_end(j);
    }
    jst_json_end(j);
    jst_json_ku64(j, "first_call_ns", s->first_call_ns);
}

/* "compile_groups": the compiles of every compiler but the driver, by key
 * (compiler, framework, what), and "framework_caches": each framework
 * cache's outcome, which is how a cache that hit (and so compiled
 * nothing) is kept. */
static void write_groups(struct jst_json *j, const struct jst_psum *s)
{
    jst_json_key(j, "compile_groups");
    jst_json_arr(j);
    for (size_t i = 0; i < s->n_groups; i++) {
        const struct jst_pcgroup *g = &s->groups[i];
        jst_json_obj(j);
        jst_json_kstr(j, "compiler", jst_compiler_name(g->compiler));
        jst_json_kstr(j, "framework", jst_framework_name(g->framework));
        jst_json_kstr(j, "kernel", g->kernel);
        jst_json_kstr(j, "what", g->what);
        jst_json_ku64(j, "count", g->count);
        jst_json_ku64(j, "dur_ns", g->dur_ns);
        jst_json_kstr(j, "cache", g->cache);
        jst_json_end(j);
    }
    jst_json_end(j);
    jst_json_key(j, "framework_caches");
    jst_json_arr(j);
    for (unsigned fw = 1; fw < JST_FW_MAX_; fw++) {
        if (!s->fw_cache[fw])
            continue;
        jst_json_obj(j);
        jst_json_kstr(j, "framework", jst_framework_name(fw));
        jst_json_kstr(j, "path", s->fw_path[fw]);
        jst_json_kstr(j, "outcome", s->fw_cache[fw]);
        jst_json_end(j);
    }
    jst_json_end(j);
}

int jst_baseline_write(FILE *f, const struct jst_run *run, char **paths, int n_paths)
{
    struct jst_json j;
    jst_json_init(&j, f, 1);
    jst_json_obj(&j);
    jst_json_kstr(&j, "format", JST_BASELINE_FORMAT);
    jst_json_ku64(&j, "version", JST_BASELINE_VERSION);
    jst_json_kstr(&j, "jitstall_version", JITSTALL_VERSION);
    jst_json_key(&j, "traces");
    jst_json_arr(&j);
    for (int i = 0; i < n_paths; i++)
        jst_json_str(&j, paths[i]);
    jst_json_end(&j);
    jst_json_key(&j, "processes");
    jst_json_arr(&j);
    for (size_t i = 0; i < run->n_procs; i++) {
        const struct jst_process *p = &run->procs[i];
        struct jst_psum s;
        if (jst_psum_from_process(p, &s) < 0)
            return -1;
        jst_json_obj(&j);
        jst_json_kstr(&j, "exe", s.exe);
        write_hash(&j, "argv_hash", s.argv_hash);
        jst_json_ku64(&j, "order", i);
        jst_json_ku64(&j, "pid", s.pid);
        /* No "argv": a baseline is committed, and arguments may hold secrets. */
        jst_json_kopt_u64(&j, "ttfk_ns", s.has_ttfk, s.ttfk_ns);
        jst_json_ku64(&j, "jit_ns", s.jit_ns);
        jst_json_kbool(&j, "partial", s.partial);
        jst_json_key(&j, "modules");
        jst_json_arr(&j);
        for (size_t m = 0; m < s.n_mods; m++) {
            const struct jst_pmod *pm = &s.mods[m];
            jst_json_obj(&j);
            write_hash(&j, "image_hash", pm->hash);
            jst_json_kstr(&j, "source", pm->origin);
            jst_json_key(&j, "kernels");
            jst_json_arr(&j);
            for (size_t k = 0; k < pm->n_kernels; k++)
                jst_json_str(&j, pm->kernels[k]);
            jst_json_end(&j);
            jst_json_kstr(&j, "verdict", jst_verdict_name(pm->verdict));
            jst_json_kbool(&j, "jit", pm->jit);
            jst_json_kstr(&j, "jit_from", pm->jit_from);
            jst_json_kstr(&j, "sass_arch", pm->sass_arch);
            jst_json_ku64(&j, "jit_ns", pm->jit_ns);
            jst_json_kstr(&j, "cache", jst_cache_name(pm->cache));
            jst_json_end(&j);
        }
        jst_json_end(&j);
        write_queries(&j, p);
        write_compiles(&j, &s);
        write_groups(&j, &s);
        jst_json_end(&j);
        jst_psum_free(&s);
    }
    jst_json_end(&j);
    jst_json_end(&j);
    return jst_json_finish(&j);
}

/* An enum value from its name (names(v) == s), or -1. */
static int enum_of(const char *s, const char *(*names)(unsigned))
{
    for (unsigned v = 0; s && v < 64; v++) {
        const char *n = names(v);
        if (n && !strcmp(n, s))
            return (int)v;
    }
    return -1;
}

static const char *opt_str(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key)); /* NULL unless a string */
}

static int get_u64(const json_t *o, const char *key, uint64_t *out, int *is_null)
{
    const json_t *v = json_object_get(o, key);
    if (is_null)
        *is_null = json_is_null(v);
    if (json_is_integer(v) && json_integer_value(v) >= 0) {
        *out = (uint64_t)json_integer_value(v);
        return 0;
    }
    return -1;
}

static int get_hash(const json_t *o, const char *key, uint64_t *out)
{
    const char *s = opt_str(o, key);
    char *end;
    if (!s || strncmp(s, "0x", 2))
        return -1;
    errno = 0;
    *out = strtoull(s + 2, &end, 16);
    return *end || errno || end == s + 2 ? -1 : 0;
}

/* Reads one module object into m (strings point into the JSON tree). */
static int read_module(const json_t *o, struct jst_pmod *m, char *err, size_t errlen, size_t pi,
                       size_t mi)
{
    const char *what = NULL;
    int v, c;
    const json_t *kern = json_object_get(o, "kernels");
    const json_t *jit = json_object_get(o, "jit");
    if (!json_is_object(o))
        what = "is not an object";
    else if (get_hash(o, "image_hash", &m->hash) < 0)
        what = "image_hash is not a \"0x...\" string";
    else if ((v = enum_of(opt_str(o, "verdict"), jst_verdict_name)) < 0)
        what = "verdict is missing or unknown";
    else if ((c = enum_of(opt_str(o, "cache"), jst_cache_name)) < 0)
        what = "cache is missing or unknown";
    else if (get_u64(o, "jit_ns", &m->jit_ns, NULL) < 0)
        what = "jit_ns is not a non-negative integer";
    else if (!json_is_boolean(jit))
        what = "jit is not true or false";
    else if (kern && !json_is_array(kern))
        what = "kernels is not an array";
    if (what) {
        snprintf(err, errlen, "processes[%zu].modules[%zu]: %s", pi, mi, what);
        return -1;
    }
    m->verdict = (unsigned)v;
    m->cache = (unsigned)c;
    m->jit = json_is_true(jit);
    m->origin = opt_str(o, "source");
    m->jit_from = opt_str(o, "jit_from");
    m->sass_arch = opt_str(o, "sass_arch");
    m->n_kernels = 0;
    m->kernels = NULL;
    size_t nk = json_array_size(kern);
    if (nk) {
        m->kernels = calloc(nk, sizeof(*m->kernels));
        if (!m->kernels) {
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (size_t k = 0; k < nk; k++)
            if (json_is_string(json_array_get(kern, k)))
                m->kernels[m->n_kernels++] = json_string_value(json_array_get(kern, k));
    }
    return 0;
}

/* The optional "queries" array (strings point into the JSON tree). */
static int read_queries(const json_t *o, struct jst_psum *s, char *err, size_t errlen, size_t pi)
{
    const json_t *qs = json_object_get(o, "queries");
    if (!qs)
        return 0;
    if (!json_is_array(qs)) {
        snprintf(err, errlen, "processes[%zu]: queries is not an array", pi);
        return -1;
    }
    size_t n = json_array_size(qs);
    s->queries = calloc(n ? n : 1, sizeof(*s->queries));
    if (!s->queries) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        struct jst_pquery *q = &s->queries[i];
        const json_t *e = json_array_get(qs, i);
        if (!json_is_object(e) || !(q->name = opt_str(e, "name")) ||
            get_u64(e, "dur_ns", &q->dur_ns, NULL) < 0 ||
            get_u64(e, "jit_ns", &q->jit_ns, NULL) < 0) {
            snprintf(err, errlen,
                     "processes[%zu].queries[%zu]: needs a name and non-negative integers "
                     "dur_ns and jit_ns",
                     pi, i);
            return -1;
        }
        s->n_queries++;
    }
    return 0;
}

/* Optional (older baselines have no compiles): a compiler this jitstall has
 * no row for is skipped, a malformed entry is an error. */
static int read_compiles(const json_t *o, struct jst_psum *s, char *err, size_t errlen, size_t pi)
{
    const json_t *c = json_object_get(o, "compiles");
    const char *name;
    json_t *v;
    if (!c)
        return 0;
    if (!json_is_object(c)) {
        snprintf(err, errlen, "processes[%zu]: compiles is not an object", pi);
        return -1;
    }
    s->has_cmp = 1;
    json_object_foreach((json_t *)c, name, v)
    {
        unsigned k = jst_compiler_by_name(name);
        uint64_t n = 0, ns = 0;
        if (get_u64(v, "count", &n, NULL) < 0 || get_u64(v, "dur_ns", &ns, NULL) < 0) {
            snprintf(err, errlen, "processes[%zu]: compiles.%s needs count and dur_ns", pi, name);
            return -1;
        }
        if (k) {
            s->cmp_n[k] = n;
            s->cmp_ns[k] = ns;
        }
    }
    get_u64(o, "first_call_ns", &s->first_call_ns, NULL);
    return 0;
}

/* Absent, null or a string. */
static int str_or_null(const json_t *v)
{
    return !v || json_is_null(v) || json_is_string(v);
}

static int cmp_group(const void *a, const void *b)
{
    return jst_pcgroup_cmp(a, b);
}

/* A framework's name in a baseline: 0 for null, -1 when this jitstall
 * does not know it. */
static int framework_of(const json_t *v)
{
    if (json_is_null(v) || !v)
        return 0;
    unsigned fw = jst_framework_by_name(json_string_value(v));
    return fw ? (int)fw : -1;
}

/* Optional (older baselines have neither): "compile_groups" and
 * "framework_caches". A compiler, framework or outcome this jitstall has no
 * name for is skipped; a malformed entry is an error. */
static int read_groups(const json_t *o, struct jst_psum *s, char *err, size_t errlen, size_t pi)
{
    const json_t *gs = json_object_get(o, "compile_groups");
    const json_t *fc = json_object_get(o, "framework_caches");
    if (gs && !json_is_array(gs)) {
        snprintf(err, errlen, "processes[%zu]: compile_groups is not an array", pi);
        return -1;
    }
    if (fc && !json_is_array(fc)) {
        snprintf(err, errlen, "processes[%zu]: framework_caches is not an array", pi);
        return -1;
    }
    size_t n = json_array_size(gs);
    s->has_groups = gs != NULL;
    if (n && !(s->groups = calloc(n, sizeof(*s->groups)))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(gs, i), *what = json_object_get(e, "what");
        const json_t *cache = json_object_get(e, "cache"), *kernel = json_object_get(e, "kernel");
        struct jst_pcgroup *g = &s->groups[s->n_groups];
        if (!json_is_object(e) || !json_is_string(json_object_get(e, "compiler")) ||
            !str_or_null(what) || !str_or_null(cache) || !str_or_null(kernel) ||
            get_u64(e, "count", &g->count, NULL) < 0 ||
            get_u64(e, "dur_ns", &g->dur_ns, NULL) < 0) {
            snprintf(err, errlen,
                     "processes[%zu].compile_groups[%zu]: needs a compiler, non-negative "
                     "integers count and dur_ns, and kernel, what and cache strings or null",
                     pi, i);
            return -1;
        }
        int fw = framework_of(json_object_get(e, "framework"));
        g->compiler = jst_compiler_by_name(opt_str(e, "compiler"));
        if (!g->compiler || g->compiler == JST_CMP_DRIVER || fw < 0)
            continue;
        g->framework = (unsigned)fw;
        g->kernel = json_string_value(kernel);
        g->what = json_string_value(what);
        g->cache = json_string_value(cache);
        s->n_groups++;
    }
    if (s->n_groups)
        qsort(s->groups, s->n_groups, sizeof(*s->groups), cmp_group);
    for (size_t i = 0; i < json_array_size(fc); i++) {
        const json_t *e = json_array_get(fc, i), *path = json_object_get(e, "path");
        const char *out = opt_str(e, "outcome");
        int fw = json_is_object(e) ? framework_of(json_object_get(e, "framework")) : 0;
        if (!json_is_object(e) || !fw || !out || !str_or_null(path)) {
            snprintf(err, errlen,
                     "processes[%zu].framework_caches[%zu]: needs a framework, an outcome and a "
                     "path string or null",
                     pi, i);
            return -1;
        }
        if (fw < 0)
            continue;
        s->fw_cache[fw] = out;
        s->fw_path[fw] = json_string_value(path);
    }
    return 0;
}

static int read_process(const json_t *o, struct jst_psum *s, char *err, size_t errlen, size_t pi)
{
    const char *what = NULL;
    const json_t *mods = json_object_get(o, "modules");
    int ttfk_null = 0;
    memset(s, 0, sizeof(*s));
    if (!json_is_object(o))
        what = "is not an object";
    else if (!(s->exe = opt_str(o, "exe")))
        what = "exe is missing";
    else if (get_hash(o, "argv_hash", &s->argv_hash) < 0)
        what = "argv_hash is not a \"0x...\" string";
    else if (get_u64(o, "jit_ns", &s->jit_ns, NULL) < 0)
        what = "jit_ns is not a non-negative integer";
    else if (get_u64(o, "ttfk_ns", &s->ttfk_ns, &ttfk_null) < 0 && !ttfk_null)
        what = "ttfk_ns is neither an integer nor null";
    else if (!json_is_array(mods))
        what = "modules is not an array";
    if (what) {
        snprintf(err, errlen, "processes[%zu]: %s", pi, what);
        return -1;
    }
    get_u64(o, "pid", &s->pid, NULL);
    if (read_queries(o, s, err, errlen, pi) < 0 || read_compiles(o, s, err, errlen, pi) < 0 ||
        read_groups(o, s, err, errlen, pi) < 0)
        return -1;
    s->has_ttfk = !ttfk_null;
    s->partial = json_is_true(json_object_get(o, "partial"));
    size_t n = json_array_size(mods);
    if (!n)
        return 0;
    s->mods = calloc(n, sizeof(*s->mods));
    if (!s->mods) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t m = 0; m < n; m++) {
        if (read_module(json_array_get(mods, m), &s->mods[m], err, errlen, pi, m) < 0)
            return -1;
        s->n_mods++;
    }
    return 0;
}

int jst_baseline_read(const char *path, struct jst_baseline *b, char *err, size_t errlen)
{
    memset(b, 0, sizeof(*b));
    FILE *f = jst_fopen_regular(path);
    if (!f) {
        snprintf(err, errlen, "cannot open: %s", jst_open_strerror(errno));
        return -1;
    }
    /* jansson parses; a baseline is small, so anything past 256 MiB is
     * refused before it is read whole. */
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && st.st_size > (off_t)(256u << 20)) {
        fclose(f);
        snprintf(err, errlen, "larger than 256 MiB: not a baseline");
        return -1;
    }
    json_error_t je;
    b->root = json_loadf(f, JSON_REJECT_DUPLICATES, &je);
    int rerr = ferror(f);
    fclose(f);
    if (!b->root) {
        if (rerr)
            snprintf(err, errlen, "read error");
        else
            snprintf(err, errlen, "not valid JSON (line %d: %s)", je.line, je.text);
        return -1;
    }
    const char *fmt = opt_str(b->root, "format");
    uint64_t version = 0;
    const json_t *procs = json_object_get(b->root, "processes");
    if (!fmt || strcmp(fmt, JST_BASELINE_FORMAT)) {
        snprintf(err, errlen, "not a jitstall baseline (\"format\" is not \"%s\")",
                 JST_BASELINE_FORMAT);
        goto bad;
    }
    if (get_u64(b->root, "version", &version, NULL) < 0 || version < 1) {
        snprintf(err, errlen, "baseline has no valid \"version\"");
        goto bad;
    }
    if (version > JST_BASELINE_VERSION) {
        snprintf(err, errlen,
                 "baseline version %llu is newer than this jitstall reads (%d); upgrade "
                 "jitstall or re-create the baseline",
                 (unsigned long long)version, JST_BASELINE_VERSION);
        goto bad;
    }
    b->version = (unsigned)version;
    if (!json_is_array(procs)) {
        snprintf(err, errlen, "\"processes\" is not an array");
        goto bad;
    }
    size_t np = json_array_size(procs);
    if (np) {
        b->procs = calloc(np, sizeof(*b->procs));
        if (!b->procs) {
            snprintf(err, errlen, "out of memory");
            goto bad;
        }
    }
    for (size_t i = 0; i < np; i++) {
        if (read_process(json_array_get(procs, i), &b->procs[i], err, errlen, i) < 0) {
            b->n_procs = i + 1; /* free what the failed one allocated */
            goto bad;
        }
        b->n_procs++;
    }
    return 0;
bad:
    jst_baseline_free(b);
    return -1;
}

void jst_baseline_free(struct jst_baseline *b)
{
    for (size_t i = 0; i < b->n_procs; i++) {
        for (size_t m = 0; m < b->procs[i].n_mods; m++)
            free(b->procs[i].mods[m].kernels);
        free(b->procs[i].mods);
        free(b->procs[i].queries);
        free(b->procs[i].groups);
    }
    free(b->procs);
    json_decref(b->root);
    memset(b, 0, sizeof(*b));
}
