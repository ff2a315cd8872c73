/*
 * Python frames for the stacks of recorded events: when a load, link, runtime
 * compile or first launch comes from Python, the calling thread's CPython
 * frame chain is read (function, file, line of each frame) and tied to the
 * interpreter eval frames of the native stack. This file walks the chain and
 * ties each frame to its eval frame; the reader's other parts are pyread.c
 * (the checked copy), pylayout.c (the interpreter and its layout) and
 * pycode.c (strings, line tables, code objects).
 *
 * Why this is safe (docs/DRIVER.md, "Python callers"):
 * - The GIL is never taken and no Python API that needs it is called: the
 *   functions used (Py_IsInitialized, _PyThreadState_UncheckedGet or
 *   PyThreadState_GetUnchecked, PyGILState_GetThisThreadState) only read a
 *   global or a thread-specific key. So a thread that holds the GIL while
 *   waiting on this one cannot deadlock with it, and nothing is allocated in
 *   the interpreter.
 * - Only the calling thread's own frames are read. While this thread is
 *   inside the hook, its frame chain cannot change: only the owning thread
 *   pushes and pops its frames, and the code objects they point at hold
 *   strong references to their names and tables. That holds whether the
 *   caller kept the GIL (ctypes.PyDLL, CuPy's RawKernel) or released it
 *   (ctypes.CDLL, CuPy's RawModule(path=), PyTorch's cuLibraryLoadData).
 * - Every read is a pread(2) of /proc/self/mem, through one descriptor of
 *   ours: the kernel copies and fails instead of faulting on an unmapped
 *   address (pyread.c says why not process_vm_readv, and how the descriptor
 *   is kept from the program's), and every object is checked before its
 *   fields are trusted: the thread state must name this
 *   thread, code objects, strings and bytes must have the type CPython
 *   exports for them, lengths are capped and the walk is bounded. A layout
 *   that does not check out yields no frames, never a crash.
 * - The struct offsets are per CPython minor version (3.10 to 3.13, release
 *   builds with the default object header); any other version records
 *   nothing and says so once in a note.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyframes.h"
#include "pyint.h"

/* Frames walked at most (a cycle in a damaged chain ends here). */
#define PY_MAX_WALK 4096
/* Eval frames of the native stack tracked at most. */
#define PY_MAX_EVALS 256
#define PY_OWNED_BY_GENERATOR 1
#define PY_OWNED_BY_CSTACK 3

/* One walk over the frame chain. */
struct py_walk {
    struct jst_pyframes *out;
    uint32_t evals[PY_MAX_EVALS];
    size_t n_evals, n_ips;
    unsigned group;   /* eval invocation the next frame belongs to */
    int bad;          /* a check failed: stop */
    size_t max;       /* frames wanted at most (the innermost) */
    uintptr_t win_lo; /* frames read ahead (3.11+): win_len bytes from win_lo */
    size_t win_len;
    uint8_t *tab; /* PY_TABLE_CHUNK bytes for line tables, once one needs it */
    uint8_t win[4096];
};

/* Names per code object, and lines per (code object, instruction), kept
 * across captures, so that a stack seen again costs two reads per frame
 * (the frame and its code object) instead of four or more, and a function
 * that calls from several lines (or is sampled at several) walks its line
 * table once per line, not once per capture. An entry is used only while
 * the code object still points at the same name, file and table objects. */
struct py_cached {
    uintptr_t code, q, f, lt;
    char text[PY_FUNC_MAX + PY_FILE_MAX + 2];
};
struct py_line_cached {
    uintptr_t code, lt;
    long addr;
    int line;
};
#define PY_CACHE 128
#define PY_LINES 1024
static struct py_cached py_cache[PY_CACHE];
static struct py_line_cached py_lines[PY_LINES];
static pthread_mutex_t py_cache_lock = PTHREAD_MUTEX_INITIALIZER;
/* Line table bytes read per system call beyond the first PY_SPEC. */
#define PY_TABLE_CHUNK (64u << 10)
/* Tables at least this long get an index (pyint.h), PY_INDEXES of them at a
 * time, each used by one walk at a time (busy; another walk meanwhile walks
 * without it). */
