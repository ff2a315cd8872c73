/*
 * Reads the records of compilers run as child processes (COMPILE), of Python
 * frames sampled before a first launch (SAMPLE) and of framework compile
 * caches (FW_CACHE) into the model, and turns the children into compiles
 * (analyzer/compiles.h). Unknown keys are skipped, as everywhere.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "compiles.h"
#include "model.h"
#include "model_read.h"
#include "trace.h"

/* A string field as a new C string (NULs in it end it). */
static char *fstr(const struct jst_field *f)
{
    if (f->kind != JST_K_STR && f->kind != JST_K_BYTES)
        return NULL;
    char *s = malloc((size_t)f->len + 1);
    if (s) {
        memcpy(s, f->data, f->len);
        s[f->len] = 0;
    }
    return s;
}

static void set_str(char **dst, const struct jst_field *f)
{
    if (!*dst) /* a field given twice: the first counts (docs/FORMAT.md) */
        *dst = fstr(f);
}

/* Whether this is the first field with key in the record (keys below 512;
 * others always are): repeated single-valued fields count once, the first. */
static int first_of(uint64_t *seen, uint16_t key)
{
    if (key >= 512)
        return 1;
    uint64_t bit = 1ull << (key % 64);
    if (seen[key / 64] & bit)
        return 0;
    seen[key / 64] |= bit;
    return 1;
}

static int num(const struct jst_field *f)
{
    return f->kind == JST_K_U64 || f->kind == JST_K_I64;
}

#define MAX_LIST 256 /* inputs or frames kept per record: a hostile trace gets no more */

static void add_list(char ***v, size_t *n, const struct jst_field *f)
{
    if (*n >= MAX_LIST)
        return;
    char *s = fstr(f);
    char **nv = s ? realloc(*v, (*n + 1) * sizeof(**v)) : NULL;
    if (!nv) {
        free(s);
        return;
    }
    nv[(*n)++] = s;
    *v = nv;
}

/* How a record's field goes into its struct: one table a record type, one
 * reader for them all. */
enum fkind {
    F_U64,  /* uint64_t at off, when numeric; the int at has (if any) set */
    F_FLAG, /* int at off: nonzero numeric; the int at has (if any) set */
    F_STR,  /* char * at off, the first one given */
    F_LIST, /* char ** at off, its count (size_t) at has; repeats kept */
};

#define NO_HAS ((size_t)-1)

struct fmap {
    uint16_t key;
    uint8_t kind;
    size_t off, has;
};

#define U64(t, k, m) {k, F_U64, offsetof(t, m), NO_HAS}
#define U64H(t, k, m, h) {k, F_U64, offsetof(t, m), offsetof(t, h)}
#define FLAG(t, k, m) {k, F_FLAG, offsetof(t, m), NO_HAS}
#define FLAGH(t, k, m, h) {k, F_FLAG, offsetof(t, m), offsetof(t, h)}
#define STR(t, k, m) {k, F_STR, offsetof(t, m), NO_HAS}
#define LIST(t, k, m, n) {k, F_LIST, offsetof(t, m), offsetof(t, n)}

#define SP struct jst_subproc_ev
static const struct fmap subproc_map[] = {
    U64(SP, JST_F_TID, tid),
    U64(SP, JST_F_START_NS, start_ns),
    U64(SP, JST_F_DUR_NS, dur_ns),
    U64(SP, JST_F_STACK_ID, stack_id),
    U64(SP, JST_F_SEQ, seq),
    U64(SP, JST_F_CHILD_PID, child_pid),
    U64(SP, JST_F_SPAWN_HOW, spawn_how),
    U64H(SP, JST_F_WAIT_STATUS, wait_status, has_status),
    U64(SP, JST_F_WAIT_NS, wait_ns),
    U64(SP, JST_F_END_UNSEEN, end_unseen),
    U64(SP, JST_F_OUT_SIZE, out_size),
    STR(SP, JST_F_COMPILER, compiler),
    STR(SP, JST_F_PROGRAM, program),
    STR(SP, JST_F_TARGET, target),
    STR(SP, JST_F_OUTPUT, output),
    STR(SP, JST_F_CWD, cwd),
    LIST(SP, JST_F_INPUT, inputs, n_inputs),
    LIST(SP, JST_F_ARG, args, n_args),
};
#undef SP

