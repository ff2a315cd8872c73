/*
 * The file walk under `jitstall scan` and `jitstall warm`: every CUDA image in
 * files and directories, found from headers alone. Files are mmap'd; an ELF
 * object gives the fatbins of its .nv_fatbin section and the PTX strings of
 * its data (common/elfdata.c), a fatbin file its fatbins, a cubin or PTX file
 * itself.
 */
#include "imgwalk.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cli.h"
#include "openreg.h"

#define WALK_MAX_DEPTH 64

/* Adds (dev, ino); returns 0 if it was already there. Symlink loops and the
 * many names of a library (libfoo.so -> libfoo.so.13) are visited once. */
static int seen_add(struct jst_walk *s, dev_t dev, ino_t ino)
{
    if (s->n * 2 >= s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        struct jst_walk_key *k = calloc(cap, sizeof(*k));
        if (!k)
            return 1; /* out of memory: treat as new; worst case a file twice */
        for (size_t i = 0; i < s->cap; i++) {
            if (!s->keys[i].ino)
                continue;
            size_t h =
                (size_t)(s->keys[i].ino * 0x9E3779B97F4A7C15ull ^ s->keys[i].dev) & (cap - 1);
            while (k[h].ino)
                h = (h + 1) & (cap - 1);
            k[h] = s->keys[i];
        }
        free(s->keys);
        s->keys = k;
        s->cap = cap;
    }
    size_t h = (size_t)(ino * 0x9E3779B97F4A7C15ull ^ dev) & (s->cap - 1);
    while (s->keys[h].ino) {
        if (s->keys[h].ino == ino && s->keys[h].dev == dev)
            return 0;
        h = (h + 1) & (s->cap - 1);
    }
    s->keys[h].dev = dev;
    s->keys[h].ino = ino ? ino : 1;
    s->n++;
    return 1;
}

void jst_walk_free(struct jst_walk *w)
{
    free(w->keys);
    w->keys = NULL;
    w->cap = w->n = 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* A run of fatbins back to back (an ELF .nv_fatbin section or a .fatbin
 * file): each fatbin is one image, as each translation unit's is loaded alone. */
static size_t walk_fatbins(struct jst_walk *w, const char *path, const uint8_t *p, size_t n,
                           size_t base)
{
    size_t off = 0, found = 0;
    while (off < n) {
        size_t sz = jst_fatbin_size(p + off, n - off);
        struct jst_image img;
        jst_image_inspect(p + off, sz ? sz : n - off, &img);
        /* An empty fatbin (the static CUDA runtime links one in) holds no code
         * the driver could load: nothing to judge, so not an image at all. */
        if (img.damaged || img.n_entries) {
            w->image(w->ctx, path, base + off, &img, 0);
            found++;
        }
        jst_image_free(&img);
        if (!sz)
            break; /* damaged: the rest cannot be split */
        off += sz;
        off += (8 - (off & 7)) & 7;
        while (off < n && n - off >= 8 && all_zero(p + off, 8))
            off += 8;
        if (off < n && all_zero(p + off, n - off))
            break;
    }
    return found;
}

/* PTX text is searched for in windows of this size; the pages behind a
 * window are given back, so that the 200+ MB of data of a large library do
 * not stay in the process's resident set. */
#define WALK_TEXT_WINDOW ((size_t)2 << 20)

struct text_ctx {
    struct jst_walk *w;
    const char *path;
    const uint8_t *p;
    size_t found;
};

/* Drops the mapped pages wholly inside [a, b): the mapping is private and
 * never written, so they are read back from the file if touched again. */
static void release_pages(const uint8_t *p, size_t a, size_t b)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)(p + a) + pg - 1) & ~(uintptr_t)(pg - 1);
    uintptr_t hi = (uintptr_t)(p + b) & ~(uintptr_t)(pg - 1);
    if (hi > lo)
        madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

static void walk_text(void *ctx, size_t off, size_t len)
{
    struct text_ctx *t = ctx;
    struct jst_image img;
    jst_image_inspect(t->p + off, len, &img);
    t->w->image(t->w->ctx, t->path, off, &img, 1);
    jst_image_free(&img);
    t->found++;
}

static void walk_section(void *ctx, size_t off, size_t size)
{
    struct text_ctx *t = ctx;
    size_t e = off + size;
    for (size_t from = off; from < e;) {
        size_t to = e - from > WALK_TEXT_WINDOW ? from + WALK_TEXT_WINDOW : e;
        size_t next = jst_ptx_texts_window(t->p, off, e, from, to, walk_text, t);
        release_pages(t->p, from, next);
        from = next;
    }
}

enum file_kind { FK_NONE, FK_HOST_ELF, FK_CUBIN, FK_FATBIN, FK_PTX };

static enum file_kind classify(const uint8_t *h, size_t n)
{
    if (n >= 20 && !memcmp(h, ELFMAG, SELFMAG))
        return (h[18] | h[19] << 8) == 190 ? FK_CUBIN : FK_HOST_ELF;
    if (n >= 16 && h[0] == 0x50 && h[1] == 0xED && h[2] == 0x55 && h[3] == 0xBA)
        return FK_FATBIN;
    if (n >= 8) {
        struct jst_image img;
        /* PTX text is recognised from its start (.version after comments);
         * the head read is enough, and its size bounds every read. */
        jst_image_inspect(h, n, &img);
        int ptx = img.kind == JST_IMG_PTX;
        jst_image_free(&img);
        if (ptx)
            return FK_PTX;
    }
    return FK_NONE;
}

