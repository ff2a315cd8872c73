/*
 * `jitstall warm`: fills a JIT cache through the real driver, so that a
 * program's first start on this GPU is a cache hit. Every image in PATH that
 * the driver would JIT-compile on the device (scan's rules) is loaded with
 * cuModuleLoadData in the device's primary context, with CUDA_CACHE_PATH set
 * before cuInit, then unloaded. The driver is found at run time
 * (dlopen("libcuda.so.1")); the program itself is never run. What the cache
 * gained is measured from outside (common/jitcache.c), and the cache is
 * labelled with what it was warmed for (analyzer/warmfile.c).
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "image.h"
#include "imgwalk.h"
#include "jitcache.h"
#include "jsonw.h"
#include "trace.h"
#include "warmfile.h"

/* What became of one image that needs the JIT. */
enum warm_status { WS_TODO, WS_WARMED, WS_CACHED, WS_DUP, WS_FAILED, WS_NOT_STORED, WS_SKIPPED };

struct warm_img {
    char *path;
    size_t off;
    int text;      /* PTX text in an ELF object's data */
    uint8_t *data; /* a NUL-terminated copy of the image, as loaded */
    size_t size;
    uint64_t hash;
    size_t kernels;
    uint64_t ptx_size;
    char jit_from[16];
    unsigned status; /* enum warm_status */
    int result;      /* CUresult of the load */
    uint64_t dur_ns, new_entries, new_bytes;
    char why[200]; /* for failed, not stored, skipped */
};

typedef int (*cu_init_t)(unsigned);
typedef int (*cu_int_t)(int *);
typedef int (*cu_dev_get_t)(int *, int);
typedef int (*cu_attr_t)(int *, int, int);
typedef int (*cu_name_t)(char *, int, int);
typedef int (*cu_retain_t)(void **, int);
typedef int (*cu_release_t)(int);
typedef int (*cu_setcur_t)(void *);
typedef int (*cu_load_t)(void **, const void *);
typedef int (*cu_unload_t)(void *);
typedef int (*cu_errname_t)(int, const char **);

struct warm_drv {
    void *h;
    cu_init_t init;
    cu_int_t count, version;
    cu_dev_get_t get;
    cu_attr_t attr;
    cu_name_t name;
    cu_retain_t retain;
    cu_release_t release;
    cu_setcur_t setcur;
    cu_load_t load;
    cu_unload_t unload;
    cu_errname_t errname;
};

struct warm {
    int json, progress, env_flags, ordinal;
    unsigned cc;
    struct warm_drv d;
    struct jst_warm_for target;
    struct jst_walk walk;
    struct warm_img *v;
    size_t n, cap;
    size_t sass, empty, cannot_run, damaged; /* images with nothing to warm */
    size_t lost;                             /* images dropped: out of memory */
    uint64_t need_bytes;                     /* estimated cache bytes for the set */
    struct jst_cache_snap before, after;
    uint64_t total_ns;
};

static const char *cmd = "warm";

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the driver ---- */

static const char *err_name(const struct warm *w, int rc)
{
    const char *s = NULL;
    if (!w->d.errname || w->d.errname(rc, &s) != 0 || !s)
        return "CUDA error";
    return s;
}

