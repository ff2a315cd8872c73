/*
 * `jitstall warm --check DIR`: before a program starts on a bundle, compares
 * DIR/jitstall-bundle.json with this machine and names each difference that
 * will make a cache miss: another driver (cuDriverGetVersion through
 * dlopen("libcuda.so.1"), no GPU work; the kernel module's release), another
 * GPU architecture (when a device is visible), another key-relevant setting,
 * and a cache variable that does not point at the bundle's cache. The
 * manifest is input from disk: its size is bounded and every field is checked
 * for its type.
 */
#include "bundle.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"
#include "jitcache.h"
#include "openreg.h"
#include "utf8.h"

static const char *cmd = "warm";

#define MANIFEST_MAX (1u << 20)

extern char **environ;

/* This machine, as far as libcuda tells without GPU work (the version) and
 * with cuInit (the architecture, when a device is visible). */
struct here {
    int have_driver, have_gpu;
    int version;
    unsigned cc;
    char name[128], release[32], why_no_gpu[128];
};

static void probe(struct here *h, int ordinal)
{
    memset(h, 0, sizeof(*h));
    jst_driver_release(h->release, sizeof(h->release));
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(h->why_no_gpu, sizeof(h->why_no_gpu), "no NVIDIA driver (libcuda.so.1)");
        return;
    }
    int (*version)(int *) = (int (*)(int *))dlsym(lib, "cuDriverGetVersion");
    if (version && version(&h->version) == 0)
        h->have_driver = 1;
    int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
    int (*count)(int *) = (int (*)(int *))dlsym(lib, "cuDeviceGetCount");
    int (*get)(int *, int) = (int (*)(int *, int))dlsym(lib, "cuDeviceGet");
    int (*attr)(int *, int, int) = (int (*)(int *, int, int))dlsym(lib, "cuDeviceGetAttribute");
    int (*name)(char *, int, int) = (int (*)(char *, int, int))dlsym(lib, "cuDeviceGetName");
    int n = 0, dev = 0, major = 0, minor = 0;
    if (!init || !count || !get || !attr || init(0) != 0 || count(&n) != 0 || n <= ordinal) {
        snprintf(h->why_no_gpu, sizeof(h->why_no_gpu), "no GPU %d visible", ordinal);
        return;
    }
    /* 75, 76: CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR */
    if (get(&dev, ordinal) != 0 || attr(&major, 75, dev) != 0 || attr(&minor, 76, dev) != 0) {
        snprintf(h->why_no_gpu, sizeof(h->why_no_gpu), "GPU %d cannot be queried", ordinal);
        return;
    }
    h->have_gpu = 1;
    h->cc = (unsigned)(major * 10 + minor);
    if (name)
        name(h->name, (int)sizeof(h->name), dev);
}

