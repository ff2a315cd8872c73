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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "curesult.h"
#include "utf8.h"
#include "bundle.h"
#include "cli.h"
#include "image.h"
#include "imgwalk.h"
#include "jitcache.h"
#include "jsonw.h"
#include "trace.h"
#include "warm.h"
#include "warmfile.h"

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
        s = jst_curesult_name(rc);
    if (!s)
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
    if (jst_verdict_runs(d.verdict))
        w->file_runs++;
    if (d.verdict == JST_V_SASS || d.verdict == JST_V_NONE) {
        w->sass++;
        return;
    }
    /* Decided when the file is done: scan's rule (jst_image_for_other_gpus). */
    if (d.verdict == JST_V_NO_COMPATIBLE && jst_image_for_other_gpus(img, w->cc)) {
        w->file_others++;
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
    struct warm *w = ctx;
    /* An image with nothing for this GPU is a variant never loaded here when the file has code
     * for this GPU; in a file with nothing for it, it cannot run. */
    *(w->file_runs ? &w->other_gpus : &w->cannot_run) += w->file_others;
    w->file_runs = w->file_others = 0;
    (void)path;
    (void)explicit_path;
    (void)n_images;
}

/* ---- loading ---- */

static void progress(const struct warm *w, size_t i, size_t done, size_t pending)
{
    const struct warm_img *m = &w->v[i];
    const char *base = strrchr(m->path, '/');
    fprintf(stderr, "\r\033[Kjitstall warm: [%zu/%zu] %s @0x%zx: %zu kernel%s from %s...", done + 1,
            pending, jst_text(base ? base + 1 : m->path), m->off, m->kernels,
            m->kernels == 1 ? "" : "s", jst_text(m->jit_from));
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
    size_t pending = 0, done = 0;
    for (size_t i = 0; i < w->n; i++)
        pending += w->v[i].status == WS_PENDING;
    if (!pending)
        return 0;
    void *ctx = NULL;
    int dev = 0, rc;
    if ((rc = w->d.get(&dev, w->ordinal)) != 0 || (rc = w->d.retain(&ctx, dev)) != 0 ||
        (rc = w->d.setcur(ctx)) != 0) {
        jst_errorf(cmd, "cannot make a context on GPU %d: %s", w->ordinal, err_name(w, rc));
        return -1;
    }
    for (size_t i = 0; i < w->n; i++) {
        if (w->v[i].status != WS_PENDING)
            continue;
        if (w->progress)
            progress(w, i, done, pending);
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
        if (w->v[i].status == WS_PENDING) {
            w->v[i].status = WS_NOT_STORED;
            snprintf(w->v[i].why, sizeof(w->v[i].why), "%s", why);
        }
}

/* ---- command ---- */

static const char usage_text[] =
    "usage: jitstall warm [--cache DIR] [--device N] [--allow-empty] [--json] PATH...\n\n"
    "Fill a JIT cache through this machine's driver and GPU, so that a program's\n"
    "first start is a cache hit: every image in PATH (ELF executable or library,\n"
    "directory walked recursively, .fatbin, .cubin or .ptx file, PTX text in an\n"
    "object's data) that the driver would JIT-compile on the GPU is loaded once\n"
    "with cuModuleLoadData, then unloaded. The program itself is never run.\n\n"
    "  --cache DIR   the cache to fill (default: the program's own, CUDA_CACHE_PATH\n"
    "                or ~/.nv/ComputeCache; CUDA_CACHE_MAXSIZE is respected)\n"
    "  --device N    the GPU to warm for (default 0)\n"
    "  --allow-empty finding no CUDA code in any PATH is no failure\n"
    "  --json        one JSON object on stdout\n"
    "  --run --bundle DIR, --check DIR  every cache in one bundle, filled by\n"
    "                running a program, checked where it runs: see\n"
    "                'jitstall warm --run --help'\n"
    "  -h, --help    show this help\n\n"
    "Exit status: 0 when every image that needs the JIT is in the cache; 1 when one\n"
    "could not be warmed (load failed, cache disabled, full or read-only), or when\n"
    "no PATH held CUDA code (unless --allow-empty); 2 on a usage error, when a PATH\n"
    "could not be read, or without a driver or GPU.\n";

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
    struct warm_sum s = warm_summarize(w);
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
    size_t files = w->walk.files;
    jst_walk_free(&w->walk);
    if (readable < npaths)
        return JST_EXIT_USAGE;
    /* Warming nothing must not pass for a warmed cache: a wrong path, or
     * files with no CUDA code at all. */
    if (!w->n && !w->sass && !w->empty && !w->cannot_run && !w->damaged && !w->other_gpus) {
        if (!w->allow_empty) {
            jst_errorf(cmd,
                       "no CUDA code in any PATH (%zu file%s read): nothing to warm; "
                       "--allow-empty accepts that",
                       files, files == 1 ? "" : "s");
            return JST_EXIT_FAIL;
        }
        jst_warnf(cmd, "no CUDA code in any PATH (%zu file%s read)", files, files == 1 ? "" : "s");
    }
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
        werr = warm_print_json(w) != 0;
    } else {
        warm_print_text(w);
        werr = fflush(stdout) != 0 || ferror(stdout);
    }
    if (werr) {
        jst_errorf(cmd, "write error on standard output");
        return JST_EXIT_USAGE;
    }
    return warm_summarize(w).bad || w->lost ? JST_EXIT_FAIL : JST_EXIT_OK;
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

