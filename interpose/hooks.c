/*
 * The table of hooked driver functions: one row per exact variant, serving
 * all three routes (exported symbol, dlsym, cuGetProcAddress), and how a
 * wrapper finds the real function it calls. The wrappers and what each
 * family records are next to their handlers: hooks_ctx.c (cuInit, contexts),
 * hooks_load.c (module and library loads, link steps), hooks_func.c
 * (function and kernel lookups, unloads), hooks_launch.c (launches),
 * hooks_graph.c (CUDA graph capture and instantiation), procaddr.c
 * (cuGetProcAddress).
 */
#include <string.h>

#include "state.h"
#include "hooks.h"
#include "real.h"

void *jst_hook_real(struct jst_hook *h, int route)
{
    void *f = route == JST_ROUTE_DLSYM ? atomic_load(&h->real_dl) : atomic_load(&h->real);
    if (!f && route != JST_ROUTE_DLSYM) {
        jst_driver();
        f = atomic_load(&h->real);
        jst_driver_report();
    }
    return f;
}

#define JST_HOOK_ROW(v, b, c)                                                                      \
    [JST_H_##v] = {.name = #v, .base = #b, .call_id = c, .wrap = jst_wraps_##v},
struct jst_hook jst_hooks[JST_H_COUNT] = {JST_HOOK_LIST(JST_HOOK_ROW)};

struct jst_hook *jst_hook_by_name(const char *name)
{
    if (!name || name[0] != 'c' || name[1] != 'u')
        return NULL;
    for (int i = 0; i < JST_H_COUNT; i++)
        if (strcmp(jst_hooks[i].name, name) == 0)
            return &jst_hooks[i];
    return NULL;
}
