/*
 * `jitstall warm --run --bundle DIR -- CMD [ARGS...]`: runs CMD twice under
 * libjitstall.so, through `jitstall run` itself (this binary, run again), with
 * every cache jitstall knows pointed into DIR. The first run fills the
 * caches; the second must hit, and every compile of its traces is listed with
 * its cache outcome and, when it compiled again, the reason. Then the bundle
 * is described in DIR/jitstall-bundle.json (bundle_manifest.c) and the
 * driver's cache is labelled with the driver and GPU it was filled on
 * (warmfile.c), which is what lets `report` say that a later miss came from
 * another driver. The result is text, or with --json one object written
 * once everything has succeeded; the runs' own stdout then goes to stderr.
 */
#include "bundle.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "compiles.h"
#include "jitcache.h"
#include "miss.h"
#include "jsonw.h"
#include "model.h"
#include "trace.h"
#include "utf8.h"
#include "warmfile.h"

static const char *cmd = "warm";

const struct jst_bundle_cache jst_bundle_caches[JST_BUNDLE_N_CACHES] = {
    {.name = "cuda", .env = "CUDA_CACHE_PATH", .label = "the driver's JIT cache"},
    {.name = "triton", .env = "TRITON_CACHE_DIR", .label = "Triton's cache"},
    {.name = "inductor", .env = "TORCHINDUCTOR_CACHE_DIR", .label = "Inductor's cache"},
    {.name = "jax", .env = "JAX_COMPILATION_CACHE_DIR", .label = "JAX's persistent cache"},
    {.name = "cupy", .env = "CUPY_CACHE_DIR", .label = "CuPy's kernel cache"},
    {.name = "numba", .env = "NUMBA_CACHE_DIR", .label = "Numba's cache"},
    {.name = "torch_extensions",
     .env = "TORCH_EXTENSIONS_DIR",
     .label = "torch extensions' builds"},
};

/* The settings that keep every entry: set with the cache paths, unless the
 * user set them. The driver's cache is allowed its largest size (4 GiB). */
static const struct {
    const char *env, *value, *why;
} keep_all[] = {
    {"CUDA_CACHE_MAXSIZE", "4294967296", "the driver keeps entries up to 4 GiB in all"},
    {"JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0", "JAX keeps compiles of any duration"},
    {"JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "-1", "JAX keeps entries of any size"},
};

/* Prefixes of the variables that enter a cache key or decide whether a
 * compile happens at all. */
static const char *const key_prefixes[] = {
    "TRITON_",
    "TORCHINDUCTOR_",
    "TORCH_CUDA_ARCH_LIST",
    "TORCH_COMPILE_",
    "JAX_",
    "XLA_FLAGS",
    "CUPY_",
    "NUMBA_",
    "CUDA_FORCE_PTX_JIT",
    "CUDA_DISABLE_PTX_JIT",
};

static int name_is(const char *name, size_t len, const char *var)
{
    return strlen(var) == len && !strncmp(name, var, len);
}

int jst_bundle_key_setting(const char *name)
{
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    for (size_t i = 0; i < JST_BUNDLE_N_CACHES; i++)
        if (name_is(name, len, jst_bundle_caches[i].env))
            return 0;
    for (size_t i = 0; i < sizeof(keep_all) / sizeof(keep_all[0]); i++)
        if (name_is(name, len, keep_all[i].env))
            return 0;
    for (size_t i = 0; i < sizeof(key_prefixes) / sizeof(key_prefixes[0]); i++) {
        size_t pl = strlen(key_prefixes[i]);
        if (len >= pl && !strncmp(name, key_prefixes[i], pl))
            return 1;
    }
    return 0;
}

/* ---- counting a cache ---- */

static uint64_t count_files, count_bytes;

static int count_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
    (void)path;
    (void)f;
    if (flag == FTW_F && S_ISREG(st->st_mode)) {
        count_files++;
        count_bytes += (uint64_t)st->st_size;
    }
    return 0;
}

