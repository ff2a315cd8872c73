/*
 * NVIDIA's compatibility rules (docs/DRIVER.md, "Which image the driver picks"): which SASS runs on
 * a compute capability, which PTX can be JIT-compiled for it, and the driver's choice for a whole
 * image, with one human line saying why.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "image_int.h"

/* CUDA 13 renamed Thor from sm_101 to sm_110: arch-specific and family
 * targets of sm_101 belong to the 11.x family (PTX ISA, "Thor rename"). A
 * device never reports 10.1 under CUDA 13; older drivers did, so 10.1 is
 * kept. */
static int thor_old(unsigned sm, unsigned variant)
{
    return sm == 101 && variant != JST_A_PLAIN;
}

/* The compute capabilities a family target sm_XYf runs on: the lists of the
 * CUDA Programming Guide (CUDA 13.x); an f target not listed there falls back
 * to "same major, minor at least the built one". */
static int family_has(unsigned sm, unsigned cc)
{
    static const struct {
        unsigned short sm, ccs[3];
    } fam[] = {
        {100, {100, 103, 0}}, {101, {101, 110, 0}}, {103, {103, 0, 0}}, {107, {107, 0, 0}},
        {110, {110, 0, 0}},   {120, {120, 121, 0}}, {121, {121, 0, 0}},
    };
    for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++) {
        if (fam[i].sm != sm)
            continue;
        for (size_t k = 0; k < 3 && fam[i].ccs[k]; k++)
            if (fam[i].ccs[k] == cc)
                return 1;
        return 0;
    }
    return sm / 10 == cc / 10 && cc >= sm;
}

static int specific_has(unsigned sm, unsigned cc)
{
    return cc == sm || (thor_old(sm, JST_A_SPECIFIC) && cc == 110);
}

int jst_sass_runs_on(unsigned sm, unsigned variant, unsigned cc)
{
    if (!sm || !cc)
        return 0;
    if (variant == JST_A_SPECIFIC)
        return specific_has(sm, cc);
    if (variant == JST_A_FAMILY)
        return family_has(sm, cc);
    /* Plain SASS: same major, minor at least the built one. */
    return sm / 10 == cc / 10 && cc >= sm;
}

int jst_ptx_jits_to(unsigned sm, unsigned variant, unsigned cc)
{
    if (!sm || !cc)
        return 0;
    if (variant == JST_A_SPECIFIC)
        return specific_has(sm, cc);
    if (variant == JST_A_FAMILY)
        return family_has(sm, cc);
    return cc >= sm;
}

const char *jst_arch_str(char *buf, size_t n, int ptx, unsigned sm, unsigned variant)
{
    /* Formatted by hand: decide() calls this on every load, printf is slow. */
    char tmp[32];
    size_t k = 0;
    const char *pre = ptx ? "compute_" : "sm_";
    while (*pre)
        tmp[k++] = *pre++;
    char digits[12];
    int nd = 0;
    do {
        digits[nd++] = (char)('0' + sm % 10);
        sm /= 10;
    } while (sm && nd < 10);
    while (nd)
        tmp[k++] = digits[--nd];
    if (variant == JST_A_SPECIFIC)
        tmp[k++] = 'a';
    else if (variant == JST_A_FAMILY)
        tmp[k++] = 'f';
    tmp[k] = 0;
    if (n) {
        size_t c = k < n - 1 ? k : n - 1;
        memcpy(buf, tmp, c);
        buf[c] = 0;
    }
    return buf;
}

unsigned jst_arch_parse(const char *s, unsigned *variant)
{
    unsigned var = JST_A_PLAIN, v = 0, digits = 0;
    int prefixed = 1;
    if (variant)
        *variant = JST_A_PLAIN;
    if (!s)
        return 0;
    if (!strncmp(s, "sm_", 3))
        s += 3;
    else if (!strncmp(s, "compute_", 8))
        s += 8;
    else if (!strncmp(s, "lto_", 4))
        s += 4;
    else
        prefixed = 0;
    if (*s == '0') /* "sm_0100", "090": no leading zero */
        return 0;
    while (*s >= '0' && *s <= '9' && digits < 4) {
        v = v * 10 + (unsigned)(*s++ - '0');
        digits++;
    }
    if (*s == '.') { /* "9.0", "12.1": major.minor, one minor digit, no prefix */
        if (prefixed || !digits || digits > 2 || s[1] < '0' || s[1] > '9' || s[2])
            return 0;
        v = v * 10 + (unsigned)(s[1] - '0');
        s += 2;
    } else {
        if (digits < 2 || digits > 3)
            return 0;
        if (*s == 'a' || *s == 'f') {
            var = *s == 'a' ? JST_A_SPECIFIC : JST_A_FAMILY;
            s++;
        }
    }
    if (*s || v < 10 || v > 999)
        return 0;
    if (variant)
        *variant = var;
    return v;
}

static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

int jst_env_jit_flags(void)
{
    int f = 0;
    if (env_set("CUDA_FORCE_PTX_JIT") || env_set("CUDA_FORCE_JIT"))
        f |= JST_ENV_FORCE_JIT;
    if (env_set("CUDA_DISABLE_PTX_JIT") || env_set("CUDA_DISABLE_JIT"))
        f |= JST_ENV_DISABLE_JIT;
    return f;
}