struct warm_opts {
    struct warm *w;
    const char *cache;
};

static int warm_option(int c, const char *arg, void *ctx)
{
    struct warm_opts *o = ctx;
    if (c == 'c')
        o->cache = arg;
    else if (c == 'j')
        o->w->json = 1;
    else if (c == 'E')
        o->w->allow_empty = 1;
    else if (parse_ordinal(arg, &o->w->ordinal) != 0) { /* -d */
        jst_errorf(cmd, "bad --device '%s' (want a GPU ordinal: 0, 1, ...)", arg);
        return -1;
    }
    return 0;
}

static const struct option warm_longopts[] = {
    {"cache", required_argument, 0, 'c'},
    {"device", required_argument, 0, 'd'},
    {"json", no_argument, 0, 'j'},
    {"allow-empty", no_argument, 0, 'E'},
    JST_CLI_HELP_END,
};
static const struct jst_cli warm_cli = {
    "warm", "c:d:jh", warm_longopts, usage_text, "PATH", warm_option,
};

static int cmd_warm(int argc, char **argv)
{
    if (jst_bundle_wanted(argc, argv)) {
        for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
            if (!strcmp(argv[i], "--run"))
                return jst_bundle_run(argc, argv);
        return jst_bundle_check(argc, argv);
    }
    struct warm w;
    memset(&w, 0, sizeof(w));
    struct warm_opts o = {&w, NULL};
    int rc = jst_cli_parse(&warm_cli, argc, argv, &o);
    if (rc != JST_CLI_GO)
        return rc;
    const char *cache = o.cache;
    if (cache && (!*cache || setenv("CUDA_CACHE_PATH", cache, 1) != 0)) {
        jst_errorf(cmd, "bad --cache '%s'", cache);
        return JST_EXIT_USAGE;
    }
    if (jst_walk_check_paths(cmd, argc - optind, argv + optind))
        return JST_EXIT_USAGE;
    w.env_flags = jst_env_jit_flags();
    w.progress = jst_cli_smart_tty(STDERR_FILENO); /* \r and erase-line need a real terminal */
    rc = run_warm(&w, argc - optind, argv + optind);
    for (size_t i = 0; i < w.n; i++) {
        free(w.v[i].path);
        free(w.v[i].data);
    }
    free(w.v);
    return rc;
}

JST_COMMAND(warm, cmd_warm, "fill a JIT cache for this GPU from binaries, without running them")
