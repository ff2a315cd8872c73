/*
 * Where the PTX of a JIT load came from (origin.h). Decided from what the
 * preload recorded: the ELF object holding the image pointer (JST_F_SOURCE),
 * the path given to the driver (JST_F_PATH), the image's kind and entries,
 * and the NVRTC calls before the load. Third-party objects are named by the
 * package that installed them, from a wheel's RECORD or dpkg's file lists.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "origin.h"
#include "model_index.h"
#include "modix.h"
#include "xalloc.h"
#include "sfmt.h"
#include "openreg.h"
#include "hashidx.h"
#include "image.h"
#include <sys/stat.h>

#define ORIGIN_LINE_MAX 8192

static int has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* A path component that starts with one of the conda installers' names
 * (/opt/conda, ~/miniconda3, ~/miniforge3, ...). */
static int in_conda(const char *path)
{
    static const char *const names[] = {"conda",     "miniconda",  "anaconda",
                                        "miniforge", "mambaforge", "micromamba"};
    for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/'))
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (has_prefix(s + 1, names[i]))
                return 1;
    return 0;
}

const char *jst_origin_third_party(const char *path)
{
    static const char *const sys[] = {"/usr/lib/", "/usr/lib32/", "/usr/lib64/",
                                      "/lib/",     "/lib32/",     "/lib64/"};
    static const char *const sys_bin[] = {"/usr/bin/", "/bin/", "/usr/sbin/", "/sbin/"};
    if (!path || path[0] != '/')
        return NULL;
    if (strstr(path, "/site-packages/") || strstr(path, "/dist-packages/"))
        return "a Python package";
    if (in_conda(path))
        return "a conda environment";
    if (has_prefix(path, "/usr/local/cuda") || has_prefix(path, "/opt/cuda") ||
        has_prefix(path, "/opt/nvidia/"))
        return "the CUDA toolkit";
    for (size_t i = 0; i < sizeof sys / sizeof sys[0]; i++)
        if (has_prefix(path, sys[i]))
            return "a system library directory";
    for (size_t i = 0; i < sizeof sys_bin / sizeof sys_bin[0]; i++)
        if (has_prefix(path, sys_bin[i]))
            return "a system program directory";
    return NULL;
}

/* Reads one line into buf (without the newline); 0 at end of file. A line
 * longer than the buffer is skipped whole, so that it never matches. */
static int read_line(FILE *f, char *buf, size_t n)
{
    for (;;) {
        if (!fgets(buf, (int)n, f))
            return 0;
        size_t len = strlen(buf);
        if (len && buf[len - 1] == '\n') {
            buf[len - 1] = '\0';
            return 1;
        }
        if (feof(f))
            return 1;
        int ch;
        while ((ch = fgetc(f)) != EOF && ch != '\n')
            ;
    }
}

/* Does a wheel RECORD line ("path,hash,size", the path quoted when it holds
 * a comma) name rel? */
static int record_names(const char *line, const char *rel)
{
    size_t rl = strlen(rel);
    if (line[0] == '"')
        return strncmp(line + 1, rel, rl) == 0 && line[1 + rl] == '"';
    return strncmp(line, rel, rl) == 0 && line[rl] == ',';
}

static int file_lists(const char *list, const char *rel, int record)
{
    FILE *f = jst_fopen_regular(list);
    if (!f)
        return 0;
    char *line = malloc(ORIGIN_LINE_MAX);
    int found = 0;
    while (line && !found && read_line(f, line, ORIGIN_LINE_MAX))
        found = record ? record_names(line, rel) : strcmp(line, rel) == 0;
    free(line);
    fclose(f);
    return found;
}

/* "Name Version" from a dist-info's METADATA, else from its directory name
 * ("nvidia_cudnn_cu13-9.13.0.dist-info"). */
static void wheel_name(const char *dir, const char *dname, char *out, size_t n)
{
    char path[4096], line[512], name[160] = "", ver[64] = "";
    jst_sfmt(path, sizeof path, "%s/%s/METADATA", dir, dname);
    FILE *f = jst_fopen_regular(path);
    while (f && read_line(f, line, sizeof line) && line[0] && (!name[0] || !ver[0])) {
        if (has_prefix(line, "Name: "))
            jst_sfmt(name, sizeof name, "%s", line + 6);
        else if (has_prefix(line, "Version: "))
            jst_sfmt(ver, sizeof ver, "%s", line + 9);
    }
    if (f)
        fclose(f);
    if (name[0]) {
        jst_sfmt(out, n, "%s%s%s", name, ver[0] ? " " : "", ver);
        return;
    }
    size_t len = strlen(dname) - strlen(".dist-info");
    const char *dash = memchr(dname, '-', len);
    if (dash)
        jst_sfmt(out, n, "%.*s %.*s", (int)(dash - dname), dname,
                 (int)(len - (size_t)(dash - dname) - 1), dash + 1);
    else
        jst_sfmt(out, n, "%.*s", (int)len, dname);
}