/* dlopen's the driver and finds what warm calls. 0, or -1 after one message. */
static int drv_open(struct warm_drv *d)
{
    d->h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d->h) {
        jst_errorf(cmd, "no NVIDIA driver (libcuda.so.1: %s): warm needs the GPU it warms for",
                   dlerror());
        return -1;
    }
    d->init = (cu_init_t)dlsym(d->h, "cuInit");
    d->count = (cu_int_t)dlsym(d->h, "cuDeviceGetCount");
    d->version = (cu_int_t)dlsym(d->h, "cuDriverGetVersion");
    d->get = (cu_dev_get_t)dlsym(d->h, "cuDeviceGet");
    d->attr = (cu_attr_t)dlsym(d->h, "cuDeviceGetAttribute");
    d->name = (cu_name_t)dlsym(d->h, "cuDeviceGetName");
    d->retain = (cu_retain_t)dlsym(d->h, "cuDevicePrimaryCtxRetain");
    d->release = (cu_release_t)dlsym(d->h, "cuDevicePrimaryCtxRelease_v2");
    if (!d->release)
        d->release = (cu_release_t)dlsym(d->h, "cuDevicePrimaryCtxRelease");
    d->setcur = (cu_setcur_t)dlsym(d->h, "cuCtxSetCurrent");
    d->load = (cu_load_t)dlsym(d->h, "cuModuleLoadData");
    d->unload = (cu_unload_t)dlsym(d->h, "cuModuleUnload");
    d->errname = (cu_errname_t)dlsym(d->h, "cuGetErrorName");
    if (!d->init || !d->count || !d->version || !d->get || !d->attr || !d->name || !d->retain ||
        !d->release || !d->setcur || !d->load || !d->unload) {
        jst_errorf(cmd, "libcuda.so.1 lacks the calls warm needs (cuModuleLoadData, ...)");
        return -1;
    }
    return 0;
}

/* cuInit and the device: its compute capability, name and driver. */
static int drv_device(struct warm *w)
{
    struct warm_drv *d = &w->d;
    int rc, n = 0, dev = 0, major = 0, minor = 0, ver = 0;
    if ((rc = d->init(0)) != 0 || (rc = d->count(&n)) != 0 || n == 0) {
        jst_errorf(cmd, "the driver found no usable GPU (%s)", rc ? err_name(w, rc) : "0 devices");
        return -1;
    }
    if (w->ordinal >= n) {
        jst_errorf(cmd, "--device %d: there %s %d GPU%s", w->ordinal, n == 1 ? "is" : "are", n,
                   n == 1 ? "" : "s");
        return -1;
    }
    /* 75, 76: CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR */
    if ((rc = d->get(&dev, w->ordinal)) != 0 || (rc = d->attr(&major, 75, dev)) != 0 ||
        (rc = d->attr(&minor, 76, dev)) != 0 ||
        (rc = d->name(w->target.gpu, (int)sizeof(w->target.gpu), dev)) != 0 ||
        (rc = d->version(&ver)) != 0) {
        jst_errorf(cmd, "cannot query GPU %d: %s", w->ordinal, err_name(w, rc));
        return -1;
    }
    w->cc = (unsigned)(major * 10 + minor);
    w->target.cc = w->cc;
    w->target.driver_version = (uint64_t)ver;
    jst_driver_release(w->target.driver, sizeof(w->target.driver));
    return 0;
}

/* ---- collecting the images ---- */

static struct warm_img *add_img(struct warm *w, const char *path, size_t off, int text)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        struct warm_img *v = realloc(w->v, cap * sizeof(*v));
        if (!v)
            return NULL;
        w->v = v;
        w->cap = cap;
    }
    struct warm_img *m = &w->v[w->n];
    memset(m, 0, sizeof(*m));
    m->path = strdup(path);
    if (!m->path)
        return NULL;
    m->off = off;
    m->text = text;
    w->n++;
    return m;
}

/* Entry size the driver will store: 1.55-1.59 times the PTX (docs/DRIVER.md). */
static uint64_t est_entry(uint64_t ptx)
{
    uint64_t e = ptx / 5 * 8;
    return e < 16384 ? 16384 : e;
}

