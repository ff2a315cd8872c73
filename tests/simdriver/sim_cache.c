/*
 * The simulated driver's JIT cache on disk, laid out like the real one (see
 * docs/DRIVER.md, "The JIT cache", as seen on an H200): an `index` file plus entry files at
 * <path>/<1 hex>/<1 hex>/<14 hex>. The index is rewritten on every store and
 * left alone on a hit, as the real driver does.
 *
 * Entry name: 18 hex digits, the 64-bit PTX key followed by the compute
 * capability (two hex digits); sim_cache_entry_name() maps it to its path.
 * The entry file's first line is
 *   "jitstall-sim cache entry v1 key=<16 hex> cc=<cc> ptx=<bytes>\n"
 * and NUL bytes pad it to sim_cache_entry_size(ptx) bytes, standing in for the
 * SASS. A lookup hits only when that first line matches, so a damaged entry is
 * a miss and is stored again. Entries are written to a dot-named temporary
 * file in their directory and renamed into place.
 *
 * Index file (this program's own text format): a first line
 *   "jitstall-sim cache index v1"
 * then one line per entry, oldest first: "<18 hex digits> <size in bytes>".
 * Stores take flock(LOCK_EX) on the index, evict from the top until the new
 * entry fits under CUDA_CACHE_MAXSIZE, then rewrite the index in place.
 * Hits do not reorder the index: "oldest" means stored first.
 */
#include "sim.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define SIM_CACHE_DEFAULT_MAX (1ull << 30)
#define SIM_CACHE_LIMIT_MAX (4ull << 30)
#define SIM_CACHE_MIN_ENTRY 16384u
#define SIM_INDEX_MAGIC "jitstall-sim cache index v1\n"
#define SIM_INDEX_MAX (64u << 20) /* refuse to parse a larger index */

static int env_true(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] && strcmp(v, "0") != 0;
}

void sim_cache_config(struct sim_cache_cfg *c)
{
    memset(c, 0, sizeof *c);
    c->disabled = env_true("CUDA_CACHE_DISABLE");
    c->max_bytes = SIM_CACHE_DEFAULT_MAX;
    const char *m = getenv("CUDA_CACHE_MAXSIZE");
    if (m && *m && m[0] != '-') {
        char *end = NULL;
        errno = 0;
        unsigned long long n = strtoull(m, &end, 10);
        if (!errno && end != m && *end == '\0')
            c->max_bytes = n > SIM_CACHE_LIMIT_MAX ? SIM_CACHE_LIMIT_MAX : n;
    }
    const char *p = getenv("CUDA_CACHE_PATH");
    int n;
    if (p && *p) {
        n = snprintf(c->path, sizeof c->path, "%s", p);
    } else {
        const char *home = getenv("HOME");
        if (!home || !*home)
            return;
        n = snprintf(c->path, sizeof c->path, "%s/.nv/ComputeCache", home);
    }
    c->have_path = n > 0 && (size_t)n < sizeof c->path;
}

/* The real driver's entries measured 1.55-1.59 times the PTX they were
 * compiled from (H200, driver 580); the simulator writes 25/16 = 1.5625. */
uint64_t sim_cache_entry_size(uint64_t ptx_size)
{
    uint64_t e = ptx_size / 16 * 25;
    return e < SIM_CACHE_MIN_ENTRY ? SIM_CACHE_MIN_ENTRY : e;
}

/* Where (key, cc) lives: <1 hex>/<1 hex>/<14 hex>, the real driver's layout,
 * from 16 hex digits that mix the compute capability into the key. Two
 * entries may share a path; the first line of the file tells them apart. */
void sim_cache_entry_name(uint64_t key, unsigned cc, char out[24])
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64,
             (uint64_t)(key ^ (0x9E3779B97F4A7C15ull * ((cc & 0xffu) + 1))));
    snprintf(out, 24, "%c/%c/%.14s", hex[0], hex[1], hex + 2);
}