/* What a package lookup looks for (want, or alt when set) and where the
 * package's name goes. */
struct pkg_ctx {
    const char *want, *alt;
    char *out;
    size_t n;
};

/* Calls fn on each entry of dir whose name is longer than suffix and ends
 * in it (stem: the length before the suffix) until fn finds the package:
 * 1 then, 0 when none did, -1 when dir cannot be opened. The one directory
 * walk of the wheel, conda and dpkg lookups. */
static int scan_dir(const char *dir, const char *suffix,
                    int (*fn)(const char *dir, const char *name, size_t stem,
                              const struct pkg_ctx *pc),
                    const struct pkg_ctx *pc)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    size_t sl = strlen(suffix);
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l > sl && strcmp(e->d_name + l - sl, suffix) == 0)
            found = fn(dir, e->d_name, l - sl, pc);
    }
    closedir(d);
    return found;
}

static int wheel_match(const char *dir, const char *name, size_t stem, const struct pkg_ctx *pc)
{
    char rec[4096];
    (void)stem;
    jst_sfmt(rec, sizeof rec, "%s/%s/RECORD", dir, name);
    if (!file_lists(rec, pc->want, 1))
        return 0;
    wheel_name(dir, name, pc->out, pc->n);
    return 1;
}

/* The wheel under the site-packages (or dist-packages) directory above path
 * whose RECORD lists it. */
static int wheel_of(const char *path, char *out, size_t n)
{
    const char *m = NULL;
    for (const char *s = path; (s = strstr(s, "-packages/")); s++)
        if ((s - path >= 5 && !strncmp(s - 5, "/site", 5)) ||
            (s - path >= 5 && !strncmp(s - 5, "/dist", 5)))
            m = s;
    if (!m)
        return 0;
    char dir[4096];
    size_t dl = (size_t)(m - path) + strlen("-packages");
    if (dl >= sizeof dir)
        return 0;
    memcpy(dir, path, dl);
    dir[dl] = '\0';
    const char *rel = path + dl + 1;
    struct pkg_ctx pc = {rel, NULL, out, n};
    return scan_dir(dir, ".dist-info", wheel_match, &pc) > 0;
}

/* Does the file (a conda-meta record, JSON) hold needle? Read whole, up to
 * 256 MiB; a larger or unreadable file does not match. */
static int file_holds(const char *file, const char *needle)
{
    FILE *f = jst_fopen_regular(file);
    if (!f)
        return 0;
    char *buf = NULL;
    long len = -1;
    if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && len <= (256L << 20) &&
        fseek(f, 0, SEEK_SET) == 0)
        buf = malloc((size_t)len + 1);
    int found = 0;
    if (buf && fread(buf, 1, (size_t)len, f) == (size_t)len)
        found = memmem(buf, (size_t)len, needle, strlen(needle)) != NULL;
    free(buf);
    fclose(f);
    return found;
}

/* "cudnn 9.1.0.70 (conda)" from the record's name "cudnn-9.1.0.70-h123_0.json". */
static void conda_name(const char *rec, char *out, size_t n)
{
    size_t len = strlen(rec) - 5;
    const char *build = NULL, *ver = NULL;
    for (const char *s = rec; s < rec + len; s++)
        if (*s == '-') {
            ver = build;
            build = s;
        }
    if (ver)
        jst_sfmt(out, n, "%.*s %.*s (conda)", (int)(ver - rec), rec, (int)(build - ver - 1),
                 ver + 1);
    else
        jst_sfmt(out, n, "%.*s (conda)", (int)len, rec);
}

static int conda_match(const char *dir, const char *name, size_t stem, const struct pkg_ctx *pc)
{
    char rec[4500];
    (void)stem;
    jst_sfmt(rec, sizeof rec, "%s/%s", dir, name);
    if (!file_holds(rec, pc->want))
        return 0;
    conda_name(name, pc->out, pc->n);
    return 1;
}

