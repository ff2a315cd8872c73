/*
 * sim.rules: the simulated driver's own table of NVIDIA's rules
 * (sim_rules.c) against jitstall's (common/arch.c, jst_image_decide_drv),
 * over every image nvcc 13 can build and every compute capability a GPU
 * reports, under plain, forced and disabled JIT and two driver versions.
 * Images are the committed fixtures (tests/fixtures) and fatbins made here
 * from entry headers: one per SASS target, one per PTX target, every pair of
 * a SASS and a PTX target, PTX of ISA 9.0 and 9.1, and CUDA 12.9's Thor
 * targets (sm_101a, sm_101f) that CUDA 13 renamed sm_110. Any cell where the
 * two disagree is printed and fails the test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "image.h"
#include "sim.h"
#include "trace.h"

/* The targets nvcc 13 accepts (nvcc --list-gpu-arch / --list-gpu-code). */
static const struct {
    unsigned sm, variant;
} targets[] = {
    {75, 0},
    {80, 0},
    {86, 0},
    {87, 0},
    {88, 0},
    {89, 0},
    {90, 0},
    {90, 1},
    {100, 0},
    {100, 1},
    {100, 2},
    {103, 0},
    {103, 1},
    {103, 2},
    {110, 0},
    {110, 1},
    {110, 2},
    {120, 0},
    {120, 1},
    {120, 2},
    {121, 0},
    {121, 1},
    {121, 2},
    /* CUDA 12.9's names for Thor, still met in older builds */
    {101, 0},
    {101, 1},
    {101, 2},
};
#define N_TARGETS (sizeof targets / sizeof targets[0])

static const unsigned ccs[] = {30, 32, 35, 37, 50, 52, 53,  60,  61,  62,  70,  72,  75,
                               80, 86, 87, 88, 89, 90, 100, 101, 103, 107, 110, 120, 121};

struct entry_spec {
    unsigned kind, sm, variant, isa;
};

static size_t put_entry(uint8_t *p, const struct entry_spec *s)
{
    char ptx[128];
    const uint8_t *payload;
    size_t plen, hsz = s->kind == JST_E_PTX ? 80 : 64;
    static const uint8_t elf[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    if (s->kind == JST_E_PTX) {
        plen = (size_t)snprintf(ptx, sizeof ptx, ".version %u.%u\n.target sm_%u%s\n", s->isa / 10,
                                s->isa % 10, s->sm,
                                s->variant == 1   ? "a"
                                : s->variant == 2 ? "f"
                                                  : "");
        plen = (plen + 8) & ~(size_t)7;
        payload = (const uint8_t *)ptx;
    } else {
        plen = sizeof elf;
        payload = elf;
    }
    memset(p, 0, hsz + plen);
    uint16_t kind = (uint16_t)s->kind, ver = 0x101;
    uint32_t h32 = (uint32_t)hsz, sm = s->sm;
    uint64_t p64 = plen, flags = 0x11;
    uint16_t minor = (uint16_t)(s->kind == JST_E_PTX ? s->isa % 10 : 8);
    uint16_t major = (uint16_t)(s->kind == JST_E_PTX ? s->isa / 10 : 1);
    if (s->variant == 1)
        flags |= 0x100000;
    else if (s->variant == 2)
        flags |= 0x200000;
    memcpy(p, &kind, 2);
    memcpy(p + 2, &ver, 2);
    memcpy(p + 4, &h32, 4);
    memcpy(p + 8, &p64, 8);
    memcpy(p + 0x18, &minor, 2);
    memcpy(p + 0x1A, &major, 2);
    memcpy(p + 0x1C, &sm, 4);
    memcpy(p + 0x28, &flags, 8);
    memcpy(p + hsz, payload, s->kind == JST_E_PTX ? strlen(ptx) : plen);
    return hsz + plen;
}

/* A fatbin of n entries into buf; returns its size. */
static size_t make_fatbin(uint8_t *buf, const struct entry_spec *e, size_t n)
{
    size_t off = 16;
    for (size_t i = 0; i < n; i++)
        off += put_entry(buf + off, &e[i]);
    uint32_t magic = 0xBA55ED50u;
    uint16_t ver = 1, hs = 16;
    uint64_t size = off - 16;
    memcpy(buf, &magic, 4);
    memcpy(buf + 4, &ver, 2);
    memcpy(buf + 6, &hs, 2);
    memcpy(buf + 8, &size, 8);
    return off;
}

static size_t n_cells, n_bad;

static int expect_pick(unsigned verdict)
{
    switch (verdict) {
    case JST_V_SASS:
        return SIM_PICK_SASS;
    case JST_V_PTX_JIT:
    case JST_V_FORCED_JIT:
        return SIM_PICK_JIT;
    case JST_V_NO_COMPATIBLE:
        return SIM_PICK_NO_BINARY;
    case JST_V_JIT_DISABLED:
        return SIM_PICK_JIT_DISABLED;
    case JST_V_PTX_TOO_NEW:
        return SIM_PICK_PTX_TOO_NEW;
    default:
        return SIM_PICK_INVALID;
    }
}

static void compare(const char *what, const struct jst_image *img)
{
    static const int envs[] = {0, JST_ENV_FORCE_JIT, JST_ENV_DISABLE_JIT};
    static const unsigned drivers[] = {13000, 12090, 13010};
    for (size_t c = 0; c < sizeof ccs / sizeof ccs[0]; c++)
        for (size_t e = 0; e < 3; e++)
            for (size_t d = 0; d < 3; d++) {
                struct jst_decision dec;
                int si, pi;
                jst_image_decide_drv(img, ccs[c], envs[e], drivers[d], &dec);
                int pick = sim_choose(img, ccs[c], envs[e], drivers[d], &si, &pi);
                int want = expect_pick(dec.verdict);
                int same = pick == want;
                if (same && pick == SIM_PICK_SASS)
                    same = si == dec.sass_index;
                if (same && (pick == SIM_PICK_JIT || pick == SIM_PICK_PTX_TOO_NEW))
                    same = pi == dec.ptx_index;
                n_cells++;
                if (!same) {
                    n_bad++;
                    if (n_bad <= 40)
                        fprintf(stderr,
                                "DIFFER %s on cc %u env %d driver %u: jitstall %s (%s) sass %d "
                                "ptx %d; simulated driver pick %d sass %d ptx %d\n",
                                what, ccs[c], envs[e], drivers[d], jst_verdict_name(dec.verdict),
                                dec.reason, dec.sass_index, dec.ptx_index, pick, si, pi);
                }
            }
}

static void check_fatbin(const struct entry_spec *e, size_t n)
{
    static uint8_t buf[4096];
    size_t len = make_fatbin(buf, e, n);
    struct jst_image img;
    jst_image_inspect(buf, len, &img);
    if (img.damaged || img.n_entries != n) {
        fprintf(stderr, "made a bad fatbin: %s\n", img.damage);
        n_bad++;
    }
    char what[96] = "";
    for (size_t i = 0; i < n; i++) {
        char a[24];
        size_t u = strlen(what);
        snprintf(what + u, sizeof what - u, "%s%s", u ? "+" : "",
                 jst_arch_str(a, sizeof a, e[i].kind == JST_E_PTX, e[i].sm, e[i].variant));
        if (e[i].kind == JST_E_PTX) {
            u = strlen(what);
            snprintf(what + u, sizeof what - u, "@%u.%u", e[i].isa / 10, e[i].isa % 10);
        }
    }
    compare(what, &img);
    jst_image_free(&img);
}

static void check_file(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        n_bad++;
        return;
    }
    static uint8_t buf[1 << 20];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = 0;
    struct jst_image img;
    jst_image_inspect(buf, len, &img);
    compare(name, &img);
    jst_image_free(&img);
}