#define PY_INDEX_MIN (64u << 10)
#define PY_INDEXES 8
static struct py_lineidx *_Atomic py_idx[PY_INDEXES];
static atomic_flag py_idx_busy[PY_INDEXES];

/* The index for the table lt (size bytes) of code, held busy; NULL: none. */
static struct py_lineidx *py_index_take(uintptr_t code, uintptr_t lt, size_t size, unsigned *slot)
{
    if (size < PY_INDEX_MIN)
        return NULL;
    unsigned i = (unsigned)((code >> 4) % PY_INDEXES);
    if (atomic_flag_test_and_set(&py_idx_busy[i]))
        return NULL;
    struct py_lineidx *ix = atomic_load(&py_idx[i]);
    if (!ix) {
        ix = malloc(sizeof *ix);
        if (!ix) {
            atomic_flag_clear(&py_idx_busy[i]);
            return NULL;
        }
        ix->code = 0;
        atomic_store(&py_idx[i], ix);
    }
    if (ix->code != code || ix->lt != lt || ix->size != size)
        jst_py_index_reset(ix, code, lt, size);
    *slot = i;
    return ix;
}

static struct py_line_cached *py_line_slot(uintptr_t code, long addr)
{
    uint64_t h =
        ((uint64_t)code >> 4) * 0x9e3779b97f4a7c15ull ^ (uint64_t)addr * 0xff51afd7ed558ccdull;
    return &py_lines[(h >> 32) % PY_LINES];
}

/* Fills text and *line from the cache: 0 nothing, 1 text, 2 text and line.
 * A busy cache (another thread, or a lock a fork left held) is a miss. */
static int py_cache_get(const struct py_cached *k, long addr, char *text, size_t cap, int *line)
{
    int got = 0;
    if (pthread_mutex_trylock(&py_cache_lock) != 0)
        return 0;
    const struct py_cached *e = &py_cache[(k->code >> 4) % PY_CACHE];
    if (e->code == k->code && e->q == k->q && e->f == k->f && e->lt == k->lt) {
        snprintf(text, cap, "%s", e->text);
        got = 1;
        const struct py_line_cached *l = py_line_slot(k->code, addr);
        if (l->code == k->code && l->lt == k->lt && l->addr == addr) {
            *line = l->line;
            got = 2;
        }
    }
    pthread_mutex_unlock(&py_cache_lock);
    return got;
}

static void py_cache_put(const struct py_cached *k, long addr, const char *text, int line)
{
    if (pthread_mutex_trylock(&py_cache_lock) != 0)
        return;
    struct py_cached *e = &py_cache[(k->code >> 4) % PY_CACHE];
    if (e->code != k->code || e->q != k->q || e->f != k->f || e->lt != k->lt) {
        *e = *k;
        snprintf(e->text, sizeof e->text, "%s", text);
    }
    *py_line_slot(k->code, addr) = (struct py_line_cached){k->code, k->lt, addr, line};
    pthread_mutex_unlock(&py_cache_lock);
}

/* Appends one frame: code object at code (header in co), instruction offset
 * in bytes (-1: none). */