#define SE struct jst_sample_ev
static const struct fmap sample_map[] = {
    U64(SE, JST_F_TID, tid),
    U64(SE, JST_F_STACK_ID, stack_id),
    U64(SE, JST_F_SAMPLE_NS, sample_ns),
    U64(SE, JST_F_START_NS, start_ns),
    U64(SE, JST_F_DUR_NS, dur_ns),
    U64(SE, JST_F_SAMPLES, samples),
    U64(SE, JST_F_BEFORE_SEQ, before_seq),
    U64(SE, JST_F_PERIOD_NS, period_ns),
    U64(SE, JST_F_WINDOW_NS, window_ns),
    LIST(SE, JST_F_PY_FRAME, py, n_py),
};
#undef SE

#define FE struct jst_fw_event_ev
static const struct fmap fw_event_map[] = {
    U64(FE, JST_F_TID, tid),
    U64(FE, JST_F_START_NS, start_ns),
    U64(FE, JST_F_DUR_NS, dur_ns),
    U64(FE, JST_F_STACK_ID, stack_id),
    STR(FE, JST_F_FRAMEWORK, framework),
    STR(FE, JST_F_FW_STAGE, stage),
    STR(FE, JST_F_NAME, name),
    STR(FE, JST_F_FW_CACHE, cache),
    STR(FE, JST_F_FW_DETAIL, detail),
};
#undef FE

#define FC struct jst_fw_cache
static const struct fmap fw_cache_map[] = {
    STR(FC, JST_F_FRAMEWORK, framework),
    STR(FC, JST_F_CACHE_PATH, path),
    STR(FC, JST_F_PATH, path),
    STR(FC, JST_F_ENV_NAME, env_name),
    STR(FC, JST_F_FS_TYPE, fs_type),
    STR(FC, JST_F_MOUNT, mount),
    FLAG(FC, JST_F_CACHE_PATH_ENV, from_env),
    FLAGH(FC, JST_F_EXISTS, exists, has_exists),
    FLAG(FC, JST_F_WRITABLE, writable),
    FLAG(FC, JST_F_EPHEMERAL, ephemeral),
    U64H(FC, JST_F_ENTRIES, entries, has_entries),
    FLAG(FC, JST_F_ENTRIES_MORE, entries_more),
    FLAG(FC, JST_F_NOT_DIR, not_dir),
};
#undef FC

/* The record's fields into the struct at base, by the table map (n rows).
 * A single-valued field given twice counts once, the first; a list keeps
 * every one (up to MAX_LIST). */
static void read_fields(void *base, const struct fmap *map, size_t n, struct jst_field_iter *it)
{
    char *b = base;
    uint64_t seen[8] = {0};
    struct jst_field f;
    while (jst_fields_next(it, &f)) {
        const struct fmap *m = NULL;
        for (size_t i = 0; i < n && !m; i++)
            if (map[i].key == f.key)
                m = &map[i];
        if (!m || (m->kind != F_LIST && !first_of(seen, f.key)))
            continue;
        switch (m->kind) {
        case F_U64:
        case F_FLAG:
            if (!num(&f))
                break;
            if (m->kind == F_U64)
                *(uint64_t *)(b + m->off) = f.u64;
            else
                *(int *)(b + m->off) = f.u64 != 0;
            if (m->has != NO_HAS)
                *(int *)(b + m->has) = 1;
            break;
        case F_STR:
            set_str((char **)(b + m->off), &f);
            break;
        case F_LIST:
            if (f.kind == JST_K_STR || f.kind == JST_K_BYTES)
                add_list((char ***)(b + m->off), (size_t *)(b + m->has), &f);
            break;
        }
    }
}

