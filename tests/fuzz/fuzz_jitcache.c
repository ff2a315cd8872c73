/*
 * Fuzz target for the JIT cache reader (common/jitcache.c): the input
 * chooses CUDA_CACHE_MAXSIZE / CUDA_CACHE_DISABLE text, an index file, and
 * the names and sizes of entry files written before and during a "load";
 * the snapshots around it and the outcome decision run over that directory.
 * Every outcome and reason must be a value the format defines.
 *
 * Input: line 1 is the CUDA_CACHE_MAXSIZE value, line 2 CUDA_CACHE_DISABLE;
 * then 4-byte items {u8 op, u8 name1, u8 name2, u8 size}: op bit 0 writes
 * during the load, bit 1 makes it the index, bit 2 a foreign directory.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "jitcache.h"
#include "jitstall/format.h"

static char g_dir[4200];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void rm_tree(const char *path)
{
    nftw(path, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static void rm_dir_at_exit(void)
{
    rm_tree(g_dir);
}

/* Takes one newline-terminated line from the input as a C string. */
static const uint8_t *take_line(const uint8_t *p, const uint8_t *end, char *out, size_t n)
{
    size_t k = 0;
    while (p < end && *p != '\n') {
        if (k + 1 < n && *p)
            out[k++] = (char)*p;
        p++;
    }
    out[k] = 0;
    return p < end ? p + 1 : p;
}

static void put_file(const uint8_t *item)
{
    char path[4400];
    static const char hex[] = "0123456789abcdefxyz-";
    if (item[0] & 2) {
        snprintf(path, sizeof(path), "%s/index", g_dir);
    } else {
        char a = hex[item[1] % 20], b = hex[item[2] % 20];
        snprintf(path, sizeof(path), "%s/%c", g_dir, a);
        mkdir(path, 0700);
        snprintf(path, sizeof(path), "%s/%c/%c", g_dir, a, b);
        if (item[0] & 4) { /* a file where a directory is expected */
            int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
            if (fd >= 0)
                close(fd);
            return;
        }
        mkdir(path, 0700);
        snprintf(path, sizeof(path), "%s/%c/%c/%02x%02x0000000000", g_dir, a, b, item[1], item[3]);
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    if (ftruncate(fd, (off_t)item[3] * 16) != 0)
        abort();
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_dir[0]) {
        const char *tmp = getenv("TMPDIR"); /* run_fuzz.sh: its scratch directory */
        snprintf(g_dir, sizeof(g_dir), "%s/jst-fuzz-cache-%d", tmp && *tmp ? tmp : "/tmp",
                 (int)getpid());
        setenv("CUDA_CACHE_PATH", g_dir, 1);
        atexit(rm_dir_at_exit);
    }
    rm_tree(g_dir);
    if (mkdir(g_dir, 0700) != 0)
        abort();
    const uint8_t *p = data, *end = data + size;
    char maxsize[32], disable[8];
    p = take_line(p, end, maxsize, sizeof(maxsize));
    p = take_line(p, end, disable, sizeof(disable));
    setenv("CUDA_CACHE_MAXSIZE", maxsize, 1);
    setenv("CUDA_CACHE_DISABLE", disable, 1);

    const uint8_t *items = p;
    size_t n_items = (size_t)(end - p) / 4;
    if (n_items > 24)
        n_items = 24; /* bounded work per input */
    for (size_t i = 0; i < n_items; i++)
        if (!(items[4 * i] & 1))
            put_file(items + 4 * i);
    struct jst_cache_snap *before = malloc(sizeof(*before)), *after = malloc(sizeof(*after));
    if (!before || !after)
        abort();
    jst_cache_snapshot_before(before);
    for (size_t i = 0; i < n_items; i++)
        if (items[4 * i] & 1)
            put_file(items + 4 * i);
    jst_cache_snapshot_after(before, after);
    unsigned reason = 99;
    uint64_t dur = size ? (uint64_t)data[0] << 20 : 0, ptx = size > 1 ? (uint64_t)data[1] << 12 : 0;
    unsigned c = jst_cache_outcome(before, after, dur, ptx, &reason);
    if (c > JST_C_UNKNOWN || reason > JST_CR_NO_DIR)
        abort();
    if (after->max_bytes > JST_CACHE_LIMIT_MAX)
        abort(); /* CUDA_CACHE_MAXSIZE is clamped to 4 GiB */
    free(before);
    free(after);
    return 0;
}
