/*
 * First-launch detection. The seen set is an open-addressing hash set of
 * function pointers: the launch wrappers test it with plain loads and nothing
 * else; inserts (first launches) and tombstones (unloads) are made under a
 * lock, and a full table is compacted so unloaded functions give their slots
 * back. Where functions and kernels came from (name, module or library) is
 * kept in a small locked map, used only on slow paths: lookups, first
 * launches and unloads.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "launch.h"

#define JST_TOMB ((uintptr_t)-1)
/* Stop claiming new slots at 3/4 so that probes stay short. */
#define JST_SEEN_LIMIT (JST_SEEN_SIZE / 4 * 3)

/* Two tables: the launch path reads the one jst_seen_tab points to; a
 * compaction rebuilds the live keys into the other and swaps. A reader still
 * in the old table may miss a key (it then takes the slow path, which asks
 * again under the lock) but never finds one that was not inserted. */
static _Atomic uintptr_t seen_a[JST_SEEN_SIZE], seen_b[JST_SEEN_SIZE];
_Atomic uintptr_t *_Atomic jst_seen_tab = seen_a;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t seen_used;  /* non-zero slots (live keys and tombstones) */
static uint32_t seen_live;  /* live keys */
static uint32_t seen_limit; /* slots that may be used, 0 until first claim */
static _Atomic uint64_t seen_dropped;

static uint32_t seen_slot(uintptr_t key)
{
    return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - JST_SEEN_BITS));
}

/* The slot holding key, or the empty slot where it would go. */
static uint32_t seen_probe(_Atomic uintptr_t *t, uintptr_t key)
{
    uint32_t i = seen_slot(key);
    for (;;) {
        uintptr_t v = atomic_load_explicit(&t[i], memory_order_relaxed);
        if (v == key || v == 0)
            return i;
        i = (i + 1) & (JST_SEEN_SIZE - 1);
    }
}

/* Rebuilds the live keys into the other table without tombstones and makes
 * it current. Caller holds seen_lock. O(table) work for at least limit/16
 * reclaimed slots: a service that loads and unloads modules for hours keeps
 * recording first launches. */
static void seen_compact(void)
{
    _Atomic uintptr_t *cur = atomic_load(&jst_seen_tab);
    _Atomic uintptr_t *next = cur == seen_a ? seen_b : seen_a;
    for (uint32_t i = 0; i < JST_SEEN_SIZE; i++)
        atomic_store_explicit(&next[i], 0, memory_order_relaxed);
    uint32_t live = 0;
    for (uint32_t i = 0; i < JST_SEEN_SIZE; i++) {
        uintptr_t v = atomic_load_explicit(&cur[i], memory_order_relaxed);
        if (v == 0 || v == JST_TOMB)
            continue;
        atomic_store_explicit(&next[seen_probe(next, v)], v, memory_order_relaxed);
        live++;
    }
    atomic_store_explicit(&jst_seen_tab, next, memory_order_release);
    jst_dbg("seen set compacted: %u tombstones reclaimed, %u live", seen_used - live, live);
    seen_used = seen_live = live;
}

int jst_seen_claim(uintptr_t key)
{
    if (key == 0 || key == JST_TOMB)
        return 0;
    pthread_mutex_lock(&seen_lock);
    if (!seen_limit) {
        uint32_t want = jst_seen_limit_override();
        seen_limit = want >= 16 && want < JST_SEEN_LIMIT ? want : JST_SEEN_LIMIT;
    }
    _Atomic uintptr_t *t = atomic_load(&jst_seen_tab);
    uint32_t i = seen_probe(t, key);
    int claimed = 0;
    if (atomic_load_explicit(&t[i], memory_order_relaxed) != key) {
        if (seen_used >= seen_limit && seen_used - seen_live >= seen_limit / 16) {
            seen_compact();
            t = atomic_load(&jst_seen_tab);
            i = seen_probe(t, key);
        }
        if (seen_used < seen_limit) {
            atomic_store_explicit(&t[i], key, memory_order_release);
            seen_used++;
            seen_live++;
            claimed = 1;
        } else if (atomic_fetch_add(&seen_dropped, 1) == 0) {
            jst_dbg("seen set full (%u functions): first launches no longer recorded", seen_live);
        }
    }
    pthread_mutex_unlock(&seen_lock);
    return claimed;
}

