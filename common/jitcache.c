/*
 * The driver's JIT cache seen from outside: resolves CUDA_CACHE_PATH,
 * CUDA_CACHE_MAXSIZE and CUDA_CACHE_DISABLE like the driver, snapshots the
 * cache directory (<path>/<hex>/<hex>/<entry> files, the top-level index file
 * not counted) and decides the cache outcome of one JIT load from evidence.
 *
 * Seen on an H200 (driver 580): entries live at <path>/<1 hex>/<1 hex>/<14 hex>;
 * the driver rewrites <path>/index (16 bytes more per entry) on every store
 * and only reads it on a hit, even when CUDA_CACHE_MAXSIZE is too small to
 * store anything new. The index is the cheap evidence; walking the entries
 * costs about 15 us each on a slow disk, so it is done only after a store.
 */
#include "jitcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "jitstall/format.h"

/* The walk stops after this many entry files, so that a huge or hostile cache
 * directory cannot stall a load; the counts are then lower bounds. */
#define JST_CACHE_WALK_MAX_FILES 200000u

static int env_true(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] && strcmp(v, "0") != 0;
}

/* CUDA_CACHE_MAXSIZE in bytes: unset or unparsable -> 1 GiB, above 4 GiB -> 4 GiB. */
static uint64_t cache_max_from_env(void)
{
    const char *v = getenv("CUDA_CACHE_MAXSIZE");
    if (!v || !*v)
        return JST_CACHE_DEFAULT_MAX;
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || end == v || *end != '\0' || v[0] == '-')
        return JST_CACHE_DEFAULT_MAX;
    if (n > JST_CACHE_LIMIT_MAX)
        n = JST_CACHE_LIMIT_MAX;
    return n;
}

/* Fills s->path; returns 0, or -1 when no path can be formed (no HOME). */
static int cache_resolve_path(struct jst_cache_snap *s)
{
    const char *p = getenv("CUDA_CACHE_PATH");
    if (p && *p) {
        s->from_env = 1;
        if (strlen(p) >= sizeof s->path)
            return -1;
        strcpy(s->path, p);
        return 0;
    }
    const char *home = getenv("HOME");
    if (!home || !*home)
        return -1;
    int n = snprintf(s->path, sizeof s->path, "%s/.nv/ComputeCache", home);
    return (n < 0 || (size_t)n >= sizeof s->path) ? -1 : 0;
}

/* Could this process write into dir? access(W_OK) also reports EROFS for a
 * read-only mount, for root too; root's CAP_DAC_OVERRIDE lets it write into a
 * 0555 directory, exactly as the driver running as root would. */
static int dir_writable(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return 0;
    if (access(dir, W_OK | X_OK) != 0)
        return 0;
    struct statvfs vfs;
    if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
        return 0;
    return 1;
}

/* The directory does not exist yet: the driver would create it (mkdir -p), so
 * it is writable when the nearest existing ancestor is a writable directory.
 * An ancestor that is a file (ENOTDIR) means creation fails. */
static int ancestor_walk(char *buf);

static int ancestor_writable(const char *path)
{
    /* On the heap: this runs inside a load hook, maybe on a small stack. */
    char *buf = strdup(path);
    if (!buf)
        return 0;
    int rc = ancestor_walk(buf);
    free(buf);
    return rc;
}

/* ancestor_writable on a copy of the path that it may cut. */
static int ancestor_walk(char *buf)
{
    for (;;) {
        size_t n = strlen(buf);
        while (n > 1 && buf[n - 1] == '/')
            buf[--n] = '\0';
        char *slash = strrchr(buf, '/');
        if (!slash)
            return dir_writable(".");
        if (slash == buf)
            buf[1] = '\0';
        else
            *slash = '\0';
        struct stat st;
        if (stat(buf, &st) == 0)
            return S_ISDIR(st.st_mode) && dir_writable(buf);
        if (errno != ENOENT || slash == buf)
            return 0;
    }
}

static int is_hex_name(const char *n)
{
    if (!*n)
        return 0;
    for (; *n; n++) {
        char c = *n;
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return 0;
    }
    return 1;
}

struct walk {
    uint64_t files, bytes, newest;
    uint64_t newer_than; /* count only files with an mtime after this */
};

/* Walks one level of the cache: depth 0 and 1 descend into hex-named
 * directories, depth 2 counts regular files. Uses openat so paths stay short. */
