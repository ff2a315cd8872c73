/*
 * The simulated driver's own copy of NVIDIA's documented rules for which
 * image of a module the driver uses (docs/DRIVER.md, "The simulated driver's
 * rules"). Written apart from common/arch.c on purpose: the test double must
 * not decide with the code it tests, or CI could not catch a wrong rule.
 * tests/simdriver/test_rules.c runs both over every image nvcc 13 can build
 * and every compute capability, and fails where they differ.
 *
 * Sources: CUDA Programming Guide (CUDA 13.x), "Application compatibility"
 * and the compute capability tables; PTX ISA 9.x, the target list with the
 * family and arch-specific targets and the Thor rename; the PTX ISA release
 * history; CUDA_ERROR_UNSUPPORTED_PTX_VERSION in the driver API reference.
 */
#include <stddef.h>
#include "image.h"
#include "sim.h"

/* Every compute capability a GPU reports (CUDA 13, and 10.1 as older drivers
 * reported Thor). */
static const unsigned sim_ccs[] = {30, 32, 35, 37, 50, 52, 53,  60,  61,  62,  70,  72,  75,
                                   80, 86, 87, 88, 89, 90, 100, 101, 103, 107, 110, 120, 121};

int sim_cc_known(unsigned cc)
{
    for (size_t i = 0; i < sizeof sim_ccs / sizeof sim_ccs[0]; i++)
        if (sim_ccs[i] == cc)
            return 1;
    return 0;
}

/* The family targets and the devices each one runs on, as listed. */
static const struct {
    unsigned target;
    unsigned on[4];
} sim_families[] = {
    {100, {100, 103}}, {101, {110, 101}}, /* Thor: sm_101f became sm_110f */
    {103, {103}},      {107, {107}},      {110, {110}}, {120, {120, 121}}, {121, {121}},
};

static int family_lists(unsigned target, unsigned cc)
{
    for (size_t i = 0; i < sizeof sim_families / sizeof sim_families[0]; i++)
        if (sim_families[i].target == target) {
            for (size_t k = 0; k < 4 && sim_families[i].on[k]; k++)
                if (sim_families[i].on[k] == cc)
                    return 1;
            return 0;
        }
    return 0; /* not a documented family target: runs nowhere */
}

/* Arch-specific targets run on exactly their device; sm_101a is Thor's old name. */
static int specific_is(unsigned target, unsigned cc)
{
    if (target == 101)
        return cc == 110 || cc == 101;
    return target == cc;
}

int sim_sass_ok(unsigned sm, unsigned variant, unsigned cc)
{
    if (variant == JST_A_SPECIFIC)
        return specific_is(sm, cc);
    if (variant == JST_A_FAMILY)
        return family_lists(sm, cc);
    return sm / 10 == cc / 10 && sm % 10 <= cc % 10;
}

int sim_ptx_ok(unsigned sm, unsigned variant, unsigned cc)
{
    if (variant == JST_A_SPECIFIC)
        return specific_is(sm, cc);
    if (variant == JST_A_FAMILY)
        return family_lists(sm, cc);
    return cc >= sm;
}

/* PTX ISA x10 -> the first CUDA release (x1000) whose driver JITs it. */
static const unsigned sim_isa[][2] = {
    {60, 9000},  {61, 9010},  {62, 9020},  {63, 10000}, {64, 10010}, {65, 10020}, {70, 11000},
    {71, 11010}, {72, 11020}, {73, 11030}, {74, 11040}, {75, 11050}, {76, 11060}, {77, 11070},
    {78, 11080}, {80, 12000}, {81, 12010}, {82, 12020}, {83, 12030}, {84, 12040}, {85, 12050},
    {86, 12070}, {87, 12080}, {88, 12090}, {90, 13000}, {91, 13010},
};

int sim_ptx_isa_ok(unsigned isa, unsigned driver)
{
    if (!isa || isa < 60)
        return 1; /* unknown or older than the table: every driver here takes it */
    for (size_t i = 0; i < sizeof sim_isa / sizeof sim_isa[0]; i++)
        if (sim_isa[i][0] == isa)
            return sim_isa[i][1] <= driver;
    return 0; /* newer than any release listed: newer than this driver */
}

/* Rank at equal SM: arch-specific over family over plain. */
static unsigned variant_rank(unsigned v)
{
    return v == JST_A_SPECIFIC ? 2 : v == JST_A_FAMILY ? 1 : 0;
}

static int preferred(const struct jst_entry *a, const struct jst_entry *b)
{
    if (!b)
        return 1;
    if (a->sm != b->sm)
        return a->sm > b->sm;
    return variant_rank(a->variant) > variant_rank(b->variant);
}

int sim_choose(const struct jst_image *img, unsigned cc, int env_flags, unsigned driver, int *sass,
               int *ptx)
{
    const struct jst_entry *bs = NULL, *bp = NULL;
    *sass = *ptx = -1;
    if (img->damaged)
        return SIM_PICK_INVALID;
    for (size_t i = 0; i < img->n_entries; i++) {
        const struct jst_entry *e = &img->entries[i];
        if (e->kind == JST_E_CUBIN && sim_sass_ok(e->sm, e->variant, cc) && preferred(e, bs)) {
            bs = e;
            *sass = (int)i;
        } else if (e->kind == JST_E_PTX && sim_ptx_ok(e->sm, e->variant, cc) && preferred(e, bp)) {
            bp = e;
            *ptx = (int)i;
        }
    }
    int force = env_flags & JST_ENV_FORCE_JIT, disable = env_flags & JST_ENV_DISABLE_JIT;
    if (bs && !force)
        return SIM_PICK_SASS;
    *sass = -1;
    if (!bp)
        return SIM_PICK_NO_BINARY;
    if (disable)
        return SIM_PICK_JIT_DISABLED;
    if (!sim_ptx_isa_ok(bp->ptx_isa, driver))
        return SIM_PICK_PTX_TOO_NEW;
    return SIM_PICK_JIT;
}
