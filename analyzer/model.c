/*
 * Reads trace files into the analyzer's model (analyzer/model.h) and derives
 * the figures every subcommand shows: time to first kernel and its breakdown,
 * and the process's JIT time split into compile and cache load.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "model.h"
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

/* Grows the array *vp (of *n elements of size sz) by one zeroed element and
 * returns it; NULL when out of memory. Capacity doubles from 4 up, so it is
 * implied by *n and need not be stored. */
static size_t model_oom; /* allocations that failed while reading one file */

/* Memory set aside while reading and given back at the first allocation
 * that fails, so that the command can still say what happened and print
 * what it has: the process is marked partial and no further record of it is
 * kept. */
#define MODEL_RESERVE (8u << 20)
static void *model_reserve;

static void *push(void *vp, size_t *n, size_t sz)
{
    void **v = vp;
    if (*n == 0 || (*n >= 4 && (*n & (*n - 1)) == 0)) {
        size_t cap = *n == 0 ? 4 : *n * 2;
        void *nv = cap > SIZE_MAX / sz ? NULL : realloc(*v, cap * sz);
        if (!nv) {
            model_oom++;
            return NULL;
        }
        *v = nv;
    }
    void *e = (char *)*v + *n * sz;
    memset(e, 0, sz);
    (*n)++;
    return e;
}

static char *dupn(const uint8_t *p, uint32_t len)
{
    char *s = malloc((size_t)len + 1);
    if (!s) {
        model_oom++;
        return NULL;
    }
    memcpy(s, p, len);
    s[len] = '\0';
    return s;
}

/* Replaces *dst with a copy of the string field (the last one wins). */
static void set_str(char **dst, const struct jst_field *f)
{
    if (f->kind != JST_K_STR && f->kind != JST_K_BYTES)
        return;
    char *s = dupn(f->data, f->len);
    if (!s)
        return;
    free(*dst);
    *dst = s;
}

static void add_str(char ***v, size_t *n, const struct jst_field *f)
{
    if (f->kind != JST_K_STR && f->kind != JST_K_BYTES)
        return;
    char *s = dupn(f->data, f->len);
    if (!s)
        return;
    char **slot = push(v, n, sizeof(char *));
    if (!slot) {
        free(s);
        return;
    }
    *slot = s;
}

/* A repeated string field of a call (kernel, entry), interned. */
static void add_istr(struct jst_process *p, char ***v, size_t *n, const struct jst_field *f)
{
    char *s = jst_model_intern(p, f);
    char **slot = s ? push(v, n, sizeof(char *)) : NULL;
    if (slot)
        *slot = s;
}

static int is_num(const struct jst_field *f)
{
    return f->kind == JST_K_U64 || f->kind == JST_K_I64;
}

static void read_process(struct jst_process *p, const struct jst_record *rec,
                         struct jst_field_iter *it)
{
    struct jst_field f;
    (void)rec;
    while (jst_fields_next(it, &f)) {
        switch (f.key) {
        case JST_F_PID:
            if (is_num(&f))
                p->pid = f.u64;
            break;
        case JST_F_PPID:
            if (is_num(&f))
                p->ppid = f.u64;
            break;
        case JST_F_HOST:
            set_str(&p->host, &f);
            break;
        case JST_F_EXE:
            set_str(&p->exe, &f);
            break;
        case JST_F_CWD:
            set_str(&p->cwd, &f);
            break;
        case JST_F_JST_VERSION:
            set_str(&p->jst_version, &f);
            break;
        case JST_F_ARG:
            add_str(&p->argv, &p->argc, &f);
            break;
        case JST_F_ENV:
            add_str(&p->env, &p->n_env, &f);
            break;
        case JST_F_REALTIME_NS:
            if (is_num(&f))
                p->realtime_ns = f.u64;
            break;
        case JST_F_MONO_NS:
            if (is_num(&f))
                p->mono_ns = f.u64;
            break;
        case JST_F_PROC_START_NS:
            if (is_num(&f))
                p->proc_start_ns = f.u64;
            break;
        default:
            break;
        }
    }
}