/* Keeps a copy of an image the driver would JIT, or counts why not. */
static void warm_image(void *ctx, const char *path, size_t off, const struct jst_image *img,
                       int text)
{
    struct warm *w = ctx;
    struct jst_decision d;
    jst_image_decide(img, w->cc, w->env_flags, &d);
    if (d.verdict == JST_V_SASS || d.verdict == JST_V_NONE) {
        w->sass++;
        return;
    }
    if (d.verdict == JST_V_DAMAGED || d.verdict == JST_V_NO_COMPATIBLE) {
        *(d.verdict == JST_V_DAMAGED ? &w->damaged : &w->cannot_run) += 1;
        return;
    }
    const struct jst_entry *e = d.ptx_index >= 0 ? &img->entries[d.ptx_index] : NULL;
    int nk = e ? jst_entry_kernels(e, NULL, NULL) : 0;
    if (e && nk == 0) {
        w->empty++; /* no kernel is ever launched from it: nothing to warm */
        return;
    }
    struct warm_img *m = add_img(w, path, off, text);
    if (!m) {
        if (!w->lost++)
            jst_errorf(cmd, "out of memory listing the images of %s", path);
        return;
    }
    m->kernels = nk > 0 ? (size_t)nk : 0;
    m->ptx_size = e ? e->raw_size : 0;
    snprintf(m->jit_from, sizeof(m->jit_from), "%s", d.jit_from);
    if (d.verdict == JST_V_JIT_DISABLED) {
        m->status = WS_SKIPPED;
        snprintf(m->why, sizeof(m->why), "%s", d.reason);
        return;
    }
    m->data = malloc(img->size + 1);
    if (!m->data) {
        m->status = WS_FAILED;
        snprintf(m->why, sizeof(m->why), "out of memory copying %zu bytes", img->size);
        return;
    }
    memcpy(m->data, img->base, img->size);
    m->data[img->size] = 0; /* PTX text is loaded up to its NUL */
    m->size = img->size;
    m->hash = jst_hash64(m->data, m->size);
    for (size_t i = 0; i + 1 < w->n; i++)
        if (w->v[i].data && w->v[i].hash == m->hash && w->v[i].size == m->size &&
            !memcmp(w->v[i].data, m->data, m->size)) {
            m->status = WS_DUP;
            free(m->data);
            m->data = NULL;
            return;
        }
    w->need_bytes += est_entry(m->ptx_size);
}

static void warm_file_done(void *ctx, const char *path, int explicit_path, size_t n_images)
{
    (void)ctx;
    (void)path;
    (void)explicit_path;
    (void)n_images;
}

/* ---- loading ---- */

static void progress(const struct warm *w, size_t i, size_t done, size_t todo)
{
    const struct warm_img *m = &w->v[i];
    const char *base = strrchr(m->path, '/');
    fprintf(stderr, "\r\033[Kjitstall warm: [%zu/%zu] %s @0x%zx: %zu kernel%s from %s...", done + 1,
            todo, base ? base + 1 : m->path, m->off, m->kernels, m->kernels == 1 ? "" : "s",
            m->jit_from);
    fflush(stderr);
}

/* A load that changed nothing in the cache but was too slow for the hit
 * bound (a busy machine): warm is the only writer here and the driver stores
 * whatever it compiles when it can, so with entries already there and room
 * for this one (1.6 times its PTX, above the 1.5 the bound assumes) it was a
 * hit; without room it was not stored. */
static unsigned settle(const struct jst_cache_snap *b, const struct jst_cache_snap *a, uint64_t ptx,
                       unsigned *reason)
{
    if (a->max_bytes < est_entry(ptx)) {
        *reason = JST_CR_TOO_SMALL;
        return JST_C_MISS_NOT_STORED;
    }
    return a->exists && (b->entries > 0 || b->index_size > 16) ? JST_C_HIT : JST_C_UNKNOWN;
}