static void entry_header(char *buf, size_t n, uint64_t key, unsigned cc, uint64_t ptx_size)
{
    snprintf(buf, n, "jitstall-sim cache entry v1 key=%016" PRIx64 " cc=%u ptx=%" PRIu64 "\n", key,
             cc, ptx_size);
}

static int join(char *out, size_t n, const char *dir, const char *rel)
{
    int k = snprintf(out, n, "%s/%s", dir, rel);
    return k > 0 && (size_t)k < n ? 0 : -1;
}

int sim_cache_lookup(const struct sim_cache_cfg *c, uint64_t key, unsigned cc)
{
    if (c->disabled || !c->have_path)
        return 0;
    char rel[24], want[128], got[128];
    sim_cache_entry_name(key, cc, rel);
    char *path = malloc(PATH_MAX); /* heap: a load may run on a 16 KiB thread */
    int fd =
        path && join(path, PATH_MAX, c->path, rel) == 0 ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    free(path);
    if (fd < 0)
        return 0;
    /* The ptx size is part of the header but not of the key: compare up to it. */
    entry_header(want, sizeof want, key, cc, 0);
    size_t prefix = (size_t)(strstr(want, " ptx=") - want);
    ssize_t r = read(fd, got, sizeof got - 1);
    close(fd);
    return r > 0 && (size_t)r > prefix && memcmp(got, want, prefix) == 0;
}

/* mkdir -p with mode 0700; 0 when path is a directory afterwards. */
static int mkdirs_in(char *buf);

static int mkdirs(const char *path)
{
    char *buf = strdup(path);
    if (!buf)
        return -1;
    int rc = mkdirs_in(buf);
    free(buf);
    return rc;
}

static int mkdirs_in(char *buf)
{
    for (char *s = buf + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char save = *s;
            *s = '\0';
            if (mkdir(buf, 0700) != 0 && errno != EEXIST)
                return -1;
            *s = save;
            if (!save)
                break;
        }
    }
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

struct index_line {
    char name[19]; /* 18 hex digits */
    uint64_t size;
};

/* Parses the index held by fd; malformed lines are dropped. */
static struct index_line *index_read(int fd, size_t *count)
{
    *count = 0;
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < 0 || (uint64_t)st.st_size > SIM_INDEX_MAX)
        return NULL;
    size_t len = (size_t)st.st_size;
    char *text = malloc(len + 1);
    if (!text)
        return NULL;
    ssize_t r = pread(fd, text, len, 0);
    len = r > 0 ? (size_t)r : 0;
    text[len] = '\0';
    size_t cap = len / 20 + 1, n = 0;
    struct index_line *v = calloc(cap, sizeof *v);
    if (!v) {
        free(text);
        return NULL;
    }
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[19];
        uint64_t size;
        if (n < cap && sscanf(line, "%18[0-9a-f] %" SCNu64, name, &size) == 2 &&
            strlen(name) == 18) {
            memcpy(v[n].name, name, sizeof name);
            v[n].size = size;
            n++;
        }
    }
    free(text);
    *count = n;
    return v;
}

static int index_write(int fd, const struct index_line *v, size_t n)
{
    size_t cap = sizeof SIM_INDEX_MAGIC + n * 40, len = 0;
    char *text = malloc(cap);
    if (!text)
        return -1;
    len += (size_t)snprintf(text, cap, "%s", SIM_INDEX_MAGIC);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len, "%s %" PRIu64 "\n", v[i].name, v[i].size);
    int rc = ftruncate(fd, 0) == 0 && pwrite(fd, text, len, 0) == (ssize_t)len ? 0 : -1;
    free(text);
    return rc;
}

static void name_to_rel(const char *name18, char rel[24])
{
    char key[17];
    memcpy(key, name18, 16);
    key[16] = '\0';
    sim_cache_entry_name(strtoull(key, NULL, 16), (unsigned)strtoul(name18 + 16, NULL, 16), rel);
}

