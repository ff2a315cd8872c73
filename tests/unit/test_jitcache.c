/*
 * Unit tests for common/jitcache.c: how CUDA_CACHE_* settings resolve, what a
 * snapshot of a cache directory counts, and the cache outcome decided from the
 * evidence before and after a JIT load.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jitcache.h"
#include "jitstall/format.h"

static char tmp_root[64];

static void clear_env(void)
{
    unsetenv("CUDA_CACHE_PATH");
    unsetenv("CUDA_CACHE_MAXSIZE");
    unsetenv("CUDA_CACHE_DISABLE");
}

static int setup(void **state)
{
    (void)state;
    snprintf(tmp_root, sizeof tmp_root, "/tmp/jst_jitcache_XXXXXX");
    if (!mkdtemp(tmp_root))
        return -1;
    clear_env();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[320];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s' 2>/dev/null; rm -rf '%s'", tmp_root, tmp_root);
    int rc = system(cmd);
    clear_env();
    return rc == 0 ? 0 : -1;
}

static void write_file(const char *path, size_t size, time_t mtime)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    for (size_t i = 0; i < size; i++)
        fputc('x', f);
    fclose(f);
    if (mtime) {
        struct timeval tv[2] = {{mtime, 0}, {mtime, 0}};
        assert_int_equal(utimes(path, tv), 0);
    }
}

static void path_in(char *out, size_t n, const char *rel)
{
    snprintf(out, n, "%s/%s", tmp_root, rel);
}

static void test_default_path_from_home(void **state)
{
    (void)state;
    setenv("HOME", "/home/someone", 1);
    struct jst_cache_snap s;
    jst_cache_snapshot(&s, 0);
    assert_string_equal(s.path, "/home/someone/.nv/ComputeCache");
    assert_int_equal(s.from_env, 0);
    assert_int_equal(s.disabled, 0);
    assert_true(s.max_bytes == JST_CACHE_DEFAULT_MAX);
}

static void test_env_path_and_settings(void **state)
{
    (void)state;
    char p[512];
    path_in(p, sizeof p, "cache");
    setenv("CUDA_CACHE_PATH", p, 1);
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    setenv("CUDA_CACHE_MAXSIZE", "4096", 1);
    struct jst_cache_snap s;
    jst_cache_snapshot(&s, 1);
    assert_string_equal(s.path, p);
    assert_int_equal(s.from_env, 1);
    assert_int_equal(s.disabled, 1);
    assert_true(s.max_bytes == 4096);
    /* Not created yet, but its parent is a writable directory: the driver can create it. */
    assert_int_equal(s.exists, 0);
    assert_int_equal(s.writable, 1);
    assert_true(s.entries == 0 && s.size_bytes == 0);

    setenv("CUDA_CACHE_DISABLE", "0", 1);
    jst_cache_snapshot(&s, 0);
    assert_int_equal(s.disabled, 0);
}

static void test_maxsize_capped_and_defaulted(void **state)
{
    (void)state;
    struct jst_cache_snap s;
    setenv("CUDA_CACHE_MAXSIZE", "99999999999999", 1);
    jst_cache_snapshot(&s, 0);
    assert_true(s.max_bytes == JST_CACHE_LIMIT_MAX);
    setenv("CUDA_CACHE_MAXSIZE", "lots", 1);
    jst_cache_snapshot(&s, 0);
    assert_true(s.max_bytes == JST_CACHE_DEFAULT_MAX);
    setenv("CUDA_CACHE_MAXSIZE", "0", 1);
    jst_cache_snapshot(&s, 0);
    assert_true(s.max_bytes == 0);
}

/* The walk counts <hex>/<hex>/<entry> files only: not the index file, not
 * files at the wrong depth, not non-hex directories. */
