/*
 * Unit tests for CUDA image inspection (common/image.c, fatbin.c, ptx.c,
 * cubin.c) on the nvcc-made fixtures in tests/fixtures: every entry kind,
 * every compression mode, arch variants, kernel names (mangled and
 * demangled), extents derived from headers, and damaged input (every
 * truncation, random byte flips) rejected without a crash or an over-read.
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
#include "image.h"

static uint8_t *load(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", JST_FIXTURES, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open fixture %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    /* Exactly n bytes, so that ASan sees any read past the end. */
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

struct names {
    char v[16][128];
    int n;
};

static void collect(void *ctx, const char *name, size_t len)
{
    struct names *ns = ctx;
    if (ns->n < 16 && len < 128) {
        memcpy(ns->v[ns->n], name, len);
        ns->v[ns->n][len] = 0;
        ns->n++;
    }
}

static int has(const struct names *ns, const char *name)
{
    for (int i = 0; i < ns->n; i++)
        if (!strcmp(ns->v[i], name))
            return 1;
    return 0;
}

/* kernels.cu defines these three kernels and one non-kernel device function. */
static void assert_fixture_kernels(const struct jst_entry *e)
{
    struct names ns = {0};
    assert_int_equal(jst_entry_kernels(e, collect, &ns), 3);
    assert_int_equal(ns.n, 3);
    assert_true(has(&ns, "add_one"));
    assert_true(has(&ns, "_Z4fillPii"));
    assert_true(has(&ns, "_ZN3jst5scaleIfEEvPT_S1_"));
    assert_false(has(&ns, "_Z6helperi"));
}

struct fixture_row {
    const char *file;
    unsigned img_kind;
    const char *entries; /* "cubin sm_80 none, ptx compute_80 zstd" */
};

static const struct fixture_row fixtures[] = {
    {"sm90.fatbin", JST_IMG_FATBIN, "cubin sm_90 none"},
    {"ptx75.fatbin", JST_IMG_FATBIN, "ptx compute_75 zstd"},
    {"sm80_ptx80.fatbin", JST_IMG_FATBIN, "cubin sm_80 none, ptx compute_80 zstd"},
    {"sm90a.fatbin", JST_IMG_FATBIN, "cubin sm_90a none, ptx compute_90a zstd"},
    {"sm100f.fatbin", JST_IMG_FATBIN, "cubin sm_100f none, ptx compute_100f zstd"},
    {"multi.fatbin", JST_IMG_FATBIN,
     "ptx compute_75 zstd, cubin sm_80 none, cubin sm_86 none, ptx compute_90 zstd"},
    /* --compress-mode: default zstd-compresses PTX only; speed is LZ4; size
     * compresses ELF too; none nothing; -compress-all compresses ELF too. */
    {"z_default.fatbin", JST_IMG_FATBIN, "cubin sm_80 none, ptx compute_80 zstd"},
    {"z_speed.fatbin", JST_IMG_FATBIN, "cubin sm_80 none, ptx compute_80 lz4"},
    {"z_size.fatbin", JST_IMG_FATBIN, "cubin sm_80 zstd, ptx compute_80 zstd"},
    {"z_none.fatbin", JST_IMG_FATBIN, "cubin sm_80 none, ptx compute_80 none"},
    {"z_all_default.fatbin", JST_IMG_FATBIN, "cubin sm_80 zstd, ptx compute_80 zstd"},
    {"z_all_speed.fatbin", JST_IMG_FATBIN, "cubin sm_80 lz4, ptx compute_80 lz4"},
    {"lto90.fatbin", JST_IMG_FATBIN, "ltoir lto_90 zstd"},
    {"sm90.cubin", JST_IMG_CUBIN, "cubin sm_90 none"},
    {"sm90a.cubin", JST_IMG_CUBIN, "cubin sm_90a none"},
    {"k75.ptx", JST_IMG_PTX, "ptx compute_75 none"},
};
#define N_FIXTURES (sizeof(fixtures) / sizeof(fixtures[0]))

