/*
 * PTX ISA versions: read from PTX text and from fatbin entry headers (the
 * committed nvcc 13 fixtures carry ISA 9.0), the ISA/CUDA/driver tables, the
 * --driver argument, and jst_image_decide_drv's ptx_too_new.
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

static uint8_t *slurp(const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", JST_FIXTURES, name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t buf[1 << 20];
    *len = fread(buf, 1, sizeof buf - 1, f);
    buf[*len] = 0;
    fclose(f);
    return buf;
}

static unsigned first_ptx_isa(const char *name)
{
    size_t len;
    uint8_t *p = slurp(name, &len);
    struct jst_image img;
    jst_image_inspect(p, len, &img);
    unsigned isa = 0;
    for (size_t i = 0; i < img.n_entries && !isa; i++)
        if (img.entries[i].kind == JST_E_PTX)
            isa = img.entries[i].ptx_isa;
    jst_image_free(&img);
    return isa;
}

static void isa_from_fixtures(void **state)
{
    (void)state;
    /* nvcc 13.0 writes .version 9.0, in the text and in the entry header
     * (minor at 0x18, major at 0x1A), compressed or not. */
    assert_int_equal(first_ptx_isa("k75.ptx"), 90);
    assert_int_equal(first_ptx_isa("z_none.fatbin"), 90);
    assert_int_equal(first_ptx_isa("ptx75.fatbin"), 90);
    assert_int_equal(first_ptx_isa("z_speed.fatbin"), 90);
    assert_int_equal(first_ptx_isa("sm100f.fatbin"), 90);
    assert_int_equal(first_ptx_isa("sm90.fatbin"), 0); /* no PTX */
}

static void isa_from_text(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        unsigned isa;
    } cases[] = {
        {".version 9.1\n.target sm_90\n", 91},
        {"// made by hand\n/* c */ .version\t8.8\n.target sm_80\n", 88},
        {".version 10.0\n.target sm_90\n", 100},
        {".version 9\n.target sm_90\n", 0},
        {".version 9.12\n.target sm_90\n", 0},
        {".versionx 9.1\n", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct jst_image img;
        jst_image_inspect(cases[i].text, strlen(cases[i].text) + 1, &img);
        unsigned got = img.n_entries ? img.entries[0].ptx_isa : 0;
        if (got != cases[i].isa)
            fail_msg("'%s': ISA %u, want %u", cases[i].text, got, cases[i].isa);
        jst_image_free(&img);
    }
}

static void tables(void **state)
{
    (void)state;
    assert_int_equal(jst_ptx_isa_cuda(91), 13010);
    assert_int_equal(jst_ptx_isa_cuda(90), 13000);
    assert_int_equal(jst_ptx_isa_cuda(86), 12070);
    assert_int_equal(jst_ptx_isa_cuda(78), 11080);
    assert_int_equal(jst_ptx_isa_cuda(99), 0);
    assert_int_equal(jst_cuda_max_ptx_isa(13000), 90);
    assert_int_equal(jst_cuda_max_ptx_isa(13010), 91);
    assert_int_equal(jst_cuda_max_ptx_isa(12060), 85); /* 8.6 came with 12.7 */
    assert_int_equal(jst_cuda_max_ptx_isa(12040), 84);
    assert_int_equal(jst_driver_release_cuda("580.159.04"), 13000);
    assert_int_equal(jst_driver_release_cuda("550.54"), 12040);
    assert_int_equal(jst_driver_release_cuda("590.44.01"), 13010);
    assert_int_equal(jst_driver_release_cuda("572.16"), 12080);
    assert_int_equal(jst_cuda_min_driver(13010), 590);
    assert_int_equal(jst_driver_arg_cuda("12.4"), 12040);
    assert_int_equal(jst_driver_arg_cuda("13"), 13000);
    assert_int_equal(jst_driver_arg_cuda("550.54"), 12040);
    assert_int_equal(jst_driver_arg_cuda("13000"), 13000);
    assert_int_equal(jst_driver_arg_cuda("12.45"), 0);
    assert_int_equal(jst_driver_arg_cuda("580.xx"), 0);
    assert_int_equal(jst_driver_arg_cuda(""), 0);
    assert_string_equal(jst_arch_last_toolkit(70), "CUDA 12.9");
    assert_string_equal(jst_arch_last_toolkit(37), "CUDA 11.8");
    assert_null(jst_arch_last_toolkit(75));
}

static void too_new(void **state)
{
    (void)state;
    const char *text = ".version 9.1\n.target sm_75\n.entry k() { ret; }\n";
    struct jst_image img;
    struct jst_decision d;
    jst_image_inspect(text, strlen(text) + 1, &img);
    jst_image_decide_drv(&img, 90, 0, 13000, &d);
    assert_int_equal(d.verdict, JST_V_PTX_TOO_NEW);
    assert_int_equal(d.ptx_isa, 91);
    assert_non_null(strstr(d.reason, "ISA 9.1 (CUDA 13.1 toolkit)"));
    jst_image_decide_drv(&img, 90, 0, 13010, &d);
    assert_int_equal(d.verdict, JST_V_PTX_JIT);
    jst_image_decide(&img, 90, 0, &d); /* the preload's: no versions compared */
    assert_int_equal(d.verdict, JST_V_PTX_JIT);
    assert_int_equal(d.ptx_isa, 91);
    jst_image_free(&img);
}

static void arch_strict(void **state)
{
    (void)state;
    unsigned v;
    assert_int_equal(jst_arch_parse("sm_90", &v), 90);
    assert_int_equal(jst_arch_parse("12.1", &v), 121);
    assert_int_equal(jst_arch_parse("sm_100f", &v), 100);
    assert_int_equal(v, JST_A_FAMILY);
    assert_int_equal(jst_arch_parse("sm_0100", &v), 0);
    assert_int_equal(jst_arch_parse("sm_9.0", &v), 0);
    assert_int_equal(jst_arch_parse("sm_12.1", &v), 0);
    assert_int_equal(jst_arch_parse("1000", &v), 0);
    assert_true(jst_arch_known(107, JST_A_PLAIN));
    /* Thor: PTX for sm_101f/sm_101a JITs on 11.0, not on 10.3. */
    assert_true(jst_ptx_jits_to(101, JST_A_FAMILY, 110));
    assert_false(jst_ptx_jits_to(101, JST_A_FAMILY, 103));
    assert_true(jst_ptx_jits_to(101, JST_A_SPECIFIC, 110));
    assert_false(jst_ptx_jits_to(101, JST_A_SPECIFIC, 103));
    assert_true(jst_sass_runs_on(100, JST_A_FAMILY, 103));
    assert_false(jst_sass_runs_on(120, JST_A_FAMILY, 100));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(isa_from_fixtures),
        cmocka_unit_test(isa_from_text),
        cmocka_unit_test(tables),
        cmocka_unit_test(too_new),
        cmocka_unit_test(arch_strict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
