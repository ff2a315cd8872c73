/*
 * JITSTALL_READY's forms (common/readyspec.c), which the preload and
 * `jitstall run --ready` both read: what each takes, and what is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "readyspec.h"

static struct jst_ready_spec parse(const char *s)
{
    struct jst_ready_spec sp;
    jst_ready_parse(s, &sp);
    return sp;
}

static void test_unset_is_none(void **state)
{
    (void)state;
    assert_int_equal(parse(NULL).kind, JST_READY_NONE);
    assert_int_equal(parse("").kind, JST_READY_NONE);
}

static void test_nvtx_and_file_keep_the_rest(void **state)
{
    (void)state;
    struct jst_ready_spec sp = parse("nvtx:warmup:done");
    assert_int_equal(sp.kind, JST_READY_NVTX);
    assert_string_equal(sp.arg, "warmup:done");
    sp = parse("file:/tmp/ready");
    assert_int_equal(sp.kind, JST_READY_FILE);
    assert_string_equal(sp.arg, "/tmp/ready");
}

static void test_after_takes_decimal_seconds(void **state)
{
    (void)state;
    struct jst_ready_spec sp = parse("after:30");
    assert_int_equal(sp.kind, JST_READY_AFTER);
    assert_true(sp.after_ns == 30000000000ull);
    assert_true(parse("after:2.5").after_ns == 2500000000ull);
    assert_true(parse("after:0.000000001").after_ns == 1);
    assert_true(parse("after:0").after_ns == 0);
    assert_true(parse("after:999999").after_ns == 999999000000000ull);
}

static void test_refused_forms_say_why(void **state)
{
    (void)state;
    const char *bad[] = {
        "ready",    "nvtx:",       "file:",     "after:",        "after:-1",  "after:1e3",
        "after:.5", "after:5.",    "after:1,5", "after:1000000", "after:30s", "after:0.0000000001",
        "tcp:8080", "NVTX:warmup", "after: 1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct jst_ready_spec sp = parse(bad[i]);
        if (sp.kind != JST_READY_BAD || !sp.why || !*sp.why)
            fail_msg("%s: not refused with a reason", bad[i]);
    }
    char big[JST_READY_ARG_MAX + 16] = "file:";
    memset(big + 5, 'a', JST_READY_ARG_MAX + 1);
    big[5 + JST_READY_ARG_MAX + 1] = '\0';
    assert_int_equal(parse(big).kind, JST_READY_BAD);
    big[5 + JST_READY_ARG_MAX] = '\0';
    assert_int_equal(parse(big).kind, JST_READY_FILE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unset_is_none),
        cmocka_unit_test(test_nvtx_and_file_keep_the_rest),
        cmocka_unit_test(test_after_takes_decimal_seconds),
        cmocka_unit_test(test_refused_forms_say_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