static void test_walk_counts_entries(void **state)
{
    (void)state;
    char p[512], f[600];
    path_in(p, sizeof p, "cc");
    setenv("CUDA_CACHE_PATH", p, 1);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(f, sizeof f, "%s/index", p);
    write_file(f, 300, 0);
    snprintf(f, sizeof f, "%s/3a", p);
    assert_int_equal(mkdir(f, 0700), 0);
    snprintf(f, sizeof f, "%s/3a/bc", p);
    assert_int_equal(mkdir(f, 0700), 0);
    snprintf(f, sizeof f, "%s/3a/bc/0123456789abcd", p);
    write_file(f, 1000, 1000000);
    snprintf(f, sizeof f, "%s/3a/bc/0123456789abce", p);
    write_file(f, 24, 2000000);
    snprintf(f, sizeof f, "%s/3a/stray", p);
    write_file(f, 77, 3000000);
    snprintf(f, sizeof f, "%s/notes", p);
    assert_int_equal(mkdir(f, 0700), 0);
    snprintf(f, sizeof f, "%s/notes/ab", p);
    assert_int_equal(mkdir(f, 0700), 0);
    snprintf(f, sizeof f, "%s/notes/ab/0000", p);
    write_file(f, 55, 4000000);

    struct jst_cache_snap s;
    jst_cache_snapshot(&s, 1);
    assert_int_equal(s.exists, 1);
    assert_int_equal(s.writable, 1);
    assert_true(s.entries == 2);
    assert_true(s.size_bytes == 1024);
    assert_true(s.newest_mtime_ns == 2000000ull * 1000000000ull);

    /* Without scan, only settings and existence. */
    jst_cache_snapshot(&s, 0);
    assert_int_equal(s.exists, 1);
    assert_true(s.entries == 0);
}

/* A path whose parent is a regular file can never be created: NO_DIR. */
static void test_parent_is_file_is_no_dir(void **state)
{
    (void)state;
    char f[512], p[600];
    path_in(f, sizeof f, "plainfile");
    write_file(f, 1, 0);
    snprintf(p, sizeof p, "%s/sub/cache", f);
    setenv("CUDA_CACHE_PATH", p, 1);
    struct jst_cache_snap before, after;
    jst_cache_snapshot(&before, 1);
    assert_int_equal(before.exists, 0);
    assert_int_equal(before.writable, 0);
    after = before;
    unsigned reason = 99;
    assert_int_equal(jst_cache_outcome(&before, &after, 50000000, 20000, &reason),
                     JST_C_MISS_NOT_STORED);
    assert_int_equal(reason, JST_CR_NO_DIR);
}

/* chmod 0555 makes the cache read-only for an ordinary user. Root writes into
 * it anyway (CAP_DAC_OVERRIDE), and so does the real driver running as root:
 * then the snapshot must say writable. */
static void test_chmod_readonly(void **state)
{
    (void)state;
    char p[512];
    path_in(p, sizeof p, "ro");
    assert_int_equal(mkdir(p, 0700), 0);
    assert_int_equal(chmod(p, 0555), 0);
    setenv("CUDA_CACHE_PATH", p, 1);
    struct jst_cache_snap s;
    jst_cache_snapshot(&s, 1);
    assert_int_equal(s.exists, 1);
    if (geteuid() == 0)
        assert_int_equal(s.writable, 1);
    else
        assert_int_equal(s.writable, 0);
    /* A cache path below a 0555 directory that does not exist yet. */
    char q[600];
    snprintf(q, sizeof q, "%s/inner", p);
    setenv("CUDA_CACHE_PATH", q, 1);
    jst_cache_snapshot(&s, 1);
    assert_int_equal(s.exists, 0);
    assert_int_equal(s.writable, geteuid() == 0 ? 1 : 0);
}

/* A read-only mount is read-only for root too. Needs a private mount
 * namespace (CAP_SYS_ADMIN); skipped, saying so, where that is not allowed. */