/* Writes the entry file atomically: a temporary in the same directory, then rename. */
static int entry_write_in(char *dir, char *path, char *tmp, size_t tmpsz, const char *root,
                          const char *rel, uint64_t key, unsigned cc, uint64_t ptx_size,
                          uint64_t size);

static int entry_write(const char *root, const char *rel, uint64_t key, unsigned cc,
                       uint64_t ptx_size, uint64_t size)
{
    /* The paths on the heap: a load may run on a 16 KiB thread. */
    struct {
        char dir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX + 64];
    } *b = malloc(sizeof *b);
    if (!b)
        return -1;
    int rc =
        entry_write_in(b->dir, b->path, b->tmp, sizeof b->tmp, root, rel, key, cc, ptx_size, size);
    free(b);
    return rc;
}

static int entry_write_in(char *dir, char *path, char *tmp, size_t tmpsz, const char *root,
                          const char *rel, uint64_t key, unsigned cc, uint64_t ptx_size,
                          uint64_t size)
{
    if (join(path, PATH_MAX, root, rel) != 0 || join(dir, PATH_MAX, root, rel) != 0)
        return -1;
    *strrchr(dir, '/') = '\0';
    if (mkdirs(dir) != 0)
        return -1;
    snprintf(tmp, tmpsz, "%s/.tmp.%ld.%lx", dir, (long)getpid(), (unsigned long)pthread_self());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    char head[128];
    entry_header(head, sizeof head, key, cc, ptx_size);
    size_t hl = strlen(head);
    int ok = write(fd, head, hl) == (ssize_t)hl && ftruncate(fd, (off_t)size) == 0;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int sim_cache_store(const struct sim_cache_cfg *c, uint64_t key, unsigned cc, uint64_t ptx_size)
{
    if (c->disabled || !c->have_path)
        return 0;
    uint64_t size = sim_cache_entry_size(ptx_size);
    if (size > c->max_bytes)
        return 0; /* too large for this cache: not stored, no error */
    if (mkdirs(c->path) != 0)
        return 0;                   /* cannot be created */
    char *ipath = malloc(PATH_MAX); /* heap: a load may run on a 16 KiB thread */
    int fd = ipath && join(ipath, PATH_MAX, c->path, "index") == 0
                 ? open(ipath, O_RDWR | O_CREAT | O_CLOEXEC, 0600)
                 : -1;
    free(ipath);
    if (fd < 0)
        return 0; /* read-only */
    if (flock(fd, LOCK_EX) != 0) {
        close(fd);
        return 0;
    }
    char rel[24], name[19];
    sim_cache_entry_name(key, cc, rel);
    snprintf(name, sizeof name, "%016" PRIx64 "%02x", key, cc & 0xffu);

    size_t n = 0;
    struct index_line *v = index_read(fd, &n);
    struct index_line *nv = realloc(v, (n + 1) * sizeof *nv);
    int stored = 0;
    if (!nv) {
        free(v);
        goto out;
    }
    v = nv;
    /* Drop an older line for the same entry; it is about to be replaced. */
    uint64_t total = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(v[i].name, name) == 0)
            continue;
        v[k++] = v[i];
        total += v[i].size;
    }
    n = k;
    /* Evict the oldest entries until the new one fits. */
    size_t first = 0;
    while (first < n && total + size > c->max_bytes) {
        char erel[24], *epath = malloc(PATH_MAX);
        name_to_rel(v[first].name, erel);
        if (epath && join(epath, PATH_MAX, c->path, erel) == 0)
            unlink(epath);
        free(epath);
        total -= v[first].size;
        first++;
    }
    memmove(v, v + first, (n - first) * sizeof *v);
    n -= first;
    if (entry_write(c->path, rel, key, cc, ptx_size, size) == 0) {
        memcpy(v[n].name, name, sizeof name);
        v[n].size = size;
        n++;
        stored = 1;
    }
    if (index_write(fd, v, n) != 0)
        stored = 0;
    free(v);
out:
    flock(fd, LOCK_UN);
    close(fd);
    return stored;
}