static void describe(const struct jst_image *img, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    for (size_t i = 0; i < img->n_entries; i++) {
        const struct jst_entry *e = &img->entries[i];
        char a[24];
        if (e->kind == JST_E_LTOIR)
            snprintf(a, sizeof(a), "lto_%u", e->sm);
        else
            jst_arch_str(a, sizeof(a), e->kind == JST_E_PTX, e->sm, e->variant);
        used += (size_t)snprintf(buf + used, n - used, "%s%s %s %s", i ? ", " : "",
                                 e->kind == JST_E_PTX     ? "ptx"
                                 : e->kind == JST_E_CUBIN ? "cubin"
                                                          : "ltoir",
                                 a,
                                 e->compress == JST_Z_ZSTD  ? "zstd"
                                 : e->compress == JST_Z_LZ4 ? "lz4"
                                                            : "none");
    }
}

static void test_fixture_entries(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_FIXTURES; i++) {
        size_t len;
        uint8_t *b = load(fixtures[i].file, &len);
        struct jst_image img;
        assert_int_equal(jst_image_inspect(b, len, &img), 0);
        if (img.damaged)
            fail_msg("%s: damaged: %s", fixtures[i].file, img.damage);
        char d[256];
        describe(&img, d, sizeof(d));
        if (strcmp(d, fixtures[i].entries) || img.kind != fixtures[i].img_kind)
            fail_msg("%s: kind %u entries '%s'", fixtures[i].file, img.kind, d);
        assert_ptr_equal(img.base, b);
        /* Every payload lies inside the bytes given. */
        for (size_t k = 0; k < img.n_entries; k++) {
            const struct jst_entry *e = &img.entries[k];
            assert_true(e->payload >= b && e->payload + e->payload_size <= b + len);
        }
        jst_image_free(&img);
        free(b);
    }
}

/* Every compression mode decodes to the same PTX text and the same cubin. */
static void test_entry_data_all_modes(void **state)
{
    (void)state;
    const char *files[] = {"z_default.fatbin", "z_speed.fatbin",       "z_size.fatbin",
                           "z_none.fatbin",    "z_all_default.fatbin", "z_all_speed.fatbin"};
    uint8_t *ref_ptx = NULL, *ref_elf = NULL;
    size_t ref_ptx_len = 0, ref_elf_len = 0;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        size_t len;
        uint8_t *b = load(files[i], &len);
        struct jst_image img;
        jst_image_inspect(b, len, &img);
        assert_false(img.damaged);
        assert_int_equal(img.n_entries, 2);
        for (size_t k = 0; k < 2; k++) {
            const struct jst_entry *e = &img.entries[k];
            size_t n;
            uint8_t *d = jst_entry_data(e, &n);
            if (!d)
                fail_msg("%s entry %zu: no data", files[i], k);
            assert_int_equal(d[n], 0);
            if (e->kind == JST_E_PTX) {
                assert_non_null(strstr((char *)d, ".version"));
                assert_non_null(strstr((char *)d, ".target sm_80"));
                assert_int_equal(strlen((char *)d), n);
                /* raw_size may count the text's NUL (nvcc compresses it too). */
                assert_true(n == e->raw_size || n + 1 == e->raw_size);
                if (!ref_ptx) {
                    ref_ptx = d;
                    ref_ptx_len = n;
                    d = NULL;
                } else {
                    assert_int_equal(n, ref_ptx_len);
                    assert_memory_equal(d, ref_ptx, n);
                }
            } else {
                assert_memory_equal(d, "\177ELF", 4);
                assert_int_equal(n, e->raw_size);
                if (!ref_elf) {
                    ref_elf = d;
                    ref_elf_len = n;
                    d = NULL;
                } else {
                    assert_int_equal(n, ref_elf_len);
                    assert_memory_equal(d, ref_elf, n);
                }
            }
            free(d);
            assert_fixture_kernels(e);
        }
        jst_image_free(&img);
        free(b);
    }
    free(ref_ptx);
    free(ref_elf);
}