void jst_bundle_count(const char *path, uint64_t *files, uint64_t *bytes)
{
    count_files = count_bytes = 0;
    nftw(path, count_one, 16, FTW_PHYS);
    *files = count_files;
    *bytes = count_bytes;
}

/* ---- the environment of the runs ---- */

static int mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
        return errno = ENAMETOOLONG, -1;
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return -1;
            *p = '/';
        }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(buf, &st) != 0)
        return -1;
    return S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1);
}

#define N_KEEP_ALL (sizeof(keep_all) / sizeof(keep_all[0]))

/* Points each cache into dir unless the user set its variable (their setting
 * wins, and the output says so: a line each unless quiet; own[i] says
 * whether keep_all[i] was the user's). 0, or -1 after one error line. */
static int set_caches(const char *dir, struct jst_bundle_cache *c, int own_keep[N_KEEP_ALL],
                      int quiet)
{
    for (size_t i = 0; i < JST_BUNDLE_N_CACHES; i++) {
        c[i] = jst_bundle_caches[i];
        const char *own = getenv(c[i].env);
        char mine[PATH_MAX];
        if (snprintf(mine, sizeof(mine), "%s/%s", dir, c[i].name) >= (int)sizeof(mine)) {
            jst_errorf(cmd, "--bundle %s: the path is too long", dir);
            return -1;
        }
        if (own && *own && strcmp(own, mine) != 0) {
            c[i].user_set = 1;
            snprintf(c[i].path, sizeof(c[i].path), "%s", own);
            if (!quiet)
                printf("%s=%s is your own setting and is kept: %s is not in the bundle\n", c[i].env,
                       jst_text(own), c[i].label);
            continue;
        }
        c[i].in_bundle = 1;
        snprintf(c[i].path, sizeof(c[i].path), "%s", mine);
        if (mkdir_p(mine) != 0 || setenv(c[i].env, mine, 1) != 0) {
            jst_errorf(cmd, "%s: %s", mine, strerror(errno));
            return -1;
        }
        if (!quiet)
            printf("%s=%s\n", c[i].env, jst_text(mine));
    }
    for (size_t i = 0; i < N_KEEP_ALL; i++) {
        const char *own = getenv(keep_all[i].env);
        own_keep[i] = own && *own && strcmp(own, keep_all[i].value) != 0;
        if (own_keep[i]) {
            if (!quiet)
                printf("%s=%s is your own setting and is kept (%s=%s: %s)\n", keep_all[i].env,
                       jst_text(own), keep_all[i].env, keep_all[i].value, keep_all[i].why);
            continue;
        }
        if (setenv(keep_all[i].env, keep_all[i].value, 1) != 0) {
            jst_errorf(cmd, "cannot set the environment");
            return -1;
        }
        if (!quiet)
            printf("%s=%s\n", keep_all[i].env, keep_all[i].value);
    }
    return 0;
}

/* Runs `jitstall run -o traces --force -- CMD...` (this very binary): the
 * program under the preload, as `run` launches it. With stdout_to_stderr
 * (--json) the child's standard output is its standard error, so that the
 * program's output never mixes with the object on stdout. Returns its exit
 * status (run's: the program's), or -1 after one error line. */
static int run_under_preload(const char *traces, char **argv, int argc, int stdout_to_stderr)
{
    char **av = calloc((size_t)argc + 7, sizeof(*av));
    if (!av) {
        jst_errorf(cmd, "out of memory");
        return -1;
    }
    size_t k = 0;
    av[k++] = "jitstall";
    av[k++] = "run";
    av[k++] = "-o";
    av[k++] = (char *)traces;
    av[k++] = "--force";
    av[k++] = "--";
    for (int i = 0; i < argc; i++)
        av[k++] = argv[i];
    av[k] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        free(av);
        jst_errorf(cmd, "fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        if (stdout_to_stderr && dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
            fprintf(stderr, "jitstall warm: dup2: %s\n", strerror(errno));
            _exit(126);
        }
        execv("/proc/self/exe", av);
        fprintf(stderr, "jitstall warm: cannot run jitstall run: %s\n", strerror(errno));
        _exit(126);
    }
    free(av);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            jst_errorf(cmd, "waitpid: %s", strerror(errno));
            return -1;
        }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* ---- the second run's compiles ---- */