static void py_add(struct py_walk *w, uintptr_t code, const uint8_t *co, long addr)
{
    const struct py_layout *L = jst_py.lay;
    struct py_cached k = {.code = code,
                          .q = py_ptr_at(co, L->co_qualname),
                          .f = py_ptr_at(co, L->co_filename),
                          .lt = py_ptr_at(co, L->co_linetable)};
    char text[PY_FUNC_MAX + PY_FILE_MAX + 2];
    int line = 0, got = py_cache_get(&k, addr, text, sizeof text, &line);
    if (got < 2) {
        struct py_table t;
        if (got ? jst_py_table_open(&t, k.lt, NULL, 0) < 0
                : jst_py_names(co, text, sizeof text, &t) < 0) {
            w->bad = 1;
            return;
        }
        if (t.size > t.have && addr >= 0 && !w->tab)
            w->tab = malloc(PY_TABLE_CHUNK);
        if (w->tab)
            jst_py_table_buffer(&t, w->tab, PY_TABLE_CHUNK);
        unsigned slot = 0;
        struct py_lineidx *ix = addr >= 0 ? py_index_take(code, k.lt, t.size, &slot) : NULL;
        line = jst_py_line(&t, py_int_at(co, L->co_firstlineno), addr, ix);
        if (ix)
            atomic_flag_clear(&py_idx_busy[slot]);
        py_cache_put(&k, addr, text, line);
    }
    struct jst_pyframes *o = w->out;
    char full[PY_FUNC_MAX + PY_FILE_MAX + 32];
    int tl = snprintf(full, sizeof full, "%s\t%d", text, line > 0 ? line : 0);
    if (tl < 0 || o->n >= JST_PY_MAX_FRAMES || o->len + 6 + (size_t)tl > sizeof o->buf)
        return;
    uint32_t native = w->group < w->n_evals ? w->evals[w->group] : (uint32_t)w->n_ips;
    uint16_t len = (uint16_t)tl;
    memcpy(o->buf + o->len, &native, 4);
    memcpy(o->buf + o->len + 4, &len, 2);
    memcpy(o->buf + o->len + 6, full, (size_t)tl);
    o->len += 6 + (size_t)tl;
    o->n++;
}

/* 3.10: a chain of PyFrameObjects, one eval invocation each. */
static void py_walk_310(struct py_walk *w, uintptr_t f)
{
    const struct py_layout *L = jst_py.lay;
    for (int steps = 0; f && steps < PY_MAX_WALK && !w->bad && w->out->n < w->max;
         steps++, w->group++) {
        uint8_t fr[112], co[256];
        if (jst_py_read(fr, f, L->fr_instr + 4) < 0 || py_ptr_at(fr, 8) != jst_py.frame_type) {
            w->bad = 1;
            return;
        }
        uintptr_t code = py_ptr_at(fr, L->fr_code);
        int lasti = py_int_at(fr, L->fr_instr);
        if (jst_py_code(code, co, sizeof co) < 0) {
            w->bad = 1;
            return;
        }
        py_add(w, code, co, lasti < 0 ? -1 : (long)lasti * 2);
        f = py_ptr_at(fr, L->fr_prev);
    }
}

/* The 72 bytes of the _PyInterpreterFrame at f, or NULL when unreadable.
 * Frames lie on the thread's data stack, each older one below the newer, so
 * one read of the 4 KiB that end with a frame usually holds the next ones
 * too; when that read fails (the stack's start is near), the frame's own
 * page is read instead. */
static const uint8_t *py_frame_at(struct py_walk *w, uintptr_t f)
{
    if (f >= w->win_lo && f + 72 <= w->win_lo + w->win_len && f + 72 > f)
        return w->win + (f - w->win_lo);
    uintptr_t end = f + 72, lo = end - sizeof w->win, page = f & ~(uintptr_t)4095;
    if (end < f)
        return NULL;
    if (f < sizeof w->win || jst_py_read(w->win, lo, sizeof w->win) < 0) {
        lo = page < f - (sizeof w->win - 72) ? f : page;
        if (jst_py_read(w->win, lo, end - lo) < 0)
            return NULL;
    }
    w->win_lo = lo;
    w->win_len = end - lo;
    return w->win + (f - lo);
}

/* 3.11 to 3.13: _PyInterpreterFrames. One eval invocation runs the frames up
 * to the one marked is_entry (3.11), or up to the next C-stack shim frame
 * (3.12+). Frames still being set up ("incomplete") are skipped, as CPython
 * does. */
