/*
 * Stack capture for the preload: raw return addresses (glibc's backtrace()
 * for a process's first captures, libunwind after: interpose/lazylib.c), each
 * distinct stack written once as JST_REC_STACK and referred to by id from the
 * events (heaptrack's scheme). Symbolization happens offline in the analyzer.
 *
 * Where this runs, and why it cannot deadlock: jst_bt_capture() is called from
 * the hooks of loads, links, library loads and first launches, and never from
 * a signal handler or from inside a loader callback (dl_iterate_phdr callback,
 * ELF constructor run by our own code). libunwind's local unwinder finds the
 * unwind tables through dl_iterate_phdr, which takes glibc's
 * dl_load_write_lock; glibc holds that lock only for short list updates and
 * never while running user code, so the unwind cannot wait on a thread that
 * waits on us. A hook reached from another library's constructor (during a
 * dlopen) is fine too: the loader then holds dl_load_lock, not the write lock.
 * The unwind itself runs with none of our locks held; the table lock below is
 * taken only afterwards, and the writer's lock only inside it, always in that
 * order. Before unwinding, modmap.c writes the objects loaded or unloaded
 * since the last capture (its own lock, then the writer's).
 *
 * When the thread runs Python, its Python frames (pyframes.c) are part of the
 * stack: read before any lock is taken, written with the ips, and compared
 * with them when stacks are interned.
 */
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backtrace.h"
#include "pyframes.h"
#include "cost.h"
#include "state.h"
#include "trace.h"

#define BT_DEFAULT_DEPTH 64
#define BT_MAX_DEPTH 256
/* Frames of jitstall itself above the caller: capture, the hook, maybe a helper. */
#define BT_MAX_SKIP 16
/* A bound on memory if a program produces stacks without end. */
#define BT_MAX_STACKS (1u << 20)

struct bt_entry {
    uint64_t hash;
    uint64_t id; /* 0: empty slot */
    uint32_t n;
    uint64_t *ips;
    size_t py_len; /* Python frames, packed as in struct jst_pyframes */
    uint8_t *py;
};

static pthread_once_t bt_once = PTHREAD_ONCE_INIT;
static int bt_depth = BT_DEFAULT_DEPTH;
/* Executable ranges of libjitstall.so, to drop our own frames. */
static uintptr_t bt_self_lo[4], bt_self_hi[4];
static int bt_self_n;

static pthread_mutex_t bt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bt_entry *bt_tab;
static size_t bt_cap, bt_count;
static uint64_t bt_next_id = 1;

/* Parses JITSTALL_STACK_DEPTH: default 64, clamped to 1..256. */
static int bt_parse_depth(const char *s)
{
    if (!s || !*s)
        return BT_DEFAULT_DEPTH;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end != '\0')
        return BT_DEFAULT_DEPTH;
    if (v < 1)
        return 1;
    if (v > BT_MAX_DEPTH)
        return BT_MAX_DEPTH;
    return (int)v;
}

static int bt_self_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    uintptr_t me = (uintptr_t)data;
    int found = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz)
            found = 1;
    }
    if (!found)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && bt_self_n < 4; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            bt_self_lo[bt_self_n] = info->dlpi_addr + ph->p_vaddr;
            bt_self_hi[bt_self_n] = bt_self_lo[bt_self_n] + ph->p_memsz;
            bt_self_n++;
        }
    }
    return 1;
}

/* A forked child writes a new trace: every stack must be written again. */
static void bt_atfork_child(void)
{
    pthread_mutex_init(&bt_lock, NULL);
    for (size_t i = 0; i < bt_cap; i++) {
        free(bt_tab[i].ips);
        free(bt_tab[i].py);
    }
    free(bt_tab);
    bt_tab = NULL;
    bt_cap = bt_count = 0;
    bt_next_id = 1;
}

static void bt_atfork_prepare(void)
{
    pthread_mutex_lock(&bt_lock);
}

static void bt_atfork_parent(void)
{
    pthread_mutex_unlock(&bt_lock);
}

static void bt_init(void)
{
    bt_depth = bt_parse_depth(getenv("JITSTALL_STACK_DEPTH"));
    dl_iterate_phdr(bt_self_cb, (void *)(uintptr_t)&bt_self_cb);
    pthread_atfork(bt_atfork_prepare, bt_atfork_parent, bt_atfork_child);
}

static int bt_is_self(uintptr_t ip)
{
    for (int i = 0; i < bt_self_n; i++)
        if (ip >= bt_self_lo[i] && ip < bt_self_hi[i])
            return 1;
    return 0;
}

/* Hash of an IP array and its Python frames (64-bit multiply-xorshift per
 * word, then finalised): two loads with the same native stack from different
 * Python lines are different stacks. */