/* The images of one mapped file of kind fk. */
static size_t walk_mapped(struct jst_walk *w, const char *path, const uint8_t *p, size_t n,
                          enum file_kind fk)
{
    size_t off = 0, size = 0, found = 0;
    if (fk == FK_HOST_ELF) {
        if (jst_elf_section(p, n, ".nv_fatbin", &off, &size) == 0 && size)
            found += walk_fatbins(w, path, p + off, size, off);
        struct text_ctx t = {w, path, p, 0};
        jst_elf_data_sections(p, n, walk_section, &t);
        return found + t.found;
    }
    if (fk == FK_FATBIN)
        return walk_fatbins(w, path, p, n, 0);
    struct jst_image img;
    jst_image_inspect(p, n, &img);
    w->image(w->ctx, path, 0, &img, 0);
    jst_image_free(&img);
    return 1;
}

/* A file that shrinks while it is mapped faults (SIGBUS) on the next read
 * past its new end. The walk of a mapping runs with this handler armed: the
 * fault jumps back to walk_file, which says so and ends the command (the
 * consumers' state is then half-built). Nothing but the walk's own reads
 * touches the mapping: warm copies each image before the driver sees it. */
static sigjmp_buf walk_jmp;
static volatile sig_atomic_t walk_armed;

static void walk_sigbus(int sig)
{
    if (walk_armed)
        siglongjmp(walk_jmp, 1);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Reads one regular file. Returns 0 if it could be read. */
static int walk_file(struct jst_walk *w, const char *path, int explicit_path)
{
    int fd = jst_open_regular(path);
    if (fd < 0) {
        jst_errorf(w->cmd, "cannot open %s: %s", path, jst_open_strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        jst_errorf(w->cmd, "cannot stat %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    w->files++;
    uint8_t head[4096];
    ssize_t got = pread(fd, head, sizeof(head), 0);
    if (got < 0) {
        jst_errorf(w->cmd, "cannot read %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    enum file_kind fk = classify(head, (size_t)got);
    size_t n = (size_t)st.st_size, found = 0;
    if (fk != FK_NONE) {
        uint8_t *p = n ? mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
        if (p == MAP_FAILED) {
            jst_errorf(w->cmd, "cannot map %s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        w->bytes += n;
        struct sigaction sa, old;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = walk_sigbus;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGBUS, &sa, &old);
        if (sigsetjmp(walk_jmp, 1) == 0) {
            walk_armed = 1;
            found = walk_mapped(w, path, p, n, fk);
            walk_armed = 0;
        } else {
            walk_armed = 0;
            fflush(stdout);
            jst_errorf(w->cmd, "%s: file changed while read (it shrank); read it again", path);
            exit(JST_EXIT_USAGE);
        }
        sigaction(SIGBUS, &old, NULL);
        munmap(p, n);
    }
    close(fd);
    w->file_done(w->ctx, path, explicit_path, found);
    return 0;
}

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int walk_path(struct jst_walk *w, const char *path, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        /* A dangling symlink inside a tree is not worth a message. */
        if (depth == 0 || errno != ENOENT)
            jst_errorf(w->cmd, "cannot stat %s: %s", path, strerror(errno));
        return -1;
    }
    if (!seen_add(w, st.st_dev, st.st_ino))
        return 0; /* already walked: symlink loop or second name of a file */
    if (S_ISREG(st.st_mode))
        return walk_file(w, path, depth == 0);
    if (!S_ISDIR(st.st_mode))
        return depth == 0 ? (jst_errorf(w->cmd, "%s: not a file or directory", path), -1) : 0;
    if (depth >= WALK_MAX_DEPTH) {
        jst_errorf(w->cmd, "%s: deeper than %d directories, skipped", path, WALK_MAX_DEPTH);
        return 0;
    }
    struct dirent **list;
    int nl = scandir(path, &list, NULL, name_cmp);
    if (nl < 0) {
        jst_errorf(w->cmd, "cannot read directory %s: %s", path, strerror(errno));
        return -1;
    }
    size_t plen = strlen(path);
    for (int i = 0; i < nl; i++) {
        const char *nm = list[i]->d_name;
        if (strcmp(nm, ".") && strcmp(nm, "..")) {
            size_t len = plen + strlen(nm) + 2;
            char *child = malloc(len);
            if (child) {
                snprintf(child, len, "%s%s%s", path, plen && path[plen - 1] == '/' ? "" : "/", nm);
                walk_path(w, child, depth + 1);
                free(child);
            }
        }
        free(list[i]);
    }
    free(list);
    return 0;
}

int jst_walk_check_paths(const char *cmd, int npaths, char **paths)
{
    int bad = 0;
    for (int i = 0; i < npaths; i++) {
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            jst_errorf(cmd, "cannot stat %s: %s", paths[i], strerror(errno));
            bad++;
        } else if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
            jst_errorf(cmd, "%s: not a file or directory", paths[i]);
            bad++;
        }
    }
    return bad;
}

int jst_walk_path(struct jst_walk *w, const char *path)
{
    return walk_path(w, path, 0);
}