static void test_readonly_mount(void **state)
{
    (void)state;
    char p[512];
    path_in(p, sizeof p, "romount");
    assert_int_equal(mkdir(p, 0700), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (unshare(CLONE_NEWNS) != 0)
            _exit(77);
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0)
            _exit(77);
        if (mount(p, p, NULL, MS_BIND, NULL) != 0)
            _exit(77);
        if (mount(NULL, p, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0)
            _exit(77);
        setenv("CUDA_CACHE_PATH", p, 1);
        struct jst_cache_snap s;
        jst_cache_snapshot(&s, 1);
        if (!s.exists)
            _exit(2);
        if (s.writable)
            _exit(3);
        struct jst_cache_snap after = s;
        unsigned reason = 0;
        if (jst_cache_outcome(&s, &after, 90000000, 20000, &reason) != JST_C_MISS_NOT_STORED ||
            reason != JST_CR_READ_ONLY)
            _exit(4);
        _exit(0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 77) {
        fprintf(stderr, "skipped: no private mount namespace here (needs CAP_SYS_ADMIN)\n");
        skip();
    }
    assert_int_equal(WEXITSTATUS(st), 0);
}

static struct jst_cache_snap snap(int exists, int writable, uint64_t entries, uint64_t bytes,
                                  uint64_t newest)
{
    struct jst_cache_snap s;
    memset(&s, 0, sizeof s);
    strcpy(s.path, "/c");
    s.exists = exists;
    s.writable = writable;
    s.entries = entries;
    s.size_bytes = bytes;
    s.newest_mtime_ns = newest;
    s.max_bytes = JST_CACHE_DEFAULT_MAX;
    s.scanned = 1; /* these stand for walked snapshots */
    return s;
}

#define MS 1000000ull

static void test_outcome_disabled_wins(void **state)
{
    (void)state;
    struct jst_cache_snap b = snap(1, 1, 3, 3000, 5), a = snap(1, 1, 4, 4000, 6);
    b.disabled = a.disabled = 1;
    unsigned r = 0;
    assert_int_equal(jst_cache_outcome(&b, &a, 1 * MS, 1000, &r), JST_C_MISS_NOT_STORED);
    assert_int_equal(r, JST_CR_DISABLED);
}

static void test_outcome_stored(void **state)
{
    (void)state;
    unsigned r = 99;
    /* cold: the directory appeared with one entry */
    struct jst_cache_snap b = snap(0, 1, 0, 0, 0), a = snap(1, 1, 1, 5000, 7);
    assert_int_equal(jst_cache_outcome(&b, &a, 900 * MS, 100000, &r), JST_C_MISS_STORED);
    assert_int_equal(r, JST_CR_NONE);
    /* an entry replaced in place: same count and size, newer mtime; evidence beats a fast load */
    b = snap(1, 1, 2, 800, 10);
    a = snap(1, 1, 2, 800, 11);
    assert_int_equal(jst_cache_outcome(&b, &a, 1 * MS, 100000, &r), JST_C_MISS_STORED);
    /* eviction and store: count the same, size changed */
    a = snap(1, 1, 2, 900, 10);
    assert_int_equal(jst_cache_outcome(&b, &a, 1 * MS, 100000, &r), JST_C_MISS_STORED);
}

static void test_outcome_hit_needs_entries_and_speed(void **state)
{
    (void)state;
    unsigned r = 99;
    struct jst_cache_snap b = snap(1, 1, 5, 5000, 10), a = b;
    /* 100 KB of PTX: bound is 20 ms + 5 ms */
    assert_int_equal(jst_cache_outcome(&b, &a, 24 * MS, 100000, &r), JST_C_HIT);
    assert_int_equal(r, JST_CR_NONE);
    /* slow for the size, nothing stored, writable: cannot tell */
    assert_int_equal(jst_cache_outcome(&b, &a, 26 * MS, 100000, &r), JST_C_UNKNOWN);
    /* fast but an empty cache cannot hit */
    b = snap(1, 1, 0, 0, 0);
    a = b;
    assert_int_equal(jst_cache_outcome(&b, &a, 1 * MS, 100000, &r), JST_C_UNKNOWN);
}

static void test_outcome_read_only(void **state)
{
    (void)state;
    unsigned r = 0;
    struct jst_cache_snap b = snap(1, 0, 0, 0, 0), a = b;
    assert_int_equal(jst_cache_outcome(&b, &a, 400 * MS, 100000, &r), JST_C_MISS_NOT_STORED);
    assert_int_equal(r, JST_CR_READ_ONLY);
    /* a pre-filled read-only cache still serves hits */
    b = snap(1, 0, 3, 3000, 9);
    a = b;
    r = 99;
    assert_int_equal(jst_cache_outcome(&b, &a, 2 * MS, 100000, &r), JST_C_HIT);
    assert_int_equal(r, JST_CR_NONE);
    /* ... but a slow load from it was a compile that could not be stored */
    assert_int_equal(jst_cache_outcome(&b, &a, 400 * MS, 100000, &r), JST_C_MISS_NOT_STORED);
    assert_int_equal(r, JST_CR_READ_ONLY);
}

static void test_outcome_too_small(void **state)
{
    (void)state;
    unsigned r = 0;
    struct jst_cache_snap b = snap(1, 1, 0, 0, 0), a = b;
    b.max_bytes = a.max_bytes = 4096;
    assert_int_equal(jst_cache_outcome(&b, &a, 400 * MS, 2000, &r), JST_C_MISS_NOT_STORED);
    assert_int_equal(r, JST_CR_TOO_SMALL);
    /* 1 MiB allowed, 40 MB of PTX (10 MB estimated entry) */
    b.max_bytes = a.max_bytes = 1 << 20;
    assert_int_equal(jst_cache_outcome(&b, &a, 60000 * MS, 40000000, &r), JST_C_MISS_NOT_STORED);
    assert_int_equal(r, JST_CR_TOO_SMALL);
    /* the default size fits it: nothing stored and slow stays unknown */
    b.max_bytes = a.max_bytes = JST_CACHE_DEFAULT_MAX;
    assert_int_equal(jst_cache_outcome(&b, &a, 60000 * MS, 40000000, &r), JST_C_UNKNOWN);
}

/* End to end on a real directory: a store between two snapshots is seen. */
static void test_snapshots_see_a_store(void **state)
{
    (void)state;
    char p[512], f[700];
    path_in(p, sizeof p, "live");
    setenv("CUDA_CACHE_PATH", p, 1);
    struct jst_cache_snap b, a, c;
    jst_cache_snapshot(&b, 1);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(f, sizeof f, "%s/0f", p);
    assert_int_equal(mkdir(f, 0700), 0);
    snprintf(f, sizeof f, "%s/0f/a1", p);
    assert_int_equal(mkdir(f, 0700), 0);
    snprintf(f, sizeof f, "%s/0f/a1/00112233445566", p);
    write_file(f, 4321, 0);
    jst_cache_snapshot(&a, 1);
    assert_true(a.entries == 1 && a.size_bytes == 4321);
    unsigned r = 9;
    assert_int_equal(jst_cache_outcome(&b, &a, 300 * MS, 50000, &r), JST_C_MISS_STORED);
    /* the next run: nothing changes and it is fast */
    jst_cache_snapshot(&c, 1);
    assert_int_equal(jst_cache_outcome(&a, &c, 1 * MS, 50000, &r), JST_C_HIT);
}

/* A cache laid out as the real driver does (H200, driver 580): an index file
 * of 16 bytes plus 16 per entry, and entries at <1 hex>/<1 hex>/<14 hex>. The
 * entry and the index are dated an hour ago. */
static void real_layout(const char *p, int entries)
{
    char f[700];
    time_t old = time(NULL) - 3600;
    assert_int_equal(mkdir(p, 0700), 0);
    for (int i = 0; i < entries; i++) {
        snprintf(f, sizeof f, "%s/%x", p, i & 15);
        mkdir(f, 0700);
        snprintf(f, sizeof f, "%s/%x/%x", p, i & 15, (i >> 4) & 15);
        mkdir(f, 0700);
        snprintf(f, sizeof f, "%s/%x/%x/%014x", p, i & 15, (i >> 4) & 15, i);
        write_file(f, 1000, old);
    }
    snprintf(f, sizeof f, "%s/index", p);
    write_file(f, 16 + 16 * (size_t)entries, old);
}

/* A store rewrites the index: the entries are walked once, after the load,
 * and only the new one is counted. */
static void test_index_store_counts_the_new_entry(void **state)
{
    (void)state;
    char p[512], f[700];
    path_in(p, sizeof p, "real");
    setenv("CUDA_CACHE_PATH", p, 1);
    real_layout(p, 3);
    struct jst_cache_snap b, a;
    jst_cache_snapshot_before(&b);
    assert_true(b.has_index && b.index_size == 64);
    assert_false(b.scanned); /* the index was enough */
    snprintf(f, sizeof f, "%s/a", p);
    mkdir(f, 0700);
    snprintf(f, sizeof f, "%s/a/d", p);
    mkdir(f, 0700);
    snprintf(f, sizeof f, "%s/a/d/af86d1ca0a48ef", p);
    write_file(f, 871261, 0);
    snprintf(f, sizeof f, "%s/index", p);
    write_file(f, 80, 0);
    jst_cache_snapshot_after(&b, &a);
    assert_int_equal(a.new_entries, 1);
    assert_int_equal(a.new_bytes, 871261);
    unsigned r = 9;
    assert_int_equal(jst_cache_outcome(&b, &a, 1100 * MS, 561321, &r), JST_C_MISS_STORED);
}

/* A hit leaves the index alone: nothing is walked, before or after, however
 * many entries the cache holds. */
static void test_index_hit_walks_nothing(void **state)
{
    (void)state;
    char p[512];
    path_in(p, sizeof p, "real");
    setenv("CUDA_CACHE_PATH", p, 1);
    real_layout(p, 40);
    struct jst_cache_snap b, a;
    jst_cache_snapshot_before(&b);
    jst_cache_snapshot_after(&b, &a);
    assert_false(b.scanned);
    assert_false(a.scanned);
    assert_int_equal(a.new_entries, 0);
    unsigned r = 9;
    assert_int_equal(jst_cache_outcome(&b, &a, 3 * MS, 561321, &r), JST_C_HIT);
    /* slow with nothing stored in a writable cache that fits: not a hit */
    assert_int_equal(jst_cache_outcome(&b, &a, 1100 * MS, 561321, &r), JST_C_UNKNOWN);
}

/* At exit: an unchanged index means no store since start, so start's walk is
 * reused (a file added behind the index's back is not seen: nothing walked);
 * a rewritten index, or none at all, means a new walk. */
static void test_exit_reuses_the_start_walk(void **state)
{
    (void)state;
    char p[512], f[700];
    path_in(p, sizeof p, "real");
    setenv("CUDA_CACHE_PATH", p, 1);
    real_layout(p, 3);
    struct jst_cache_snap start, now;
    jst_cache_snapshot(&start, 1);
    assert_int_equal(start.entries, 3);
    snprintf(f, sizeof f, "%s/0/0/00000000000abc", p);
    write_file(f, 1000, 0);
    assert_int_equal(jst_cache_snapshot_exit(&start, &now), 1);
    assert_int_equal(now.entries, 3);
    assert_int_equal(now.size_bytes, 3000);
    assert_true(now.scanned && now.has_index);
    snprintf(f, sizeof f, "%s/index", p);
    write_file(f, 16 + 16 * 4, 0); /* the driver's store rewrites it */
    assert_int_equal(jst_cache_snapshot_exit(&start, &now), 0);
    assert_int_equal(now.entries, 4);
    assert_int_equal(now.size_bytes, 4000);
    unlink(f); /* no index: a foreign or emptied cache, always walked */
    jst_cache_snapshot(&start, 1);
    assert_int_equal(jst_cache_snapshot_exit(&start, &now), 0);
    assert_int_equal(now.entries, 4);
}

/* Seen on the H200: with CUDA_CACHE_MAXSIZE=4096 an entry already in the cache
 * is still loaded from it (2.4 ms): a hit, not "too small". */
static void test_hit_despite_tiny_maxsize(void **state)
{
    (void)state;
    char p[512];
    path_in(p, sizeof p, "real");
    setenv("CUDA_CACHE_PATH", p, 1);
    setenv("CUDA_CACHE_MAXSIZE", "4096", 1);
    real_layout(p, 1);
    struct jst_cache_snap b, a;
    jst_cache_snapshot_before(&b);
    jst_cache_snapshot_after(&b, &a);
    unsigned r = 9;
    assert_int_equal(jst_cache_outcome(&b, &a, 2400000, 561321, &r), JST_C_HIT);
    assert_int_equal(jst_cache_outcome(&b, &a, 1100 * MS, 561321, &r), JST_C_MISS_NOT_STORED);
    assert_int_equal(r, JST_CR_TOO_SMALL);
    unsetenv("CUDA_CACHE_MAXSIZE");
}

/* File times are coarse (the kernel stamps them from a clock that ticks every
 * few ms): a small JIT right after an earlier store writes its entry with the
 * same mtime as the index that store left. The index still changed, so the load
 * stored, and the entry written in that tick is counted. */
static void test_store_in_the_same_tick_as_the_last(void **state)
{
    (void)state;
    char p[512], f[700];
    path_in(p, sizeof p, "real");
    setenv("CUDA_CACHE_PATH", p, 1);
    real_layout(p, 3); /* entries and index all dated one second */
    struct jst_cache_snap b, a;
    jst_cache_snapshot_before(&b);
    snprintf(f, sizeof f, "%s/index", p);
    struct stat st;
    assert_int_equal(stat(f, &st), 0);
    time_t tick = st.st_mtime;
    snprintf(f, sizeof f, "%s/7", p);
    mkdir(f, 0700);
    snprintf(f, sizeof f, "%s/7/7", p);
    mkdir(f, 0700);
    snprintf(f, sizeof f, "%s/7/7/00000000000077", p);
    write_file(f, 30000, tick);
    snprintf(f, sizeof f, "%s/index", p);
    write_file(f, 80, tick);
    jst_cache_snapshot_after(&b, &a);
    assert_true(a.new_entries >= 1);
    assert_true(a.new_bytes >= 30000);
    unsigned r = 9;
    /* 3 ms: fast enough to pass for a hit, but the index says it stored */
    assert_int_equal(jst_cache_outcome(&b, &a, 3 * MS, 20000, &r), JST_C_MISS_STORED);
}

/* No index yet (a new cache): the walk before is cheap and the store is seen. */
static void test_no_index_before_walks(void **state)
{
    (void)state;
    char p[512], f[700];
    path_in(p, sizeof p, "new");
    setenv("CUDA_CACHE_PATH", p, 1);
    struct jst_cache_snap b, a;
    jst_cache_snapshot_before(&b);
    assert_true(b.scanned && !b.exists);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(f, sizeof f, "%s/3", p);
    assert_int_equal(mkdir(f, 0700), 0);
    snprintf(f, sizeof f, "%s/3/c", p);
    assert_int_equal(mkdir(f, 0700), 0);
    snprintf(f, sizeof f, "%s/3/c/83b2c2127d41a5", p);
    write_file(f, 2048, 0);
    snprintf(f, sizeof f, "%s/index", p);
    write_file(f, 32, 0);
    jst_cache_snapshot_after(&b, &a);
    assert_int_equal(a.new_entries, 1);
    assert_int_equal(a.new_bytes, 2048);
    unsigned r = 9;
    assert_int_equal(jst_cache_outcome(&b, &a, 900 * MS, 50000, &r), JST_C_MISS_STORED);
}

static void test_null_reason_and_snaps(void **state)
{
    (void)state;
    struct jst_cache_snap b = snap(1, 1, 0, 0, 0);
    assert_int_equal(jst_cache_outcome(&b, NULL, 1, 1, NULL), JST_C_UNKNOWN);
    b.disabled = 1;
    assert_int_equal(jst_cache_outcome(&b, &b, 1, 1, NULL), JST_C_MISS_NOT_STORED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_default_path_from_home, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_path_and_settings, setup, teardown),
        cmocka_unit_test_setup_teardown(test_maxsize_capped_and_defaulted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_walk_counts_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(test_parent_is_file_is_no_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chmod_readonly, setup, teardown),
        cmocka_unit_test_setup_teardown(test_readonly_mount, setup, teardown),
        cmocka_unit_test_setup_teardown(test_exit_reuses_the_start_walk, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcome_disabled_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcome_stored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcome_hit_needs_entries_and_speed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcome_read_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_outcome_too_small, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshots_see_a_store, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_store_counts_the_new_entry, setup, teardown),
        cmocka_unit_test_setup_teardown(test_index_hit_walks_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hit_despite_tiny_maxsize, setup, teardown),
        cmocka_unit_test_setup_teardown(test_store_in_the_same_tick_as_the_last, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_index_before_walks, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_reason_and_snaps, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
