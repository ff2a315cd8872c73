/*
 * Unit tests of common/'s driver facts: the driver build read from
 * /proc/driver/nvidia/version (common/driver.c), the architecture list that
 * `scan --arch` checks against (jst_arch_known) and the PTX-text search in
 * an ELF file's data (common/elfdata.c) on hand-made sections.
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
#include "jitcache.h"

static void parse(const char *text, char *buf, size_t n)
{
    jst_driver_release_parse(text, strlen(text), buf, n);
}

static void test_release_parse(void **state)
{
    (void)state;
    char b[32];
    parse("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu Oct  9 20:05:07 UTC "
          "2025\nGCC version:  gcc version 13.3.0\n",
          b, sizeof(b));
    assert_string_equal(b, "580.159.04");
    parse("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  590.44.01  Release Build\n", b,
          sizeof(b));
    assert_string_equal(b, "590.44.01");
    parse("NVRM version: NVIDIA UNIX aarch64 Kernel Module  575.57.08\n", b, sizeof(b));
    assert_string_equal(b, "575.57.08");
    /* Nothing usable: empty, never a guess. */
    parse("NVRM version: something else 1.2\n", b, sizeof(b));
    assert_string_equal(b, "");
    parse("Kernel Module\n580.1\n", b, sizeof(b)); /* the version must be on the first line */
    assert_string_equal(b, "");
    parse("", b, sizeof(b));
    assert_string_equal(b, "");
    /* A small buffer is cut, never overflowed. */
    char s[4];
    parse("NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04\n", s, sizeof(s));
    assert_string_equal(s, "580");
}

static void test_arch_known(void **state)
{
    (void)state;
    assert_true(jst_arch_known(90, JST_A_PLAIN));
    assert_true(jst_arch_known(90, JST_A_SPECIFIC));
    assert_false(jst_arch_known(90, JST_A_FAMILY));
    assert_true(jst_arch_known(100, JST_A_FAMILY));
    assert_true(jst_arch_known(121, JST_A_SPECIFIC));
    assert_true(jst_arch_known(75, JST_A_PLAIN));
    assert_false(jst_arch_known(80, JST_A_SPECIFIC));
    assert_false(jst_arch_known(999, JST_A_PLAIN));
    assert_false(jst_arch_known(91, JST_A_PLAIN));
    assert_false(jst_arch_known(0, JST_A_PLAIN));
}

struct found {
    size_t off[4], len[4], n;
};

static void found_cb(void *ctx, size_t off, size_t len)
{
    struct found *f = ctx;
    if (f->n < 4) {
        f->off[f->n] = off;
        f->len[f->n] = len;
    }
    f->n++;
}

/* The search on a "section" that is the whole buffer. */
static struct found search(const char *data, size_t n)
{
    struct found f = {{0}, {0}, 0};
    jst_ptx_texts_window((const uint8_t *)data, 0, n, 0, n, found_cb, &f);
    return f;
}

static void test_ptx_text_search(void **state)
{
    (void)state;
    static const char ptx[] = "//\n// comment\n//\n\n.version 8.0\n.target sm_75\n"
                              ".address_size 64\n.visible .entry k(\n)\n{\n\tret;\n}\n";
    char buf[512];
    size_t n = 0;
    memcpy(buf + n, "abc\0lib.version 2\0", 18); /* ".version" inside another string */
    n += 18;
    size_t at = n;
    memcpy(buf + n, ptx, sizeof(ptx)); /* with its NUL */
    n += sizeof(ptx);
    memcpy(buf + n, "\0.version 7.0\n.target sm_80", 27); /* no NUL before the end */
    n += 27;
    struct found f = search(buf, n);
    assert_int_equal(f.n, 1);
    assert_int_equal(f.off[0], at);
    assert_int_equal(f.len[0], sizeof(ptx) - 1);
    /* PTX without .target is not an image. */
    static const char notarget[] = "\0.version 8.0\n.address_size 64\n";
    f = search(notarget, sizeof(notarget));
    assert_int_equal(f.n, 0);
    /* A string at the very start of the section counts (no NUL before it). */
    f = search(ptx, sizeof(ptx));
    assert_int_equal(f.n, 1);
    assert_int_equal(f.off[0], 0);
    /* Windows: a window that ends inside a string returns past it. */
    struct found g = {{0}, {0}, 0};
    size_t next = jst_ptx_texts_window((const uint8_t *)buf, 0, n, 0, at + 20, found_cb, &g);
    assert_int_equal(g.n, 1);
    assert_int_equal(next, at + sizeof(ptx));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_release_parse),
        cmocka_unit_test(test_arch_known),
        cmocka_unit_test(test_ptx_text_search),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
