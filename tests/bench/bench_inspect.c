/*
 * Benchmark: what the preload's inspection costs one load, per image. For
 * each file: the work before the real call (jst_image_inspect, jst_hash64,
 * jst_image_decide for sm_90) and the kernel list of a JIT load
 * (jst_entry_kernels: decompressing and scanning the PTX), in us per load,
 * median of several runs.
 *
 * usage: bench_inspect FILE...   (e.g. tests/fixtures/sm90.fatbin and a
 *        32-kernel PTX fatbin; tests/bench/bench_all.sh builds one)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "image.h"

#define BI_REPS 9

static double bi_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int bi_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void *bi_read(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = sz > 0 ? malloc((size_t)sz) : NULL;
    if (buf && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *n = buf ? (size_t)sz : 0;
    return buf;
}

static void bi_count(void *ctx, const char *name, size_t len)
{
    (void)name;
    (void)len;
    ++*(unsigned *)ctx;
}

/* One load's inspection; *kernels and *ptx_bytes report what was found. */
static void bi_once(const void *img, size_t n, double *pre_us, double *kern_us, unsigned *kernels,
                    size_t *ptx_bytes)
{
    double t0 = bi_now_us();
    struct jst_image im;
    jst_image_inspect(img, n, &im);
    volatile uint64_t h = im.base && im.size ? jst_hash64(im.base, im.size) : 0;
    (void)h;
    struct jst_decision d;
    jst_image_decide(&im, 90, 0, &d);
    double t1 = bi_now_us();
    *kernels = 0;
    *ptx_bytes = 0;
    if (d.ptx_index >= 0 && (size_t)d.ptx_index < im.n_entries) {
        jst_entry_kernels(&im.entries[d.ptx_index], bi_count, kernels);
        *ptx_bytes = im.entries[d.ptx_index].raw_size;
    }
    *kern_us = bi_now_us() - t1;
    *pre_us = t1 - t0;
    jst_image_free(&im);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_inspect FILE...\n");
        return 2;
    }
    printf("per-load inspection (sm_90 device), median of %d:\n", BI_REPS);
    printf("  %-28s %10s %10s %14s %8s\n", "image", "bytes", "pre-call", "kernel list", "kernels");
    for (int a = 1; a < argc; a++) {
        size_t n;
        void *img = bi_read(argv[a], &n);
        if (!img) {
            fprintf(stderr, "bench_inspect: cannot read %s\n", argv[a]);
            return 2;
        }
        double pre[BI_REPS], kern[BI_REPS];
        unsigned kernels = 0;
        size_t ptx = 0;
        for (int r = 0; r < BI_REPS; r++)
            bi_once(img, n, &pre[r], &kern[r], &kernels, &ptx);
        qsort(pre, BI_REPS, sizeof pre[0], bi_cmp);
        qsort(kern, BI_REPS, sizeof kern[0], bi_cmp);
        const char *base = strrchr(argv[a], '/');
        printf("  %-28s %10zu %7.1f us %11.1f us %8u", base ? base + 1 : argv[a], n,
               pre[BI_REPS / 2], kern[BI_REPS / 2], kernels);
        if (ptx)
            printf("  (PTX %zu bytes)", ptx);
        putchar('\n');
        free(img);
    }
    return 0;
}
