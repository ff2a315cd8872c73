/*
 * DIR/jitstall-bundle.json, what a warm bundle depends on (schema:
 * docs/bundle.md): the machine it was made on (from the second run's device
 * record), the settings that enter the frameworks' cache keys (from warm's
 * own environment, which the runs inherited) and each cache with its files
 * and bytes. Built with jansson, written beside and renamed into place.
 */
#include "bundle.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "outfile.h"

extern char **environ;

static json_t *device_json(const struct jst_bundle_device *d)
{
    if (!d->known)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(d->name));
    char cc[16];
    snprintf(cc, sizeof(cc), "%u.%u", d->cc / 10, d->cc % 10);
    json_object_set_new(o, "compute_capability", json_string(cc));
    json_object_set_new(o, "cc", json_integer((json_int_t)d->cc));
    json_object_set_new(o, "driver_version", json_integer((json_int_t)d->driver_version));
    char cuda[16];
    snprintf(cuda, sizeof(cuda), "%u.%u", (unsigned)(d->driver_version / 1000),
             (unsigned)(d->driver_version % 1000 / 10));
    json_object_set_new(o, "cuda", json_string(cuda));
    json_object_set_new(o, "driver_release", d->release[0] ? json_string(d->release) : json_null());
    return o;
}

/* The key-relevant settings of this environment, sorted by name (jansson
 * keeps insertion order; JSON_SORT_KEYS sorts them on output). */
static json_t *settings_json(void)
{
    json_t *o = json_object();
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
        json_t *v = json_stringn(eq + 1, strlen(eq + 1));
        if (v) /* not UTF-8: left out */
            json_object_set_new(o, name, v);
    }
    return o;
}

static json_t *caches_json(const char *dir, const struct jst_bundle_cache *c, size_t n)
{
    json_t *a = json_array();
    size_t dl = strlen(dir);
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(c[i].name));
        json_object_set_new(o, "env", json_string(c[i].env));
        /* In the bundle: relative to DIR, which moves with it. */
        const char *p = c[i].path;
        if (c[i].in_bundle && !strncmp(p, dir, dl) && p[dl] == '/')
            p += dl + 1;
        json_object_set_new(o, "path", json_string(p));
        json_object_set_new(o, "in_bundle", json_boolean(c[i].in_bundle));
        json_object_set_new(o, "entries", json_integer((json_int_t)c[i].files));
        json_object_set_new(o, "bytes", json_integer((json_int_t)c[i].bytes));
        json_array_append_new(a, o);
    }
    return a;
}

int jst_bundle_manifest_write(const char *dir, const struct jst_bundle_device *dev,
                              const struct jst_bundle_cache *caches, size_t n_caches,
                              const struct jst_bundle_fw *fw, size_t n_fw, char **argv,
                              size_t compiles, size_t hits, size_t again, char *err, size_t errlen)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "jitstall_bundle", json_integer(1));
    time_t t = time(NULL);
    struct tm tm;
    char when[32];
    gmtime_r(&t, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_object_set_new(doc, "created", json_string(when));
    json_t *cmdv = json_array();
    for (size_t i = 0; argv[i]; i++) {
        json_t *s = json_string(argv[i]);
        json_array_append_new(cmdv, s ? s : json_null());
    }
    json_object_set_new(doc, "command", cmdv);
    json_object_set_new(doc, "device", device_json(dev));
    json_object_set_new(doc, "settings", settings_json());
    json_t *fws = json_array();
    for (size_t i = 0; i < n_fw; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(fw[i].name));
        json_object_set_new(o, "version",
                            fw[i].version[0] ? json_string(fw[i].version) : json_null());
        json_t *site = json_string(fw[i].site);
        json_object_set_new(o, "site", site ? site : json_null());
        json_array_append_new(fws, o);
    }
    json_object_set_new(doc, "frameworks", fws);
    json_object_set_new(doc, "caches", caches_json(dir, caches, n_caches));
    json_t *sr = json_object();
    json_object_set_new(sr, "compiles", json_integer((json_int_t)compiles));
    json_object_set_new(sr, "hits", json_integer((json_int_t)hits));
    json_object_set_new(sr, "compiled_again", json_integer((json_int_t)again));
    json_object_set_new(doc, "second_run", sr);

    char path[4096];
    if (snprintf(path, sizeof(path), "%s/%s", dir, JST_BUNDLE_FILE) >= (int)sizeof(path)) {
        json_decref(doc);
        snprintf(err, errlen, "path too long");
        return -1;
    }
    struct jst_outfile o;
    FILE *f = jst_outfile_create(&o, path);
    if (!f) {
        snprintf(err, errlen, "%s", strerror(errno));
        json_decref(doc);
        return -1;
    }
    o.f = f;
    fchmod(fileno(f), 0644);
    int werr = json_dumpf(doc, f, JSON_INDENT(2) | JSON_SORT_KEYS) != 0 || fputc('\n', f) == EOF;
    json_decref(doc);
    if (jst_outfile_finish(&o, path, werr) != 0) {
        snprintf(err, errlen, "%s", strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}