/* The conda package whose record (conda-meta/NAME-VERSION-BUILD.json) lists
 * path: the nearest directory above path that has a conda-meta directory is
 * the environment, and its records list files relative to it. */
static int conda_of(const char *path, char *out, size_t n)
{
    char dir[4096], meta[4200];
    jst_sfmt(dir, sizeof dir, "%s", path);
    for (int depth = 0; depth < 16; depth++) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            return 0;
        *slash = '\0';
        jst_sfmt(meta, sizeof meta, "%s/conda-meta", dir);
        char needle[4200];
        jst_sfmt(needle, sizeof needle, "\"%s\"", path + strlen(dir) + 1);
        struct pkg_ctx pc = {needle, NULL, out, n};
        int found = scan_dir(meta, ".json", conda_match, &pc);
        if (found < 0)
            continue; /* no conda-meta here: look higher up */
        return found;
    }
    return 0;
}

static int dpkg_match(const char *dir, const char *name, size_t stem, const struct pkg_ctx *pc)
{
    char list[4096];
    jst_sfmt(list, sizeof list, "%s/%s", dir, name);
    if (!file_lists(list, pc->want, 0) && !file_lists(list, pc->alt, 0))
        return 0;
    jst_sfmt(pc->out, pc->n, "%.*s (Debian package)", (int)stem, name);
    return 1;
}

/* The Debian package whose /var/lib/dpkg/info/PKG.list names path (or the
 * same path across the merged /usr: /lib/x and /usr/lib/x). */
static int dpkg_of(const char *path, char *out, size_t n)
{
    const char *dir = getenv("JITSTALL_DPKG_DIR");
    char alt[4096] = "";
    if (!dir || !*dir)
        dir = "/var/lib/dpkg/info";
    if (has_prefix(path, "/usr/"))
        jst_sfmt(alt, sizeof alt, "%s", path + 4);
    else
        jst_sfmt(alt, sizeof alt, "/usr%s", path);
    struct pkg_ctx pc = {path, alt, out, n};
    return scan_dir(dir, ".list", dpkg_match, &pc) > 0;
}

void jst_origin_package(const char *path, char *out, size_t n)
{
    /* A report asks once per load; one answer per path is kept, since a
     * dpkg lookup reads every file list. */
    static struct {
        char *path;
        char pkg[160];
    } memo[32];
    static size_t n_memo;
    if (!n)
        return;
    out[0] = '\0';
    if (!path || path[0] != '/')
        return;
    for (size_t i = 0; i < n_memo; i++)
        if (!strcmp(memo[i].path, path)) {
            jst_sfmt(out, n, "%s", memo[i].pkg);
            return;
        }
    char pkg[160] = "";
    if (!wheel_of(path, pkg, sizeof pkg) && !conda_of(path, pkg, sizeof pkg))
        dpkg_of(path, pkg, sizeof pkg);
    jst_sfmt(out, n, "%s", pkg);
    if (n_memo < sizeof memo / sizeof memo[0] && (memo[n_memo].path = strdup(path))) {
        jst_sfmt(memo[n_memo].pkg, sizeof memo[n_memo].pkg, "%s", pkg);
        n_memo++;
    }
}

/* What jst_origin_of looks up for every load, built once per process (the
 * model frees it with its indexes): scanning every call for every load, or
 * the whole module map for every frame, made small hostile traces take
 * minutes. */
struct jst_origin_ix {
    struct jst_modix *modix;   /* address -> module map entry */
    const char **caller;       /* per stack position: caller_object's answer */
    unsigned char *caller_set; /* ... once computed */
    struct rtc_made {
        uint64_t hash, seq;
        const char *program; /* the name nvrtcCreateProgram was given, or NULL */
    } * rtc;                 /* successful NVRTC compiles' PTX hashes, by hash then seq */
    size_t n_rtc;
    uint64_t first_unhashed; /* seq of the first one without a hash, or UINT64_MAX */
};

