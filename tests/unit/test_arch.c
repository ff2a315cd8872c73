/*
 * Unit tests for NVIDIA's compatibility rules (common/arch.c): which SASS runs
 * where, which PTX JITs where, arch strings, the env switches, and the verdict
 * of whole images, table-driven, with the exact reason lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "image.h"

enum { P = JST_A_PLAIN, A = JST_A_SPECIFIC, F = JST_A_FAMILY };

struct rule_row {
    unsigned sm, variant, cc;
    int expect;
};

static void test_sass_runs_on(void **state)
{
    (void)state;
    static const struct rule_row rows[] = {
        {86, P, 89, 1},                   /* sm_86 on 8.9: same major, newer minor */
        {86, P, 86, 1},   {86, P, 80, 0}, /* never on an older minor */
        {80, P, 90, 0},                   /* never across majors */
        {75, P, 75, 1},   {75, P, 80, 0},   {90, P, 90, 1},   {90, P, 100, 0},
        {90, A, 90, 1}, /* sm_90a only on exactly 9.0 */
        {90, A, 100, 0},  {86, A, 89, 0},   {100, A, 103, 0}, {100, P, 103, 1},
        {100, F, 100, 1}, /* family: same major, minor at least */
        {100, F, 103, 1}, {103, F, 100, 0}, {100, F, 120, 0}, {100, F, 110, 0},
        {120, F, 121, 1}, {121, F, 120, 0}, {0, P, 90, 0},    {90, P, 0, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct rule_row *r = &rows[i];
        if (jst_sass_runs_on(r->sm, r->variant, r->cc) != r->expect)
            fail_msg("row %zu: SASS sm_%u variant %u on cc %u: want %d", i, r->sm, r->variant,
                     r->cc, r->expect);
    }
}

static void test_ptx_jits_to(void **state)
{
    (void)state;
    static const struct rule_row rows[] = {
        {75, P, 90, 1},   {75, P, 75, 1},   {90, P, 80, 0},
        {80, P, 120, 1},  {90, A, 90, 1}, /* compute_90a only for 9.0 */
        {90, A, 100, 0},                  /* compute_90a on 10.0: no */
        {100, F, 100, 1}, {100, F, 103, 1}, {100, F, 120, 0},
        {103, F, 100, 0}, {120, P, 121, 1}, {0, P, 90, 0},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct rule_row *r = &rows[i];
        if (jst_ptx_jits_to(r->sm, r->variant, r->cc) != r->expect)
            fail_msg("row %zu: PTX compute_%u variant %u to cc %u: want %d", i, r->sm, r->variant,
                     r->cc, r->expect);
    }
}

static void test_arch_parse(void **state)
{
    (void)state;
    static const struct {
        const char *s;
        unsigned cc, variant;
    } rows[] = {
        {"sm_90", 90, P},       {"sm_90a", 90, A}, {"sm_100f", 100, F}, {"90", 90, P},
        {"9.0", 90, P},         {"12.1", 121, P},  {"10.0", 100, P},    {"compute_75", 75, P},
        {"compute_90a", 90, A}, {"lto_90", 90, P}, {"sm_121", 121, P},  {"", 0, P},
        {"sm_", 0, P},          {"sm_9", 0, P},    {"abc", 0, P},       {"9.", 0, P},
        {"9.10", 0, P},         {"sm_90x", 0, P},  {"sm_90ab", 0, P},   {"sm_99999", 0, P},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        unsigned v = 99;
        unsigned cc = jst_arch_parse(rows[i].s, &v);
        if (cc != rows[i].cc || (cc && v != rows[i].variant))
            fail_msg("'%s': got cc %u variant %u", rows[i].s, cc, v);
    }
    assert_int_equal(jst_arch_parse(NULL, NULL), 0);
    assert_int_equal(jst_arch_parse("sm_86", NULL), 86);
}

static void test_arch_str(void **state)
{
    (void)state;
    char b[24];
    assert_string_equal(jst_arch_str(b, sizeof(b), 0, 90, A), "sm_90a");
    assert_string_equal(jst_arch_str(b, sizeof(b), 1, 75, P), "compute_75");
    assert_string_equal(jst_arch_str(b, sizeof(b), 0, 100, F), "sm_100f");
    assert_string_equal(jst_arch_str(b, sizeof(b), 1, 120, F), "compute_120f");
    assert_string_equal(jst_arch_str(b, 4, 0, 90, P), "sm_");
}