#define NROWS(a) (sizeof(a) / sizeof((a)[0]))

/* jitstall's own listeners (interpose/pyevents.c, file "<jitstall>") are no
 * frame of the program's: a sample in one is its caller's. */
static void drop_own_frames(struct jst_sample_ev *e)
{
    size_t k = 0;
    for (size_t i = 0; i < e->n_py; i++) {
        const char *t = strchr(e->py[i], '\t');
        if (t && !strncmp(t + 1, "<jitstall>\t", 11))
            free(e->py[i]);
        else
            e->py[k++] = e->py[i];
    }
    e->n_py = k;
}

int jst_compile_read_record(struct jst_process *p, const struct jst_record *rec)
{
    struct jst_field_iter it;
    jst_fields_begin(&it, rec);
    void *e;
    switch (rec->type) {
    case JST_REC_COMPILE:
        if ((e = jst_model_push(&p->subprocs, &p->n_subprocs, sizeof(struct jst_subproc_ev))))
            read_fields(e, subproc_map, NROWS(subproc_map), &it);
        break;
    case JST_REC_SAMPLE:
        if ((e = jst_model_push(&p->samples, &p->n_samples, sizeof(struct jst_sample_ev)))) {
            read_fields(e, sample_map, NROWS(sample_map), &it);
            drop_own_frames(e);
        }
        break;
    case JST_REC_FW_CACHE:
        if ((e = jst_model_push(&p->fw_caches, &p->n_fw_caches, sizeof(struct jst_fw_cache))))
            read_fields(e, fw_cache_map, NROWS(fw_cache_map), &it);
        break;
    case JST_REC_FW_EVENT:
        if ((e = jst_model_push(&p->fw_events, &p->n_fw_events, sizeof(struct jst_fw_event_ev))))
            read_fields(e, fw_event_map, NROWS(fw_event_map), &it);
        break;
    default:
        return -1;
    }
    return it.bad;
}

/* Frees what read_fields allocated in n rows of size bytes at v, by the
 * same table: every text and every list (two keys may share a member: freed
 * once), then the rows. */
static void free_rows(void *v, size_t n, size_t size, const struct fmap *map, size_t nmap)
{
    for (size_t i = 0; i < n; i++) {
        char *b = (char *)v + i * size;
        for (size_t m = 0; m < nmap; m++) {
            if (map[m].kind == F_STR) {
                free(*(char **)(b + map[m].off));
                *(char **)(b + map[m].off) = NULL;
            } else if (map[m].kind == F_LIST) {
                char ***l = (char ***)(b + map[m].off);
                size_t *nl = (size_t *)(b + map[m].has);
                for (size_t k = 0; *l && k < *nl; k++)
                    free((*l)[k]);
                free(*l);
                *l = NULL;
                *nl = 0;
            }
        }
    }
    free(v);
}

void jst_compile_records_free(struct jst_process *p)
{
    free_rows(p->subprocs, p->n_subprocs, sizeof *p->subprocs, subproc_map, NROWS(subproc_map));
    free(p->inert_builds);
    p->inert_builds = NULL;
    p->n_inert_builds = 0;
    free(p->shell_dups);
    p->shell_dups = NULL;
    p->n_shell_dups = 0;
    free_rows(p->samples, p->n_samples, sizeof *p->samples, sample_map, NROWS(sample_map));
    free_rows(p->fw_events, p->n_fw_events, sizeof *p->fw_events, fw_event_map,
              NROWS(fw_event_map));
    free_rows(p->fw_caches, p->n_fw_caches, sizeof *p->fw_caches, fw_cache_map,
              NROWS(fw_cache_map));
    p->subprocs = NULL;
    p->samples = NULL;
    p->fw_events = NULL;
    p->fw_caches = NULL;
    p->n_subprocs = p->n_samples = p->n_fw_events = p->n_fw_caches = 0;
    jst_compiles_free(p);
}