static const struct jst_subproc_ev *subproc_of(const struct jst_process *p,
                                               const struct jst_compile *k)
{
    for (size_t i = 0; i < p->n_subprocs; i++)
        if (k->pid && p->subprocs[i].child_pid == k->pid)
            return &p->subprocs[i];
    return NULL;
}

/* JAX's thresholds in the runs' environment (set_caches set them, unless
 * the user had). */
static void jax_limits(struct jst_jax_limits *lim)
{
    const char *t = getenv("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS");
    const char *b = getenv("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES");
    char *end = NULL;
    double secs = t ? strtod(t, &end) : -1;
    memset(lim, 0, sizeof(*lim));
    if (!t || end == t || *end || !(secs >= 0 && secs < 1e9))
        return; /* unknown: the words keep JAX's default */
    lim->known = 1;
    lim->min_compile_ns = (uint64_t)(secs * 1e9);
    lim->any_size = b && (!strcmp(b, "-1") || !strcmp(b, "0"));
}

/* Why a compile of the second run happened although the first had run the
 * same program: the known causes, else what is known of it. */
static void why_again(const struct jst_process *p, const struct jst_compile *k, const char *dir,
                      const struct jst_bundle_cache *c, char *buf, size_t n)
{
    unsigned fw = k->framework;
    if (k->compiler == JST_CMP_DRIVER) {
        unsigned r = k->call ? k->call->cache_reason : 0;
        if (r == JST_CR_DISABLED)
            snprintf(buf, n,
                     "the driver's cache is disabled (CUDA_CACHE_DISABLE): it stores "
                     "nothing; unset it when warming and when running");
        else if (r == JST_CR_TOO_SMALL)
            snprintf(buf, n,
                     "the driver's cache is too small for the entry (CUDA_CACHE_MAXSIZE): "
                     "raise it, up to 4294967296 (4 GiB)");
        else if (r)
            snprintf(buf, n, "the driver could not store its entry (%s)", jst_cache_reason_name(r));
        else if (!c[0].in_bundle)
            snprintf(buf, n,
                     "the driver compiled again: its cache is your CUDA_CACHE_PATH (%.512s), "
                     "not the bundle's",
                     c[0].path);
        else
            snprintf(buf, n,
                     "the driver compiled again although the first run stored an "
                     "entry: the image differs between runs (generated PTX?)");
        return;
    }
    if (fw == JST_FW_NUMBA) {
        snprintf(buf, n,
                 "Numba without cache=True: it compiles on every start (@jit(cache=True) "
                 "keeps it in NUMBA_CACHE_DIR)");
        return;
    }
    uint64_t from, to;
    struct jst_jax_compile jc = {k->what, k->dur_ns};
    struct jst_jax_limits lim;
    jax_limits(&lim);
    if (k->compiler == JST_CMP_XLA && k->what && jst_miss_window(p, &from, &to) == 0 &&
        jst_jax_miss_words_limits(c[3].path, from, to, &jc, 1, &lim, buf, n))
        return; /* JAX's cache (c[3]) says why */
    if (k->compiler == JST_CMP_XLA || fw == JST_FW_XLA) {
        snprintf(buf, n,
                 "a JAX compile not kept by its persistent cache (under "
                 "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS or _MIN_ENTRY_SIZE_BYTES, "
                 "or the cache not enabled)");
        return;
    }
    const struct jst_subproc_ev *s = k->pid ? subproc_of(p, k) : NULL;
    if (s && s->output && s->output[0] == '/' && !jst_path_under(s->output, dir)) {
        snprintf(buf, n, "a build that writes outside the bundle (%.512s): its output is not kept",
                 s->output);
        return;
    }
    if (fw == JST_FW_TRITON || fw == JST_FW_INDUCTOR || fw == JST_FW_CUPY) {
        size_t i = fw == JST_FW_TRITON ? 1 : fw == JST_FW_INDUCTOR ? 2 : 4;
        snprintf(buf, n, "%s compiled again: %s%.512s", jst_framework_name(fw),
                 c[i].in_bundle ? "the first run filled its cache in the bundle and it "
                                  "compiled this again: its key changed between the runs, or "
                                  "it does not keep this compile (CuPy compiles some kernels "
                                  "in every process)"
                                : "its cache is your own setting, not the bundle's: ",
                 c[i].in_bundle ? "" : c[i].path);
        return;
    }
    switch (k->compiler) {
    case JST_CMP_NVRTC:
    case JST_CMP_NVJITLINK:
    case JST_CMP_NVVM:
    case JST_CMP_NVPTXCOMPILER:
        snprintf(buf, n,
                 "%s with no cache of its own: it compiles on every start (keep its "
                 "output, or ship a cubin)",
                 k->compiler == JST_CMP_NVRTC ? "an NVRTC program"
                                              : jst_compiler_label(k->compiler));
        return;
    default:
        snprintf(buf, n, "a compiler child ran again%s%.512s", s && s->output ? ", writing " : "",
                 s && s->output ? s->output : "");
    }
}