/* Loads one image and judges from the cache directory what the load did. */
static void load_one(struct warm *w, struct warm_img *m)
{
    struct jst_cache_snap b, a;
    void *mod = NULL;
    jst_cache_snapshot_before(&b);
    uint64_t t0 = now_ns();
    int rc = w->d.load(&mod, m->data);
    m->dur_ns = now_ns() - t0;
    m->result = rc;
    if (rc != 0) {
        m->status = WS_FAILED;
        snprintf(m->why, sizeof(m->why), "cuModuleLoadData failed: %s (%d)", err_name(w, rc), rc);
        return;
    }
    w->d.unload(mod);
    jst_cache_snapshot_after(&b, &a);
    unsigned reason = 0;
    unsigned out = jst_cache_outcome(&b, &a, m->dur_ns, m->ptx_size, &reason);
    m->new_entries = a.new_entries;
    m->new_bytes = a.new_bytes;
    if (out == JST_C_UNKNOWN)
        out = settle(&b, &a, m->ptx_size, &reason);
    if (out == JST_C_HIT) {
        m->status = WS_CACHED;
    } else if (out == JST_C_MISS_STORED) {
        m->status = WS_WARMED;
    } else {
        m->status = WS_NOT_STORED;
        snprintf(m->why, sizeof(m->why), "compiled, but the driver stored nothing (%s)",
                 reason ? jst_cache_reason_name(reason) : "cause unknown");
    }
}

/* Loads every image that needs it in the device's primary context. */
static int load_all(struct warm *w)
{
    size_t todo = 0, done = 0;
    for (size_t i = 0; i < w->n; i++)
        todo += w->v[i].status == WS_TODO;
    if (!todo)
        return 0;
    void *ctx = NULL;
    int dev = 0, rc;
    if ((rc = w->d.get(&dev, w->ordinal)) != 0 || (rc = w->d.retain(&ctx, dev)) != 0 ||
        (rc = w->d.setcur(ctx)) != 0) {
        jst_errorf(cmd, "cannot make a context on GPU %d: %s", w->ordinal, err_name(w, rc));
        return -1;
    }
    for (size_t i = 0; i < w->n; i++) {
        if (w->v[i].status != WS_TODO)
            continue;
        if (w->progress)
            progress(w, i, done, todo);
        load_one(w, &w->v[i]);
        done++;
    }
    if (w->progress)
        fprintf(stderr, "\r\033[K");
    w->d.setcur(NULL);
    w->d.release(dev);
    return 0;
}

/* Images the driver cannot store at all: every one, with the reason. */
static void skip_all(struct warm *w, const char *why)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->v[i].status == WS_TODO) {
            w->v[i].status = WS_NOT_STORED;
            snprintf(w->v[i].why, sizeof(w->v[i].why), "%s", why);
        }
}

/* ---- output ---- */

