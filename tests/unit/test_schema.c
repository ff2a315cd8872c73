/*
 * Unit tests for the field schema (common/schema.h through jst_key_info) and
 * the header's endian mark as the writer stores it (common/trace_write.c).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>
#include "trace.h"

static void test_key_info_from_the_table(void **state)
{
    (void)state;
    const struct jst_key_info *k = jst_key_info(JST_F_HANDLE);
    assert_non_null(k);
    assert_string_equal(k->name, "handle");
    assert_int_equal(k->kind, JST_K_U64);
    assert_int_equal(k->print, JST_PRINT_HEX);

    k = jst_key_info(JST_F_ARG);
    assert_int_equal(k->print, JST_PRINT_LIST);
    assert_string_equal(k->list_name, "argv");
    assert_int_equal(k->kind, JST_K_STR);

    k = jst_key_info(JST_F_CALL_ID);
    assert_int_equal(k->print, JST_PRINT_ENUM);
    assert_string_equal(k->enum_name(JST_CALL_cuInit), "cuInit");
    k = jst_key_info(JST_F_PHASE);
    assert_string_equal(k->enum_name(1), "exit");
    assert_null(k->enum_name(2));

    assert_int_equal(jst_key_info(JST_F_IPS)->print, JST_PRINT_U64S);
    assert_int_equal(jst_key_info(JST_F_EXIT_STATUS)->kind, JST_K_I64);
    assert_int_equal(jst_key_info(JST_F_START_NS)->print, JST_PRINT_PLAIN);
    assert_string_equal(jst_key_info(JST_F_DRIVER_RELEASE)->name, "driver_release");
    assert_null(jst_key_info(0));
    assert_null(jst_key_info(15));
    assert_null(jst_key_info(65535));
}

/* docs/FORMAT.md: the mark is stored little endian, bytes 0D 0C 0B 0A. */
static void test_endian_mark_is_little_endian(void **state)
{
    (void)state;
    char path[] = "/tmp/jst_test_schema_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    struct jst_writer *w = jst_writer_open(path);
    assert_non_null(w);
    assert_int_equal(jst_writer_close(w), 0);
    uint8_t h[JST_HEADER_SIZE];
    fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, h, sizeof(h)), sizeof(h));
    close(fd);
    unlink(path);
    assert_int_equal(h[12], 0x0D);
    assert_int_equal(h[13], 0x0C);
    assert_int_equal(h[14], 0x0B);
    assert_int_equal(h[15], 0x0A);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_info_from_the_table),
        cmocka_unit_test(test_endian_mark_is_little_endian),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
