/*
 * The sampled Python functions of a first call, summed by function and file
 * in one pass with a hash index (see samplefn.h). A function's line is the
 * one most of its time was seen at: a later line takes over when one record
 * of it outweighs the time counted at the current one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "samplefn.h"

/* As the report has always cut them: a name longer than this is cut. */
#define FUNC_MAX 511
#define FILE_MAX 1023

static const char *const phase_names[JST_PHASE_MAX_][2] = {
    [JST_PHASE_OTHER] = {"other", "other Python"},
    [JST_PHASE_IMPORT] = {"import", "imports"},
    [JST_PHASE_CACHE_KEY] = {"cache_key", "cache-key hashing"},
    [JST_PHASE_TRACE] = {"trace", "tracing"},
    [JST_PHASE_PATTERN_MATCHER] = {"pattern_matcher", "Inductor's pattern matcher"},
    [JST_PHASE_LOWER] = {"lower", "lowering and codegen"},
    [JST_PHASE_TYPING] = {"typing", "type inference"},
    [JST_PHASE_AUTOTUNE] = {"autotune", "autotuning"},
};

const char *jst_phase_name(unsigned phase)
{
    return phase < JST_PHASE_MAX_ ? phase_names[phase][0] : NULL;
}

const char *jst_phase_label(unsigned phase)
{
    return phase < JST_PHASE_MAX_ ? phase_names[phase][1] : NULL;
}

/* A frame a row names: its function (exact; "x*": starting with x; NULL:
 * any) and a part of its file (NULL: any). Earlier rows win for one frame:
 * the narrow ones come before the wide ones of the same framework. */
static const struct {
    unsigned phase;
    const char *func, *file;
} phase_rows[] = {
    {JST_PHASE_CACHE_KEY, "triton_key", NULL},
    {JST_PHASE_CACHE_KEY, "torch_key", NULL},
    {JST_PHASE_CACHE_KEY, "build_code_hash", NULL},
    {JST_PHASE_CACHE_KEY, "hash_*", NULL},
    {JST_PHASE_CACHE_KEY, "get_cache_key", NULL},
    {JST_PHASE_CACHE_KEY, "compiled_fx_graph_hash", NULL},
    {JST_PHASE_CACHE_KEY, "_preprocess", "cupy/cuda/compiler.py"}, /* its NVRTC key probe */
    {JST_PHASE_IMPORT, NULL, "<frozen importlib._bootstrap"},
    {JST_PHASE_IMPORT, "<module>", NULL}, /* not the program's own script: see below */
    {JST_PHASE_AUTOTUNE, NULL, "triton/runtime/autotuner.py"},
    {JST_PHASE_AUTOTUNE, NULL, "torch/_inductor/select_algorithm.py"},
    {JST_PHASE_AUTOTUNE, NULL, "torch/_inductor/autotune_process.py"},
    {JST_PHASE_PATTERN_MATCHER, NULL, "torch/_inductor/pattern_matcher.py"},
    {JST_PHASE_PATTERN_MATCHER, NULL, "torch/_inductor/fx_passes/"},
    {JST_PHASE_TRACE, NULL, "torch/_dynamo/"},
    {JST_PHASE_TRACE, NULL, "torch/_functorch/"},
    {JST_PHASE_TRACE, NULL, "torch/fx/"},
    {JST_PHASE_TRACE, NULL, "jax/_src/interpreters/partial_eval.py"},
    {JST_PHASE_TYPING, NULL, "/typeinfer.py"},
    {JST_PHASE_TYPING, NULL, "numba/core/typing/"},
    {JST_PHASE_TYPING, NULL, "/typing/templates.py"},
    {JST_PHASE_LOWER, NULL, "torch/_inductor/"},
    {JST_PHASE_LOWER, NULL, "triton/compiler/"},
    {JST_PHASE_LOWER, NULL, "triton/backends/"},
    {JST_PHASE_LOWER, NULL, "jax/_src/interpreters/mlir.py"},
    {JST_PHASE_LOWER, NULL, "numba/core/lowering.py"},
    {JST_PHASE_LOWER, NULL, "/cudadrv/nvvm.py"},
};

#define N_PHASE_ROWS (sizeof phase_rows / sizeof phase_rows[0])

static int func_is(const char *f, size_t fl, const char *pat)
{
    size_t pl = strlen(pat);
    if (pl && pat[pl - 1] == '*')
        return fl >= pl - 1 && !memcmp(f, pat, pl - 1);
    return fl == pl && !memcmp(f, pat, pl);
}

/* The row that names frame i of n, or N_PHASE_ROWS. The outermost frame is
 * the program's own script: its "<module>" is no import. */
static size_t phase_row(const char *frame, size_t i, size_t n)
{
    const char *t1 = frame ? strchr(frame, '\t') : NULL, *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    if (!t1)
        return N_PHASE_ROWS;
    size_t fl = (size_t)(t1 - frame), filel = t2 ? (size_t)(t2 - t1 - 1) : strlen(t1 + 1);
    char file[FILE_MAX + 1];
    snprintf(file, sizeof file, "%.*s", (int)(filel < FILE_MAX ? filel : FILE_MAX), t1 + 1);
    for (size_t r = 0; r < N_PHASE_ROWS; r++) {
        if (phase_rows[r].func && !func_is(frame, fl, phase_rows[r].func))
            continue;
        if (phase_rows[r].file && !strstr(file, phase_rows[r].file))
            continue;
        if (phase_rows[r].phase == JST_PHASE_IMPORT && phase_rows[r].func && i + 1 == n)
            continue;
        return r;
    }
    return N_PHASE_ROWS;
}