static int cmp_rtc(const void *a, const void *b)
{
    const struct rtc_made *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static struct jst_origin_ix *origin_ix(const struct jst_process *cp)
{
    struct jst_process *p = (struct jst_process *)cp; /* a cache, not a change */
    if (p->origin_ix)
        return p->origin_ix;
    struct jst_origin_ix *x = jst_xcalloc(1, sizeof *x);
    x->modix = jst_modix_build(p->mods, p->n_mods);
    x->caller = jst_xcalloc(p->n_stacks + 1, sizeof *x->caller);
    x->caller_set = jst_xcalloc(p->n_stacks + 1, 1);
    x->first_unhashed = UINT64_MAX;
    size_t n = 0;
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct jst_call_ev *a = &p->calls[i];
        if (a->call == JST_CALL_nvrtcCompileProgram && a->result == 0)
            n += 2;
    }
    x->rtc = jst_xcalloc(n + 1, sizeof *x->rtc);
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct jst_call_ev *a = &p->calls[i];
        if (a->call != JST_CALL_nvrtcCompileProgram || a->result != 0)
            continue;
        if (!a->rtc_ptx_hash[0]) {
            if (a->seq < x->first_unhashed)
                x->first_unhashed = a->seq;
            continue;
        }
        for (int h = 0; h < 2; h++)
            if (a->rtc_ptx_hash[h])
                x->rtc[x->n_rtc++] = (struct rtc_made){a->rtc_ptx_hash[h], a->seq, a->rtc_program};
    }
    qsort(x->rtc, x->n_rtc, sizeof *x->rtc, cmp_rtc);
    p->origin_ix = x;
    p->origin_ix_free = jst_origin_ix_free;
    return x;
}

void jst_origin_ix_free(struct jst_process *p)
{
    struct jst_origin_ix *x = p->origin_ix;
    if (!x)
        return;
    jst_modix_free(x->modix);
    free(x->caller);
    free(x->caller_set);
    free(x->rtc);
    free(x);
    p->origin_ix = NULL;
}

/* Was c's PTX made by NVRTC? The preload records the hash of each successful
 * nvrtcCompileProgram's PTX (interpose/rtc.c); when it did, a load is NVRTC's
 * only if its image hash is one of them. A compile without a hash (an older
 * preload, or NVRTC's getters failed) leaves any later PTX in memory to it:
 * NVRTC's PTX reaches the driver as text in heap memory, like PTX read from
 * a file (docs/DRIVER.md, "PTX made at run time reaches the driver as PTX
 * text"). */
