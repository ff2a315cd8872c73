/*
 * Loads trace files and directories of traces into the analyzer's model
 * (analyzer/model.h), record by record through analyzer/model_read.c, and
 * frees it. What a file's end leaves open (calls in flight, damage, a cut
 * stream) is settled here, before analyzer/model.c derives the figures.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "hashidx.h"
#include "model.h"
#include "compiles.h"
#include "model_index.h"
#include "model_read.h"
#include "trace.h"

/* Memory set aside while reading and given back at the first allocation
 * that fails, so that the command can still say what happened and print
 * what it has: the process is marked partial and no further record of it is
 * kept. */
#define MODEL_RESERVE (8u << 20)
static void *model_reserve;

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s;
}

/* The latest time a record carries (its start, plus its duration): a trace
 * cut short ends there. PROGRESS records exist to keep it current. */
static void note_record_time(struct jst_process *p, const struct jst_record *rec)
{
    uint64_t t = 0, d = 0;
    if (rec->type == JST_REC_CUPTI_JIT)
        jst_rec_get_u64(rec, JST_F_CUPTI_END_NS, &t);
    else if (jst_rec_get_u64(rec, JST_F_START_NS, &t) && rec->type == JST_REC_CALL)
        jst_rec_get_u64(rec, JST_F_DUR_NS, &d);
    t = t > UINT64_MAX - d ? UINT64_MAX : t + d;
    if (t > p->last_record_ns)
        p->last_record_ns = t;
}

/* Reads every record of rd into p, until the end or damage. */
static void read_records(struct jst_process *p, struct jst_reader *rd, int keep_calls)
{
    struct jst_record rec;
    struct jst_begins begins = {NULL, 0};
    size_t n_rec = 0;
    int r;
    while ((r = jst_reader_next(rd, &rec)) == 1) {
        n_rec++;
        note_record_time(p, &rec);
        if (jst_model_oom() || p->n_oom) { /* out of memory: count what is not kept */
            free(model_reserve);
            model_reserve = NULL;
            p->n_oom++;
            continue;
        }
        if (jst_model_read_record(p, &rec, keep_calls, &begins)) {
            const char *type = jst_rec_type_name(rec.type);
            p->damage = xasprintf("record %zu (%s) has a field past its end", n_rec,
                                  type ? type : "unknown");
            break;
        }
    }
    if (r < 0 && !p->damage) {
        const char *e = jst_reader_error(rd);
        p->damage = xasprintf("after record %zu: %s", n_rec, e && *e ? e : "damaged data");
    }
    if (jst_reader_damaged(rd)) { /* skipped blocks or records; the rest was read */
        char *d = p->damage ? xasprintf("%s; before that, %s", p->damage, jst_reader_damage(rd))
                            : xasprintf("%s", jst_reader_damage(rd));
        if (d) {
            free(p->damage);
            p->damage = d;
        }
    }
    p->truncated = jst_reader_truncated(rd) || !p->has_end;
    jst_model_resolve_begins(p, &begins);
}

/* Reads one file. Returns 0 complete, 1 partial, -1 unreadable. */
static int add_file(struct jst_run *run, const char *path, char *err, size_t errlen)
{
    char rerr[256] = "";
    struct jst_reader *rd = jst_reader_open(path, rerr, sizeof(rerr));
    if (!rd) {
        snprintf(err, errlen, "%s: %s", path, rerr[0] ? rerr : "cannot read trace");
        run->n_unreadable++;
        return -1;
    }
    struct jst_process *p = jst_model_push(&run->procs, &run->n_procs, sizeof(*p));
    if (!p) {
        jst_reader_close(rd);
        snprintf(err, errlen, "%s: out of memory", path);
        run->n_unreadable++;
        return -1;
    }
    jst_model_oom_reset();
    if (!model_reserve)
        model_reserve = malloc(MODEL_RESERVE);
    p->trace_path = strdup(path);
    p->format_version = jst_reader_version(rd);
    p->exit_status = -1;
    read_records(p, rd, run->keep_calls);
    jst_reader_close(rd);
    jst_model_derive(p);
    p->n_oom += jst_model_oom();
    if (p->n_oom) {
        free(model_reserve);
        model_reserve = NULL;
    }
    return (p->truncated || p->damage || p->n_oom) ? 1 : 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && !strcmp(s + n - m, suf);
}

