/*
 * Unit tests of inspection of images without a size (cuModuleLoadData,
 * cuLibraryLoadData): headers that claim more than the memory the program
 * owns are reported as damage, never read (common/memprobe.c). Each image
 * sits at the end of a mapped page whose successor is unmapped or PROT_NONE,
 * so a read past it would crash the test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>
#include "image_int.h"

static size_t page;

/* Two pages; the second unmapped (guard 0) or PROT_NONE (guard 1). Returns
 * the end of the first page. */
static uint8_t *edge(int guard)
{
    page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(m != MAP_FAILED);
    if (guard)
        assert_int_equal(mprotect(m + page, page, PROT_NONE), 0);
    else
        assert_int_equal(munmap(m + page, page), 0);
    return m + page;
}

static void release(uint8_t *end)
{
    munmap(end - page, 2 * page);
}

static void put16(uint8_t *p, uint16_t v)
{
    memcpy(p, &v, 2);
}
static void put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
}
static void put64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
}

/* A 64-byte CUDA ELF header whose section table lies right after it. */
static void cubin_header(uint8_t *p)
{
    memset(p, 0, 64);
    memcpy(p, "\177ELF", 4);
    p[4] = 2; /* 64-bit */
    p[5] = 1; /* little endian */
    p[6] = 1;
    put16(p + 18, 190);
    put64(p + 40, 64); /* e_shoff: just past the header, in the next page */
    put16(p + 58, 64);
    put16(p + 60, 3);
}

static void test_cubin_section_table_past_memory(void **state)
{
    (void)state;
    for (int guard = 0; guard < 2; guard++) {
        uint8_t *end = edge(guard);
        uint8_t *p = end - 64;
        cubin_header(p);
        struct jst_image img;
        jst_image_inspect(p, 0, &img);
        assert_true(img.damaged);
        assert_int_equal(img.kind, JST_IMG_CUBIN);
        assert_int_equal(img.n_entries, 0);
        jst_image_free(&img);
        release(end);
    }
}

static void test_cubin_sections_past_memory(void **state)
{
    (void)state;
    /* The table fits in the page, but a section claims bytes beyond it. */
    uint8_t *end = edge(0);
    uint8_t *p = end - 64 - 3 * 64;
    cubin_header(p);
    memset(p + 64, 0, 3 * 64);
    uint8_t *sh = p + 64 + 64; /* section 1 */
    put32(sh + 4, 1);          /* SHT_PROGBITS */
    put64(sh + 24, 0);         /* offset 0 */
    put64(sh + 32, 1 << 20);   /* 1 MiB: past the mapping */
    struct jst_image img;
    jst_image_inspect(p, 0, &img);
    assert_true(img.damaged);
    assert_non_null(strstr(img.damage, "past readable memory"));
    jst_image_free(&img);
    release(end);
}

static void test_fatbin_size_past_memory(void **state)
{
    (void)state;
    for (int guard = 0; guard < 2; guard++) {
        uint8_t *end = edge(guard);
        uint8_t *p = end - 16 - 64;
        memset(p, 0, 80);
        put32(p, 0xBA55ED50u);
        put16(p + 4, 1);
        put16(p + 6, 16);
        put64(p + 8, 1 << 20); /* claims 1 MiB of entries */
        struct jst_image img;
        jst_image_inspect(p, 0, &img);
        assert_true(img.damaged);
        assert_non_null(strstr(img.damage, "past readable memory"));
        jst_image_free(&img);
        /* A header cut by the page end is not read past it either. */
        jst_image_inspect(end - 8, 0, &img);
        jst_image_free(&img);
        release(end);
    }
}

static void test_wrapper_to_unmapped(void **state)
{
    (void)state;
    uint8_t *end = edge(0);
    uint8_t w[24] = {0};
    put32(w, 0x466243B1u);
    put32(w + 4, 1);
    put64(w + 8, (uint64_t)(uintptr_t)end); /* data: the unmapped page */
    struct jst_image img;
    jst_image_inspect(w, 0, &img);
    assert_true(img.damaged);
    assert_non_null(strstr(img.damage, "not readable"));
    jst_image_free(&img);
    release(end);
}

/* A sane image without a size is still read whole. */
static void test_sane_unsized_cubin(void **state)
{
    (void)state;
    FILE *f = fopen(JST_FIXTURES "/sm90.cubin", "rb");
    assert_non_null(f);
    static uint8_t buf[1 << 16];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    assert_true(n > 64);
    struct jst_image img;
    jst_image_inspect(buf, 0, &img);
    assert_false(img.damaged);
    assert_int_equal(img.n_entries, 1);
    jst_image_free(&img);
}

static void test_mem_readable(void **state)
{
    (void)state;
    char local[100] = {0};
    assert_true(jst_mem_readable(local, sizeof(local)));
    assert_true(jst_mem_readable(local, 0));
    assert_false(jst_mem_readable(NULL, 1));
    uint8_t *end = edge(0);
    assert_true(jst_mem_readable(end - page, page));
    assert_false(jst_mem_readable(end - 1, 2));
    release(end);
    size_t big = 3u << 20; /* more pages than one probe call covers */
    uint8_t *m = malloc(big);
    assert_non_null(m);
    assert_true(jst_mem_readable(m, big));
    free(m);
    assert_false(jst_mem_readable((void *)(uintptr_t)-16, 64)); /* wraps around */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cubin_section_table_past_memory),
        cmocka_unit_test(test_cubin_sections_past_memory),
        cmocka_unit_test(test_fatbin_size_past_memory),
        cmocka_unit_test(test_wrapper_to_unmapped),
        cmocka_unit_test(test_sane_unsized_cubin),
        cmocka_unit_test(test_mem_readable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