static json_t *load_manifest(const char *dir, char *err, size_t n)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, JST_BUNDLE_FILE);
    int fd = jst_open_regular(path);
    if (fd < 0) {
        snprintf(err, n, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = malloc(MANIFEST_MAX + 1);
    size_t got = 0;
    ssize_t r = 1;
    while (buf && got < MANIFEST_MAX && (r = read(fd, buf + got, MANIFEST_MAX - got)) > 0)
        got += (size_t)r;
    close(fd);
    if (!buf || r < 0 || got == MANIFEST_MAX) {
        free(buf);
        snprintf(err, n, "%s: %s", path,
                 !buf    ? "out of memory"
                 : r < 0 ? strerror(errno)
                         : "larger than 1 MiB");
        return NULL;
    }
    json_error_t je;
    json_t *doc = json_loadb(buf, got, JSON_REJECT_DUPLICATES, &je);
    free(buf);
    if (!doc || !json_is_object(doc) || !json_is_integer(json_object_get(doc, "jitstall_bundle"))) {
        snprintf(err, n, "%.4000s: not a jitstall bundle manifest%s%.100s", path, doc ? "" : ": ",
                 doc ? "" : je.text);
        json_decref(doc);
        return NULL;
    }
    if (json_integer_value(json_object_get(doc, "jitstall_bundle")) != 1) {
        snprintf(err, n,
                 "%s: manifest version %" JSON_INTEGER_FORMAT " is newer than this "
                 "jitstall reads (1)",
                 path, json_integer_value(json_object_get(doc, "jitstall_bundle")));
        json_decref(doc);
        return NULL;
    }
    return doc;
}

static uint64_t jint(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    return json_is_integer(v) && json_integer_value(v) >= 0 ? (uint64_t)json_integer_value(v) : 0;
}

static const char *jstr(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

/* What --check found, line by line: printed as it goes ("  miss: ..."), or,
 * with --json, kept in the object printed at the end (an array per kind). */
static json_t *json_out;

static void say(const char *kind, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const char *kind, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (!json_out) {
        printf("  %s: %s\n", kind, jst_text(buf));
        return;
    }
    const char *key = !strcmp(kind, "miss")   ? "differences"
                      : !strcmp(kind, "same") ? "same"
                                              : "notes";
    json_array_append_new(json_object_get(json_out, key), json_string(jst_text(buf)));
}

static size_t differ(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static size_t differ(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    say("miss", "%s", buf);
    return 1;
}

static size_t check_device(const json_t *dev, const struct here *h)
{
    size_t n = 0;
    if (!json_is_object(dev)) {
        say("note", "the manifest records no device (the runs made no CUDA call)");
        return 0;
    }
    uint64_t ver = jint(dev, "driver_version");
    const char *rel = jstr(dev, "driver_release");
    if (!h->have_driver)
        n += differ("the bundle was made on the CUDA %" PRIu64 ".%" PRIu64 " driver; this machine "
                    "has none (%s): the driver's cache cannot be used",
                    ver / 1000, ver % 1000 / 10, h->why_no_gpu);
    else if (ver && (uint64_t)h->version != ver)
        n += differ("driver: the bundle was made on the CUDA %" PRIu64 ".%" PRIu64
                    " driver (%" PRIu64
                    "); this machine's is CUDA %d.%d (%d): the driver's cache is keyed to the "
                    "driver, so every entry misses",
                    ver / 1000, ver % 1000 / 10, ver, h->version / 1000, h->version % 1000 / 10,
                    h->version);
    else if (rel && *rel && h->release[0] && strcmp(rel, h->release))
        n += differ("driver: the bundle was made on driver %s; this machine's is %s: the "
                    "driver's cache is keyed to the driver, so every entry misses",
                    rel, h->release);
    else
        say("same", "driver (CUDA %d.%d%s%s)", h->version / 1000, h->version % 1000 / 10,
            h->release[0] ? ", " : "", h->release);
    unsigned cc = (unsigned)jint(dev, "cc");
    if (!h->have_gpu)
        say("note", "the GPU architecture is not checked: %s", h->why_no_gpu);
    else if (cc && cc != h->cc)
        n += differ("GPU: the bundle was made on sm_%u (%s); this GPU is sm_%u (%s): code "
                    "compiled for one architecture does not load on the other",
                    cc, jstr(dev, "name") ? jstr(dev, "name") : "?", h->cc, h->name);
    else
        say("same", "GPU architecture sm_%u", h->cc);
    return n;
}

static size_t check_settings(const json_t *set)
{
    size_t n = 0;
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)set, k, v)
    {
        const char *now = getenv(k);
        const char *was = json_string_value(v);
        if (!was || !jst_bundle_key_setting(k))
            continue;
        if (!now)
            n += differ("setting: %s was '%s' when the bundle was made and is unset here: it "
                        "enters a cache key",
                        k, was);
        else if (strcmp(now, was))
            n += differ("setting: %s was '%s' when the bundle was made and is '%s' here: it "
                        "enters a cache key",
                        k, was, now);
    }
    for (char **e = environ; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || !jst_bundle_key_setting(*e))
            continue;
        char name[256];
        size_t len = (size_t)(eq - *e);
        if (len >= sizeof(name))
            continue;
        memcpy(name, *e, len);
        name[len] = 0;
        if (!json_object_get(set, name))
            n += differ("setting: %s is '%s' here and was unset when the bundle was made: it "
                        "enters a cache key",
                        name, eq + 1);
    }
    return n;
}

/* Each framework of the manifest, read again where it was imported from. */
static size_t check_frameworks(const json_t *fws)
{
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(fws); i++) {
        const json_t *f = json_array_get(fws, i);
        const char *name = jstr(f, "name"), *site = jstr(f, "site"), *was = jstr(f, "version");
        char now[64];
        if (!name || !site || !was)
            continue;
        if (jst_bundle_fw_version(site, name, now, sizeof(now)) != 0)
            say("note", "%s is not checked: %s is not here", name, site);
        else if (!now[0])
            n += differ("framework: %s %s was imported from %s; it is not installed there now",
                        name, was, site);
        else if (strcmp(now, was))
            n += differ("framework: %s was %s when the bundle was made and is %s here (%s): "
                        "its cache keys change with its version",
                        name, was, now, site);
        else
            say("same", "%s %s", name, now);
    }
    return n;
}

/* Each cache that holds entries must be where its variable points. */
static size_t check_caches(const json_t *caches, const char *dir)
{
    size_t n = 0;
    for (size_t i = 0; i < json_array_size(caches); i++) {
        const json_t *c = json_array_get(caches, i);
        const char *env = jstr(c, "env"), *path = jstr(c, "path");
        if (!env || !path || jint(c, "entries") == 0 ||
            !json_is_true(json_object_get(c, "in_bundle")))
            continue;
        char want[PATH_MAX + 256], rw[PATH_MAX], rn[PATH_MAX];
        snprintf(want, sizeof(want), "%s/%s", dir, path);
        const char *now = getenv(env);
        if (!now || !*now) {
            n += differ("%s is unset: the bundle's %s cache (%" PRIu64 " entries) is at %s", env,
                        jstr(c, "name") ? jstr(c, "name") : "?", jint(c, "entries"), want);
            continue;
        }
        if (!realpath(want, rw) || !realpath(now, rn) || strcmp(rw, rn))
            n += differ("%s=%s: the bundle's %s cache is at %s", env, now,
                        jstr(c, "name") ? jstr(c, "name") : "?", want);
        if (!strcmp(env, "CUDA_CACHE_PATH")) {
            const char *dis = getenv("CUDA_CACHE_DISABLE");
            if (dis && *dis && strcmp(dis, "0"))
                n += differ("CUDA_CACHE_DISABLE=%s: the driver does not read its cache", dis);
            const char *mx = getenv("CUDA_CACHE_MAXSIZE");
            uint64_t max = mx && *mx ? strtoull(mx, NULL, 10) : JST_CACHE_DEFAULT_MAX;
            if (max < jint(c, "bytes"))
                n += differ("CUDA_CACHE_MAXSIZE is %" PRIu64 " bytes, the bundle's driver cache "
                            "holds %" PRIu64 ": set CUDA_CACHE_MAXSIZE=4294967296",
                            max, jint(c, "bytes"));
        }
    }
    return n;
}

