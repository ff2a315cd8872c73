/*
 * Reading and writing jitstall-warm.json in a JIT cache directory (see
 * warmfile.h), and the report's sentence for a cache warmed for another
 * driver or GPU. The file is input from disk: its size is bounded and it is
 * parsed by the strict reader of check_json.c.
 */
#include "warmfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "check_util.h"
#include "jitcache.h"
#include "jsonw.h"
#include "outfile.h"
#include "model.h"
#include "openreg.h"

#define WARM_FILE_MAX (64u << 10) /* a real file is a few hundred bytes */

static int warm_path(char *buf, size_t n, const char *dir, const char *suffix)
{
    int w = snprintf(buf, n, "%s/%s%s", dir, JST_WARM_FILE, suffix);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Reads the whole file, at most WARM_FILE_MAX bytes; malloc'd, or NULL. */
static char *slurp(const char *path, size_t *len)
{
    int fd = jst_open_regular(path);
    if (fd < 0)
        return NULL;
    char *buf = malloc(WARM_FILE_MAX + 1);
    size_t got = 0;
    ssize_t r = 1;
    while (buf && got < WARM_FILE_MAX && (r = read(fd, buf + got, WARM_FILE_MAX - got)) > 0)
        got += (size_t)r;
    close(fd);
    if (!buf || r < 0 || got == WARM_FILE_MAX) {
        free(buf);
        return NULL;
    }
    buf[got] = 0;
    *len = got;
    return buf;
}

static void copy_str(char *dst, size_t n, const json_t *v)
{
    const char *s = json_string_value(v);
    snprintf(dst, n, "%s", s ? s : "");
}

static uint64_t get_u64(const json_t *obj, const char *key)
{
    const json_t *v = json_object_get(obj, key);
    return json_is_integer(v) && json_integer_value(v) >= 0 ? (uint64_t)json_integer_value(v) : 0;
}

int jst_warmfile_read(const char *dir, struct jst_warm_for *out, int max)
{
    char path[4096];
    size_t len = 0;
    if (warm_path(path, sizeof(path), dir, "") != 0)
        return -1;
    char *text = slurp(path, &len);
    if (!text)
        return -1;
    json_error_t je;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!doc)
        return -1;
    const json_t *list = json_object_get(doc, "warmed_for");
    int n = 0;
    for (size_t i = 0; i < json_array_size(list) && n < max; i++) {
        const json_t *e = json_array_get(list, i);
        if (!json_is_object(e))
            continue;
        struct jst_warm_for *w = &out[n++];
        memset(w, 0, sizeof(*w));
        w->driver_version = get_u64(e, "driver_version");
        w->cc = (unsigned)get_u64(e, "cc");
        w->images = get_u64(e, "images");
        w->kernels = get_u64(e, "kernels");
        copy_str(w->driver, sizeof(w->driver), json_object_get(e, "driver"));
        copy_str(w->gpu, sizeof(w->gpu), json_object_get(e, "gpu"));
        copy_str(w->when, sizeof(w->when), json_object_get(e, "when"));
    }
    int ok = json_is_array(list);
    json_decref(doc);
    return ok ? n : -1;
}

static int same_target(const struct jst_warm_for *a, const struct jst_warm_for *b)
{
    return a->driver_version == b->driver_version && a->cc == b->cc &&
           !strcmp(a->driver, b->driver) && !strcmp(a->gpu, b->gpu);
}

static void write_entry(struct jst_json *j, const struct jst_warm_for *w)
{
    jst_json_obj(j);
    jst_json_ku64(j, "driver_version", w->driver_version);
    jst_json_kstr(j, "driver", w->driver[0] ? w->driver : NULL);
    jst_json_kstr(j, "gpu", w->gpu);
    jst_json_ku64(j, "cc", w->cc);
    jst_json_ku64(j, "images", w->images);
    jst_json_ku64(j, "kernels", w->kernels);
    jst_json_kstr(j, "when", w->when);
    jst_json_end(j);
}

int jst_warmfile_record(const char *dir, const struct jst_warm_for *w)
{
    struct jst_warm_for old[JST_WARM_MAX_FOR];
    int n = jst_warmfile_read(dir, old, JST_WARM_MAX_FOR);
    char path[4096];
    if (warm_path(path, sizeof(path), dir, "") != 0)
        return errno = ENAMETOOLONG, -1;
    /* A new file of an unpredictable name (O_EXCL): a link planted in the
     * cache directory is never followed. */
    struct jst_outfile o;
    FILE *f = jst_outfile_create(&o, path);
    if (!f)
        return -1;
    o.f = f;
    fchmod(fileno(f), 0644);
    struct jst_json j;
    jst_json_init(&j, f, 1);
    jst_json_obj(&j);
    jst_json_ku64(&j, "jitstall_warm", 1);
    jst_json_key(&j, "warmed_for");
    jst_json_arr(&j);
    /* The newest first; older targets are kept (one cache may serve several
     * GPUs), at most JST_WARM_MAX_FOR in all. */
    write_entry(&j, w);
    for (int i = 0, kept = 1; i < n && kept < JST_WARM_MAX_FOR; i++)
        if (!same_target(&old[i], w)) {
            write_entry(&j, &old[i]);
            kept++;
        }
    jst_json_end(&j);
    jst_json_end(&j);
    return jst_outfile_finish(&o, path, jst_json_finish(&j));
}

static void describe(char *buf, size_t n, const char *driver, uint64_t version, unsigned cc)
{
    if (driver && *driver)
        snprintf(buf, n, "driver %s (CUDA %" PRIu64 ".%" PRIu64 ") on sm_%u", driver,
                 version / 1000, version % 1000 / 10, cc);
    else if (version)
        snprintf(buf, n, "the CUDA %" PRIu64 ".%" PRIu64 " driver on sm_%u", version / 1000,
                 version % 1000 / 10, cc);
    else
        snprintf(buf, n, "sm_%u", cc);
}

/* Could the entries of target w serve this run? Unknown parts match. */
static int serves(const struct jst_warm_for *w, uint64_t version, const char *release, unsigned cc)
{
    if (w->cc != cc)
        return 0;
    if (version && w->driver_version && w->driver_version != version)
        return 0;
    return !(release && *release && w->driver[0] && strcmp(release, w->driver));
}

int jst_warm_mismatch(const char *dir, uint64_t driver_version, const char *release, unsigned cc,
                      char *buf, size_t n)
{
    struct jst_warm_for w[JST_WARM_MAX_FOR];
    int k = dir && cc ? jst_warmfile_read(dir, w, JST_WARM_MAX_FOR) : -1;
    if (k <= 0)
        return 0;
    for (int i = 0; i < k; i++)
        if (serves(&w[i], driver_version, release, cc))
            return 0; /* warmed for this target: the miss has another cause */
    char was[96], now[96];
    describe(was, sizeof(was), w[0].driver, w[0].driver_version, w[0].cc);
    describe(now, sizeof(now), release, driver_version, cc);
    snprintf(buf, n,
             "the cache %s was warmed for %s; this run is %s: warm it again when building the "
             "image (jitstall warm --cache %s ...)",
             dir, was, now, dir);
    return 1;
}

const struct jst_device *jst_warm_run_device(const struct jst_process *p,
                                             const struct jst_call_ev *c)
{
    for (size_t i = 0; i < p->n_devices; i++)
        if (!c->has_load_device || p->devices[i].ordinal == c->load_device)
            return &p->devices[i];
    return NULL;
}