int jst_model_add(struct jst_run *run, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (!strcmp(path, "-")) { /* a trace on standard input */
        int r = add_file(run, path, err, errlen);
        jst_compiles_link(run);
        return r;
    }
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        run->n_unreadable++;
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        int r = add_file(run, path, err, errlen);
        jst_model_link_tree(run);
        jst_compiles_link(run);
        return r;
    }

    DIR *d = opendir(path);
    if (!d) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        run->n_unreadable++;
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || !has_suffix(de->d_name, ".jst"))
            continue;
        char *name = strdup(de->d_name);
        char **slot = name ? jst_model_push(&names, &n, sizeof(char *)) : NULL;
        if (!slot) {
            free(name);
            break;
        }
        *slot = name;
    }
    closedir(d);
    if (n == 0) {
        free(names);
        snprintf(err, errlen, "%s: no *.jst traces in this directory", path);
        run->n_unreadable++;
        return -1;
    }
    qsort(names, n, sizeof(char *), cmp_str);
    int ok = 0, partial = 0, bad = 0;
    char ferr[512] = "";
    for (size_t i = 0; i < n; i++) {
        size_t plen = strlen(path);
        char *full = xasprintf("%s%s%s", path, plen && path[plen - 1] == '/' ? "" : "/", names[i]);
        free(names[i]);
        if (!full)
            continue;
        int r = add_file(run, full, ferr, sizeof(ferr));
        free(full);
        if (r < 0) {
            bad++;
            snprintf(err, errlen, "%s", ferr);
        } else if (r > 0) {
            partial++;
        } else {
            ok++;
        }
    }
    free(names);
    jst_model_link_tree(run);
    jst_compiles_link(run);
    if (ok + partial == 0)
        return -1;
    return (partial || bad) ? 1 : 0;
}

static void free_strv(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static void free_process(struct jst_process *p)
{
    free(p->trace_path);
    free(p->damage);
    free(p->host);
    free(p->exe);
    free(p->cwd);
    free(p->jst_version);
    free(p->end_reason);
    free(p->ready.spec);
    free_strv(p->argv, p->argc);
    free_strv(p->env, p->n_env);
    for (size_t i = 0; i < p->n_devices; i++) {
        free(p->devices[i].name);
        free(p->devices[i].driver_release);
    }
    free(p->devices);
    for (size_t i = 0; i < p->n_calls; i++)
        jst_model_free_call(&p->calls[i]);
    free(p->calls);
    free(p->launches); /* names interned */
    if (p->strs)
        jst_strtab_free(p->strs);
    free(p->strs);
    jst_model_index_free(p);
    free(p->cache_start.path);
    free(p->cache_end.path);
    for (size_t i = 0; i < p->n_stacks; i++) {
        free(p->stacks[i].ips);
        free_strv(p->stacks[i].py_frames, p->stacks[i].n_py);
        free(p->stacks[i].py_native);
    }
    free(p->stacks);
    for (size_t i = 0; i < p->n_mods; i++) {
        free(p->mods[i].path);
        free(p->mods[i].build_id);
    }
    free(p->mods);
    for (size_t i = 0; i < p->n_cupti; i++)
        free(p->cupti[i].cache_path);
    free(p->cupti);
    free_strv(p->notes, p->n_notes);
    free(p->reaps);
    jst_queries_free(p);
    jst_compile_records_free(p);
    jst_graphs_free(p);
}

void jst_model_free(struct jst_run *run)
{
    for (size_t i = 0; i < run->n_procs; i++)
        free_process(&run->procs[i]);
    free(run->procs);
    memset(run, 0, sizeof(*run));
    free(model_reserve);
    model_reserve = NULL;
}