static void test_env_flags(void **state)
{
    (void)state;
    const char *vars[] = {"CUDA_FORCE_PTX_JIT", "CUDA_FORCE_JIT", "CUDA_DISABLE_PTX_JIT",
                          "CUDA_DISABLE_JIT"};
    for (size_t i = 0; i < 4; i++)
        unsetenv(vars[i]);
    assert_int_equal(jst_env_jit_flags(), 0);
    setenv("CUDA_FORCE_PTX_JIT", "1", 1);
    assert_int_equal(jst_env_jit_flags(), JST_ENV_FORCE_JIT);
    setenv("CUDA_FORCE_PTX_JIT", "0", 1);
    assert_int_equal(jst_env_jit_flags(), 0);
    setenv("CUDA_FORCE_JIT", "1", 1);
    assert_int_equal(jst_env_jit_flags(), JST_ENV_FORCE_JIT);
    setenv("CUDA_DISABLE_JIT", "1", 1);
    assert_int_equal(jst_env_jit_flags(), JST_ENV_FORCE_JIT | JST_ENV_DISABLE_JIT);
    unsetenv("CUDA_FORCE_JIT");
    unsetenv("CUDA_DISABLE_JIT");
    setenv("CUDA_DISABLE_PTX_JIT", "1", 1);
    assert_int_equal(jst_env_jit_flags(), JST_ENV_DISABLE_JIT);
    setenv("CUDA_DISABLE_PTX_JIT", "", 1);
    assert_int_equal(jst_env_jit_flags(), 0);
    unsetenv("CUDA_DISABLE_PTX_JIT");
    unsetenv("CUDA_FORCE_PTX_JIT");
}

/* An image built from a spec like "sm_80 compute_80 lto_90". */
static void make_image(struct jst_image *img, const char *spec)
{
    memset(img, 0, sizeof(*img));
    img->kind = JST_IMG_FATBIN;
    img->entries = calloc(8, sizeof(struct jst_entry));
    assert_non_null(img->entries);
    char buf[128];
    snprintf(buf, sizeof(buf), "%s", spec);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        struct jst_entry *e = &img->entries[img->n_entries++];
        unsigned v;
        e->kind = !strncmp(tok, "compute_", 8) ? JST_E_PTX
                  : !strncmp(tok, "lto_", 4)   ? JST_E_LTOIR
                                               : JST_E_CUBIN;
        e->sm = jst_arch_parse(tok, &v);
        e->variant = v;
        assert_true(e->sm != 0);
    }
}

struct decide_row {
    const char *spec;
    unsigned cc;
    int env;
    unsigned verdict;
    const char *sass, *jit, *reason;
};

