/*
 * Fuzz target for the module-map index (analyzer/modix.c): a map of up to 64
 * entries (loads, dlopens and dlcloses over small address ranges that overlap
 * a lot) is built from the input, as it is and with seq_after made
 * nondecreasing as a trace records it (the index's two ways of answering),
 * and every lookup is compared with the plain scan the index replaced (the latest entry holding the address that
 * was mapped at call k and not closed by a later dlclose of the same path and
 * bias by then; else the latest entry holding it).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "modix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const paths[] = {"/a.so", "/b.so", "/c.so", "/d.so"};

static long plain(const struct jst_modmap *mods, size_t n, uint64_t ip, long k, int latest_only)
{
    long best = -1, any = -1;
    for (size_t i = 0; i < n; i++) {
        const struct jst_modmap *m = &mods[i];
        if (m->event == JST_MOD_DLCLOSE || ip < m->start || ip >= m->end)
            continue;
        any = (long)i;
        if (latest_only || k < 0 || m->seq_after > (uint64_t)k)
            continue;
        int closed = 0;
        for (size_t j = i + 1; j < n && !closed; j++) {
            const struct jst_modmap *c = &mods[j];
            closed = c->event == JST_MOD_DLCLOSE && c->seq_after <= (uint64_t)k &&
                     c->bias == m->bias && strcmp(c->path, m->path) == 0;
        }
        if (!closed)
            best = (long)i;
    }
    return best >= 0 ? best : any;
}

/* Every lookup of the index of mods[0..n) against the plain scan. */
static void check(const struct jst_modmap *mods, size_t n)
{
    struct jst_modix *x = jst_modix_build(mods, n);
    if (!x)
        return;
    for (uint64_t ip = 0; ip < 50; ip++) {
        if (jst_modix_latest(x, ip) != plain(mods, n, ip, -1, 1))
            abort();
        for (long k = -1; k < 18; k++)
            if (jst_modix_at(x, ip, k) != plain(mods, n, ip, k, 0))
                abort();
    }
    jst_modix_free(x);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct jst_modmap mods[64];
    size_t n = 0;
    memset(mods, 0, sizeof mods);
    for (size_t i = 0; i + 4 <= size && n < 64; i += 4, n++) {
        const uint8_t *d = data + i;
        struct jst_modmap *m = &mods[n];
        m->event = d[0] % 3;
        m->path = (char *)paths[(d[0] >> 2) & 3];
        m->bias = (d[0] >> 4) & 1 ? 0x1000 : 0;
        m->start = d[1] % 32;
        m->end = m->start + d[2] % 16;
        m->seq_after = d[3] % 16;
    }
    check(mods, n);
    /* The same map as a trace records it: seq_after (the calls seen so far)
     * never falls along it, which lets the index bisect instead of scan. */
    for (size_t i = 1; i < n; i++)
        if (mods[i].seq_after < mods[i - 1].seq_after)
            mods[i].seq_after = mods[i - 1].seq_after;
    check(mods, n);
    return 0;
}