const char *jst_phase_func_words(const char *func, const char *file, char *buf, size_t n)
{
    if (!func || strcmp(func, "<module>") || !file || !file[0]) {
        snprintf(buf, n, "%s", func ? func : "?");
        return buf;
    }
    const char *tail = file + strlen(file);
    int slashes = 0;
    while (tail > file && (tail[-1] != '/' || ++slashes < 2))
        tail--;
    snprintf(buf, n, "%s", tail);
    return buf;
}

unsigned jst_sample_phase(char *const *frames, size_t n, size_t *at)
{
    *at = 0;
    for (size_t i = 0; frames && i < n; i++) {
        size_t r = phase_row(frames[i], i, n);
        if (r < N_PHASE_ROWS) {
            *at = i;
            return phase_rows[r].phase;
        }
    }
    return JST_PHASE_OTHER;
}

struct jst_samplefn_ent {
    const char *func, *file; /* into the caller's frame strings, not terminated */
    size_t func_len, file_len;
    unsigned line;
    uint64_t dur_ns, line_ns;
};

void jst_samplefn_init(struct jst_samplefn_acc *a)
{
    memset(a, 0, sizeof *a);
}

/* Splits "func<TAB>file<TAB>line" into e (its lengths cut as above). */
static void split_frame(const char *frame, struct jst_samplefn_ent *e)
{
    e->func = "?";
    e->func_len = 1;
    e->file = "";
    e->file_len = 0;
    e->line = 0;
    if (!frame)
        return;
    const char *t1 = strchr(frame, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
    size_t l = t1 ? (size_t)(t1 - frame) : strlen(frame);
    e->func = frame;
    e->func_len = l < FUNC_MAX ? l : FUNC_MAX;
    if (t1) {
        size_t m = t2 ? (size_t)(t2 - t1 - 1) : strlen(t1 + 1);
        e->file = t1 + 1;
        e->file_len = m < FILE_MAX ? m : FILE_MAX;
    }
    if (t2)
        e->line = (unsigned)strtoul(t2 + 1, NULL, 10);
}

static uint64_t ent_hash(const struct jst_samplefn_ent *e)
{
    uint64_t h = jst_hash_bytes(JST_HASH_SEED, e->func, e->func_len);
    h = jst_hash_u64(h, e->func_len);
    return jst_hash_bytes(h, e->file, e->file_len);
}

/* Times from a trace may be anything: a sum stops at the largest. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int same_text(const char *a, size_t al, const char *b, size_t bl)
{
    return al == bl && !memcmp(a, b, al);
}

void jst_samplefn_add(struct jst_samplefn_acc *a, const char *frame, uint64_t ns)
{
    struct jst_samplefn_ent e;
    split_frame(frame, &e);
    uint64_t h = ent_hash(&e);
    size_t cur = 0, p1;
    while ((p1 = jst_hidx_next(&a->ix, h, &cur)) != 0) {
        struct jst_samplefn_ent *x = &a->v[p1 - 1];
        if (!same_text(x->func, x->func_len, e.func, e.func_len) ||
            !same_text(x->file, x->file_len, e.file, e.file_len))
            continue;
        x->dur_ns = sat_add(x->dur_ns, ns);
        if (x->line != e.line && ns > x->line_ns) {
            x->line = e.line;
            x->line_ns = ns;
        } else if (x->line == e.line) {
            x->line_ns = sat_add(x->line_ns, ns);
        }
        return;
    }
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        struct jst_samplefn_ent *v = realloc(a->v, cap * sizeof *v);
        if (!v) {
            a->oom++;
            return;
        }
        a->v = v;
        a->cap = cap;
    }
    if (jst_hidx_add(&a->ix, h, a->n) < 0) {
        a->oom++;
        return;
    }
    e.dur_ns = e.line_ns = ns;
    a->v[a->n++] = e;
}

/* Like strcmp, for counted strings without NULs. */
static int cmp_text(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    return c ? c : (al > bl) - (al < bl);
}

/* Largest first; equal times by function, then file. */
static int cmp_ent(const void *pa, const void *pb)
{
    const struct jst_samplefn_ent *x = pa, *y = pb;
    if (x->dur_ns != y->dur_ns)
        return x->dur_ns > y->dur_ns ? -1 : 1;
    int c = cmp_text(x->func, x->func_len, y->func, y->func_len);
    return c ? c : cmp_text(x->file, x->file_len, y->file, y->file_len);
}

size_t jst_samplefn_take(struct jst_samplefn_acc *a, struct jst_sample_fn **out, size_t max)
{
    size_t k = 0;
    *out = NULL;
    if (a->n > 1)
        qsort(a->v, a->n, sizeof *a->v, cmp_ent);
    size_t want = a->n < max ? a->n : max;
    struct jst_sample_fn *v = want ? calloc(want, sizeof *v) : NULL;
    for (size_t i = 0; v && i < want; i++) {
        const struct jst_samplefn_ent *e = &a->v[i];
        char *func = strndup(e->func, e->func_len), *file = strndup(e->file, e->file_len);
        if (!func || !file) {
            free(func);
            free(file);
            continue;
        }
        v[k++] = (struct jst_sample_fn){func, file, e->line, e->dur_ns, e->line_ns};
    }
    if (!k) {
        free(v);
        v = NULL;
    }
    *out = v;
    jst_hidx_free(&a->ix);
    free(a->v);
    memset(a, 0, sizeof *a);
    return k;
}