static void test_kernels_every_kind(void **state)
{
    (void)state;
    const char *files[] = {"sm90.fatbin",  "ptx75.fatbin", "sm90a.fatbin", "sm100f.fatbin",
                           "multi.fatbin", "sm90.cubin",   "sm90a.cubin",  "k75.ptx"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        size_t len;
        uint8_t *b = load(files[i], &len);
        struct jst_image img;
        jst_image_inspect(b, len, &img);
        assert_false(img.damaged);
        for (size_t k = 0; k < img.n_entries; k++)
            assert_fixture_kernels(&img.entries[k]);
        jst_image_free(&img);
        free(b);
    }
}

static void test_demangle(void **state)
{
    (void)state;
    char buf[256];
    assert_string_equal(jst_demangle("_ZN3jst5scaleIfEEvPT_S1_", buf, sizeof(buf)),
                        "void jst::scale<float>(float*, float)");
    assert_string_equal(jst_demangle("_Z4fillPii", buf, sizeof(buf)), "fill(int*, int)");
    assert_string_equal(jst_demangle("add_one", buf, sizeof(buf)), "add_one");
    assert_string_equal(jst_demangle("_Zgarbage", buf, sizeof(buf)), "_Zgarbage");
    assert_string_equal(jst_demangle("_Z4fillPii", buf, 5), "fill");
}

/* The fixtures judged on real GPUs' compute capabilities. */
static void test_fixture_verdicts(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        unsigned cc;
        unsigned verdict;
        const char *arch; /* sass_arch or jit_from */
    } rows[] = {
        {"sm90.fatbin", 90, JST_V_SASS, "sm_90"},
        {"sm90.fatbin", 100, JST_V_NO_COMPATIBLE, ""},
        {"ptx75.fatbin", 90, JST_V_PTX_JIT, "compute_75"},
        {"sm80_ptx80.fatbin", 86, JST_V_SASS, "sm_80"},
        {"sm80_ptx80.fatbin", 90, JST_V_PTX_JIT, "compute_80"},
        {"sm90a.fatbin", 90, JST_V_SASS, "sm_90a"},
        {"sm90a.fatbin", 100, JST_V_NO_COMPATIBLE, ""},
        {"sm100f.fatbin", 103, JST_V_SASS, "sm_100f"},
        {"sm100f.fatbin", 120, JST_V_NO_COMPATIBLE, ""},
        {"multi.fatbin", 89, JST_V_SASS, "sm_86"},
        {"multi.fatbin", 90, JST_V_PTX_JIT, "compute_90"},
        {"multi.fatbin", 75, JST_V_PTX_JIT, "compute_75"},
        {"lto90.fatbin", 90, JST_V_NO_COMPATIBLE, ""},
        {"sm90a.cubin", 90, JST_V_SASS, "sm_90a"},
        {"sm90a.cubin", 100, JST_V_NO_COMPATIBLE, ""},
        {"k75.ptx", 120, JST_V_PTX_JIT, "compute_75"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        size_t len;
        uint8_t *b = load(rows[i].file, &len);
        struct jst_image img;
        struct jst_decision d;
        jst_image_inspect(b, len, &img);
        jst_image_decide(&img, rows[i].cc, 0, &d);
        const char *arch = d.verdict == JST_V_SASS ? d.sass_arch : d.jit_from;
        if (d.verdict != rows[i].verdict || strcmp(arch, rows[i].arch))
            fail_msg("%s on %u: verdict %u arch '%s' (%s)", rows[i].file, rows[i].cc, d.verdict,
                     arch, d.reason);
        jst_image_free(&img);
        free(b);
    }
}