struct verdicts {
    size_t compiles, hits, unknown, again;
};

enum { V_HIT, V_UNKNOWN, V_AGAIN };

/* A compile of the second run: a proven hit, a load that changed no cache
 * but was too slow to prove a hit, or a compile that happened again. */
static int verdict_of(const struct jst_compile *k)
{
    if (k->cache && !strcmp(k->cache, "hit"))
        return V_HIT;
    if (k->cache && !strcmp(k->cache, "unknown"))
        return V_UNKNOWN;
    return V_AGAIN;
}

static void tally(const struct jst_run *run, struct verdicts *v)
{
    for (size_t i = 0; i < run->n_procs; i++)
        for (size_t n = 0; n < run->procs[i].n_compiles; n++) {
            int w = verdict_of(&run->procs[i].compiles[n]);
            v->compiles++;
            v->hits += w == V_HIT;
            v->unknown += w == V_UNKNOWN;
            v->again += w == V_AGAIN;
        }
}

/* Lists every compile of the traces in dir (the second run): a line each, or
 * with j (--json) an object each in the array j is in. */
static void list_compiles(const struct jst_run *run, const char *bundle,
                          const struct jst_bundle_cache *c, struct jst_json *j)
{
    char why[768];
    for (size_t i = 0; i < run->n_procs; i++) {
        const struct jst_process *p = &run->procs[i];
        const char *exe = p->exe ? strrchr(p->exe, '/') : NULL;
        exe = exe ? exe + 1 : p->exe ? p->exe : "?";
        for (size_t n = 0; n < p->n_compiles; n++) {
            const struct jst_compile *k = &p->compiles[n];
            const char *out = k->cache ? k->cache : "compiled";
            int w = verdict_of(k);
            if (w == V_AGAIN)
                why_again(p, k, bundle, c, why, sizeof(why));
            if (j) {
                jst_json_obj(j);
                jst_json_kstr(j, "outcome", out);
                jst_json_kbool(j, "again", w == V_AGAIN);
                jst_json_kstr(j, "compiler", jst_compiler_label(k->compiler));
                jst_json_kstr(j, "what", k->what);
                jst_json_kstr(j, "program", exe);
                jst_json_ku64(j, "pid", p->pid);
                jst_json_ku64(j, "dur_ns", k->dur_ns);
                jst_json_kstr(j, "reason", w == V_AGAIN ? why : NULL);
                jst_json_end(j);
                continue;
            }
            printf("  %-11s %s: %s (%s, pid %" PRIu64 ", %.1f ms)", out,
                   jst_compiler_label(k->compiler), jst_text(k->what ? k->what : "?"),
                   jst_text(exe), p->pid, (double)k->dur_ns / 1e6);
            if (w == V_HIT)
                printf("\n");
            else if (w == V_UNKNOWN)
                printf(": the cache did not change; too slow to prove a hit\n");
            else
                printf(": %s\n", jst_text(why));
        }
    }
}