static void read_device(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_device *d = push(&p->devices, &p->n_devices, sizeof(*d));
    struct jst_field f;
    if (!d)
        return;
    while (jst_fields_next(it, &f)) {
        switch (f.key) {
        case JST_F_DEVICE:
            if (is_num(&f))
                d->ordinal = (unsigned)f.u64;
            break;
        case JST_F_CC_MAJOR:
            if (is_num(&f))
                d->cc_major = (unsigned)f.u64;
            break;
        case JST_F_CC_MINOR:
            if (is_num(&f))
                d->cc_minor = (unsigned)f.u64;
            break;
        case JST_F_DEV_NAME:
            set_str(&d->name, &f);
            break;
        case JST_F_DRIVER_VERSION:
            if (is_num(&f))
                d->driver_version = f.u64;
            break;
        case JST_F_DRIVER_RELEASE:
            set_str(&d->driver_release, &f);
            break;
        default:
            break;
        }
    }
}

static void read_call(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_call_ev *c = push(&p->calls, &p->n_calls, sizeof(*c));
    struct jst_field f;
    if (!c)
        return;
    while (jst_fields_next(it, &f)) {
        int num = is_num(&f);
        switch (f.key) {
        case JST_F_SEQ:
            if (num)
                c->seq = f.u64;
            break;
        case JST_F_CALL_ID:
            if (num)
                c->call = (unsigned)f.u64;
            break;
        case JST_F_CALL:
            if ((f.kind == JST_K_STR || f.kind == JST_K_BYTES) && !c->call_name)
                c->call_name = jst_model_intern(p, &f);
            break;
        case JST_F_ROUTE:
            if (num)
                c->route = (unsigned)f.u64;
            break;
        case JST_F_TID:
            if (num)
                c->tid = f.u64;
            break;
        case JST_F_START_NS:
            if (num)
                c->start_ns = f.u64;
            break;
        case JST_F_DUR_NS:
            if (num)
                c->dur_ns = f.u64;
            break;
        case JST_F_RESULT:
            if (num)
                c->result = (int64_t)f.u64;
            break;
        case JST_F_HANDLE:
            if (num)
                c->handle = f.u64;
            break;
        case JST_F_FUNC:
            if (num)
                c->func = f.u64;
            break;
        case JST_F_PARENT:
            if (num)
                c->parent = f.u64;
            break;
        case JST_F_CTX:
            if (num)
                c->ctx = f.u64;
            break;
        case JST_F_NAME:
            if ((f.kind == JST_K_STR || f.kind == JST_K_BYTES) && !c->name)
                c->name = jst_model_intern(p, &f);
            break;
        case JST_F_PATH:
            if ((f.kind == JST_K_STR || f.kind == JST_K_BYTES) && !c->path)
                c->path = jst_model_intern(p, &f);
            break;
        case JST_F_STACK_ID:
            if (num)
                c->stack_id = f.u64;
            break;
        case JST_F_IMAGE_KIND:
            if (num)
                c->image_kind = (unsigned)f.u64;
            break;
        case JST_F_IMAGE_SIZE:
            if (num)
                c->image_size = f.u64;
            break;
        case JST_F_IMAGE_HASH:
            if (num)
                c->image_hash = f.u64;
            break;
        case JST_F_SOURCE:
            if ((f.kind == JST_K_STR || f.kind == JST_K_BYTES) && !c->source)
                c->source = jst_model_intern(p, &f);
            break;
        case JST_F_VERDICT:
            if (num)
                c->verdict = (unsigned)f.u64;
            break;
        case JST_F_SASS_ARCH:
            if ((f.kind == JST_K_STR || f.kind == JST_K_BYTES) && !c->sass_arch)
                c->sass_arch = jst_model_intern(p, &f);
            break;
        case JST_F_JIT_FROM:
            if ((f.kind == JST_K_STR || f.kind == JST_K_BYTES) && !c->jit_from)
                c->jit_from = jst_model_intern(p, &f);
            break;
        case JST_F_REASON:
            if ((f.kind == JST_K_STR || f.kind == JST_K_BYTES) && !c->reason)
                c->reason = jst_model_intern(p, &f);
            break;
        case JST_F_KERNEL:
            add_istr(p, &c->kernels, &c->n_kernels, &f);
            break;
        case JST_F_ENTRY:
            add_istr(p, &c->entries, &c->n_entries, &f);
            break;
        case JST_F_PTX_SIZE:
            if (num)
                c->ptx_size = f.u64;
            break;
        case JST_F_TARGET_CC:
            if (num)
                c->target_cc = (unsigned)f.u64;
            break;
        case JST_F_CACHE:
            if (num)
                c->cache = (unsigned)f.u64;
            break;
        case JST_F_CACHE_REASON:
            if (num)
                c->cache_reason = (unsigned)f.u64;
            break;
        case JST_F_CACHE_NEW_BYTES:
            if (num)
                c->cache_new_bytes = f.u64;
            break;
        case JST_F_CACHE_NEW_ENTRIES:
            if (num)
                c->cache_new_entries = f.u64;
            break;
        case JST_F_JIT_INPUT:
            if (num) {
                c->has_jit_input = 1;
                c->jit_input = (unsigned)f.u64;
            }
            break;
        case JST_F_CUBIN_SIZE:
            if (num)
                c->cubin_size = f.u64;
            break;
        case JST_F_RTC_PTX_HASH:
        case JST_F_RTC_PTX_HASH_T:
            if (num)
                c->rtc_ptx_hash[f.key - JST_F_RTC_PTX_HASH] = f.u64;
            break;
        case JST_F_LOAD_DEVICE:
            if (num) {
                c->has_load_device = 1;
                c->load_device = (unsigned)f.u64;
            }
            break;
        default:
            break;
        }
    }
}

