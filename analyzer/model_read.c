/*
 * Reads one trace record into the model. The tables of analyzer/model_schema.h
 * say where each field goes; this file expands them into one switch per record
 * type and stores the values, taking the first occurrence of a field that is
 * not repeated (docs/FORMAT.md, Fields). Only what a table cannot say (the
 * cache state's phase, a stack's Python frames, BEGIN records) is code here.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "model_read.h"
#include "model_index.h"
#include "model_schema.h"

static size_t model_oom; /* allocations that failed while reading one file */

size_t jst_model_oom(void)
{
    return model_oom;
}

void jst_model_oom_reset(void)
{
    model_oom = 0;
}

/* Capacity doubles from 4 up, so it is implied by *n and need not be stored. */
void *jst_model_push(void *vp, size_t *n, size_t sz)
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

static int is_num(const struct jst_field *f)
{
    return f->kind == JST_K_U64 || f->kind == JST_K_I64;
}

static int is_text(const struct jst_field *f)
{
    return f->kind == JST_K_STR || f->kind == JST_K_BYTES;
}

static int add_str(char ***v, size_t *n, const struct jst_field *f)
{
    char *s = is_text(f) ? dupn(f->data, f->len) : NULL;
    char **slot = s ? jst_model_push(v, n, sizeof(char *)) : NULL;
    if (!slot) {
        free(s);
        return 0;
    }
    *slot = s;
    return 1;
}

/* ---- the schema's slots ---- */

enum ms_how {
    MS_U64,
    MS_I64,
    MS_UINT,
    MS_BOOL,
    MS_STR,
    MS_ISTR,
    MS_UINT_HAS,
    MS_STRS,
    MS_ISTRS,
    MS_U64S,
    MS_BYTES,
    MS_SPECIAL,
};

/* Where one field goes: a member at off, and aux (count, length or
 * presence flag) for the hows that need one. */
struct ms_slot {
    uint8_t how;
    size_t off, aux;
};

typedef const struct ms_slot *(*ms_find_fn)(uint16_t key);

/* A table row whose member has another type than its how stores fails to
 * compile: the table cannot write an unsigned into a uint64_t. */
// clang-format off
#define MS_TYPE_OK(h, e)                                                          \
    _Generic((e),                                                                 \
             uint64_t: MS_##h == MS_U64,                                          \
             int64_t: MS_##h == MS_I64,                                           \
             unsigned: MS_##h == MS_UINT || MS_##h == MS_UINT_HAS,                \
             int: MS_##h == MS_BOOL,                                              \
             char *: MS_##h == MS_STR || MS_##h == MS_ISTR,                       \
             char **: MS_##h == MS_STRS || MS_##h == MS_ISTRS,                    \
             uint64_t *: MS_##h == MS_U64S,                                       \
             uint8_t *: MS_##h == MS_BYTES,                                       \
             default: 0)

/* The aux member of an A row: a count or length (size_t), or the presence
 * flag of UINT_HAS (int). */
#define MS_AUX_OK(h, e)                                                           \
    _Generic((e),                                                                 \
             size_t: MS_##h == MS_STRS || MS_##h == MS_ISTRS ||                   \
                     MS_##h == MS_U64S || MS_##h == MS_BYTES,                     \
             int: MS_##h == MS_UINT_HAS,                                          \
             default: 0)
// clang-format on

