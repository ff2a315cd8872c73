/*
 * The cuGetProcAddress route. cudart finds cuGetProcAddress_v2 by dlsym, asks
 * it for "cuGetProcAddress" again, and resolves everything else through the
 * pointer it got, so every pointer the resolver hands out (the resolver itself
 * included) must be our wrapper of the exact variant the driver chose.
 *
 * The variant is known by comparing the returned pointer with the driver's
 * exported versioned symbols (cuCtxCreate, _v2, _v3, _v4; cuLaunchKernel and
 * _ptsz ...), which fixes the signature. A pointer that matches none of them is
 * returned unwrapped: a wrapper of the wrong signature would break the program.
 */
#include <string.h>

#include "state.h"
#include "procaddr.h"
#include "real.h"
#include "inflight.h"

void *jst_procaddr_map(const char *symbol, void *fn)
{
    jst_driver();
    size_t n = strlen(symbol);
    for (int i = 0; i < JST_H_COUNT; i++) {
        struct jst_hook *h = &jst_hooks[i];
        /* symbol is a base name ("cuCtxCreate"); accept an exact variant too */
        if (strcmp(h->base, symbol) != 0 && strcmp(h->name, symbol) != 0)
            continue;
        void *real = atomic_load(&h->real);
        if (!real)
            continue;
        /* A driver that takes its own exported address through its GOT hands
         * out our export: that is the same variant. */
        if (fn == real || fn == h->wrap[JST_ROUTE_DIRECT]) {
            jst_dbg("cuGetProcAddress(%s) -> %s (wrapped)", symbol, h->name);
            return h->wrap[JST_ROUTE_PROCADDR];
        }
    }
    if (n > 2 && symbol[0] == 'c' && symbol[1] == 'u')
        jst_dbg("cuGetProcAddress(%s) -> %p (not hooked)", symbol, fn);
    return fn;
}