/* The machine of the traces: the first device record. */
static void run_device(const struct jst_run *run, struct jst_bundle_device *d)
{
    memset(d, 0, sizeof(*d));
    for (size_t i = 0; i < run->n_procs; i++)
        if (run->procs[i].n_devices) {
            const struct jst_device *x = &run->procs[i].devices[0];
            d->known = 1;
            snprintf(d->name, sizeof(d->name), "%s", x->name ? x->name : "");
            d->cc = x->cc_major * 10 + x->cc_minor;
            d->driver_version = x->driver_version;
            snprintf(d->release, sizeof(d->release), "%s",
                     x->driver_release ? x->driver_release : "");
            return;
        }
}

/* The driver's cache says what it was filled for (report reads it). */
static void label_driver_cache(const struct jst_bundle_cache *c, const struct jst_bundle_device *d)
{
    if (!d->known || !c->files)
        return;
    struct jst_warm_for w;
    memset(&w, 0, sizeof(w));
    w.driver_version = d->driver_version;
    w.cc = d->cc;
    snprintf(w.driver, sizeof(w.driver), "%s", d->release);
    snprintf(w.gpu, sizeof(w.gpu), "%s", d->name);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(w.when, sizeof(w.when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (jst_warmfile_record(c->path, &w) != 0)
        jst_warnf(cmd, "cannot write %s/%s: %s", c->path, JST_WARM_FILE, strerror(errno));
}

static void human(char *buf, size_t n, uint64_t v)
{
    if (v >= (1ull << 20))
        snprintf(buf, n, "%.1f MiB", (double)v / (double)(1ull << 20));
    else if (v >= 1024)
        snprintf(buf, n, "%.1f KiB", (double)v / 1024.0);
    else
        snprintf(buf, n, "%" PRIu64 " bytes", v);
}

/* ---- the output ---- */

/* What one `warm --run` found, for the text and for the JSON object. */
struct bundle_out {
    const char *dir;
    struct jst_bundle_cache c[JST_BUNDLE_N_CACHES];
    int own_keep[N_KEEP_ALL]; /* keep_all[i] is the user's own setting */
    struct jst_run run;       /* the second run's traces */
    struct verdicts v;
    struct jst_bundle_device dev;
    struct jst_bundle_fw fw[JST_BUNDLE_MAX_FW];
    size_t n_fw;
};

/* The last line of the text, and "result" of the object. */
static void result_line(const struct verdicts *v, char *buf, size_t n)
{
    if (v->again)
        snprintf(buf, n,
                 "%zu of %zu compile%s of the second run compiled again: the bundle does "
                 "not cover them",
                 v->again, v->compiles, v->compiles == 1 ? "" : "s");
    else
        snprintf(buf, n, "every compile of the second run was served by the bundle (%zu hit%s%s)",
                 v->hits, v->hits == 1 ? "" : "s", v->unknown ? ", some unproven" : "");
}

/* The text after the runs, up to the manifest (the cache variables were
 * printed as they were set). */
static void print_text(const struct bundle_out *o)
{
    printf("second run: %zu process%s traced\n", o->run.n_procs, o->run.n_procs == 1 ? "" : "es");
    list_compiles(&o->run, o->dir, o->c, NULL);
    for (size_t i = 0; i < o->n_fw; i++)
        printf("framework %s %s (%s)\n", o->fw[i].name,
               o->fw[i].version[0] ? o->fw[i].version : "?", jst_text(o->fw[i].site));
    printf("caches:\n");
    for (size_t i = 0; i < JST_BUNDLE_N_CACHES; i++) {
        const struct jst_bundle_cache *c = &o->c[i];
        char b[32];
        human(b, sizeof(b), c->bytes);
        printf("  %-16s %s: %" PRIu64 " file%s, %s%s\n", c->name, jst_text(c->path), c->files,
               c->files == 1 ? "" : "s", b,
               c->user_set ? " (your setting, not in the bundle)" : "");
    }
}

/* --json: the whole object, written once everything has succeeded, so that
 * stdout holds either nothing or one complete object (schema:
 * docs/bundle.md). 0, or -1 on a write error. */
static int print_json(const struct bundle_out *o, const char *manifest)
{
    struct jst_json j;
    char res[256];
    jst_json_init(&j, stdout, 1);
    jst_json_obj(&j);
    jst_json_kstr(&j, "bundle", o->dir);
    jst_json_key(&j, "caches");
    jst_json_arr(&j);
    for (size_t i = 0; i < JST_BUNDLE_N_CACHES; i++) {
        const struct jst_bundle_cache *c = &o->c[i];
        jst_json_obj(&j);
        jst_json_kstr(&j, "name", c->name);
        jst_json_kstr(&j, "env", c->env);
        jst_json_kstr(&j, "path", c->path);
        jst_json_kbool(&j, "in_bundle", c->in_bundle);
        jst_json_kbool(&j, "user_set", c->user_set);
        jst_json_ku64(&j, "files", c->files);
        jst_json_ku64(&j, "bytes", c->bytes);
        jst_json_end(&j);
    }
    jst_json_end(&j);
    jst_json_key(&j, "keep_all");
    jst_json_arr(&j);
    for (size_t i = 0; i < N_KEEP_ALL; i++) {
        const char *now = getenv(keep_all[i].env);
        jst_json_obj(&j);
        jst_json_kstr(&j, "env", keep_all[i].env);
        jst_json_kstr(&j, "value", now);
        jst_json_kbool(&j, "user_set", o->own_keep[i]);
        jst_json_kstr(&j, "bundle_value", keep_all[i].value);
        jst_json_end(&j);
    }
    jst_json_end(&j);
    jst_json_key(&j, "frameworks");
    jst_json_arr(&j);
    for (size_t i = 0; i < o->n_fw; i++) {
        jst_json_obj(&j);
        jst_json_kstr(&j, "name", o->fw[i].name);
        jst_json_kstr(&j, "version", o->fw[i].version[0] ? o->fw[i].version : NULL);
        jst_json_kstr(&j, "site", o->fw[i].site);
        jst_json_end(&j);
    }
    jst_json_end(&j);
    if (o->dev.known) {
        jst_json_key(&j, "device");
        jst_json_obj(&j);
        jst_json_kstr(&j, "name", o->dev.name);
        jst_json_ku64(&j, "cc", o->dev.cc);
        jst_json_ku64(&j, "driver_version", o->dev.driver_version);
        jst_json_kstr(&j, "driver_release", o->dev.release[0] ? o->dev.release : NULL);
        jst_json_end(&j);
    } else {
        jst_json_knull(&j, "device");
    }
    jst_json_ku64(&j, "processes", o->run.n_procs);
    jst_json_key(&j, "compiles");
    jst_json_arr(&j);
    list_compiles(&o->run, o->dir, o->c, &j);
    jst_json_end(&j);
    jst_json_key(&j, "counts");
    jst_json_obj(&j);
    jst_json_ku64(&j, "compiles", o->v.compiles);
    jst_json_ku64(&j, "hits", o->v.hits);
    jst_json_ku64(&j, "unknown", o->v.unknown);
    jst_json_ku64(&j, "compiled_again", o->v.again);
    jst_json_end(&j);
    jst_json_kstr(&j, "manifest", manifest);
    jst_json_kbool(&j, "covered", o->v.again == 0);
    result_line(&o->v, res, sizeof(res));
    jst_json_kstr(&j, "result", res);
    jst_json_end(&j);
    return jst_json_finish(&j);
}

/* ---- the command ---- */

static const char run_help[] =
    "usage: jitstall warm --run --bundle DIR [--json] [--] COMMAND [ARGS...]\n"
    "       jitstall warm --check DIR [--device N] [--json]\n\n"
    "--run: runs COMMAND twice under libjitstall.so (as jitstall run does), with\n"
    "every cache jitstall knows in DIR: CUDA_CACHE_PATH (CUDA_CACHE_MAXSIZE 4 GiB),\n"
    "TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, JAX_COMPILATION_CACHE_DIR (keeping\n"
    "every entry), CUPY_CACHE_DIR, NUMBA_CACHE_DIR and TORCH_EXTENSIONS_DIR. A\n"
    "variable you set yourself is kept, and the output says so. The first run\n"
    "fills the caches, the second must hit: each of its compiles is listed with\n"
    "its cache outcome, and the reason when it compiled again. DIR gets\n"
    "jitstall-bundle.json, what the bundle depends on (docs/bundle.md), and the\n"
    "runs' traces in DIR/" JST_BUNDLE_TRACES " (not needed at run time).\n\n"
    "  --json  one JSON object on stdout (docs/bundle.md), written at the end;\n"
    "          COMMAND's own standard output, in both runs, goes to standard\n"
    "          error, as does the progress; an error leaves stdout empty\n\n"
    "--check DIR: compares DIR's manifest with this machine (the driver, read\n"
    "through libcuda without GPU work; the GPU's architecture when one is\n"
    "visible; the settings that enter the cache keys; where each cache variable\n"
    "points) and names each difference that makes a cache miss.\n\n"
    "Exit status: 0 when nothing compiled again (--run) or the bundle can hit\n"
    "(--check); 1 when something compiled again, or a difference will make a\n"
    "miss; 2 on a usage error, when COMMAND failed, or the bundle is unreadable.\n";

struct run_opts {
    int run, json;
    const char *bundle;
};

enum { O_RUN = 256, O_BUNDLE, O_JSON };

static int run_option(int c, const char *arg, void *ctx)
{
    struct run_opts *o = ctx;
    if (c == O_RUN) {
        o->run = 1;
        return 0;
    }
    if (c == O_JSON) {
        o->json = 1;
        return 0;
    }
    if (c == O_BUNDLE) {
        o->bundle = arg;
        return 0;
    }
    jst_errorf(cmd, "%s needs a directory", arg); /* ':' */
    return -1;
}

static const struct option run_longopts[] = {
    {"run", no_argument, NULL, O_RUN},
    {"bundle", required_argument, NULL, O_BUNDLE},
    {"json", no_argument, NULL, O_JSON},
    JST_CLI_HELP_END,
};
static const struct jst_cli run_cli = {"warm",   "+:h",     run_longopts,
                                       run_help, "COMMAND", run_option};

int jst_bundle_wanted(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "--run") || !strcmp(argv[i], "--check") ||
            !strncmp(argv[i], "--check=", 8))
            return 1;
    return 0;
}