static void walk_level(int dirfd, int depth, struct walk *w)
{
    DIR *d = fdopendir(dirfd);
    if (!d) {
        close(dirfd);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d)) != NULL && w->files < JST_CACHE_WALK_MAX_FILES) {
        if (de->d_name[0] == '.')
            continue;
        struct stat st;
        if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (depth < 2) {
            if (!S_ISDIR(st.st_mode) || !is_hex_name(de->d_name))
                continue; /* the index file and anything foreign */
            int fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0)
                walk_level(fd, depth + 1, w);
        } else if (S_ISREG(st.st_mode)) {
            uint64_t mt =
                (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
            if (mt <= w->newer_than)
                continue;
            w->files++;
            w->bytes += (uint64_t)st.st_size;
            uint64_t m = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
            if (m > w->newest)
                w->newest = m;
        }
    }
    closedir(d); /* closes dirfd too */
}

/* Walks the entry files of s->path with an mtime after newer_than (0: all). */
static void walk_entries(struct jst_cache_snap *s, uint64_t newer_than, uint64_t *files,
                         uint64_t *bytes, uint64_t *newest)
{
    struct walk w = {0, 0, 0, newer_than};
    int fd = open(s->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0)
        walk_level(fd, 0, &w);
    *files = w.files;
    *bytes = w.bytes;
    if (newest)
        *newest = w.newest;
    if (!newer_than)
        s->scanned = 1;
}