static int nvrtc_made(const struct jst_process *p, const struct jst_call_ev *c)
{
    const struct jst_origin_ix *x = origin_ix(p);
    if (c->image_hash) {
        size_t lo = 0, hi = x->n_rtc; /* the first entry of this hash: its earliest seq */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (x->rtc[mid].hash < c->image_hash)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < x->n_rtc && x->rtc[lo].hash == c->image_hash && x->rtc[lo].seq < c->seq)
            return 1;
    }
    return x->first_unhashed < c->seq;
}
/* The image holds PTX and nothing else: its entries, or its kind. */
static int ptx_only(const struct jst_call_ev *c)
{
    if (c->image_kind == JST_IMG_PTX)
        return 1;
    if (!c->n_entries)
        return c->has_jit_input && c->jit_input == 1; /* CU_JIT_INPUT_PTX */
    for (size_t i = 0; i < c->n_entries; i++)
        if (strncmp(c->entries[i], "ptx ", 4) != 0 || !strstr(c->entries[i], " none"))
            return 0;
    /* one plain PTX entry: PTX text, unless the file is named as a fatbin */
    return c->n_entries == 1;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Frames of libcuda, libjitstall and the CUDA runtime: they call on behalf
 * of someone else. */
static int internal_object(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    return has_prefix(b, "libcuda.so") || has_prefix(b, "libjitstall") ||
           has_prefix(b, "libcudart");
}

/* The machinery of a foreign call, which makes it for someone else: libffi,
 * CPython's _ctypes, cffi's backend, cuda-python's Cython driver shims. */
static int ffi_object(const char *path)
{
    static const char *const names[] = {"libffi.so", "_ctypes",   "_cffi_backend",
                                        "cydriver",  "_cydriver", "_bindings"};
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (has_prefix(b, names[i]))
            return 1;
    return strstr(path, "/cuda/bindings/") != NULL; /* cuda-python's call shims */
}

/* The Python interpreter: its shared library or its executable. */
static int interpreter_object(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    return has_prefix(b, "libpython") || has_prefix(b, "python") || has_prefix(b, "pypy");
}

/* The innermost Python frame of the stack outside the FFI modules (ctypes,
 * cffi) into buf: the Python code that made the call. 0 when none. */
static int python_caller(const struct jst_stack *st, char *buf, size_t n)
{
    for (size_t i = 0; st && i < st->n_py && st->py_frames && st->py_frames[i]; i++) {
        const char *f = strchr(st->py_frames[i], '\t');
        if (!f)
            continue;
        f++;
        size_t len = strcspn(f, "\t");
        if (!len || (len > 0 && f[0] == '<') || memmem(f, len, "/ctypes/", 8) ||
            memmem(f, len, "/cffi/", 6))
            continue;
        jst_sfmt(buf, n, "%.*s", (int)len, f);
        return 1;
    }
    return 0;
}

/* caller_object's answer for a stack that reaches Python code through the
 * interpreter: the Python file is worked out per call. */
static const char origin_python[] = "(python)";

/* The scan behind caller_object, once per stack: the object path, NULL, or
 * origin_python. */
static const char *caller_scan(const struct jst_process *p, const struct jst_origin_ix *x,
                               const struct jst_stack *st)
{
    int ffi = 0;
    for (size_t i = 0; i < st->n; i++) {
        long k = jst_modix_latest(x->modix, st->ips[i]); /* the latest mapping there */
        const char *obj = k >= 0 ? p->mods[k].path : NULL;
        if (!obj || internal_object(obj))
            continue;
        if (ffi_object(obj)) {
            ffi = 1;
            continue;
        }
        if (interpreter_object(obj) || (ffi && p->exe && !strcmp(obj, p->exe)))
            return origin_python;
        return obj;
    }
    return NULL;
}

/* The ELF object that made a load of an image in memory: the one holding the
 * innermost frame of the call's stack outside CUDA and jitstall. A library
 * that keeps its PTX compressed or copies it out before loading it (cuDNN,
 * under JAX, does) is named this way, though the image itself is on the
 * heap. A foreign call's machinery (ffi_object) is skipped: the library that
 * made the load is the first frame beyond it; when that is the Python
 * interpreter, the load came from Python code, whose file goes into py_file
 * (returned then). NULL when the stack or the module map does not say. */
static const char *caller_object(const struct jst_process *p, const struct jst_call_ev *c,
                                 char *py_file, size_t py_n)
{
    const struct jst_stack *st = jst_model_stack(p, c->stack_id);
    if (!st)
        return NULL;
    struct jst_origin_ix *x = origin_ix(p);
    size_t at = (size_t)(st - p->stacks); /* the answer is the stack's: once each */
    if (!x->caller_set[at]) {
        x->caller_set[at] = 1;
        x->caller[at] = caller_scan(p, x, st);
    }
    if (x->caller[at] == origin_python)
        return python_caller(st, py_file, py_n) ? py_file : NULL;
    return x->caller[at];
}

void jst_origin_of(const struct jst_process *p, const struct jst_call_ev *c, struct jst_origin *o)
{
    memset(o, 0, sizeof *o);
    const char *src = c->source && *c->source ? c->source : NULL;
    const char *path = c->path && *c->path ? c->path : NULL;
    int ptx = ptx_only(c);
    if (path) {
        o->object = path;
        o->kind = ptx && !ends_with(path, ".fatbin") ? JST_ORIGIN_PTX_FILE : JST_ORIGIN_FATBIN_FILE;
    } else if (src) {
        o->object = src;
        o->kind = ptx ? JST_ORIGIN_PTX_DATA : JST_ORIGIN_ELF;
    } else if (ptx && nvrtc_made(p, c)) {
        o->kind = JST_ORIGIN_NVRTC;
        return;
    } else if (c->image_kind || c->n_entries) {
        o->kind = ptx ? JST_ORIGIN_PTX_FILE : JST_ORIGIN_FATBIN_FILE;
        /* A third-party library that passed the image from memory: its fix
         * is the library's, not "compile your PTX". */
        const char *caller = caller_object(p, c, o->py_file, sizeof o->py_file);
        if (caller == o->py_file)
            o->object = o->py_file; /* the program's own Python code */
        if (caller && (o->where = jst_origin_third_party(caller)) != NULL) {
            o->object = caller;
            o->kind = JST_ORIGIN_THIRD_PARTY;
            jst_origin_package(caller, o->package, sizeof o->package);
        }
        return;
    } else {
        return;
    }
    o->where = jst_origin_third_party(o->object);
    if (o->where) {
        o->kind = JST_ORIGIN_THIRD_PARTY;
        jst_origin_package(o->object, o->package, sizeof o->package);
    }
}

/* ---- the file an image in memory was read from ---- */

/* A program that reads kernels.ptx and passes the bytes to cuModuleLoadData
 * leaves only the bytes' hash and size in the trace. The file is found by
 * content among the files the trace points at: the program's arguments
 * (against its working directory), the files in its working directory, in
 * the directories its arguments name or lie in, and beside the Python code
 * that made the load. Only a file of the image's size (or one byte less:
 * PTX text gets its NUL in memory) is read, and only a file whose bytes hash
 * to the image's hash is named, so a name is never a guess; the analyzer
 * must see those files (the same machine, or the same tree). Bounded: the
 * first ORIGIN_ARGS arguments, ORIGIN_DIR_MAX entries per directory, files
 * up to ORIGIN_FILE_MAX bytes, with each directory listing and file hash
 * kept for the other loads and processes of the report. */
#define ORIGIN_ARGS 32
#define ORIGIN_DIR_MAX 4096
#define ORIGIN_FILE_MAX (64u << 20)
#define ORIGIN_DIRS 32
#define ORIGIN_HASHES 256

struct dir_ent {
    char *name;
    uint64_t size;
};

static struct dir_memo {
    char *dir;
    struct dir_ent *v;
    size_t n;
} dmemo[ORIGIN_DIRS];
static size_t n_dmemo;

static struct hash_memo {
    char *path;
    uint64_t size, h, h_nul; /* the bytes' hash, and with a NUL after them */
    int ok;
} hmemo[ORIGIN_HASHES];
static size_t n_hmemo;

static const struct dir_memo *dir_listing(const char *dir)
{
    for (size_t i = 0; i < n_dmemo; i++)
        if (!strcmp(dmemo[i].dir, dir))
            return &dmemo[i];
    if (n_dmemo == ORIGIN_DIRS)
        return NULL;
    struct dir_memo *m = &dmemo[n_dmemo];
    DIR *d = opendir(dir);
    m->dir = jst_xstrdup(dir);
    n_dmemo++;
    if (!d)
        return m;
    struct dirent *e;
    size_t cap = 0;
    while ((e = readdir(d)) && m->n < ORIGIN_DIR_MAX) {
        char path[4096];
        struct stat st;
        int w = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] == '.' || w < 0 || (size_t)w >= sizeof path || stat(path, &st) != 0 ||
            !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > ORIGIN_FILE_MAX)
            continue;
        if (m->n == cap) {
            cap = cap ? cap * 2 : 16;
            m->v = jst_xreallocarray(m->v, cap, sizeof *m->v);
        }
        m->v[m->n++] = (struct dir_ent){jst_xstrdup(e->d_name), (uint64_t)st.st_size};
    }
    closedir(d);
    return m;
}