/* One run: 0, or the exit status warm returns. */
static int one_run(const char *what, const char *traces, char **argv, int argc, int json)
{
    fprintf(stderr, "jitstall warm: %s run of %s\n", what, argv[0]);
    int rc = run_under_preload(traces, argv, argc, json);
    if (rc < 0)
        return JST_EXIT_USAGE;
    if (rc != 0) {
        jst_errorf(cmd,
                   "%s exited with status %d in the %s run: a bundle needs a run that "
                   "succeeds",
                   argv[0], rc, what);
        return JST_EXIT_USAGE;
    }
    return 0;
}

/* The runs, then what they found: o->run is loaded on return 0 and the
 * caller frees it. */
static int run_twice(struct bundle_out *o, char **argv, int argc, int json)
{
    char traces[PATH_MAX], fill[PATH_MAX + 16], hit[PATH_MAX + 16], err[1024] = "";
    if (!json)
        printf("bundle %s\n", jst_text(o->dir));
    if (set_caches(o->dir, o->c, o->own_keep, json) != 0)
        return JST_EXIT_USAGE;
    snprintf(traces, sizeof(traces), "%s/%s", o->dir, JST_BUNDLE_TRACES);
    snprintf(fill, sizeof(fill), "%s/fill", traces);
    snprintf(hit, sizeof(hit), "%s/hit", traces);
    int rc = one_run("first", fill, argv, argc, json);
    if (!rc)
        rc = one_run("second", hit, argv, argc, json);
    if (rc)
        return rc;
    struct stat st;
    if (stat(hit, &st) != 0) { /* run removes a trace directory left empty */
        jst_errorf(cmd,
                   "no trace of the second run: %s made no CUDA driver call, or "
                   "libjitstall.so could not be loaded",
                   argv[0]);
        return JST_EXIT_USAGE;
    }
    if (jst_model_add(&o->run, hit, err, sizeof(err)) < 0) {
        jst_errorf(cmd, "the second run's traces: %s", err);
        return JST_EXIT_USAGE;
    }
    jst_compiles_link(&o->run);
    tally(&o->run, &o->v);
    run_device(&o->run, &o->dev);
    o->n_fw = jst_bundle_fw_from_run(&o->run, o->fw, JST_BUNDLE_MAX_FW);
    for (size_t i = 0; i < JST_BUNDLE_N_CACHES; i++)
        jst_bundle_count(o->c[i].path, &o->c[i].files, &o->c[i].bytes);
    return 0;
}

