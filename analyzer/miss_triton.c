/*
 * Why Triton compiled although its cache held entries (analyzer/miss.h).
 * Triton keeps each compiled kernel in a directory of its own under the
 * cache, named by a hash of everything the compile depends on, with the
 * kernel's metadata in NAME.json beside its other files (NAME.ptx,
 * NAME.cubin, ...; __grp__NAME.json lists a group's files). So when the
 * cache still exists where the report runs: the kernels whose directories
 * the run wrote (their metadata's time falls within the process's life) are
 * what it compiled, and a kernel of the same name in an older directory was
 * a near miss. Their metadata, key by key, names what differs; when nothing
 * does, the key's other inputs changed: the kernel's source, the values of
 * its constants, or Triton's own files.
 *
 * The cache is input from a file system the report does not own: at most
 * MAX_DIRS directories and MAX_FILES names in each are looked at, metadata
 * larger than MAX_JSON is not read, and only regular files are opened.
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "miss.h"
#include "openreg.h"
#include "sfmt.h"

#define MAX_DIRS 4096
#define MAX_FILES 64
#define MAX_JSON (1 << 20)
#define MAX_SHOWN 4 /* differing keys named */

struct entry {
    char *name;     /* the kernel */
    char *meta;     /* path of its NAME.json */
    uint64_t mtime; /* ns since the epoch */
};

struct entries {
    struct entry *v;
    size_t n, cap;
};

static int push(struct entries *e, const char *name, size_t name_len, const char *meta,
                uint64_t mtime)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 64;
        struct entry *v = realloc(e->v, cap * sizeof *v);
        if (!v)
            return -1;
        e->v = v;
        e->cap = cap;
    }
    struct entry *x = &e->v[e->n];
    x->name = strndup(name, name_len);
    x->meta = strdup(meta);
    if (!x->name || !x->meta) {
        free(x->name);
        free(x->meta);
        return -1;
    }
    x->mtime = mtime;
    e->n++;
    return 0;
}

static void entries_free(struct entries *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].name);
        free(e->v[i].meta);
    }
    free(e->v);
}

/* dir/name into path, its lstat into *st: 1 when it fits and is of type
 * (S_IFREG, S_IFDIR; a link is neither). */
static int entry_of(const char *dir, const char *name, mode_t type, char *path, size_t n,
                    struct stat *st)
{
    return (size_t)snprintf(path, n, "%s/%s", dir, name) < n && !lstat(path, st) &&
           (st->st_mode & S_IFMT) == type;
}

/* The metadata files of one kernel directory. */
static int scan_dir(const char *dir, struct entries *e)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    int seen = 0, rc = 0;
    while (rc == 0 && seen < MAX_FILES && (de = readdir(d))) {
        seen++;
        size_t n = strlen(de->d_name);
        if (n <= 5 || strcmp(de->d_name + n - 5, ".json") || !strncmp(de->d_name, "__grp__", 7))
            continue;
        char path[4096];
        struct stat st;
        if (!entry_of(dir, de->d_name, S_IFREG, path, sizeof path, &st))
            continue;
        uint64_t t = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
        rc = push(e, de->d_name, n - 5, path, t);
    }
    closedir(d);
    return rc;
}

static int scan_cache(const char *cache, struct entries *e)
{
    DIR *d = opendir(cache);
    if (!d)
        return -1;
    struct dirent *de;
    int dirs = 0, rc = 0;
    while (rc == 0 && dirs < MAX_DIRS && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char path[4096];
        struct stat st;
        if (!entry_of(cache, de->d_name, S_IFDIR, path, sizeof path, &st))
            continue;
        dirs++;
        rc = scan_dir(path, e);
    }
    closedir(d);
    return rc;
}