static void py_walk_311(struct py_walk *w, uintptr_t f)
{
    const struct py_layout *L = jst_py.lay;
    for (int steps = 0; f && steps < PY_MAX_WALK && !w->bad && w->out->n < w->max; steps++) {
        uint8_t co[256];
        const uint8_t *fr = py_frame_at(w, f);
        if (!fr) {
            w->bad = 1;
            return;
        }
        uintptr_t code = py_ptr_at(fr, L->fr_code), instr = py_ptr_at(fr, L->fr_instr);
        int owner = fr[L->fr_owner];
        f = py_ptr_at(fr, L->fr_prev);
        if (L->minor >= 12 && owner == PY_OWNED_BY_CSTACK) {
            w->group++;
            continue;
        }
        if (jst_py_code(code, co, sizeof co) < 0) {
            w->bad = 1;
            return;
        }
        uintptr_t start = code + L->co_code;
        uintptr_t first = start + 2 * (uintptr_t)(unsigned)py_int_at(co, L->co_firsttraceable);
        if (owner == PY_OWNED_BY_GENERATOR || instr >= first)
            py_add(w, code, co, instr >= start ? (long)(instr - start) : -1);
        if (L->fr_entry >= 0 && fr[L->fr_entry])
            w->group++;
    }
}

/* Walks the frame chain of the thread state ts; quiet: a chain that does not
 * check out gives no frames and no note (a sample of a running thread). */
static void py_walk_ts(uintptr_t ts, const uint64_t *ips, size_t n_ips, struct jst_pyframes *py,
                       size_t max, int quiet)
{
    const struct py_layout *L = jst_py.lay;
    uintptr_t f = 0;
    if (jst_py_read(&f, ts + L->ts_frame, sizeof f) < 0)
        return;
    if (f && L->cf_current >= 0 && jst_py_read(&f, f + (unsigned)L->cf_current, sizeof f) < 0)
        return;
    struct py_walk *w = calloc(1, sizeof *w);
    if (!w)
        return;
    w->out = py;
    w->n_ips = n_ips;
    w->max = max;
    for (size_t i = 0; i < n_ips && w->n_evals < PY_MAX_EVALS; i++)
        if (ips[i] > jst_py.eval_lo && ips[i] <= jst_py.eval_hi)
            w->evals[w->n_evals++] = (uint32_t)i;
    if (L->frame_object)
        py_walk_310(w, f);
    else
        py_walk_311(w, f);
    if (w->bad) {
        py->n = py->len = 0;
        if (!quiet)
            jst_py_note_bad("the frame chain did not check out");
    }
    free(w->tab);
    free(w);
}

static void py_capture(const uint64_t *ips, size_t n_ips, struct jst_pyframes *py)
{
    uintptr_t ts = jst_py_thread();
    if (ts)
        py_walk_ts(ts, ips, n_ips, py, JST_PY_MAX_FRAMES, 0);
}

uintptr_t jst_py_self_state(void)
{
    int saved = errno;
    uintptr_t ts = jst_py_maybe() ? jst_py_thread() : 0;
    errno = saved;
    return ts;
}

void jst_py_sample(uintptr_t ts, unsigned long thread_id, struct jst_pyframes *py, size_t max)
{
    py->n = py->len = 0;
    int saved = errno;
    unsigned long id = 0;
    /* The thread state must still be that thread's (it is freed when the
     * thread ends, and may be reused). */
    if (jst_py.lay && jst_py_read(&id, ts + jst_py.lay->ts_thread_id, sizeof id) == 0 &&
        id == thread_id)
        py_walk_ts(ts, NULL, 0, py, max, 1);
    errno = saved;
}

void jst_py_capture(const uint64_t *ips, size_t n_ips, struct jst_pyframes *py)
{
    py->n = py->len = 0;
    int saved = errno;
    py_capture(ips, n_ips, py);
    errno = saved;
}

void jst_py_atfork_child(void)
{
    pthread_mutex_init(&py_cache_lock, NULL);
    for (int i = 0; i < PY_INDEXES; i++)
        atomic_flag_clear(&py_idx_busy[i]);
    jst_py_read_atfork_child();
}