static void seen_forget(uintptr_t key)
{
    if (key == 0 || key == JST_TOMB)
        return;
    pthread_mutex_lock(&seen_lock);
    _Atomic uintptr_t *t = atomic_load(&jst_seen_tab);
    uint32_t i = seen_probe(t, key);
    if (atomic_load_explicit(&t[i], memory_order_relaxed) == key) {
        atomic_store_explicit(&t[i], JST_TOMB, memory_order_relaxed);
        seen_live--;
    }
    pthread_mutex_unlock(&seen_lock);
}

uint64_t jst_seen_dropped(void)
{
    return atomic_load(&seen_dropped);
}

/* ---- where functions came from ---- */

struct func_info {
    uintptr_t func, parent;
    char *name;
    struct func_info *next;
};

#define JST_FUNC_BUCKETS 4096
static struct func_info *func_tab[JST_FUNC_BUCKETS];
static pthread_mutex_t func_lock = PTHREAD_MUTEX_INITIALIZER;

static struct func_info **func_find(uintptr_t func)
{
    struct func_info **pp = &func_tab[seen_slot(func) & (JST_FUNC_BUCKETS - 1)];
    while (*pp && (*pp)->func != func)
        pp = &(*pp)->next;
    return pp;
}

static void func_set(uintptr_t func, uintptr_t parent, const char *name)
{
    struct func_info **pp = func_find(func);
    struct func_info *fi = *pp;
    if (!fi) {
        fi = calloc(1, sizeof *fi);
        if (!fi)
            return;
        fi->func = func;
        *pp = fi;
    }
    char *copy = name ? strndup(name, 1024) : NULL;
    free(fi->name);
    fi->name = copy;
    fi->parent = parent;
}

void jst_func_note(uintptr_t func, uintptr_t parent, const char *name)
{
    pthread_mutex_lock(&func_lock);
    func_set(func, parent, name);
    pthread_mutex_unlock(&func_lock);
}

void jst_func_alias(uintptr_t func, uintptr_t kernel)
{
    pthread_mutex_lock(&func_lock);
    struct func_info *k = *func_find(kernel);
    if (k)
        func_set(func, k->parent, k->name);
    else
        func_set(func, kernel, NULL);
    pthread_mutex_unlock(&func_lock);
}

void jst_func_forget_parent(uintptr_t parent)
{
    pthread_mutex_lock(&func_lock);
    for (int b = 0; b < JST_FUNC_BUCKETS; b++) {
        struct func_info **pp = &func_tab[b];
        while (*pp) {
            struct func_info *fi = *pp;
            if (fi->parent == parent) {
                *pp = fi->next;
                seen_forget(fi->func);
                free(fi->name);
                free(fi);
            } else {
                pp = &fi->next;
            }
        }
    }
    pthread_mutex_unlock(&func_lock);
}

void jst_launch_atfork_child(void)
{
    pthread_mutex_init(&func_lock, NULL);
    pthread_mutex_init(&seen_lock, NULL);
}

void jst_func_describe(uintptr_t func, struct jst_rec *r)
{
    pthread_mutex_lock(&func_lock);
    struct func_info *fi = *func_find(func);
    if (fi) {
        if (fi->name)
            jst_rec_str(r, JST_F_NAME, fi->name);
        if (fi->parent)
            jst_rec_u64(r, JST_F_PARENT, fi->parent);
    }
    pthread_mutex_unlock(&func_lock);
}