static json_t *load_meta(const char *path)
{
    int fd = jst_open_regular(path);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) || st.st_size <= 0 || st.st_size > MAX_JSON) {
        close(fd);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size);
    size_t got = 0;
    ssize_t r = 1;
    while (buf && got < (size_t)st.st_size &&
           (r = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
        got += (size_t)r;
    close(fd);
    json_t *doc = buf && r >= 0 ? json_loadb(buf, got, JSON_REJECT_DUPLICATES, NULL) : NULL;
    free(buf);
    if (doc && !json_is_object(doc)) {
        json_decref(doc);
        doc = NULL;
    }
    return doc;
}

/* A value as the report shows it: compact JSON, at most 40 bytes. */
static void value_words(const json_t *v, char *buf, size_t n)
{
    if (!v) {
        jst_sfmt(buf, n, "(none)");
        return;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    if (!s) {
        jst_sfmt(buf, n, "?");
        return;
    }
    if (strlen(s) > 40)
        jst_sfmt(buf, n, "%.37s...", s);
    else
        jst_sfmt(buf, n, "%s", s);
    free(s);
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* "num_warps 4, now 8; num_stages 3, now 2" for the keys whose values differ
 * (by name, at most MAX_SHOWN, and how many more), or "" when none does. The
 * hash is left out: it differs whenever anything does. */
static void diff_words(const json_t *old, const json_t *new, char *buf, size_t n)
{
    buf[0] = 0;
    const char *keys[512];
    size_t nk = 0;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)new, k, v)
    {
        if (nk < 512)
            keys[nk++] = k;
    }
    json_object_foreach((json_t *)old, k, v)
    {
        if (nk < 512 && !json_object_get(new, k))
            keys[nk++] = k;
    }
    qsort(keys, nk, sizeof *keys, cmp_key);
    size_t shown = 0, more = 0;
    for (size_t i = 0; i < nk; i++) {
        if (!strcmp(keys[i], "hash"))
            continue;
        const json_t *a = json_object_get(old, keys[i]), *b = json_object_get(new, keys[i]);
        if (a && b && json_equal((json_t *)a, (json_t *)b))
            continue;
        if (shown == MAX_SHOWN || strlen(buf) > 160) { /* the fix stays one line */
            more++;
            continue;
        }
        char va[48], vb[48];
        value_words(a, va, sizeof va);
        value_words(b, vb, sizeof vb);
        size_t at = strlen(buf);
        jst_sfmt(buf + at, n - at, "%s%s %s, now %s", shown ? "; " : "", keys[i], va, vb);
        shown++;
    }
    if (more) {
        size_t at = strlen(buf);
        jst_sfmt(buf + at, n - at, " (and %zu more)", more);
    }
}

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

int jst_triton_miss_words(const char *cache, uint64_t from_ns, uint64_t to_ns, char *buf, size_t n)
{
    buf[0] = 0;
    if (!cache || !n)
        return 0;
    struct entries e = {0};
    if (scan_cache(cache, &e) < 0 || !e.n) {
        entries_free(&e);
        return 0;
    }
    qsort(e.v, e.n, sizeof *e.v, cmp_entry);
    /* Per kernel name (sorted by time within it): the run's newest entry
     * and the newest one before the run. */
    size_t compiled = 0, near = 0;
    const struct entry *first_old = NULL, *first_new = NULL;
    for (size_t i = 0; i < e.n;) {
        size_t j = i;
        const struct entry *old = NULL, *new = NULL;
        for (; j < e.n && !strcmp(e.v[j].name, e.v[i].name); j++) {
            if (e.v[j].mtime < from_ns)
                old = &e.v[j];
            else if (e.v[j].mtime <= to_ns)
                new = &e.v[j];
        }
        if (new) {
            compiled++;
            if (old) {
                near++;
                if (!first_new) {
                    first_old = old;
                    first_new = new;
                }
            }
        }
        i = j;
    }
    int said = 0;
    if (first_new) {
        json_t *a = load_meta(first_old->meta), *b = load_meta(first_new->meta);
        char diff[512] = "";
        if (a && b)
            diff_words(a, b, diff, sizeof diff);
        char others[64] = "";
        if (near > 1)
            jst_sfmt(others, sizeof others, " (and %zu more kernels alike)", near - 1);
        if (!a || !b)
            jst_sfmt(buf, n,
                     "it missed: the cache held %.80s from an earlier run under another key, "
                     "whose metadata could not be read%s",
                     first_new->name, others);
        else if (diff[0])
            jst_sfmt(buf, n,
                     "it missed: the cache held %.80s from an earlier run with other metadata: "
                     "%.300s%s",
                     first_new->name, diff, others);
        else
            jst_sfmt(buf, n,
                     "it missed: the cache held %.80s from an earlier run with the same "
                     "metadata, so the key's other inputs changed (the kernel's source, its "
                     "constants' values, or Triton's own files)%s",
                     first_new->name, others);
        json_decref(a);
        json_decref(b);
        said = 1;
    } else if (compiled) {
        jst_sfmt(buf, n, "it missed: none of the %zu kernel%s it compiled was in the cache by name",
                 compiled, compiled == 1 ? "" : "s");
        said = 1;
    }
    entries_free(&e);
    return said;
}