/* A program's compiler by its file name, when the record has no compiler. */
static unsigned compiler_of_program(const char *prog)
{
    static const struct {
        const char *name;
        unsigned compiler;
    } rows[] = {
        {"ptxas", JST_CMP_PTXAS},   {"nvcc", JST_CMP_NVCC},           {"cicc", JST_CMP_CICC},
        {"nvlink", JST_CMP_NVLINK}, {"fatbinary", JST_CMP_FATBINARY}, {"gcc", JST_CMP_HOST_CC},
        {"g++", JST_CMP_HOST_CC},   {"cc", JST_CMP_HOST_CC},          {"c++", JST_CMP_HOST_CC},
        {"clang", JST_CMP_HOST_CC}, {"clang++", JST_CMP_HOST_CC},
    };
    const char *b = prog ? strrchr(prog, '/') : NULL;
    b = b ? b + 1 : prog;
    for (size_t i = 0; b && i < sizeof rows / sizeof rows[0]; i++) {
        size_t l = strlen(rows[i].name);
        /* "gcc", "gcc-12", "x86_64-linux-gnu-gcc-12" */
        const char *m = strstr(b, rows[i].name);
        if (m && (m == b || m[-1] == '-') && (m[l] == 0 || m[l] == '-'))
            return rows[i].compiler;
    }
    return 0;
}

/* Options that make a compiler print something about itself and exit
 * without compiling ("ptxas --version", "gcc -dumpversion"); a trailing '*'
 * matches any rest ("-print-file-name=libc.so"). */
static const char *const probe_opts[] = {
    "--version",
    "-version",
    "-V",
    "--help",
    "-help",
    "-h",
    "-v",
    "-###",
    "--dryrun",
    "-dumpversion",
    "-dumpfullversion",
    "-dumpmachine",
    "-dumpspecs",
    "-print-*",
    "--print-*",
    "--list-gpu-arch",
    "--list-gpu-code",
};

static int probe_opt(const char *a, int build)
{
    /* A build tool's one-letter options mean what each tool wants: `ninja
     * -v` (verbose) is how torch builds an extension. */
    if (build && a && a[0] == '-' && a[1] && !a[2])
        return 0;
    for (size_t i = 0; a && i < sizeof probe_opts / sizeof probe_opts[0]; i++) {
        const char *o = probe_opts[i];
        size_t l = strlen(o);
        if (o[l - 1] == '*' ? !strncmp(a, o, l - 1) : !strcmp(a, o))
            return 1;
    }
    return 0;
}

int jst_subproc_is_probe(const struct jst_subproc_ev *e, int build)
{
    if (e->n_args < 2)
        return 0; /* no arguments recorded (JITSTALL_ARGV=0), or none given */
    for (size_t i = 1; i < e->n_args; i++)
        if (!probe_opt(e->args[i], build))
            return 0;
    return 1;
}

/* Programs that build whatever they run: their wait is a build even when
 * nothing under them could be followed. */
static const char *const build_tools[] = {
    "ninja", "samu", "make", "gmake", "cmake", "meson", "bazel", "bazelisk", "scons", "buck2",
};

int jst_build_tool_name(const char *program)
{
    const char *b = program ? strrchr(program, '/') : NULL;
    b = b ? b + 1 : program;
    for (size_t i = 0; b && i < sizeof build_tools / sizeof build_tools[0]; i++)
        if (!strcmp(b, build_tools[i]))
            return 1;
    return 0;
}

/* A build tool's directory: "-C DIR" (ninja, make), else its working
 * directory, else the directory of its output (-o). Allocated, or NULL. */