/* With known_size == 0 the extent comes from the headers and matches the file. */
static void test_derived_extent(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_FIXTURES; i++) {
        size_t len;
        uint8_t *b = load(fixtures[i].file, &len);
        if (fixtures[i].img_kind == JST_IMG_PTX) {
            free(b);
            continue; /* needs a NUL: tested below */
        }
        struct jst_image img, img0;
        jst_image_inspect(b, len, &img);
        jst_image_inspect(b, 0, &img0);
        if (img0.damaged)
            fail_msg("%s: derived: %s", fixtures[i].file, img0.damage);
        assert_int_equal(img0.n_entries, img.n_entries);
        if (img0.size != len)
            fail_msg("%s: derived size %zu, file %zu", fixtures[i].file, img0.size, len);
        jst_image_free(&img0);
        jst_image_free(&img);
        free(b);
    }
    /* PTX: strlen + NUL, as the driver reads it. */
    size_t len;
    uint8_t *b = load("k75.ptx", &len);
    char *s = malloc(len + 1);
    memcpy(s, b, len);
    s[len] = 0;
    struct jst_image img;
    jst_image_inspect(s, 0, &img);
    assert_false(img.damaged);
    assert_int_equal(img.size, len + 1);
    assert_int_equal(img.entries[0].payload_size, len);
    jst_image_free(&img);
    free(s);
    free(b);
}

/* Two fatbins back to back, 8-byte aligned, as in an ELF .nv_fatbin. */
static void test_two_fatbins(void **state)
{
    (void)state;
    size_t la, lb;
    uint8_t *a = load("sm90.fatbin", &la);
    uint8_t *b = load("ptx75.fatbin", &lb);
    size_t off = (la + 7) & ~(size_t)7, total = off + lb + 8; /* trailing zero padding */
    uint8_t *both = calloc(1, total);
    memcpy(both, a, la);
    memcpy(both + off, b, lb);
    struct jst_image img;
    jst_image_inspect(both, total, &img);
    assert_false(img.damaged);
    assert_int_equal(img.n_entries, 2);
    assert_int_equal(img.entries[0].kind, JST_E_CUBIN);
    assert_int_equal(img.entries[1].kind, JST_E_PTX);
    jst_image_free(&img);
    /* Without a size only the first fatbin is known. */
    jst_image_inspect(both, 0, &img);
    assert_int_equal(img.n_entries, 1);
    assert_int_equal(img.size, la);
    jst_image_free(&img);
    assert_int_equal(jst_fatbin_size(both, total), la);
    assert_int_equal(jst_fatbin_size(both + off, total - off), lb);
    assert_int_equal(jst_fatbin_size(both, la - 1), 0);
    assert_int_equal(jst_fatbin_size(both + 1, total - 1), 0);
    /* Garbage after the first fatbin is damage, not silently ignored. */
    both[off] = 0x11;
    jst_image_inspect(both, total, &img);
    assert_true(img.damaged);
    assert_non_null(strstr(img.damage, "no fatbin magic"));
    jst_image_free(&img);
    free(both);
    free(a);
    free(b);
}

/* The object file's .nv_fatbin holds two fatbins (two translation units). */
static void test_object_nv_fatbin(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = load("two_fatbins.o", &len);
    size_t count = 0, fatbins = 0;
    for (size_t off = 0; off + 16 <= len; off += 8) {
        size_t sz = jst_fatbin_size(b + off, len - off);
        if (!sz)
            continue;
        struct jst_image img;
        jst_image_inspect(b + off, sz, &img);
        assert_false(img.damaged);
        count += img.n_entries;
        fatbins++;
        jst_image_free(&img);
        off += sz - 8;
    }
    assert_int_equal(fatbins, 2);
    assert_int_equal(count, 2);
    free(b);
}

struct fake_wrapper {
    uint32_t magic, version;
    const void *data;
    const void *filename;
};

static void test_wrapper(void **state)
{
    (void)state;
    size_t len;
    uint8_t *b = load("sm80_ptx80.fatbin", &len);
    struct fake_wrapper w = {0x466243B1u, 1, b, NULL};
    struct jst_image img;
    jst_image_inspect(&w, 0, &img);
    assert_false(img.damaged);
    assert_int_equal(img.kind, JST_IMG_FATBIN_WRAPPER);
    assert_ptr_equal(img.base, b);
    assert_int_equal(img.size, len);
    assert_int_equal(img.n_entries, 2);
    jst_image_free(&img);
    /* A wrapper with a known size comes from a file: its pointer is not followed. */
    jst_image_inspect(&w, sizeof(w), &img);
    assert_true(img.damaged);
    jst_image_free(&img);
    w.data = NULL;
    jst_image_inspect(&w, 0, &img);
    assert_true(img.damaged);
    assert_non_null(strstr(img.damage, "null"));
    jst_image_free(&img);
    uint8_t junk[32] = {1, 2, 3};
    w.data = junk;
    jst_image_inspect(&w, 0, &img);
    assert_true(img.damaged);
    jst_image_free(&img);
    free(b);
}