static void read_cache_state(struct jst_process *p, const struct jst_record *rec,
                             struct jst_field_iter *it)
{
    uint64_t phase = 0;
    jst_rec_get_u64(rec, JST_F_PHASE, &phase);
    struct jst_cache_state *cs = phase ? &p->cache_end : &p->cache_start;
    struct jst_field f;
    free(cs->path);
    memset(cs, 0, sizeof(*cs));
    cs->present = 1;
    while (jst_fields_next(it, &f)) {
        int num = is_num(&f);
        switch (f.key) {
        case JST_F_CACHE_PATH:
            set_str(&cs->path, &f);
            break;
        case JST_F_CACHE_PATH_ENV:
            if (num)
                cs->from_env = f.u64 != 0;
            break;
        case JST_F_EXISTS:
            if (num)
                cs->exists = f.u64 != 0;
            break;
        case JST_F_WRITABLE:
            if (num)
                cs->writable = f.u64 != 0;
            break;
        case JST_F_DISABLED:
            if (num)
                cs->disabled = f.u64 != 0;
            break;
        case JST_F_SIZE_BYTES:
            if (num)
                cs->size_bytes = f.u64;
            break;
        case JST_F_ENTRIES:
            if (num)
                cs->entries = f.u64;
            break;
        case JST_F_MAX_BYTES:
            if (num)
                cs->max_bytes = f.u64;
            break;
        default:
            break;
        }
    }
}

/* The preload writes at most 128 Python frames per stack; a damaged or
 * hostile trace cannot make symbolization scan more than this many. */
#define MAX_PY_FRAMES 1024