static const char check_help[] =
    "usage: jitstall warm --check DIR [--device N] [--json]\n\n"
    "Compares DIR/" JST_BUNDLE_FILE " with this machine; see "
    "'jitstall warm --run --help'.\n\n"
    "  --json  one JSON object on stdout: bundle, created, can_hit, and\n"
    "          the lines as arrays: differences, same, notes\n";

struct check_opts {
    const char *dir;
    int ordinal, json;
};

enum { O_CHECK = 300, O_JSON };

static int check_option(int c, const char *arg, void *ctx)
{
    struct check_opts *o = ctx;
    if (c == O_CHECK) {
        o->dir = arg;
        return 0;
    }
    if (c == O_JSON) {
        o->json = 1;
        return 0;
    }
    if (c == 'd') {
        char *end = NULL;
        long v = strtol(arg, &end, 10);
        if (end == arg || *end || v < 0 || v > 1023) {
            jst_errorf(cmd, "bad --device '%s' (want a GPU ordinal: 0, 1, ...)", arg);
            return -1;
        }
        o->ordinal = (int)v;
        return 0;
    }
    jst_errorf(cmd, "%s needs a %s", arg, strcmp(arg, "--check") ? "GPU ordinal" : "directory");
    return -1;
}

static const struct option check_longopts[] = {
    {"check", required_argument, NULL, O_CHECK},
    {"device", required_argument, NULL, 'd'},
    {"json", no_argument, NULL, O_JSON},
    JST_CLI_HELP_END,
};
static const struct jst_cli check_cli = {"warm",     ":d:h", check_longopts,
                                         check_help, NULL,   check_option};

int jst_bundle_check(int argc, char **argv)
{
    struct check_opts o = {NULL, 0, 0};
    int rc = jst_cli_parse(&check_cli, argc, argv, &o);
    if (rc != JST_CLI_GO)
        return rc;
    if (optind < argc) {
        jst_errorf(cmd, "--check takes no other operand ('%s')", argv[optind]);
        return JST_EXIT_USAGE;
    }
    char err[PATH_MAX + 512], dir[PATH_MAX];
    if (!o.dir || !*o.dir || !realpath(o.dir, dir)) {
        jst_errorf(cmd, "--check %s: %s", o.dir ? o.dir : "", strerror(errno ? errno : EINVAL));
        return JST_EXIT_USAGE;
    }
    json_t *doc = load_manifest(dir, err, sizeof(err));
    if (!doc) {
        jst_errorf(cmd, "%s", err);
        return JST_EXIT_USAGE;
    }
    struct here h;
    probe(&h, o.ordinal);
    if (o.json) {
        json_out = json_pack("{s:s, s:s?, s:[], s:[], s:[]}", "bundle", jst_text(dir), "created",
                             jstr(doc, "created") ? jst_text(jstr(doc, "created")) : NULL,
                             "differences", "same", "notes");
        if (!json_out) {
            jst_errorf(cmd, "out of memory");
            json_decref(doc);
            return JST_EXIT_USAGE;
        }
    } else {
        printf("bundle %s (made %s)\n", jst_text(dir),
               jstr(doc, "created") ? jst_text(jstr(doc, "created")) : "?");
    }
    size_t n = check_device(json_object_get(doc, "device"), &h);
    n += check_settings(json_object_get(doc, "settings"));
    n += check_frameworks(json_object_get(doc, "frameworks"));
    n += check_caches(json_object_get(doc, "caches"), dir);
    if (json_out) {
        json_object_set_new(json_out, "can_hit", json_boolean(n == 0));
        int bad = json_dumpf(json_out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0;
        json_decref(json_out);
        json_out = NULL;
        if (bad || putchar('\n') == EOF) {
            jst_errorf(cmd, "write error on standard output");
            json_decref(doc);
            return JST_EXIT_USAGE;
        }
    } else if (n)
        printf("result: %zu difference%s will make the bundle miss\n", n, n == 1 ? "" : "s");
    else
        printf("result: the bundle can hit on this machine\n");
    json_decref(doc);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        jst_errorf(cmd, "write error on standard output");
        return JST_EXIT_USAGE;
    }
    return n ? JST_EXIT_FAIL : JST_EXIT_OK;
}