static void test_not_an_image(void **state)
{
    (void)state;
    struct jst_image img;
    const char *txt = "hello world, not PTX";
    jst_image_inspect(txt, strlen(txt), &img);
    assert_true(img.damaged);
    assert_non_null(strstr(img.damage, "unknown image format"));
    jst_image_free(&img);
    /* PTX without .target */
    const char *ptx = "// c\n.version 9.0\n.address_size 64\n";
    jst_image_inspect(ptx, strlen(ptx), &img);
    assert_true(img.damaged);
    jst_image_free(&img);
    /* PTX recognised after block comments; .extern .entry is not a kernel. */
    const char *ptx2 = "/* a */ // b\n.version 8.0\n.target sm_90a\n"
                       ".extern .entry ext_k(\n)\n.weak .entry weak_k(\n)\n{\nret;\n}\n"
                       "/* .entry not_k */\n.entry plain_k()\n{\n}\n";
    jst_image_inspect(ptx2, strlen(ptx2), &img);
    assert_false(img.damaged);
    assert_int_equal(img.entries[0].sm, 90);
    assert_int_equal(img.entries[0].variant, JST_A_SPECIFIC);
    struct names ns = {0};
    assert_int_equal(jst_entry_kernels(&img.entries[0], collect, &ns), 2);
    assert_string_equal(ns.v[0], "weak_k");
    assert_string_equal(ns.v[1], "plain_k");
    jst_image_free(&img);
    /* An x86-64 ELF is not a cubin. */
    uint8_t elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    elf[18] = 62;
    jst_image_inspect(elf, sizeof(elf), &img);
    assert_true(img.damaged);
    assert_non_null(strstr(img.damage, "not a CUDA cubin"));
    jst_image_free(&img);
    jst_image_inspect(NULL, 10, &img);
    assert_true(img.damaged);
    jst_image_free(&img);
    jst_image_inspect("ab", 2, &img);
    assert_true(img.damaged);
    jst_image_free(&img);
}

/* Inspect, decide and extract everything; only bounds and no crash are
 * asserted (ASan in CI catches over-reads, as buffers are exact). */
static void exercise(const uint8_t *b, size_t n, int expect_damaged)
{
    struct jst_image img;
    jst_image_inspect(b, n, &img);
    if (expect_damaged && !img.damaged)
        fail_msg("truncated to %zu bytes but not damaged", n);
    static const unsigned ccs[] = {75, 80, 90, 100, 120};
    for (size_t i = 0; i < 5; i++) {
        struct jst_decision d;
        jst_image_decide(&img, ccs[i], 0, &d);
        assert_true(d.verdict <= JST_V_DAMAGED);
        assert_true(memchr(d.reason, 0, sizeof(d.reason)) != NULL);
    }
    for (size_t k = 0; k < img.n_entries; k++) {
        const struct jst_entry *e = &img.entries[k];
        assert_true(e->payload >= b && e->payload_size <= n &&
                    (size_t)(e->payload - b) <= n - e->payload_size);
        size_t len;
        free(jst_entry_data(e, &len));
        jst_entry_kernels(e, NULL, NULL);
    }
    jst_image_free(&img);
}