static void read_stack(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_stack *s = push(&p->stacks, &p->n_stacks, sizeof(*s));
    struct jst_field f;
    size_t n_native = 0;
    if (!s)
        return;
    while (jst_fields_next(it, &f)) {
        if (f.key == JST_F_STACK_ID && is_num(&f)) {
            s->id = f.u64;
        } else if (f.key == JST_F_IPS && (f.kind == JST_K_BYTES || f.kind == JST_K_STR)) {
            size_t n = f.len / 8;
            uint64_t *ips = n ? malloc(n * sizeof(uint64_t)) : NULL;
            if (n && !ips) {
                model_oom++;
                continue;
            }
            for (size_t i = 0; i < n; i++) {
                uint64_t v = 0;
                for (int b = 7; b >= 0; b--)
                    v = (v << 8) | f.data[i * 8 + (size_t)b];
                ips[i] = v;
            }
            free(s->ips);
            s->ips = ips;
            s->n = n;
        } else if (f.key == JST_F_PY_FRAME && f.kind == JST_K_STR && s->n_py < MAX_PY_FRAMES) {
            add_str(&s->py_frames, &s->n_py, &f);
        } else if (f.key == JST_F_PY_NATIVE && is_num(&f) && n_native < MAX_PY_FRAMES) {
            uint64_t *v = push(&s->py_native, &n_native, sizeof(*v));
            if (v)
                *v = f.u64;
        }
    }
    /* A frame without its native index goes after the native frames. */
    uint64_t *v = s->n_py > n_native ? realloc(s->py_native, s->n_py * sizeof(*v)) : NULL;
    if (v) {
        for (size_t i = n_native; i < s->n_py; i++)
            v[i] = UINT64_MAX;
        s->py_native = v;
    } else if (s->n_py > n_native) {
        while (s->n_py > n_native)
            free(s->py_frames[--s->n_py]);
    }
}

static void read_modmap(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_modmap *m = push(&p->mods, &p->n_mods, sizeof(*m));
    struct jst_field f;
    if (!m)
        return;
    m->seq_after = p->n_calls;
    while (jst_fields_next(it, &f)) {
        int num = is_num(&f);
        switch (f.key) {
        case JST_F_MOD_EVENT:
            if (num)
                m->event = (unsigned)f.u64;
            break;
        case JST_F_MOD_PATH:
            set_str(&m->path, &f);
            break;
        case JST_F_MOD_BIAS:
            if (num)
                m->bias = f.u64;
            break;
        case JST_F_MOD_START:
            if (num)
                m->start = f.u64;
            break;
        case JST_F_MOD_END:
            if (num)
                m->end = f.u64;
            break;
        case JST_F_FILE_SIZE:
            if (num)
                m->file_size = f.u64;
            break;
        case JST_F_MTIME_NS:
            if (num)
                m->mtime_ns = f.u64;
            break;
        case JST_F_BUILD_ID:
            if (f.kind == JST_K_BYTES || f.kind == JST_K_STR) {
                uint8_t *b = f.len ? malloc(f.len) : NULL;
                if (f.len && !b) {
                    model_oom++;
                    break;
                }
                if (f.len)
                    memcpy(b, f.data, f.len);
                free(m->build_id);
                m->build_id = b;
                m->build_id_len = f.len;
            }
            break;
        default:
            break;
        }
    }
}

static void read_cupti(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_cupti_ev *e = push(&p->cupti, &p->n_cupti, sizeof(*e));
    struct jst_field f;
    if (!e)
        return;
    while (jst_fields_next(it, &f)) {
        int num = is_num(&f);
        switch (f.key) {
        case JST_F_CUPTI_OP:
            if (num)
                e->op = (unsigned)f.u64;
            break;
        case JST_F_CUPTI_START_NS:
            if (num)
                e->start_ns = f.u64;
            break;
        case JST_F_CUPTI_END_NS:
            if (num)
                e->end_ns = f.u64;
            break;
        case JST_F_CUPTI_LOAD_SEQ:
            if (num)
                e->load_seq = f.u64;
            break;
        case JST_F_CUPTI_CACHE_SIZE:
            if (num)
                e->cache_size = f.u64;
            break;
        case JST_F_CUPTI_CACHE_PATH:
            set_str(&e->cache_path, &f);
            break;
        default:
            break;
        }
    }
}

static void read_note(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_field f;
    while (jst_fields_next(it, &f))
        if (f.key == JST_F_MESSAGE)
            add_str(&p->notes, &p->n_notes, &f);
}

static void read_end(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_field f;
    p->has_end = 1;
    while (jst_fields_next(it, &f)) {
        if (f.key == JST_F_EXIT_STATUS && is_num(&f))
            p->exit_status = (int64_t)f.u64;
        else if (f.key == JST_F_START_NS && is_num(&f))
            p->end_ns = f.u64;
        else if (f.key == JST_F_END_REASON)
            set_str(&p->end_reason, &f);
        else if (f.key == JST_F_SELF_NS)
            p->self_ns = f.u64;
    }
}

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