/* The hashes of a file's bytes (once per path, while the memo has room)
 * into *out: 1, or 0 when it cannot be read. */
static int file_hash(const char *path, uint64_t size, struct hash_memo *out)
{
    for (size_t i = 0; i < n_hmemo; i++)
        if (hmemo[i].size == size && !strcmp(hmemo[i].path, path)) {
            *out = hmemo[i];
            return hmemo[i].ok;
        }
    struct hash_memo m = {NULL, size, 0, 0, 0};
    FILE *f = size <= ORIGIN_FILE_MAX ? jst_fopen_regular(path) : NULL;
    uint8_t *buf = f ? malloc((size_t)size + 1) : NULL;
    if (buf && fread(buf, 1, (size_t)size, f) == size && fgetc(f) == EOF) {
        buf[size] = 0;
        m.h = jst_hash64(buf, (size_t)size);
        m.h_nul = jst_hash64(buf, (size_t)size + 1);
        m.ok = 1;
    }
    free(buf);
    if (f)
        fclose(f);
    if (n_hmemo < ORIGIN_HASHES) {
        m.path = jst_xstrdup(path);
        hmemo[n_hmemo++] = m;
    }
    *out = m;
    return m.ok;
}

/* Does the file at path (of size bytes) hold c's image? */
static int holds_image(const char *path, uint64_t size, const struct jst_call_ev *c)
{
    if (size != c->image_size && size + 1 != c->image_size)
        return 0;
    struct hash_memo m;
    if (!file_hash(path, size, &m))
        return 0;
    return size == c->image_size ? m.h == c->image_hash : m.h_nul == c->image_hash;
}