/* Higher SM wins; at equal SM, arch-specific beats family beats plain. */
static int better(const struct jst_entry *a, const struct jst_entry *b)
{
    static const int rank[3] = {0, 2, 1};
    if (!b)
        return 1;
    if (a->sm != b->sm)
        return a->sm > b->sm;
    return rank[a->variant % 3] > rank[b->variant % 3];
}

/* "sm_80 sm_86 compute_90": the arches an image offers, for reasons. */
static void offered(const struct jst_image *img, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < img->n_entries && used + 1 < n; i++) {
        const struct jst_entry *e = &img->entries[i];
        char a[24];
        if (e->kind == JST_E_LTOIR)
            snprintf(a, sizeof(a), "lto_%u", e->sm);
        else
            jst_arch_str(a, sizeof(a), e->kind == JST_E_PTX, e->sm, e->variant);
        if (strstr(buf, a)) /* the same arch twice (several TUs) is named once */
            continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", a);
        if (w < 0 || (size_t)w >= n - used) {
            buf[used] = 0;
            break;
        }
        used += (size_t)w;
    }
    if (!used)
        snprintf(buf, n, "no entries");
}

/* Writes the reason line; a long entry list is cut, never overflowed. */
static void say(char *r, size_t rn, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *r, size_t rn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r, rn, fmt, ap);
    va_end(ap);
}

/* The best SASS entry that runs on cc (*bs) and the best PTX entry that
 * JITs to it (*bp), their indexes in out; returns how many SASS entries the
 * image has. */
static size_t pick_entries(const struct jst_image *img, unsigned cc, struct jst_decision *out,
                           const struct jst_entry **bs, const struct jst_entry **bp)
{
    size_t n_sass = 0;
    for (size_t i = 0; i < img->n_entries; i++) {
        const struct jst_entry *e = &img->entries[i];
        if (e->kind == JST_E_CUBIN) {
            n_sass++;
            if (jst_sass_runs_on(e->sm, e->variant, cc) && better(e, *bs)) {
                *bs = e;
                out->sass_index = (int)i;
            }
        } else if (e->kind == JST_E_PTX) {
            if (jst_ptx_jits_to(e->sm, e->variant, cc) && better(e, *bp)) {
                *bp = e;
                out->ptx_index = (int)i;
            }
        }
    }
    return n_sass;
}

/* CUDA_FORCE_PTX_JIT=1: the driver ignores SASS (sass: the one that would
 * have run, or NULL) and JITs the PTX, if any and not disabled. */
static void decide_forced(struct jst_decision *out, int has_ptx, int disable, const char *sass,
                          const char *ptx, const char *gpu, const char *have)
{
    char *r = out->reason;
    size_t rn = sizeof(out->reason);
    out->sass_index = -1;
    if (!has_ptx) {
        out->verdict = JST_V_NO_COMPATIBLE;
        out->ptx_index = -1;
        say(r, rn, "CUDA_FORCE_PTX_JIT=1 ignores SASS and no PTX JITs to %s (has %s)", gpu, have);
    } else if (disable) {
        out->verdict = JST_V_JIT_DISABLED;
        snprintf(r, rn,
                 "CUDA_FORCE_PTX_JIT=1 and CUDA_DISABLE_PTX_JIT=1: JIT of PTX %s for %s refused",
                 ptx, gpu);
    } else {
        out->verdict = JST_V_FORCED_JIT;
        snprintf(out->jit_from, sizeof(out->jit_from), "%s", ptx);
        if (sass)
            say(r, rn, "CUDA_FORCE_PTX_JIT=1: JIT from PTX %s instead of SASS %s on %s", ptx, sass,
                gpu);
        else
            say(r, rn, "CUDA_FORCE_PTX_JIT=1: JIT from PTX %s (no SASS for %s anyway)", ptx, gpu);
    }
}

/* The PTX the driver would JIT is newer than it supports: the load fails. */
static void too_new(struct jst_decision *out, unsigned driver_cuda)
{
    unsigned max = jst_cuda_max_ptx_isa(driver_cuda), made = jst_ptx_isa_cuda(out->ptx_isa);
    char dv[16], mk[16];
    jst_cuda_str(dv, sizeof(dv), driver_cuda);
    out->verdict = JST_V_PTX_TOO_NEW;
    if (made)
        say(out->reason, sizeof(out->reason),
            "PTX %s is ISA %u.%u (CUDA %s toolkit); a CUDA %s driver JITs up to ISA %u.%u",
            out->jit_from, out->ptx_isa / 10, out->ptx_isa % 10, jst_cuda_str(mk, sizeof(mk), made),
            dv, max / 10, max % 10);
    else
        say(out->reason, sizeof(out->reason),
            "PTX %s is ISA %u.%u (a toolkit newer than CUDA 13.1); a CUDA %s driver JITs up to "
            "ISA %u.%u",
            out->jit_from, out->ptx_isa / 10, out->ptx_isa % 10, dv, max / 10, max % 10);
}