#define MS_SLOT(k, h, m, a, aux_ok)                                                                \
    case JST_F_##k: {                                                                              \
        _Static_assert(JST_F_##k < 512, "the seen bitmap holds keys below 512");                   \
        _Static_assert(MS_TYPE_OK(h, ((ms_type *)0)->m), "member type does not fit " #h);          \
        _Static_assert(aux_ok, "aux member type does not fit " #h);                                \
        static const struct ms_slot s = {MS_##h, offsetof(ms_type, m), offsetof(ms_type, a)};      \
        return &s;                                                                                 \
    }
#define MS_F(k, h, m) MS_SLOT(k, h, m, m, MS_##h < MS_UINT_HAS)
#define MS_A(k, h, m, a) MS_SLOT(k, h, m, a, MS_AUX_OK(h, ((ms_type *)0)->a))
#define MS_S(k)                                                                                    \
    case JST_F_##k: {                                                                              \
        static const struct ms_slot s = {MS_SPECIAL, 0, 0};                                        \
        return &s;                                                                                 \
    }

/* The reader's switch for one record type: key -> slot, NULL when the
 * record does not use the key. */
#define MS_FIND(fn, type, TABLE)                                                                   \
    static const struct ms_slot *fn(uint16_t key)                                                  \
    {                                                                                              \
        typedef type ms_type;                                                                      \
        switch (key) {                                                                             \
            TABLE(MS_F, MS_A, MS_S)                                                                \
        default:                                                                                   \
            return NULL;                                                                           \
        }                                                                                          \
    }

MS_FIND(process_slot, struct jst_process, JST_MODEL_PROCESS)
MS_FIND(device_slot, struct jst_device, JST_MODEL_DEVICE)
MS_FIND(call_slot, struct jst_call_ev, JST_MODEL_CALL)
MS_FIND(cache_state_slot, struct jst_cache_state, JST_MODEL_CACHE_STATE)
MS_FIND(stack_slot, struct jst_stack, JST_MODEL_STACK)
MS_FIND(modmap_slot, struct jst_modmap, JST_MODEL_MODMAP)
MS_FIND(cupti_slot, struct jst_cupti_ev, JST_MODEL_CUPTI)
MS_FIND(note_slot, struct jst_process, JST_MODEL_NOTE)
MS_FIND(end_slot, struct jst_process, JST_MODEL_END)
MS_FIND(range_slot, struct jst_range_ev, JST_MODEL_RANGE)
MS_FIND(ready_slot, struct jst_ready, JST_MODEL_READY)

/* BYTES of little-endian u64s into a new array at *dst (count at *n). */
static int store_u64s(uint64_t **dst, size_t *n, const struct jst_field *f)
{
    size_t k = f->len / 8;
    uint64_t *v = k ? malloc(k * sizeof(*v)) : NULL;
    if (k && !v) {
        model_oom++;
        return 0;
    }
    for (size_t i = 0; i < k; i++) {
        uint64_t x = 0;
        for (int b = 7; b >= 0; b--)
            x = (x << 8) | f->data[i * 8 + (size_t)b];
        v[i] = x;
    }
    free(*dst);
    *dst = v;
    *n = k;
    return 1;
}

static int store_bytes(uint8_t **dst, size_t *n, const struct jst_field *f)
{
    uint8_t *b = f->len ? malloc(f->len) : NULL;
    if (f->len && !b) {
        model_oom++;
        return 0;
    }
    if (f->len)
        memcpy(b, f->data, f->len);
    free(*dst);
    *dst = b;
    *n = f->len;
    return 1;
}

/* Stores f through slot s into obj; 0 when the field's kind does not fit
 * (it then counts as absent) or memory ran out. */
static int ms_store(struct jst_process *p, char *obj, const struct ms_slot *s,
                    const struct jst_field *f)
{
    void *m = obj + s->off, *aux = obj + s->aux;
    if (s->how <= MS_BOOL || s->how == MS_UINT_HAS) {
        if (!is_num(f))
            return 0;
        if (s->how == MS_U64 || s->how == MS_I64)
            memcpy(m, &f->u64, sizeof(uint64_t));
        else if (s->how == MS_BOOL)
            *(int *)m = f->u64 != 0;
        else
            *(unsigned *)m = (unsigned)f->u64;
        if (s->how == MS_UINT_HAS)
            *(int *)aux = 1;
        return 1;
    }
    if (!is_text(f))
        return 0;
    char *str = NULL;
    switch (s->how) {
    case MS_STR:
        if (!(str = dupn(f->data, f->len)))
            return 0;
        free(*(char **)m);
        *(char **)m = str;
        return 1;
    case MS_ISTR:
        return (*(char **)m = jst_model_intern(p, f)) != NULL;
    case MS_STRS:
        return add_str(m, aux, f);
    case MS_ISTRS: {
        str = jst_model_intern(p, f);
        char **slot = str ? jst_model_push(m, aux, sizeof(char *)) : NULL;
        if (slot)
            *slot = str;
        return slot != NULL;
    }
    case MS_U64S:
        return store_u64s(m, aux, f);
    case MS_BYTES:
        return store_bytes(m, aux, f);
    default:
        return 0;
    }
}

/* One field into obj through the record's switch. Returns 1 when the
 * record's reader handles the field itself (an S row), else 0. seen holds
 * the keys stored so far in this record: a repeat of a field that is not
 * meant to repeat is ignored, the first occurrence wins. */
static int ms_field(struct jst_process *p, void *obj, ms_find_fn find, const struct jst_field *f,
                    uint64_t seen[8])
{
    const struct ms_slot *s = find(f->key);
    if (!s)
        return 0;
    if (s->how == MS_SPECIAL)
        return 1;
    uint64_t bit = UINT64_C(1) << (f->key & 63);
    int once = s->how != MS_STRS && s->how != MS_ISTRS;
    if (once && (seen[f->key >> 6] & bit))
        return 0;
    if (ms_store(p, obj, s, f) && once)
        seen[f->key >> 6] |= bit;
    return 0;
}

/* A record whose fields all have a row in its table. */
static void ms_read(struct jst_process *p, void *obj, ms_find_fn find, struct jst_field_iter *it)
{
    uint64_t seen[8] = {0};
    struct jst_field f;
    while (jst_fields_next(it, &f))
        ms_field(p, obj, find, &f, seen);
}

/* ---- records ---- */

void jst_model_read_range(struct jst_process *p, struct jst_range_ev *ev, struct jst_field_iter *it)
{
    ms_read(p, ev, range_slot, it);
}

static void read_call(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_call_ev *c = jst_model_push(&p->calls, &p->n_calls, sizeof(*c));
    if (c)
        ms_read(p, c, call_slot, it);
}

static void read_device(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_device *d = jst_model_push(&p->devices, &p->n_devices, sizeof(*d));
    if (d)
        ms_read(p, d, device_slot, it);
}

static void read_cache_state(struct jst_process *p, const struct jst_record *rec,
                             struct jst_field_iter *it)
{
    uint64_t phase = 0;
    jst_rec_get_u64(rec, JST_F_PHASE, &phase);
    struct jst_cache_state *cs = phase ? &p->cache_end : &p->cache_start;
    free(cs->path);
    memset(cs, 0, sizeof(*cs));
    cs->present = 1;
    ms_read(p, cs, cache_state_slot, it);
}

/* The preload writes at most 128 Python frames per stack; a damaged or
 * hostile trace cannot make symbolization scan more than this many. */
#define MAX_PY_FRAMES 1024

static void read_stack(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_stack *s = jst_model_push(&p->stacks, &p->n_stacks, sizeof(*s));
    uint64_t seen[8] = {0};
    struct jst_field f;
    size_t n_native = 0;
    if (!s)
        return;
    while (jst_fields_next(it, &f)) {
        if (!ms_field(p, s, stack_slot, &f, seen))
            continue;
        if (f.key == JST_F_PY_FRAME && f.kind == JST_K_STR && s->n_py < MAX_PY_FRAMES) {
            add_str(&s->py_frames, &s->n_py, &f);
        } else if (f.key == JST_F_PY_NATIVE && is_num(&f) && n_native < MAX_PY_FRAMES) {
            uint64_t *v = jst_model_push(&s->py_native, &n_native, sizeof(*v));
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
    /* jitstall's own listeners (interpose/pyevents.c) are no frame of the
     * program's */
    size_t k = 0;
    for (size_t i = 0; i < s->n_py; i++) {
        const char *t = strchr(s->py_frames[i], '\t');
        if (t && !strncmp(t + 1, "<jitstall>\t", 11)) {
            free(s->py_frames[i]);
            continue;
        }
        s->py_native[k] = s->py_native[i];
        s->py_frames[k++] = s->py_frames[i];
    }
    s->n_py = k;
}

static void read_modmap(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_modmap *m = jst_model_push(&p->mods, &p->n_mods, sizeof(*m));
    if (!m)
        return;
    m->seq_after = p->n_calls;
    ms_read(p, m, modmap_slot, it);
}

static void read_cupti(struct jst_process *p, struct jst_field_iter *it)
{
    struct jst_cupti_ev *e = jst_model_push(&p->cupti, &p->n_cupti, sizeof(*e));
    if (e)
        ms_read(p, e, cupti_slot, it);
}

/* Reads a BEGIN record into b (not into the calls). */
static void read_begin(struct jst_process *p, struct jst_field_iter *it, struct jst_begins *b)
{
    size_t n = p->n_calls;
    read_call(p, it);
    if (p->n_calls == n)
        return;
    struct jst_call_ev c = p->calls[--p->n_calls];
    struct jst_call_ev *slot = jst_model_push(&b->v, &b->n, sizeof(*slot));
    if (slot)
        *slot = c;
    else
        jst_model_free_call(&c);
}

int jst_model_read_record(struct jst_process *p, const struct jst_record *rec, int keep_calls,
                          struct jst_begins *b)
{
    struct jst_field_iter it;
    jst_fields_begin(&it, rec);
    switch (rec->type) {
    case JST_REC_BEGIN:
        read_begin(p, &it, b);
        break;
    case JST_REC_PROGRESS: {
        /* a fatal signal the preload saw (SIGTERM, SIGINT): the process
         * ended by it at this record's time */
        uint64_t sig = 0, t = 0;
        if (jst_rec_get_u64(rec, JST_F_SIGNAL, &sig) && sig && sig < 128 && !p->fatal_signal &&
            jst_rec_get_u64(rec, JST_F_START_NS, &t)) {
            p->fatal_signal = (unsigned)sig;
            p->fatal_signal_ns = t;
        }
        break;
    }
    case JST_REC_PROCESS:
        ms_read(p, p, process_slot, &it);
        break;
    case JST_REC_DEVICE:
        read_device(p, &it);
        break;
    case JST_REC_CALL: {
        uint64_t call = 0;
        jst_rec_get_u64(rec, JST_F_CALL_ID, &call);
        jst_model_note_launch(p, rec, (unsigned)call);
        if (!keep_calls && jst_model_fold_call(p, rec, (unsigned)call))
            break;
        read_call(p, &it);
        break;
    }
    case JST_REC_CACHE_STATE:
        read_cache_state(p, rec, &it);
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
        ms_read(p, p, note_slot, &it);
        break;
    case JST_REC_END:
        p->has_end = 1;
        ms_read(p, p, end_slot, &it);
        break;
    case JST_REC_RANGE:
        jst_queries_read(p, &it);
        break;
    case JST_REC_REAP: {
        struct jst_reap_ev *e = jst_model_push(&p->reaps, &p->n_reaps, sizeof(*e));
        if (e && jst_rec_get_u64(rec, JST_F_CHILD_PID, &e->pid)) {
            jst_rec_get_u64(rec, JST_F_WAIT_STATUS, &e->status);
            jst_rec_get_u64(rec, JST_F_START_NS, &e->t_ns);
            jst_rec_get_u64(rec, JST_F_TID, &e->tid);
        } else if (e) {
            p->n_reaps--; /* no pid: nothing to tie it to */
        }
        break;
    }
    case JST_REC_READY: /* at most one; a second is ignored */
        if (!p->ready.present) {
            p->ready.present = 1;
            ms_read(p, &p->ready, ready_slot, &it);
        }
        break;
    default:
        if (jst_compile_read_record(p, rec) < 0)
            p->n_unknown++;
        else
            return 0;
        break;
    }
    return it.bad;
}

void jst_model_free_call(struct jst_call_ev *c)
{
    free(c->kernels);
    free(c->entries);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A BEGIN whose call record is in the trace said nothing new; one without is
 * a call in flight when the trace ends: it joins the calls, flagged. */
void jst_model_resolve_begins(struct jst_process *p, struct jst_begins *b)
{
    uint64_t *seqs = p->n_calls ? malloc(p->n_calls * sizeof(*seqs)) : NULL;
    for (size_t i = 0; seqs && i < p->n_calls; i++)
        seqs[i] = p->calls[i].seq;
    if (seqs)
        qsort(seqs, p->n_calls, sizeof(*seqs), cmp_u64);
    size_t n_seqs = seqs ? p->n_calls : 0;
    for (size_t i = 0; i < b->n; i++) {
        struct jst_call_ev *e = &b->v[i];
        int done = e->seq && n_seqs && bsearch(&e->seq, seqs, n_seqs, sizeof(*seqs), cmp_u64);
        struct jst_call_ev *c = done ? NULL : jst_model_push(&p->calls, &p->n_calls, sizeof(*c));
        if (!c) {
            jst_model_free_call(e);
            continue;
        }
        *c = *e;
        c->in_flight = 1;
    }
    free(seqs);
    free(b->v);
    b->v = NULL;
    b->n = 0;
}