static uint64_t bt_hash(const uint64_t *ips, size_t n, const struct jst_pyframes *py)
{
    uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
    for (size_t i = 0; i < n; i++) {
        h ^= ips[i];
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    for (size_t i = 0; py && i < py->len; i++) {
        h ^= py->buf[i];
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 31;
    }
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return h;
}

/* Doubles the table; returns -1 when memory runs out (the stack is then not recorded). */
static int bt_grow(void)
{
    size_t ncap = bt_cap ? bt_cap * 2 : 256;
    struct bt_entry *nt = calloc(ncap, sizeof *nt);
    if (!nt)
        return -1;
    for (size_t i = 0; i < bt_cap; i++) {
        if (!bt_tab[i].id)
            continue;
        size_t j = bt_tab[i].hash & (ncap - 1);
        while (nt[j].id)
            j = (j + 1) & (ncap - 1);
        nt[j] = bt_tab[i];
    }
    free(bt_tab);
    bt_tab = nt;
    bt_cap = ncap;
    return 0;
}

/* Appends the Python frames: py_frame and py_native, repeated, in step. */
static void bt_write_py(struct jst_rec *r, const struct jst_pyframes *py)
{
    for (size_t o = 0; o + 6 <= py->len;) {
        uint32_t native;
        uint16_t len;
        memcpy(&native, py->buf + o, 4);
        memcpy(&len, py->buf + o + 4, 2);
        jst_rec_strn(r, JST_F_PY_FRAME, (const char *)py->buf + o + 6, len);
        jst_rec_u64(r, JST_F_PY_NATIVE, native);
        o += 6 + (size_t)len;
    }
}

/* Writes one JST_REC_STACK. The event that refers to it follows and flushes. */
static void bt_write(uint64_t id, const uint64_t *ips, size_t n, const struct jst_pyframes *py)
{
    /* The record and the little-endian addresses on the heap: a load may run
     * on a thread whose stack is 16 KiB. */
    size_t cap = JST_REC_HDR_SIZE + 64 + BT_MAX_DEPTH * 8 + (py ? py->len + py->n * 32 : 0);
    uint8_t *buf = malloc(cap + BT_MAX_DEPTH * 8);
    if (!buf)
        return;
    uint8_t *le = buf + cap;
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 8; b++)
            le[i * 8 + b] = (uint8_t)(ips[i] >> (8 * b));
    struct jst_rec r;
    jst_rec_begin(&r, buf, cap, JST_REC_STACK);
    jst_rec_u64(&r, JST_F_STACK_ID, id);
    jst_rec_bytes(&r, JST_F_IPS, le, n * 8);
    if (py)
        bt_write_py(&r, py);
    jst_emit(&r, 0);
    free(buf);
}

/* Looks the stack up, inserting and writing it when new. Under bt_lock.
 * py: its Python frames, or NULL. */
static uint64_t bt_intern(const uint64_t *ips, size_t n, const struct jst_pyframes *py)
{
    uint64_t h = bt_hash(ips, n, py);
    size_t py_len = py ? py->len : 0;
    if (bt_cap) {
        for (size_t j = h & (bt_cap - 1);; j = (j + 1) & (bt_cap - 1)) {
            struct bt_entry *e = &bt_tab[j];
            if (!e->id)
                break;
            if (e->hash == h && e->n == n && memcmp(e->ips, ips, n * sizeof *ips) == 0 &&
                e->py_len == py_len && (!py_len || memcmp(e->py, py->buf, py_len) == 0))
                return e->id;
        }
    }
    if (bt_count >= BT_MAX_STACKS)
        return 0;
    if ((bt_count + 1) * 2 > bt_cap && bt_grow() < 0)
        return 0;
    uint64_t *copy = malloc(n * sizeof *copy);
    uint8_t *py_copy = py_len ? malloc(py_len) : NULL;
    if (!copy || (py_len && !py_copy)) {
        free(copy);
        free(py_copy);
        return 0;
    }
    memcpy(copy, ips, n * sizeof *copy);
    if (py_len)
        memcpy(py_copy, py->buf, py_len);
    size_t j = h & (bt_cap - 1);
    while (bt_tab[j].id)
        j = (j + 1) & (bt_cap - 1);
    uint64_t id = bt_next_id++;
    bt_tab[j] = (struct bt_entry){
        .hash = h, .id = id, .n = (uint32_t)n, .ips = copy, .py_len = py_len, .py = py_copy};
    bt_count++;
    bt_write(id, ips, n, py_len ? py : NULL);
    return id;
}

uint64_t jst_bt_capture(void)
{
    int saved = errno;
    pthread_once(&bt_once, bt_init);
    /* Objects dlopen'ed since the last capture go into the map first, so the
     * stack written below can be symbolized. */
    jst_modmap_refresh(JST_MOD_DLOPEN);
    /* On the heap, not the stack: a load may run on a thread of 16 KiB. */
    void **raw = malloc((BT_MAX_DEPTH + BT_MAX_SKIP) * sizeof *raw);
    uint64_t *ips = malloc(BT_MAX_DEPTH * sizeof *ips);
    if (!raw || !ips) {
        free(raw);
        free(ips);
        errno = saved;
        return 0;
    }
    uint64_t t0 = jst_now_ns();
    int got = jst_unw_backtrace(raw, bt_depth + BT_MAX_SKIP);
    jst_cost_add(JST_COST_UNWIND, jst_now_ns() - t0);
    if (got <= 0) {
        free(raw);
        free(ips);
        errno = saved;
        return 0;
    }
    /* Drop the frames of jitstall itself: the first frame kept is the caller
     * of the hooked function. Every kept IP is then a return address. */
    int first = 0;
    while (first < got && first < BT_MAX_SKIP && bt_is_self((uintptr_t)raw[first]))
        first++;
    size_t n = (size_t)(got - first);
    if (n > (size_t)bt_depth)
        n = (size_t)bt_depth;
    if (n == 0) {
        free(raw);
        free(ips);
        errno = saved;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        ips[i] = (uint64_t)(uintptr_t)raw[first + (int)i];
    free(raw);
    /* The Python frames this thread runs, read before any lock is taken. */
    struct jst_pyframes *py = jst_py_maybe() ? malloc(sizeof *py) : NULL;
    if (py) {
        jst_py_capture(ips, n, py);
        if (!py->n) {
            free(py);
            py = NULL;
        }
    }

    pthread_mutex_lock(&bt_lock);
    uint64_t id = bt_intern(ips, n, py);
    pthread_mutex_unlock(&bt_lock);
    free(py);
    free(ips);
    errno = saved;
    return id;
}