void jst_image_decide_drv(const struct jst_image *img, unsigned cc, int env_flags,
                          unsigned driver_cuda, struct jst_decision *out)
{
    jst_image_decide(img, cc, env_flags, out);
    if (driver_cuda && out->ptx_isa &&
        (out->verdict == JST_V_PTX_JIT || out->verdict == JST_V_FORCED_JIT) &&
        out->ptx_isa > jst_cuda_max_ptx_isa(driver_cuda))
        too_new(out, driver_cuda);
}

/* Kept apart from jst_image_decide_drv so that the preload, which calls only
 * this, links none of the version tables: the analyzer compares versions. */
void jst_image_decide(const struct jst_image *img, unsigned cc, int env_flags,
                      struct jst_decision *out)
{
    memset(out, 0, sizeof(*out));
    out->sass_index = out->ptx_index = -1;
    if (img->damaged) {
        out->verdict = JST_V_DAMAGED;
        snprintf(out->reason, sizeof(out->reason), "damaged image: %s", img->damage);
        return;
    }
    char gpu[16];
    jst_arch_str(gpu, sizeof(gpu), 0, cc, JST_A_PLAIN);
    if (!cc) {
        out->verdict = JST_V_NONE;
        snprintf(out->reason, sizeof(out->reason), "compute capability unknown");
        return;
    }
    const struct jst_entry *bs = NULL, *bp = NULL;
    size_t n_sass = pick_entries(img, cc, out, &bs, &bp);
    char sass[16] = "", ptx[16] = "", have[96];
    if (bs)
        jst_arch_str(sass, sizeof(sass), 0, bs->sm, bs->variant);
    if (bp)
        jst_arch_str(ptx, sizeof(ptx), 1, bp->sm, bp->variant);
    int force = env_flags & JST_ENV_FORCE_JIT, disable = env_flags & JST_ENV_DISABLE_JIT;
    have[0] = 0;
    if (!bs || force)
        offered(img, have, sizeof(have)); /* only the reasons without SASS name them */
    char *r = out->reason;
    size_t rn = sizeof(out->reason);

    if (bp)
        out->ptx_isa = bp->ptx_isa;
    if (force) {
        decide_forced(out, bp != NULL, disable, bs ? sass : NULL, ptx, gpu, have);
        return;
    }
    if (bs) {
        out->verdict = JST_V_SASS;
        out->ptx_index = -1;
        out->ptx_isa = 0;
        snprintf(out->sass_arch, sizeof(out->sass_arch), "%s", sass);
        say(r, rn, "SASS %s runs on %s", sass, gpu);
        return;
    }
    if (bp) {
        if (disable) {
            out->verdict = JST_V_JIT_DISABLED;
            say(r, rn, "CUDA_DISABLE_PTX_JIT=1 forbids JIT of PTX %s; no SASS for %s (has %s)", ptx,
                gpu, have);
            return;
        }
        out->verdict = JST_V_PTX_JIT;
        snprintf(out->jit_from, sizeof(out->jit_from), "%s", ptx);
        if (!n_sass)
            say(r, rn, "PTX %s only; GPU is %s", ptx, gpu);
        else
            say(r, rn, "no SASS runs on %s (has %s); JIT from PTX %s", gpu, have, ptx);
        return;
    }
    out->verdict = JST_V_NO_COMPATIBLE;
    if (!img->n_entries)
        say(r, rn, "image has no entries; nothing runs on %s", gpu);
    else
        say(r, rn, "nothing runs on %s: no compatible SASS or PTX (has %s)", gpu, have);
}

int jst_arch_known(unsigned sm, unsigned variant)
{
    /* The compute capabilities of NVIDIA's GPUs, Kepler to Blackwell (CUDA
     * 13's list, with the ones older toolkits still name); "a" exists from
     * sm_90, "f" from sm_100. */
    static const unsigned plain[] = {30, 32, 35, 37, 50, 52, 53,  60,  61,  62,  70,  72,  75,
                                     80, 86, 87, 88, 89, 90, 100, 101, 103, 107, 110, 120, 121};
    int found = 0;
    for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
        found |= plain[i] == sm;
    if (!found)
        return 0;
    if (variant == JST_A_SPECIFIC)
        return sm >= 90;
    if (variant == JST_A_FAMILY)
        return sm >= 100;
    return 1;
}

int jst_image_for_other_gpus(const struct jst_image *img, unsigned cc)
{
    if (img->damaged || !img->n_entries || !cc)
        return 0;
    for (size_t i = 0; i < img->n_entries; i++) {
        const struct jst_entry *e = &img->entries[i];
        /* Anything the driver could run or JIT here, or LTO-IR a linker could
         * build for it, is code for the target. */
        if (e->kind == JST_E_CUBIN ? jst_sass_runs_on(e->sm, e->variant, cc)
                                   : jst_ptx_jits_to(e->sm, e->variant, cc))
            return 0;
    }
    return 1;
}

int jst_verdict_runs(unsigned verdict)
{
    return verdict == JST_V_SASS || verdict == JST_V_PTX_JIT || verdict == JST_V_FORCED_JIT;
}