void jst_cache_snapshot(struct jst_cache_snap *s, int scan)
{
    memset(s, 0, sizeof *s);
    s->disabled = env_true("CUDA_CACHE_DISABLE");
    s->max_bytes = cache_max_from_env();
    if (cache_resolve_path(s) != 0) {
        s->path[0] = '\0';
        return;
    }
    struct stat st;
    if (stat(s->path, &st) == 0 && S_ISDIR(st.st_mode)) {
        s->exists = 1;
        s->writable = dir_writable(s->path);
    } else if (stat(s->path, &st) == 0) {
        s->writable = 0; /* a file where the directory should be */
    } else {
        s->writable = ancestor_writable(s->path);
    }
    if (!s->exists) {
        s->scanned = scan != 0; /* nothing there: a walk would find nothing */
        return;
    }
    char *ipath = NULL; /* on the heap: see ancestor_writable */
    if (asprintf(&ipath, "%s/index", s->path) >= 0 && stat(ipath, &st) == 0 &&
        S_ISREG(st.st_mode)) {
        s->has_index = 1;
        s->index_size = (uint64_t)st.st_size;
        s->index_mtime_ns =
            (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    }
    free(ipath);
    if (scan)
        walk_entries(s, 0, &s->entries, &s->size_bytes, &s->newest_mtime_ns);
}

void jst_cache_snapshot_before(struct jst_cache_snap *before)
{
    jst_cache_snapshot(before, 0);
    if (!before->has_index)
        jst_cache_snapshot(before, 1);
}

void jst_cache_snapshot_after(const struct jst_cache_snap *before, struct jst_cache_snap *after)
{
    jst_cache_snapshot(after, 0);
    int index_changed = after->has_index != before->has_index ||
                        after->index_size != before->index_size ||
                        after->index_mtime_ns != before->index_mtime_ns;
    if (before->scanned) {
        /* No index before: compare whole walks. */
        jst_cache_snapshot(after, 1);
        after->new_entries =
            after->entries > before->entries ? after->entries - before->entries : 0;
        after->new_bytes =
            after->size_bytes > before->size_bytes ? after->size_bytes - before->size_bytes : 0;
        if (!after->new_entries && after->newest_mtime_ns > before->newest_mtime_ns)
            walk_entries(after, before->newest_mtime_ns, &after->new_entries, &after->new_bytes,
                         NULL);
    } else if (index_changed) {
        /* Entries written since the last store before the load: the new ones
         * (and any another process stored meanwhile). */
        walk_entries(after, before->index_mtime_ns, &after->new_entries, &after->new_bytes, NULL);
        /* File times are coarse (one clock tick, several ms): an entry
         * written in the tick of the previous store has the index's old
         * mtime. Count that tick too rather than nothing. */
        if (!after->new_entries && before->index_mtime_ns)
            walk_entries(after, before->index_mtime_ns - 1, &after->new_entries, &after->new_bytes,
                         NULL);
    }
}

int jst_cache_snapshot_exit(const struct jst_cache_snap *start, struct jst_cache_snap *now)
{
    jst_cache_snapshot(now, 0);
    int same = start->scanned && start->has_index && now->has_index &&
               strcmp(start->path, now->path) == 0 && now->index_size == start->index_size &&
               now->index_mtime_ns == start->index_mtime_ns;
    if (!same) {
        jst_cache_snapshot(now, 1);
        return 0;
    }
    now->scanned = 1;
    now->entries = start->entries;
    now->size_bytes = start->size_bytes;
    now->newest_mtime_ns = start->newest_mtime_ns;
    return 1;
}

/*
 * Thresholds of the decision (this comment is their documentation):
 *
 * - An entry holds the SASS compiled from the PTX. On the H200 (driver 580)
 *   entries came out at 1.55-1.59 times the PTX size (561 KB of PTX made an
 *   871 KB entry, 4.3 MB made 6.7 MB); the estimate is a little under that,
 *   1.5 times, and never under JST_CACHE_MIN_ENTRY. A CUDA_CACHE_MAXSIZE below
 *   it cannot hold the entry, so the driver does not store it.
 * - A load counts as fast enough to be a cache hit when it took at most
 *   JST_CACHE_HIT_BASE_NS plus JST_CACHE_HIT_NS_PER_BYTE per PTX byte. On the
 *   H200 a 5.6 MB PTX compiles in 10.4-11.7 s (about 1900 ns/byte) and loads
 *   from the cache in 21-45 ms (4-8 ns/byte): the bound, 20 ms + 50 ns/byte
 *   (300 ms there), lies between them with a wide margin on both sides, and
 *   the 20 ms base absorbs scheduling delays on a busy machine. The duration
 *   only decides when the directory showed no store, so a generous bound
 *   cannot turn a stored miss into a hit.
 */
#define JST_CACHE_MIN_ENTRY 16384u
#define JST_CACHE_HIT_BASE_NS 20000000ull
#define JST_CACHE_HIT_NS_PER_BYTE 50ull

static uint64_t expected_entry(uint64_t ptx_size)
{
    uint64_t e = ptx_size / 2 * 3;
    return e < JST_CACHE_MIN_ENTRY ? JST_CACHE_MIN_ENTRY : e;
}

static int fast_for_size(uint64_t dur_ns, uint64_t ptx_size)
{
    return dur_ns <= JST_CACHE_HIT_BASE_NS + ptx_size * JST_CACHE_HIT_NS_PER_BYTE;
}

/*
 * Evidence first: a disabled cache never stores; a cache that gained or
 * rewrote an entry during the load stored it. Only when the directory did not
 * change does the duration count: a fast load from a cache holding entries was
 * a hit (a read-only cache can still serve hits); otherwise the reason the
 * driver could not store is named, or the outcome is unknown.
 */
unsigned jst_cache_outcome(const struct jst_cache_snap *before, const struct jst_cache_snap *after,
                           uint64_t dur_ns, uint64_t ptx_size, unsigned *reason)
{
    unsigned dummy;
    if (!reason)
        reason = &dummy;
    *reason = JST_CR_NONE;
    if (!before || !after)
        return JST_C_UNKNOWN;
    if (before->disabled || after->disabled) {
        *reason = JST_CR_DISABLED;
        return JST_C_MISS_NOT_STORED;
    }
    if (after->new_entries)
        return JST_C_MISS_STORED;
    /* The driver rewrites the index on a store and leaves it alone on a hit. */
    if (before->has_index && after->has_index &&
        (after->index_size != before->index_size ||
         after->index_mtime_ns != before->index_mtime_ns))
        return JST_C_MISS_STORED;
    if (before->scanned && after->scanned &&
        (after->entries > before->entries || after->size_bytes != before->size_bytes ||
         after->newest_mtime_ns > before->newest_mtime_ns))
        return JST_C_MISS_STORED;

    int fast = fast_for_size(dur_ns, ptx_size);
    int has_entries = before->entries > 0 || before->index_size > 16;
    /* A hit needs nothing written: it can come from a read-only cache, and
     * from one whose CUDA_CACHE_MAXSIZE is now too small to store anything. */
    if (after->exists && has_entries && fast)
        return JST_C_HIT;
    if (!after->writable || !after->exists) {
        if (!after->exists && !after->writable) {
            *reason = JST_CR_NO_DIR;
            return JST_C_MISS_NOT_STORED;
        }
        if (!after->writable) {
            *reason = JST_CR_READ_ONLY;
            return JST_C_MISS_NOT_STORED;
        }
    }
    if (after->max_bytes < expected_entry(ptx_size)) {
        *reason = JST_CR_TOO_SMALL;
        return JST_C_MISS_NOT_STORED;
    }
    return JST_C_UNKNOWN;
}