static char *build_dir(const struct jst_subproc_ev *e)
{
    const char *d = NULL;
    for (size_t i = 1; i < e->n_args && !d; i++) {
        const char *a = e->args[i];
        if (!strcmp(a, "-C") && i + 1 < e->n_args)
            d = e->args[i + 1];
        else if (!strncmp(a, "-C", 2) && a[2])
            d = a + 2;
        else if (!strncmp(a, "--directory=", 12))
            d = a + 12;
    }
    if (d && d[0] != '/' && e->cwd && e->cwd[0] == '/') { /* relative to its cwd */
        size_t n = strlen(e->cwd) + strlen(d) + 2;
        char *s = malloc(n);
        if (s)
            snprintf(s, n, "%s/%s", e->cwd, d);
        return s;
    }
    if (d)
        return strdup(d);
    if (e->cwd)
        return strdup(e->cwd);
    if (e->output && strrchr(e->output, '/')) {
        const char *sl = strrchr(e->output, '/');
        return strndup(e->output, (size_t)(sl - e->output) ? (size_t)(sl - e->output) : 1);
    }
    return NULL;
}

/* Did the thread that started child e go on with traced driver work while
 * the child ran? Then it was not waiting for it: the child is a worker (a
 * compile-worker pool, a helper server), reaped only when the program shuts
 * down, not a build the thread waited for. Compilers it runs are counted as
 * a pool's (jst_first_calls_derive). */
static int thread_went_on(const struct jst_process *p, const struct jst_subproc_ev *e)
{
    uint64_t end = e->start_ns + e->dur_ns;
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct jst_call_ev *c = &p->calls[i];
        if (c->tid == e->tid && c->start_ns > e->start_ns && c->start_ns < end)
            return 1;
    }
    for (size_t i = 0; i < p->n_launches; i++) {
        const struct jst_launch *l = &p->launches[i];
        if (l->tid == e->tid && l->start_ns > e->start_ns && l->start_ns < end)
            return 1;
    }
    return 0;
}

void jst_subprocs_compiles(struct jst_process *p, size_t *cap)
{
    for (size_t i = 0; i < p->n_subprocs; i++) {
        const struct jst_subproc_ev *e = &p->subprocs[i];
        unsigned k = jst_compiler_by_name(e->compiler);
        if (!k)
            k = compiler_of_program(e->program);
        if (!k || jst_subproc_is_probe(e, k == JST_CMP_BUILD))
            continue;
        /* A build tool only when it took time: short children (uname, git
         * rev-parse) are no build; one still running at the end (a worker
         * pool the process never waited for) neither. */
        if (k == JST_CMP_BUILD &&
            (!(e->has_status || e->end_unseen) || e->dur_ns < JST_BUILD_MIN_NS ||
             thread_went_on(p, e)))
            continue;
        int inert = 0; /* a child that built nothing (jst_compiles_link) */
        for (size_t j = 0; k == JST_CMP_BUILD && j < p->n_inert_builds && !inert; j++)
            inert = p->inert_builds[j] == e->child_pid;
        for (size_t j = 0; j < p->n_shell_dups && !inert; j++)
            inert = p->shell_dups[j] == e->start_ns;
        if (inert)
            continue;
        struct jst_compile *c = jst_compiles_push(p, cap);
        if (!c)
            return;
        c->compiler = k;
        c->start_ns = e->start_ns;
        c->dur_ns = e->dur_ns;
        c->in_flight = !e->has_status && !e->end_unseen;
        if (c->in_flight && p->end_ns > e->start_ns && !e->dur_ns)
            c->dur_ns = p->end_ns - e->start_ns;
        c->tid = e->tid;
        c->stack_id = e->stack_id;
        c->seq = e->seq;
        c->pid = e->child_pid;
        c->spawn_how = (unsigned)e->spawn_how;
        c->target = e->target ? strdup(e->target) : NULL;
        const char *what = e->output ? e->output : e->n_inputs ? e->inputs[0] : e->program;
        if (k == JST_CMP_BUILD) { /* the tool and what it built */
            what = e->program;
            c->dir = build_dir(e);
        }
        c->what = what ? strdup(what) : NULL;
        if (e->has_status) {
            int st = (int)e->wait_status;
            c->has_exit = 1;
            c->exit_status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? -WTERMSIG(st) : st;
        }
    }
}