static const char *status_name(unsigned s)
{
    static const char *const names[] = {"todo",   "warmed",     "cached", "duplicate",
                                        "failed", "not_stored", "skipped"};
    return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

static void human(char *buf, size_t n, uint64_t v)
{
    if (v >= (1ull << 30))
        snprintf(buf, n, "%.1f GiB", (double)v / (double)(1ull << 30));
    else if (v >= (1ull << 20))
        snprintf(buf, n, "%.1f MiB", (double)v / (double)(1ull << 20));
    else if (v >= 1024)
        snprintf(buf, n, "%.1f KiB", (double)v / 1024.0);
    else
        snprintf(buf, n, "%" PRIu64 " bytes", v);
}

/* CUDA_CACHE_MAXSIZE that holds the set, rounded up to MiB; 0 if it fits. */
static uint64_t maxsize_needed(const struct warm *w)
{
    uint64_t need = (w->need_bytes + (1ull << 20) - 1) & ~((1ull << 20) - 1);
    return need > w->before.max_bytes ? need : 0;
}

struct warm_sum {
    size_t warmed, cached, bad, dup, kernels;
};

static struct warm_sum summarize(const struct warm *w)
{
    struct warm_sum s = {0};
    for (size_t i = 0; i < w->n; i++) {
        const struct warm_img *m = &w->v[i];
        s.warmed += m->status == WS_WARMED;
        s.cached += m->status == WS_CACHED;
        s.dup += m->status == WS_DUP;
        s.bad += m->status == WS_FAILED || m->status == WS_NOT_STORED || m->status == WS_SKIPPED;
        if (m->status == WS_WARMED || m->status == WS_CACHED)
            s.kernels += m->kernels;
    }
    return s;
}

static void print_img(const struct warm_img *m)
{
    char b[32];
    printf("  %-10s %s @0x%zx [%s%s]: %zu kernel%s", status_name(m->status), m->path, m->off,
           m->jit_from[0] ? m->jit_from : "?", m->text ? ", PTX text in data" : "", m->kernels,
           m->kernels == 1 ? "" : "s");
    if (m->status == WS_WARMED) {
        human(b, sizeof(b), m->new_bytes);
        printf(", compiled in %.2f s, +%" PRIu64 " entr%s (%s)\n", (double)m->dur_ns / 1e9,
               m->new_entries, m->new_entries == 1 ? "y" : "ies", b);
    } else if (m->status == WS_CACHED) {
        printf(", already in the cache (loaded in %.1f ms)\n", (double)m->dur_ns / 1e6);
    } else if (m->status == WS_DUP) {
        printf(", same image as one above\n");
    } else {
        printf(": %s\n", m->why);
    }
}

static void print_text(const struct warm *w)
{
    char mx[32], add[32], tot[32];
    const struct jst_warm_for *t = &w->target;
    printf("cache %s (CUDA_CACHE_MAXSIZE %" PRIu64 ")\n", w->before.path, w->before.max_bytes);
    printf("GPU %d: %s (sm_%u), driver %s%sCUDA %" PRIu64 ".%" PRIu64 "%s\n", w->ordinal, t->gpu,
           w->cc, t->driver, t->driver[0] ? " (" : "", t->driver_version / 1000,
           t->driver_version % 1000 / 10, t->driver[0] ? ")" : "");
    for (size_t i = 0; i < w->n; i++)
        print_img(&w->v[i]);
    struct warm_sum s = summarize(w);
    uint64_t need = maxsize_needed(w);
    if (need) {
        human(mx, sizeof(mx), w->before.max_bytes);
        human(add, sizeof(add), w->need_bytes);
        printf("cache too small: the set needs about %s, CUDA_CACHE_MAXSIZE is %s: set "
               "CUDA_CACHE_MAXSIZE=%" PRIu64 " when warming and when running%s\n",
               add, mx, need,
               need > JST_CACHE_LIMIT_MAX ? " (above the 4 GiB limit: ship SASS)" : "");
    }
    uint64_t de = w->after.entries > w->before.entries ? w->after.entries - w->before.entries : 0;
    uint64_t db =
        w->after.size_bytes > w->before.size_bytes ? w->after.size_bytes - w->before.size_bytes : 0;
    human(add, sizeof(add), db);
    human(tot, sizeof(tot), w->after.size_bytes);
    printf("summary for sm_%u: %zu image%s need%s the JIT: %zu warmed, %zu already cached, %zu "
           "not warmed (%zu kernel%s ready); %.2f s; cache +%" PRIu64 " entr%s, +%s (now %" PRIu64
           " entr%s, %s); %zu SASS, %zu empty, %zu cannot run, %zu damaged\n",
           w->cc, w->n - s.dup, w->n - s.dup == 1 ? "" : "s", w->n - s.dup == 1 ? "s" : "",
           s.warmed, s.cached, s.bad, s.kernels, s.kernels == 1 ? "" : "s",
           (double)w->total_ns / 1e9, de, de == 1 ? "y" : "ies", add, w->after.entries,
           w->after.entries == 1 ? "y" : "ies", tot, w->sass, w->empty, w->cannot_run, w->damaged);
}

static void json_img(struct jst_json *j, const struct warm_img *m)
{
    jst_json_obj(j);
    jst_json_kstr(j, "path", m->path);
    jst_json_ku64(j, "offset", m->off);
    jst_json_kstr(j, "origin", m->text ? "data" : "image");
    jst_json_kstr(j, "jit_from", m->jit_from[0] ? m->jit_from : NULL);
    jst_json_ku64(j, "kernels", m->kernels);
    jst_json_ku64(j, "ptx_size", m->ptx_size);
    jst_json_kstr(j, "status", status_name(m->status));
    jst_json_kstr(j, "reason", m->why[0] ? m->why : NULL);
    jst_json_kdouble(j, "load_ms", (double)m->dur_ns / 1e6);
    jst_json_ku64(j, "entries_added", m->new_entries);
    jst_json_ku64(j, "bytes_added", m->new_bytes);
    jst_json_end(j);
}

static int print_json(const struct warm *w)
{
    struct jst_json j;
    struct warm_sum s = summarize(w);
    jst_json_init(&j, stdout, 1);
    jst_json_obj(&j);
    jst_json_key(&j, "cache");
    jst_json_obj(&j);
    jst_json_kstr(&j, "path", w->before.path);
    jst_json_ku64(&j, "max_bytes", w->before.max_bytes);
    jst_json_ku64(&j, "entries_before", w->before.entries);
    jst_json_ku64(&j, "bytes_before", w->before.size_bytes);
    jst_json_ku64(&j, "entries_after", w->after.entries);
    jst_json_ku64(&j, "bytes_after", w->after.size_bytes);
    uint64_t need = maxsize_needed(w);
    if (need)
        jst_json_ku64(&j, "maxsize_needed", need);
    else
        jst_json_knull(&j, "maxsize_needed");
    jst_json_end(&j);
    jst_json_key(&j, "device");
    jst_json_obj(&j);
    jst_json_ku64(&j, "ordinal", (uint64_t)w->ordinal);
    jst_json_kstr(&j, "name", w->target.gpu);
    jst_json_ku64(&j, "cc", w->cc);
    jst_json_ku64(&j, "driver_version", w->target.driver_version);
    jst_json_kstr(&j, "driver", w->target.driver[0] ? w->target.driver : NULL);
    jst_json_end(&j);
    jst_json_key(&j, "images");
    jst_json_arr(&j);
    for (size_t i = 0; i < w->n; i++)
        json_img(&j, &w->v[i]);
    jst_json_end(&j);
    jst_json_key(&j, "summary");
    jst_json_obj(&j);
    jst_json_ku64(&j, "need_jit", w->n - s.dup);
    jst_json_ku64(&j, "warmed", s.warmed);
    jst_json_ku64(&j, "cached", s.cached);
    jst_json_ku64(&j, "not_warmed", s.bad);
    jst_json_ku64(&j, "kernels", s.kernels);
    jst_json_kdouble(&j, "seconds", (double)w->total_ns / 1e9);
    jst_json_ku64(&j, "sass", w->sass);
    jst_json_ku64(&j, "empty", w->empty);
    jst_json_ku64(&j, "cannot_run", w->cannot_run);
    jst_json_ku64(&j, "damaged", w->damaged);
    jst_json_end(&j);
    jst_json_end(&j);
    return jst_json_finish(&j);
}

/* ---- command ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: jitstall warm [--cache DIR] [--device N] [--json] PATH...\n\n"
               "Fill a JIT cache through this machine's driver and GPU, so that a program's\n"
               "first start is a cache hit: every image in PATH (ELF executable or library,\n"
               "directory walked recursively, .fatbin, .cubin or .ptx file, PTX text in an\n"
               "object's data) that the driver would JIT-compile on the GPU is loaded once\n"
               "with cuModuleLoadData, then unloaded. The program itself is never run.\n\n"
               "  --cache DIR   the cache to fill (default: the program's own, CUDA_CACHE_PATH\n"
               "                or ~/.nv/ComputeCache; CUDA_CACHE_MAXSIZE is respected)\n"
               "  --device N    the GPU to warm for (default 0)\n"
               "  --json        one JSON object on stdout\n"
               "  -h, --help    show this help\n\n"
               "Exit status: 0 when every image that needs the JIT is in the cache; 1 when one\n"
               "could not be warmed (load failed, cache disabled, full or read-only); 2 on a\n"
               "usage error, when no PATH could be read, or without a driver or GPU.\n");
}

/* mkdir -p: the driver creates the cache directory too; doing it first lets
 * the label file be written even when nothing needed the JIT. */
static void make_dirs(const char *path)
{
    char buf[4096];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
        return;
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            mkdir(buf, 0755);
            *p = '/';
        }
    mkdir(buf, 0755);
}

