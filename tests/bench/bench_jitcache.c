/*
 * What the preload pays around each JIT load to decide the cache outcome.
 * Builds caches of several sizes in the driver's layout (<1 hex>/<1 hex>/<14
 * hex> files and an index) and prints, for each, what a cache hit costs (the
 * index before and after, nothing walked) next to one full walk of the
 * entries (what a store costs once, and what every JIT load cost before the
 * index was used).
 *
 * usage: bench_jitcache [DIR]   (default: a new directory under /tmp)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jitcache.h"

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Adds entries until the cache holds n, spread like hashed names are, and
 * rewrites the index as the driver does (16 bytes, plus 16 per entry). */
static int fill(const char *root, unsigned have, unsigned n)
{
    char path[8192];
    for (unsigned i = have; i < n; i++) {
        unsigned h = i * 2654435761u;
        snprintf(path, sizeof path, "%s/%x", root, h >> 28);
        mkdir(path, 0700);
        snprintf(path, sizeof path, "%s/%x/%x", root, h >> 28, (h >> 24) & 15);
        mkdir(path, 0700);
        snprintf(path, sizeof path, "%s/%x/%x/%014x", root, h >> 28, (h >> 24) & 15, i);
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || write(fd, "sass", 4) != 4) {
            perror(path);
            return -1;
        }
        close(fd);
    }
    snprintf(path, sizeof path, "%s/index", root);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, 16 + 16 * (off_t)n) != 0) {
        perror(path);
        return -1;
    }
    close(fd);
    return 0;
}

static double median9(double *t)
{
    for (int i = 0; i < 9; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return t[4];
}

int main(int argc, char **argv)
{
    char root[4096];
    if (argc > 1) {
        snprintf(root, sizeof root, "%s", argv[1]);
        mkdir(root, 0700);
    } else {
        snprintf(root, sizeof root, "/tmp/jst-bench-cache-XXXXXX");
        if (!mkdtemp(root)) {
            perror("mkdtemp");
            return 1;
        }
    }
    setenv("CUDA_CACHE_PATH", root, 1);
    static const unsigned sizes[] = {1, 100, 1000, 10000, 50000};
    unsigned have = 0;
    printf("cache entries | JIT load with a hit (index) | one full walk of the entries\n");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        if (fill(root, have, sizes[s]) != 0)
            return 1;
        have = sizes[s];
        double hit[9], walk[9];
        struct jst_cache_snap before, after, full;
        for (int r = 0; r < 9; r++) {
            double a = now_us();
            jst_cache_snapshot_before(&before);
            jst_cache_snapshot_after(&before, &after);
            hit[r] = now_us() - a;
            a = now_us();
            jst_cache_snapshot(&full, 1);
            walk[r] = now_us() - a;
        }
        if (full.entries != have || after.new_entries != 0 || after.scanned) {
            fprintf(stderr, "bench_jitcache: counted %llu entries of %u, %llu new\n",
                    (unsigned long long)full.entries, have, (unsigned long long)after.new_entries);
            return 1;
        }
        printf("%13u | %22.1f us | %25.1f us\n", have, median9(hit), median9(walk));
    }
    printf("(medians of 9; a store walks the entries once, after the load)\n");
    return 0;
}