static int bundle_run(struct bundle_out *o, char **argv, int argc, int json)
{
    char err[1024] = "", manifest[PATH_MAX + 64];
    int rc = run_twice(o, argv, argc, json);
    if (rc)
        return rc;
    if (!json)
        print_text(o);
    label_driver_cache(&o->c[0], &o->dev);
    if (jst_bundle_manifest_write(o->dir, &o->dev, o->c, JST_BUNDLE_N_CACHES, o->fw, o->n_fw, argv,
                                  o->v.compiles, o->v.hits, o->v.again, err, sizeof(err)) != 0) {
        jst_errorf(cmd, "%s/%s: %s", o->dir, JST_BUNDLE_FILE, err);
        return JST_EXIT_USAGE;
    }
    snprintf(manifest, sizeof(manifest), "%s/%s", o->dir, JST_BUNDLE_FILE);
    int werr;
    if (json) {
        werr = print_json(o, manifest) != 0;
    } else {
        char res[256];
        result_line(&o->v, res, sizeof(res));
        printf("manifest %s\nresult: %s\n", jst_text(manifest), res);
        werr = fflush(stdout) != 0 || ferror(stdout);
    }
    if (werr) {
        jst_errorf(cmd, "write error on standard output");
        return JST_EXIT_USAGE;
    }
    return o->v.again ? JST_EXIT_FAIL : JST_EXIT_OK;
}

int jst_bundle_run(int argc, char **argv)
{
    struct run_opts opt = {0, 0, NULL};
    int rc = jst_cli_parse(&run_cli, argc, argv, &opt);
    if (rc != JST_CLI_GO)
        return rc;
    if (!opt.run || !opt.bundle || !*opt.bundle) {
        jst_errorf(cmd, "%s", !opt.run ? "--bundle goes with --run" : "--run needs --bundle DIR");
        return JST_EXIT_USAGE;
    }
    char abs[PATH_MAX];
    if (mkdir_p(opt.bundle) != 0 || !realpath(opt.bundle, abs)) {
        jst_errorf(cmd, "--bundle %s: %s", opt.bundle, strerror(errno));
        return JST_EXIT_USAGE;
    }
    struct bundle_out *o = calloc(1, sizeof(*o));
    if (!o) {
        jst_errorf(cmd, "out of memory");
        return JST_EXIT_USAGE;
    }
    o->dir = abs;
    rc = bundle_run(o, argv + optind, argc - optind, opt.json);
    jst_model_free(&o->run);
    free(o);
    return rc;
}
