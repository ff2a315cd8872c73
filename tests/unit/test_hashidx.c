/*
 * Unit tests of the analyzer's hash tables (analyzer/hashidx.c): the string
 * table keeps one copy of each string, the index finds every position of a
 * hash even when many collide, and jst_match_first pairs each element with
 * the first unused equal one in order, as the scans it replaced did.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashidx.h"

static void test_strings_are_kept_once(void **state)
{
    (void)state;
    struct jst_strtab t = {0};
    char buf[32];
    const char *first[1000];
    for (int i = 0; i < 1000; i++) {
        snprintf(buf, sizeof buf, "kernel_%d", i);
        first[i] = jst_strtab_intern(&t, buf, strlen(buf));
        assert_non_null(first[i]);
    }
    for (int i = 0; i < 1000; i++) {
        snprintf(buf, sizeof buf, "kernel_%d", i);
        assert_ptr_equal(jst_strtab_intern(&t, buf, strlen(buf)), first[i]);
        assert_string_equal(first[i], buf);
    }
    assert_int_equal(t.n, 1000);
    /* bytes, not C strings: an embedded NUL makes another string */
    const char *a = jst_strtab_intern(&t, "ab\0c", 4), *b = jst_strtab_intern(&t, "ab", 2);
    assert_ptr_not_equal(a, b);
    char big[200000];
    memset(big, 'x', sizeof big);
    const char *g = jst_strtab_intern(&t, big, sizeof big);
    assert_non_null(g);
    assert_int_equal(strlen(g), sizeof big);
    assert_ptr_equal(jst_strtab_intern(&t, big, sizeof big), g);
    jst_strtab_free(&t);
}

static void test_colliding_hashes_are_all_found(void **state)
{
    (void)state;
    struct jst_hidx ix = {0};
    for (size_t i = 0; i < 5000; i++)
        assert_int_equal(jst_hidx_add(&ix, i % 3 == 0 ? 42 : i, i), 0);
    size_t cur = 0, p1, n = 0;
    while ((p1 = jst_hidx_next(&ix, 42, &cur)) != 0) {
        assert_int_equal((p1 - 1) % 3, 0);
        n++;
    }
    assert_int_equal(n, (5000 + 2) / 3);
    cur = 0;
    assert_int_equal(jst_hidx_next(&ix, 4, &cur), 4 + 1);
    cur = 0;
    assert_int_equal(jst_hidx_next(&ix, 999999, &cur), 0);
    jst_hidx_free(&ix);
}

/* Keys for jst_match_first: ints, hashed badly on purpose (key % 4) so that
 * runs hold several keys; -1 takes no part. */
struct ints {
    const int *a, *b;
};

static int h_a(const void *ctx, size_t i, uint64_t *h)
{
    int v = ((const struct ints *)ctx)->a[i];
    *h = (uint64_t)v % 4;
    return v >= 0;
}

static int h_b(const void *ctx, size_t k, uint64_t *h)
{
    int v = ((const struct ints *)ctx)->b[k];
    *h = (uint64_t)v % 4;
    return v >= 0;
}

static int same(const void *ctx, size_t i, size_t k)
{
    const struct ints *x = ctx;
    return x->a[i] == x->b[k];
}

static void test_match_takes_the_first_unused_equal(void **state)
{
    (void)state;
    const int a[] = {5, 1, 5, 9, 5, 1, -1, 7};
    const int b[] = {1, 5, 7, 5, -1, 9, 13, 1};
    struct ints x = {a, b};
    struct jst_match_keys k = {&x, h_a, h_b, same};
    long map[8];
    char used[8] = {0};
    for (int i = 0; i < 8; i++)
        map[i] = -1;
    map[7] = 0; /* already matched: left alone */
    used[0] = 1;
    jst_match_first(&k, 8, 8, map, used);
    /* a scan of b for each a in turn gives the same pairs; b[7] is used
     * by a[1] when a[5] asks */
    const long want[] = {1, 7, 3, 5, -1, -1, -1, 0};
    for (int i = 0; i < 8; i++)
        assert_int_equal(map[i], want[i]);
    assert_int_equal(used[2], 0); /* b's 7 was never asked for */
    /* The scan jst_match_first falls back to out of memory: the same pairs. */
    char used2[8] = {1, 0};
    long map2[8];
    for (int i = 0; i < 8; i++)
        map2[i] = -1;
    map2[7] = 0;
    jst_match_scan(&k, 8, 8, map2, used2);
    for (int i = 0; i < 8; i++)
        assert_int_equal(map2[i], want[i]);
    assert_memory_equal(used2, used, sizeof used);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings_are_kept_once),
        cmocka_unit_test(test_colliding_hashes_are_all_found),
        cmocka_unit_test(test_match_takes_the_first_unused_equal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
