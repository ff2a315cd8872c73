/*
 * Inside the preload: the first launch of each function (interpose/launch.c).
 */
#ifndef JST_INTERPOSE_LAUNCH_H
#define JST_INTERPOSE_LAUNCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include "state.h"
#include "trace.h"

#include "launch_seen.h" /* JST_SEEN_BITS, JST_SEEN_SIZE */
/* The current table (JST_SEEN_SIZE slots): 0 empty, -1 tombstone, else a key. */
extern _Atomic uintptr_t *_Atomic jst_seen_tab;

/* Real pointers the launch fast path reads; refreshed by jst_launch_sync()
 * whenever a launch hook's real or real_dl changes. */
extern void *_Atomic jst_launch_real[8];
void jst_launch_sync(void);

/* Lock-free membership test; key 0 counts as seen (nothing to record). */
static inline int jst_seen_has(uintptr_t key)
{
    uint32_t i = (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - JST_SEEN_BITS));
    for (;;) {
        _Atomic uintptr_t *t = atomic_load_explicit(&jst_seen_tab, memory_order_acquire);
        uintptr_t v = atomic_load_explicit(&t[i], memory_order_relaxed);
        if (v == key)
            return 1;
        if (v == 0)
            return 0;
        i = (i + 1) & (JST_SEEN_SIZE - 1);
    }
}
/* Claims key: 1 if this caller inserted it (its first launch), 0 otherwise
 * (seen before, or the set is full of live functions: counted as dropped). */
int jst_seen_claim(uintptr_t key);
/* Launches whose first-launch check was skipped because the set was full. */
uint64_t jst_seen_dropped(void);
/* JITSTALL_SEEN_LIMIT (tests): slots the seen set may use; 0 for the default. */
uint32_t jst_seen_limit_override(void);
/* Remembers where a function or kernel came from (name, module/library). */
void jst_func_note(uintptr_t func, uintptr_t parent, const char *name);
/* func came from kernel (cuKernelGetFunction): same name, same library. */
void jst_func_alias(uintptr_t func, uintptr_t kernel);
/* Forgets every function taken from parent (module or library unload). */
void jst_func_forget_parent(uintptr_t parent);
/* In a forked child: the map's lock may have been held by another thread. */
void jst_launch_atfork_child(void);
/* Adds JST_F_NAME / JST_F_PARENT for func if known. */
void jst_func_describe(uintptr_t func, struct jst_rec *r);

#endif