static void test_truncation_every_offset(void **state)
{
    (void)state;
    for (size_t i = 0; i < N_FIXTURES; i++) {
        size_t len;
        uint8_t *b = load(fixtures[i].file, &len);
        /* A cut PTX text may still be valid PTX; fatbins and cubins may not. */
        int strict = fixtures[i].img_kind != JST_IMG_PTX;
        size_t step = len > 4096 ? 3 : 1; /* bounded: about 5000 cuts per fixture */
        /* Each cut sits at the very end of the allocation, so a read past it is
         * an out-of-bounds read that ASan reports. */
        uint8_t *t = malloc(len);
        for (size_t cut = 1; cut < len; cut += step) {
            memcpy(t + len - cut, b, cut);
            exercise(t + len - cut, cut, strict);
        }
        free(t);
        free(b);
    }
}

static void test_random_flips(void **state)
{
    (void)state;
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < N_FIXTURES; i++) {
        size_t len;
        uint8_t *b = load(fixtures[i].file, &len);
        uint8_t *t = malloc(len);
        for (int iter = 0; iter < 1500; iter++) {
            memcpy(t, b, len);
            int flips = 1 + iter % 4;
            for (int f = 0; f < flips; f++) {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                /* Half the flips hit the first 256 bytes, where the headers are. */
                size_t at = (f & 1) ? (size_t)(rng % len) : (size_t)(rng % (len < 256 ? len : 256));
                t[at] ^= (uint8_t)(1u << ((rng >> 32) & 7)) | (uint8_t)(rng >> 40);
            }
            exercise(t, len, 0);
        }
        free(t);
        free(b);
    }
}

/* cuModuleLoadData gives no size: PTX text ends at its NUL, as the driver
 * reads it. A short string right before an unmapped page must not be read
 * past (a comment scan once ran 64 KiB on). */
static void test_ptx_without_size_stops_at_nul(void **state)
{
    (void)state;
    long pg = sysconf(_SC_PAGESIZE);
    uint8_t *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    assert_true(m != MAP_FAILED);
    assert_int_equal(mprotect(m + pg, (size_t)pg, PROT_NONE), 0);
    static const char *texts[] = {"//", "// a comment", "  \n\t", ".vers", "/* open"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
        size_t n = strlen(texts[i]) + 1;
        uint8_t *p = m + pg - n; /* the NUL is the page's last byte */
        memcpy(p, texts[i], n);
        struct jst_image img;
        assert_int_equal(jst_image_inspect(p, 0, &img), 0);
        assert_true(img.damaged);
        jst_image_free(&img);
    }
    munmap(m, 2 * (size_t)pg);
}

static void test_hash(void **state)
{
    (void)state;
    uint8_t buf[200];
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)(i * 7 + 3);
    uint64_t h[65];
    for (size_t n = 0; n <= 64; n++) {
        h[n] = jst_hash64(buf, n);
        assert_int_equal(h[n], jst_hash64(buf, n)); /* deterministic */
        for (size_t k = 0; k < n; k++)
            assert_true(h[k] != h[n]); /* every length differs */
    }
    uint64_t base = jst_hash64(buf, sizeof(buf));
    for (size_t bit = 0; bit < sizeof(buf) * 8; bit += 13) {
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        assert_true(jst_hash64(buf, sizeof(buf)) != base);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
    }
    assert_int_equal(jst_hash64(buf, sizeof(buf)), base);
    /* Unaligned input hashes the same bytes the same way. */
    uint8_t *u = malloc(sizeof(buf) + 1);
    memcpy(u + 1, buf, sizeof(buf));
    assert_int_equal(jst_hash64(u + 1, sizeof(buf)), base);
    free(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_entries),
        cmocka_unit_test(test_entry_data_all_modes),
        cmocka_unit_test(test_kernels_every_kind),
        cmocka_unit_test(test_demangle),
        cmocka_unit_test(test_fixture_verdicts),
        cmocka_unit_test(test_derived_extent),
        cmocka_unit_test(test_two_fatbins),
        cmocka_unit_test(test_object_nv_fatbin),
        cmocka_unit_test(test_wrapper),
        cmocka_unit_test(test_not_an_image),
        cmocka_unit_test(test_truncation_every_offset),
        cmocka_unit_test(test_random_flips),
        cmocka_unit_test(test_hash),
        cmocka_unit_test(test_ptx_without_size_stops_at_nul),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