static void label_cache(struct warm *w)
{
    struct warm_sum s = summarize(w);
    if (!s.warmed && !s.cached)
        return;
    w->target.images = s.warmed + s.cached;
    w->target.kernels = s.kernels;
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(w->target.when, sizeof(w->target.when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (jst_warmfile_record(w->before.path, &w->target) != 0)
        jst_warnf(cmd, "cannot write %s/%s: %s", w->before.path, JST_WARM_FILE, strerror(errno));
}

static int run_warm(struct warm *w, int npaths, char **paths)
{
    jst_cache_snapshot(&w->before, 1);
    if (!w->before.path[0]) {
        jst_errorf(cmd,
                   "no cache directory: neither CUDA_CACHE_PATH nor HOME is set (use --cache)");
        return JST_EXIT_USAGE;
    }
    if (drv_open(&w->d) != 0 || drv_device(w) != 0)
        return JST_EXIT_USAGE;
    w->walk =
        (struct jst_walk){.cmd = cmd, .ctx = w, .image = warm_image, .file_done = warm_file_done};
    int readable = 0;
    for (int i = 0; i < npaths; i++)
        readable += jst_walk_path(&w->walk, paths[i]) == 0;
    jst_walk_free(&w->walk);
    if (!readable)
        return JST_EXIT_USAGE;
    uint64_t t0 = now_ns();
    if (w->before.disabled) {
        skip_all(w, "CUDA_CACHE_DISABLE is set: the driver stores nothing (unset it when warming "
                    "and when running)");
    } else {
        make_dirs(w->before.path);
        if (load_all(w) != 0)
            return JST_EXIT_USAGE;
    }
    w->total_ns = now_ns() - t0;
    jst_cache_snapshot(&w->after, 1);
    label_cache(w);
    int werr;
    if (w->json) {
        werr = print_json(w) != 0;
    } else {
        print_text(w);
        werr = fflush(stdout) != 0 || ferror(stdout);
    }
    if (werr) {
        jst_errorf(cmd, "write error on standard output");
        return JST_EXIT_USAGE;
    }
    return summarize(w).bad || w->lost ? JST_EXIT_FAIL : JST_EXIT_OK;
}

static int parse_ordinal(const char *s, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 1023)
        return -1;
    *out = (int)v;
    return 0;
}

static int cmd_warm(int argc, char **argv)
{
    static const struct option opts[] = {
        {"cache", required_argument, 0, 'c'},
        {"device", required_argument, 0, 'd'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    struct warm w;
    memset(&w, 0, sizeof(w));
    const char *cache = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "c:d:jh", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            cache = optarg;
            break;
        case 'd':
            if (parse_ordinal(optarg, &w.ordinal) != 0) {
                jst_errorf(cmd, "bad --device '%s' (want a GPU ordinal: 0, 1, ...)", optarg);
                return JST_EXIT_USAGE;
            }
            break;
        case 'j':
            w.json = 1;
            break;
        case 'h':
            usage(stdout);
            return JST_EXIT_OK;
        default:
            return jst_bad_option(cmd, argv);
        }
    }
    if (optind >= argc) {
        jst_errorf(cmd, "no PATH given (see 'jitstall %s --help')", cmd);
        return JST_EXIT_USAGE;
    }
    if (cache && (!*cache || setenv("CUDA_CACHE_PATH", cache, 1) != 0)) {
        jst_errorf(cmd, "bad --cache '%s'", cache);
        return JST_EXIT_USAGE;
    }
    w.env_flags = jst_env_jit_flags();
    w.progress = isatty(STDERR_FILENO);
    int rc = run_warm(&w, argc - optind, argv + optind);
    for (size_t i = 0; i < w.n; i++) {
        free(w.v[i].path);
        free(w.v[i].data);
    }
    free(w.v);
    return rc;
}

JST_COMMAND(warm, cmd_warm, "fill a JIT cache for this GPU from binaries, without running them")