static void free_strv(char **v, size_t n);

/* A call's own memory: its string arrays (the strings are interned in the
 * process's table and freed with it). */
static void free_call(struct jst_call_ev *c)
{
    free(c->kernels);
    free(c->entries);
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
    t = sat_add(t, d);
    if (t > p->last_record_ns)
        p->last_record_ns = t;
}

/* Reads a BEGIN record into *begins (not into the calls). */
static void read_begin(struct jst_process *p, struct jst_field_iter *it,
                       struct jst_call_ev **begins, size_t *n_begins)
{
    size_t n = p->n_calls;
    read_call(p, it);
    if (p->n_calls == n)
        return;
    struct jst_call_ev c = p->calls[--p->n_calls];
    struct jst_call_ev *b = push(begins, n_begins, sizeof(*b));
    if (b)
        *b = c;
    else
        free_call(&c);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A BEGIN whose call record is in the trace said nothing new; one without is
 * a call in flight when the trace ends: it joins the calls, flagged. */
static void resolve_begins(struct jst_process *p, struct jst_call_ev *begins, size_t n_begins)
{
    uint64_t *seqs = p->n_calls ? malloc(p->n_calls * sizeof(*seqs)) : NULL;
    for (size_t i = 0; seqs && i < p->n_calls; i++)
        seqs[i] = p->calls[i].seq;
    if (seqs)
        qsort(seqs, p->n_calls, sizeof(*seqs), cmp_u64);
    size_t n_seqs = seqs ? p->n_calls : 0;
    for (size_t i = 0; i < n_begins; i++) {
        struct jst_call_ev *b = &begins[i];
        int done = b->seq && n_seqs && bsearch(&b->seq, seqs, n_seqs, sizeof(*seqs), cmp_u64);
        struct jst_call_ev *c = done ? NULL : push(&p->calls, &p->n_calls, sizeof(*c));
        if (!c) {
            free_call(b);
            continue;
        }
        *c = *b;
        c->in_flight = 1;
    }
    free(seqs);
    free(begins);
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
    struct jst_process *p = push(&run->procs, &run->n_procs, sizeof(*p));
    if (!p) {
        jst_reader_close(rd);
        snprintf(err, errlen, "%s: out of memory", path);
        run->n_unreadable++;
        return -1;
    }
    model_oom = 0;
    if (!model_reserve)
        model_reserve = malloc(MODEL_RESERVE);
    p->trace_path = strdup(path);
    p->format_version = jst_reader_version(rd);
    p->exit_status = -1;

    struct jst_record rec;
    size_t n_rec = 0, n_begins = 0;
    struct jst_call_ev *begins = NULL;
    int r;
    while ((r = jst_reader_next(rd, &rec)) == 1) {
        struct jst_field_iter it;
        n_rec++;
        note_record_time(p, &rec);
        if (model_oom || p->n_oom) { /* out of memory: count what is not kept */
            free(model_reserve);
            model_reserve = NULL;
            p->n_oom++;
            continue;
        }
        jst_fields_begin(&it, &rec);
        switch (rec.type) {
        case JST_REC_BEGIN:
            read_begin(p, &it, &begins, &n_begins);
            break;
        case JST_REC_PROGRESS:
            break;
        case JST_REC_PROCESS:
            read_process(p, &rec, &it);
            break;
        case JST_REC_DEVICE:
            read_device(p, &it);
            break;
        case JST_REC_CALL:
            if (!run->keep_calls && jst_model_fold_call(p, &rec))
                break;
            read_call(p, &it);
            break;
        case JST_REC_CACHE_STATE:
            read_cache_state(p, &rec, &it);
            break;
        case JST_REC_STACK:
            read_stack(p, &it);
            break;
        case JST_REC_MODMAP:
            read_modmap(p, &it);
            break;
        case JST_REC_CUPTI_JIT:
            read_cupti(p, &it);
            break;
        case JST_REC_NOTE:
            read_note(p, &it);
            break;
        case JST_REC_END:
            read_end(p, &it);
            break;
        case JST_REC_RANGE:
            jst_queries_read(p, &it);
            break;
        default:
            p->n_unknown++;
            break;
        }
        if (it.bad) {
            p->damage =
                xasprintf("record %zu (%s) has a field past its end", n_rec,
                          jst_rec_type_name(rec.type) ? jst_rec_type_name(rec.type) : "unknown");
            break;
        }
    }
    if (r < 0 && !p->damage) {
        const char *e = jst_reader_error(rd);
        p->damage = xasprintf("after record %zu: %s", n_rec, e && *e ? e : "damaged data");
    }
    if (jst_reader_damaged(rd) && !p->damage) /* skipped blocks; the rest was read */
        p->damage = xasprintf("%s", jst_reader_damage(rd));
    p->truncated = jst_reader_truncated(rd) || !p->has_end;
    jst_reader_close(rd);
    resolve_begins(p, begins, n_begins);
    jst_model_derive(p);
    p->n_oom += model_oom;
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
    if (stat(path, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        run->n_unreadable++;
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return add_file(run, path, err, errlen);

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
        char **slot = name ? push(&names, &n, sizeof(char *)) : NULL;
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
    if (ok + partial == 0)
        return -1;
    return (partial || bad) ? 1 : 0;
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
    return c->verdict != JST_V_NONE || jst_is_jit_event(p, c) || jst_is_rtc_call(c->call) ||
           c->in_flight;
}

int jst_model_is_partial(const struct jst_process *p)
{
    return p->truncated || p->damage || p->n_oom;
}

int jst_model_before_first_kernel(const struct jst_process *p, const struct jst_call_ev *c)
{
    return !p->first_launch_ns || c->start_ns < p->first_launch_ns;
}

int jst_model_is_culprit(const struct jst_process *p, const struct jst_call_ev *c)
{
    return jst_is_jit_event(p, c) || jst_is_rtc_call(c->call) || c->in_flight ||
           c->verdict == JST_V_NO_COMPATIBLE || c->verdict == JST_V_JIT_DISABLED ||
           c->verdict == JST_V_DAMAGED;
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

void jst_model_derive(struct jst_process *p)
{
    uint64_t last_end = p->last_record_ns > p->fold_last_end ? p->last_record_ns : p->fold_last_end;
    uint64_t first_start = p->fold_first_start;
    p->first_launch_ns = p->fold_first_launch;
    p->n_in_flight = 0;
    jst_model_index(p);
    for (size_t i = 0; i < p->n_calls; i++) {
        struct jst_call_ev *c = &p->calls[i];
        if (c->in_flight) { /* it had run at least until the last record */
            c->dur_ns = p->last_record_ns > c->start_ns ? p->last_record_ns - c->start_ns : 0;
            p->n_in_flight++;
        }
        c->cupti_compile_ns = c->cupti_cache_load_ns = c->cupti_cache_store_ns = 0;
        if (c->start_ns && (!first_start || c->start_ns < first_start))
            first_start = c->start_ns;
        if (ev_end(c->start_ns, c->dur_ns) > last_end)
            last_end = ev_end(c->start_ns, c->dur_ns);
        if (is_launch(c->call) && c->start_ns &&
            (!p->first_launch_ns || c->start_ns < p->first_launch_ns))
            p->first_launch_ns = c->start_ns;
    }
    if (p->n_cupti)
        jst_model_span_build(p);
    for (size_t i = 0; i < p->n_cupti; i++) {
        struct jst_cupti_ev *e = &p->cupti[i];
        struct jst_call_ev *c = cupti_owner(p, e);
        uint64_t d = e->end_ns > e->start_ns ? e->end_ns - e->start_ns : 0;
        if (e->end_ns > last_end)
            last_end = e->end_ns;
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
    jst_queries_derive(p);
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
    free_strv(p->argv, p->argc);
    free_strv(p->env, p->n_env);
    for (size_t i = 0; i < p->n_devices; i++) {
        free(p->devices[i].name);
        free(p->devices[i].driver_release);
    }
    free(p->devices);
    for (size_t i = 0; i < p->n_calls; i++)
        free_call(&p->calls[i]);
    free(p->calls);
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
    jst_queries_free(p);
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