static void test_decide_table(void **state)
{
    (void)state;
    enum { FJ = JST_ENV_FORCE_JIT, DJ = JST_ENV_DISABLE_JIT };
    static const struct decide_row rows[] = {
        {"sm_80 compute_80", 86, 0, JST_V_SASS, "sm_80", "", "SASS sm_80 runs on sm_86"},
        {"sm_80 compute_80", 90, 0, JST_V_PTX_JIT, "", "compute_80",
         "no SASS runs on sm_90 (has sm_80, compute_80); JIT from PTX compute_80"},
        {"compute_75", 90, 0, JST_V_PTX_JIT, "", "compute_75", "PTX compute_75 only; GPU is sm_90"},
        {"sm_80 sm_86", 89, 0, JST_V_SASS, "sm_86", "", "SASS sm_86 runs on sm_89"},
        {"sm_86", 80, 0, JST_V_NO_COMPATIBLE, "", "",
         "nothing runs on sm_80: no compatible SASS or PTX (has sm_86)"},
        {"sm_90a compute_90a", 90, 0, JST_V_SASS, "sm_90a", "", "SASS sm_90a runs on sm_90"},
        {"sm_90a compute_90a", 100, 0, JST_V_NO_COMPATIBLE, "", "",
         "nothing runs on sm_100: no compatible SASS or PTX (has sm_90a, compute_90a)"},
        {"sm_90 sm_90a", 90, 0, JST_V_SASS, "sm_90a", "", "SASS sm_90a runs on sm_90"},
        {"sm_90a sm_90", 90, 0, JST_V_SASS, "sm_90a", "", "SASS sm_90a runs on sm_90"},
        {"compute_75 compute_90", 100, 0, JST_V_PTX_JIT, "", "compute_90",
         "PTX compute_90 only; GPU is sm_100"},
        {"compute_90 compute_75", 89, 0, JST_V_PTX_JIT, "", "compute_75",
         "PTX compute_75 only; GPU is sm_89"},
        {"compute_90a", 100, 0, JST_V_NO_COMPATIBLE, "", "",
         "nothing runs on sm_100: no compatible SASS or PTX (has compute_90a)"},
        {"sm_100f compute_100f", 103, 0, JST_V_SASS, "sm_100f", "", "SASS sm_100f runs on sm_103"},
        {"sm_100f compute_100f", 120, 0, JST_V_NO_COMPATIBLE, "", "",
         "nothing runs on sm_120: no compatible SASS or PTX (has sm_100f, compute_100f)"},
        {"sm_103f compute_100", 100, 0, JST_V_PTX_JIT, "", "compute_100",
         "no SASS runs on sm_100 (has sm_103f, compute_100); JIT from PTX compute_100"},
        {"sm_80 compute_80", 80, FJ, JST_V_FORCED_JIT, "", "compute_80",
         "CUDA_FORCE_PTX_JIT=1: JIT from PTX compute_80 instead of SASS sm_80 on sm_80"},
        {"compute_75", 90, FJ, JST_V_FORCED_JIT, "", "compute_75",
         "CUDA_FORCE_PTX_JIT=1: JIT from PTX compute_75 (no SASS for sm_90 anyway)"},
        {"sm_90", 90, FJ, JST_V_NO_COMPATIBLE, "", "",
         "CUDA_FORCE_PTX_JIT=1 ignores SASS and no PTX JITs to sm_90 (has sm_90)"},
        {"compute_75", 90, DJ, JST_V_JIT_DISABLED, "", "",
         "CUDA_DISABLE_PTX_JIT=1 forbids JIT of PTX compute_75; no SASS for sm_90 (has "
         "compute_75)"},
        {"sm_90 compute_90", 90, DJ, JST_V_SASS, "sm_90", "", "SASS sm_90 runs on sm_90"},
        {"sm_80 compute_80", 80, FJ | DJ, JST_V_JIT_DISABLED, "", "",
         "CUDA_FORCE_PTX_JIT=1 and CUDA_DISABLE_PTX_JIT=1: JIT of PTX compute_80 for sm_80 "
         "refused"},
        {"", 90, 0, JST_V_NO_COMPATIBLE, "", "", "image has no entries; nothing runs on sm_90"},
        {"lto_90", 90, 0, JST_V_NO_COMPATIBLE, "", "",
         "nothing runs on sm_90: no compatible SASS or PTX (has lto_90)"},
        {"sm_90", 0, 0, JST_V_NONE, "", "", "compute capability unknown"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const struct decide_row *r = &rows[i];
        struct jst_image img;
        struct jst_decision d;
        make_image(&img, r->spec);
        jst_image_decide(&img, r->cc, r->env, &d);
        if (d.verdict != r->verdict || strcmp(d.sass_arch, r->sass) || strcmp(d.jit_from, r->jit) ||
            strcmp(d.reason, r->reason))
            fail_msg("row %zu '%s' on %u env %d: verdict %u sass '%s' jit '%s' reason '%s'", i,
                     r->spec, r->cc, r->env, d.verdict, d.sass_arch, d.jit_from, d.reason);
        /* The indices point at the entries named. */
        if (d.sass_arch[0]) {
            char b[24];
            const struct jst_entry *e = &img.entries[d.sass_index];
            assert_string_equal(jst_arch_str(b, sizeof(b), 0, e->sm, e->variant), d.sass_arch);
        } else {
            assert_int_equal(d.sass_index, -1);
        }
        if (d.verdict == JST_V_PTX_JIT || d.verdict == JST_V_FORCED_JIT) {
            char b[24];
            const struct jst_entry *e = &img.entries[d.ptx_index];
            assert_string_equal(jst_arch_str(b, sizeof(b), 1, e->sm, e->variant), d.jit_from);
        }
        jst_image_free(&img);
    }
}

static void test_decide_damaged(void **state)
{
    (void)state;
    struct jst_image img;
    struct jst_decision d;
    make_image(&img, "sm_90");
    img.damaged = 1;
    snprintf(img.damage, sizeof(img.damage), "truncated entry header at offset 16");
    jst_image_decide(&img, 90, 0, &d);
    assert_int_equal(d.verdict, JST_V_DAMAGED);
    assert_string_equal(d.reason, "damaged image: truncated entry header at offset 16");
    assert_int_equal(d.sass_index, -1);
    assert_int_equal(d.ptx_index, -1);
    jst_image_free(&img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sass_runs_on),   cmocka_unit_test(test_ptx_jits_to),
        cmocka_unit_test(test_arch_parse),     cmocka_unit_test(test_arch_str),
        cmocka_unit_test(test_env_flags),      cmocka_unit_test(test_decide_table),
        cmocka_unit_test(test_decide_damaged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