int main(void)
{
    static const char *const fixtures[] = {
        "k75.ptx",          "lto90.fatbin",      "multi.fatbin",         "ptx75.fatbin",
        "sm100f.fatbin",    "sm80_ptx80.fatbin", "sm90.cubin",           "sm90.fatbin",
        "sm90a.cubin",      "sm90a.fatbin",      "z_all_default.fatbin", "z_all_speed.fatbin",
        "z_default.fatbin", "z_none.fatbin",     "z_size.fatbin",        "z_speed.fatbin",
    };
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
        check_file(JST_FIXTURES, fixtures[i]);
    for (size_t i = 0; i < N_TARGETS; i++) {
        struct entry_spec s = {JST_E_CUBIN, targets[i].sm, targets[i].variant, 0};
        check_fatbin(&s, 1);
        for (unsigned isa = 90; isa <= 91; isa++) {
            struct entry_spec p = {JST_E_PTX, targets[i].sm, targets[i].variant, isa};
            check_fatbin(&p, 1);
        }
        for (size_t k = 0; k < N_TARGETS; k++) {
            struct entry_spec two[2] = {
                {JST_E_CUBIN, targets[i].sm, targets[i].variant, 0},
                {JST_E_PTX, targets[k].sm, targets[k].variant, k % 2 ? 91 : 90},
            };
            check_fatbin(two, 2);
        }
    }
    /* Several SASS targets and PTX of two ISAs, as fat libraries ship. */
    struct entry_spec fat[] = {
        {JST_E_CUBIN, 80, 0, 0},  {JST_E_CUBIN, 90, 1, 0}, {JST_E_CUBIN, 100, 2, 0},
        {JST_E_CUBIN, 120, 0, 0}, {JST_E_PTX, 80, 0, 88},  {JST_E_PTX, 120, 0, 91},
    };
    check_fatbin(fat, sizeof fat / sizeof fat[0]);
    printf("sim.rules: %zu cells compared, %zu differ\n", n_cells, n_bad);
    return n_bad ? 1 : 0;
}
