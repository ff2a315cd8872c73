/*
 * First-launch detection. The seen set is a lock-free open-addressing hash set
 * of function pointers (CAS on empty slots, tombstones on unload): the launch
 * wrappers test it with plain loads and nothing else. Where functions and
 * kernels came from (name, module or library) is kept in a small locked map,
 * used only on slow paths: lookups, first launches and unloads.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "state.h"

#define JST_TOMB ((uintptr_t)-1)
/* Stop claiming new slots at 3/4 so that probes stay short. */
#define JST_SEEN_LIMIT (JST_SEEN_SIZE / 4 * 3)

_Atomic uintptr_t jst_seen[JST_SEEN_SIZE];
static _Atomic uint32_t seen_used;

static uint32_t seen_slot(uintptr_t key)
{
    return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - JST_SEEN_BITS));
}

int jst_seen_claim(uintptr_t key)
{
    if (key == 0 || key == JST_TOMB)
        return 0;
    for (uint32_t i = seen_slot(key), n = 0; n < JST_SEEN_SIZE;
         i = (i + 1) & (JST_SEEN_SIZE - 1), n++) {
        uintptr_t v = atomic_load(&jst_seen[i]);
        if (v == key)
            return 0;
        if (v != 0)
            continue;
        if (atomic_load(&seen_used) >= JST_SEEN_LIMIT) {
            jst_dbg("seen set full: first launches no longer recorded");
            return 0;
        }
        uintptr_t expected = 0;
        if (atomic_compare_exchange_strong(&jst_seen[i], &expected, key)) {
            atomic_fetch_add(&seen_used, 1);
            return 1;
        }
        if (expected == key)
            return 0; /* another thread's first launch of the same function */
    }
    return 0;
}

static void seen_forget(uintptr_t key)
{
    if (key == 0 || key == JST_TOMB)
        return;
    for (uint32_t i = seen_slot(key), n = 0; n < JST_SEEN_SIZE;
         i = (i + 1) & (JST_SEEN_SIZE - 1), n++) {
        uintptr_t v = atomic_load(&jst_seen[i]);
        if (v == 0)
            return;
        if (v == key) {
            atomic_store(&jst_seen[i], JST_TOMB);
            return;
        }
    }
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