/* path made absolute against dir (the process's working directory), into
 * buf; "" when it cannot be. */
static void abs_path(const char *dir, const char *path, char *buf, size_t n)
{
    buf[0] = '\0';
    if (path[0] == '/')
        jst_sfmt(buf, n, "%s", path);
    else if (dir && dir[0] == '/')
        jst_sfmt(buf, n, "%s/%s", dir, path);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Looks for c's image in dir's files: the path into out (1), or 0. */
static int find_in_dir(const char *dir, const struct jst_call_ev *c, char *out, size_t n)
{
    const struct dir_memo *m = dir[0] ? dir_listing(dir) : NULL;
    for (size_t i = 0; m && i < m->n; i++) {
        char path[4096];
        int w = snprintf(path, sizeof path, "%s/%s", dir, m->v[i].name);
        if (w > 0 && (size_t)w < sizeof path && holds_image(path, m->v[i].size, c)) {
            jst_sfmt(out, n, "%s", path);
            return 1;
        }
    }
    return 0;
}

static int find_file(const struct jst_process *p, const struct jst_call_ev *c, char *out, size_t n)
{
    char path[4096], dir[4096];
    struct stat st;
    /* an argument that is the file, named as the program was given it */
    for (size_t i = 1; i < p->argc && i <= ORIGIN_ARGS; i++) {
        abs_path(p->cwd, p->argv[i], path, sizeof path);
        if (path[0] && stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
            holds_image(path, (uint64_t)st.st_size, c)) {
            jst_sfmt(out, n, "%s", p->argv[i]);
            return 1;
        }
    }
    /* the directories the trace points at */
    if (p->cwd && p->cwd[0] == '/' && find_in_dir(p->cwd, c, out, n))
        return 1;
    for (size_t i = 1; i < p->argc && i <= ORIGIN_ARGS; i++) {
        abs_path(p->cwd, p->argv[i], path, sizeof path);
        if (!path[0])
            continue;
        if (is_dir(path)) {
            if (find_in_dir(path, c, out, n))
                return 1;
            continue;
        }
        jst_sfmt(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = '\0';
            if ((!p->cwd || strcmp(dir, p->cwd)) && is_dir(dir) && find_in_dir(dir, c, out, n))
                return 1;
        }
    }
    struct jst_origin o;
    jst_origin_of(p, c, &o);
    if (o.py_file[0] == '/') {
        jst_sfmt(dir, sizeof dir, "%s", o.py_file);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = '\0';
            if (find_in_dir(dir, c, out, n))
                return 1;
        }
    }
    return 0;
}

/* The name of the NVRTC program whose PTX c loads (the earliest compile
 * that made these bytes before it), or NULL. */
static const char *rtc_program_of(const struct jst_process *p, const struct jst_call_ev *c)
{
    const struct jst_origin_ix *x = origin_ix(p);
    size_t lo = 0, hi = x->n_rtc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->rtc[mid].hash < c->image_hash)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < x->n_rtc && x->rtc[lo].hash == c->image_hash && x->rtc[lo].seq < c->seq; lo++)
        if (x->rtc[lo].program && *x->rtc[lo].program)
            return x->rtc[lo].program;
    return NULL;
}

void jst_origin_name_files(struct jst_process *p)
{
    const char *last = NULL;
    uint64_t last_hash = 0, last_size = 0;
    for (size_t i = 0; i < p->n_calls; i++) {
        struct jst_call_ev *c = &p->calls[i];
        if (c->read_from || !c->image_hash || !c->image_size || (c->source && *c->source) ||
            (c->path && *c->path) || !jst_model_is_module(p, c) || jst_is_rtc_call(c->call))
            continue;
        if (c->image_hash == last_hash && c->image_size == last_size) {
            c->read_from = last; /* the same image loaded again */
            c->rtc_made = last ? NULL : rtc_program_of(p, c);
            continue;
        }
        char found[4096];
        last_hash = c->image_hash;
        last_size = c->image_size;
        last = NULL;
        if (find_file(p, c, found, sizeof found) &&
            (p->strs || (p->strs = calloc(1, sizeof *p->strs))))
            last = jst_strtab_intern(p->strs, found, strlen(found));
        c->read_from = last;
        /* no file holds it: the NVRTC program that made it, by its name */
        if (!last)
            c->rtc_made = rtc_program_of(p, c);
    }
}
