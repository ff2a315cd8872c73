/*
 * `jitstall scan`: says from the files alone which CUDA images would run as
 * SASS, which would be JIT-compiled from PTX (and which kernels), and which
 * cannot run at all on a given GPU architecture, with the -gencode to add.
 * Files are mmap'd, only headers are walked, and only entries whose kernel
 * names the output needs are decompressed.
 */
#include <dlfcn.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "image.h"
#include "imgwalk.h"
#include "jsonw.h"
#include "trace.h"

#define SCAN_MAX_ARCHS 16
/* scan's own verdict, beyond enum jst_verdict: an image without kernels. */
#define SCAN_V_EMPTY (JST_V_DAMAGED + 1)
#define SCAN_TEXT_KERNELS 10 /* kernel names listed per image in text output */

struct scan_totals {
    size_t cuda_files, images, kernels_jit, kernels_dead;
    size_t verdicts[SCAN_V_EMPTY + 1];
};

struct scan {
    unsigned cc;
    int json;
    struct jst_json j;
    struct jst_walk walk;
    struct scan_totals t;
    size_t readable; /* paths given on the command line that could be read */
    int file_open;   /* JSON: a "files" member has been opened for this file */
    struct file_sass {
        size_t n;
        char archs[128];
        struct group *g;
        size_t ng;
    } fs; /* the file being scanned, text output */
};

static const char *cmd = "scan";

static const char *verdict_name(unsigned v)
{
    return v == SCAN_V_EMPTY ? "empty" : jst_verdict_name(v);
}

/* ---- kernel names ---- */

struct names {
    char **v;
    size_t n, cap;
};

static void names_add(void *ctx, const char *name, size_t len)
{
    struct names *ns = ctx;
    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? ns->cap * 2 : 16;
        char **v = realloc(ns->v, cap * sizeof(*v));
        if (!v)
            return;
        ns->v = v;
        ns->cap = cap;
    }
    char *s = strndup(name, len);
    if (s)
        ns->v[ns->n++] = s;
}

static void names_free(struct names *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        free(ns->v[i]);
    free(ns->v);
    memset(ns, 0, sizeof(*ns));
}

/* The entry whose names are listed for a verdict, or -1 when none is cheap
 * enough or needed: the PTX that JITs; for an image that cannot run, a plain
 * cubin, else any PTX, else any cubin; for SASS, the cubin used if it is stored
 * uncompressed (its symbol table is read in place). */
static int names_entry(const struct jst_image *img, const struct jst_decision *d)
{
    if (d->verdict == JST_V_PTX_JIT || d->verdict == JST_V_FORCED_JIT)
        return d->ptx_index;
    if (d->verdict == JST_V_SASS) {
        const struct jst_entry *e = &img->entries[d->sass_index];
        return e->compress == JST_Z_NONE ? d->sass_index : -1;
    }
    if (d->verdict != JST_V_NO_COMPATIBLE && d->verdict != JST_V_JIT_DISABLED)
        return -1;
    int best = -1, rank = 0;
    for (size_t i = 0; i < img->n_entries; i++) {
        const struct jst_entry *e = &img->entries[i];
        int r = e->kind == JST_E_CUBIN && e->compress == JST_Z_NONE ? 3
                : e->kind == JST_E_PTX                              ? 2
                : e->kind == JST_E_CUBIN                            ? 1
                                                                    : 0;
        if (r > rank) {
            rank = r;
            best = (int)i;
        }
    }
    return best;
}

/* ---- output ---- */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

static const char *kind_name(unsigned k)
{
    return k == JST_E_PTX ? "ptx" : k == JST_E_CUBIN ? "cubin" : "ltoir";
}

static const char *z_name(unsigned z)
{
    return z == JST_Z_ZSTD ? "zstd" : z == JST_Z_LZ4 ? "lz4" : "none";
}

static const char *entry_arch(char *buf, size_t n, const struct jst_entry *e)
{
    if (e->kind == JST_E_LTOIR) {
        snprintf(buf, n, "lto_%u", e->sm);
        return buf;
    }
    return jst_arch_str(buf, n, e->kind == JST_E_PTX, e->sm, e->variant);
}

/* The fix line; text: PTX carried as a string, which the program hands to the
 * driver itself, so no -gencode of nvcc reaches it. */
static void fix_line(char *buf, size_t n, const struct scan *sc, const char *path,
                     const struct jst_decision *d, int text)
{
    buf[0] = 0;
    if (text && d->verdict == JST_V_PTX_JIT)
        snprintf(buf, n,
                 "load a cubin for sm_%u instead of the PTX string in %s (nvcc -cubin "
                 "-arch=sm_%u), or fill the JIT cache first with jitstall warm %s",
                 sc->cc, base_name(path), sc->cc, base_name(path));
    else if (d->verdict == JST_V_PTX_JIT || d->verdict == JST_V_NO_COMPATIBLE ||
             d->verdict == JST_V_JIT_DISABLED)
        snprintf(buf, n, "add -gencode arch=compute_%u,code=sm_%u when building %s", sc->cc, sc->cc,
                 base_name(path));
    else if (d->verdict == JST_V_DAMAGED)
        snprintf(buf, n, "rebuild %s: its CUDA image is damaged", base_name(path));
}

static void file_begin(struct scan *sc, const char *path)
{
    if (sc->file_open)
        return;
    sc->file_open = 1;
    if (sc->json) {
        jst_json_obj(&sc->j);
        jst_json_kstr(&sc->j, "path", path);
        jst_json_key(&sc->j, "images");
        jst_json_arr(&sc->j);
    } else {
        printf("%s\n", path);
    }
}

/* Text output, per file: images that run as SASS are summed up in one line;
 * the others are grouped by what they hold and their verdict (a library often
 * has hundreds of images built alike), each group printed once with its
 * kernels. JSON output lists every image. */
struct group {
    unsigned verdict;
    char have[256], jit_from[16], reason[160], fix[320];
    size_t count, first_off, n_kernels, ptx_bytes;
    struct names shown; /* the first SCAN_TEXT_KERNELS names */
};

static void sass_note(struct file_sass *fs, const char *arch)
{
    fs->n++;
    if (strstr(fs->archs, arch))
        return;
    size_t used = strlen(fs->archs);
    snprintf(fs->archs + used, sizeof(fs->archs) - used, "%s%s", used ? ", " : "", arch);
}

static struct group *group_for(struct file_sass *fs, unsigned verdict, const char *have,
                               const char *reason)
{
    for (size_t i = 0; i < fs->ng; i++)
        if (fs->g[i].verdict == verdict && !strcmp(fs->g[i].have, have) &&
            !strcmp(fs->g[i].reason, reason))
            return &fs->g[i];
    struct group *g = realloc(fs->g, (fs->ng + 1) * sizeof(*g));
    if (!g)
        return NULL;
    fs->g = g;
    g = &fs->g[fs->ng++];
    memset(g, 0, sizeof(*g));
    g->verdict = verdict;
    snprintf(g->have, sizeof(g->have), "%s", have);
    snprintf(g->reason, sizeof(g->reason), "%s", reason);
    return g;
}

static void print_groups(const struct scan *sc, struct file_sass *fs)
{
    for (size_t k = 0; k < fs->ng; k++) {
        struct group *g = &fs->g[k];
        const char *vname = verdict_name(g->verdict);
        if (g->count == 1)
            printf("  image @0x%zx [%s]: %s", g->first_off, g->have, vname);
        else
            printf("  %zu images like @0x%zx [%s]: %s", g->count, g->first_off, g->have, vname);
        if (g->jit_from[0])
            printf(" from %s", g->jit_from);
        printf(" (%s)\n", g->reason);
        if (g->n_kernels) {
            if (g->verdict == JST_V_PTX_JIT)
                printf("    %zu kernel%s would JIT from %s (%zu bytes of PTX):\n", g->n_kernels,
                       g->n_kernels == 1 ? "" : "s", g->jit_from, g->ptx_bytes);
            else
                printf("    %zu kernel%s cannot run on sm_%u:\n", g->n_kernels,
                       g->n_kernels == 1 ? "" : "s", sc->cc);
            for (size_t i = 0; i < g->shown.n; i++) {
                char dm[1024];
                jst_demangle(g->shown.v[i], dm, sizeof(dm));
                if (strcmp(dm, g->shown.v[i]))
                    printf("      %s  [%s]\n", dm, g->shown.v[i]);
                else
                    printf("      %s\n", dm);
            }
            if (g->n_kernels > g->shown.n)
                printf("      ... and %zu more\n", g->n_kernels - g->shown.n);
        }
        if (g->fix[0])
            printf("    fix: %s\n", g->fix);
        names_free(&g->shown);
    }
    free(fs->g);
    fs->g = NULL;
    fs->ng = 0;
}

/* An image that would JIT or cannot run but has no kernels is "empty": nvcc
 * puts an sm_75 cubin without kernels into every host-only program, and
 * nothing in it is ever launched, so it is neither a problem nor a fix. LTO-IR
 * names are not read, so an LTO-IR image is never called empty. */
static void mark_empty(const struct jst_image *img, int ni, int nk, struct jst_decision *d)
{
    if (ni < 0 || nk != 0 || img->entries[ni].kind == JST_E_LTOIR ||
        (d->verdict != JST_V_PTX_JIT && d->verdict != JST_V_NO_COMPATIBLE &&
         d->verdict != JST_V_JIT_DISABLED))
        return;
    d->verdict = SCAN_V_EMPTY;
    d->jit_from[0] = 0;
    d->ptx_index = -1;
    snprintf(d->reason, sizeof(d->reason), "no kernels: nothing in it is ever launched");
}

static void report_image(struct scan *sc, const char *path, size_t offset,
                         const struct jst_image *img, struct file_sass *fs, int text)
{
    struct jst_decision d;
    jst_image_decide(img, sc->cc, 0, &d);
    struct names ns = {0};
    int ni = img->damaged ? -1 : names_entry(img, &d);
    int nk = ni >= 0 ? jst_entry_kernels(&img->entries[ni], names_add, &ns) : 0;
    mark_empty(img, ni, nk, &d);
    sc->t.images++;
    sc->t.verdicts[d.verdict <= SCAN_V_EMPTY ? d.verdict : JST_V_NONE]++;
    if (d.verdict == JST_V_PTX_JIT)
        sc->t.kernels_jit += ns.n;
    else if (d.verdict == JST_V_NO_COMPATIBLE)
        sc->t.kernels_dead += ns.n;
    char fix[320];
    fix_line(fix, sizeof(fix), sc, path, &d, text);
    const char *vname = verdict_name(d.verdict);
    file_begin(sc, path);

    if (sc->json) {
        struct jst_json *j = &sc->j;
        jst_json_obj(j);
        jst_json_ku64(j, "offset", offset);
        jst_json_kstr(j, "origin", text ? "data" : img->kind == JST_IMG_FATBIN ? "fatbin" : "file");
        jst_json_kstr(j, "verdict", vname);
        jst_json_kstr(j, "sass_arch", d.sass_arch[0] ? d.sass_arch : NULL);
        jst_json_kstr(j, "jit_from", d.jit_from[0] ? d.jit_from : NULL);
        jst_json_kstr(j, "reason", d.reason);
        jst_json_kstr(j, "fix", fix[0] ? fix : NULL);
        if (d.ptx_index >= 0)
            jst_json_ku64(j, "ptx_size", img->entries[d.ptx_index].raw_size);
        jst_json_key(j, "kernels");
        jst_json_arr(j);
        for (size_t i = 0; i < ns.n; i++)
            jst_json_str(j, ns.v[i]);
        jst_json_end(j);
        jst_json_key(j, "kernels_demangled");
        jst_json_arr(j);
        for (size_t i = 0; i < ns.n; i++) {
            char dm[1024];
            jst_json_str(j, jst_demangle(ns.v[i], dm, sizeof(dm)));
        }
        jst_json_end(j);
        jst_json_key(j, "entries");
        jst_json_arr(j);
        for (size_t i = 0; i < img->n_entries; i++) {
            const struct jst_entry *e = &img->entries[i];
            char a[24];
            jst_json_obj(j);
            jst_json_kstr(j, "kind", kind_name(e->kind));
            jst_json_kstr(j, "arch", entry_arch(a, sizeof(a), e));
            jst_json_kstr(j, "compressed", z_name(e->compress));
            jst_json_ku64(j, "size", e->payload_size);
            jst_json_end(j);
        }
        jst_json_end(j);
        jst_json_end(j);
        names_free(&ns);
        return;
    }

    if (d.verdict == JST_V_SASS) {
        sass_note(fs, d.sass_arch);
        names_free(&ns);
        return;
    }
    char have[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < img->n_entries && used + 24 < sizeof(have); i++) {
        char a[24];
        used += (size_t)snprintf(have + used, sizeof(have) - used, "%s%s", used ? " " : "",
                                 entry_arch(a, sizeof(a), &img->entries[i]));
    }
    if (text)
        snprintf(have + used, sizeof(have) - used, ", PTX text in data");
    struct group *g = group_for(fs, d.verdict, have, d.reason);
    if (g) {
        if (!g->count++) {
            g->first_off = offset;
            snprintf(g->jit_from, sizeof(g->jit_from), "%s", d.jit_from);
            snprintf(g->fix, sizeof(g->fix), "%s", fix);
        }
        g->n_kernels += ns.n;
        if (d.ptx_index >= 0)
            g->ptx_bytes += img->entries[d.ptx_index].raw_size;
        for (size_t i = 0; i < ns.n && g->shown.n < SCAN_TEXT_KERNELS; i++)
            names_add(&g->shown, ns.v[i], strlen(ns.v[i]));
    }
    names_free(&ns);
}

/* ---- files ---- */

static void scan_image(void *ctx, const char *path, size_t off, const struct jst_image *img,
                       int text)
{
    struct scan *sc = ctx;
    report_image(sc, path, off, img, &sc->fs, text);
}

/* After a file: closes its JSON object or prints its grouped text; a file
 * named on the command line without images says so. */
static void scan_file_done(void *ctx, const char *path, int explicit_path, size_t n_images)
{
    struct scan *sc = ctx;
    struct file_sass *fs = &sc->fs;
    if (sc->file_open) {
        sc->t.cuda_files++;
        if (sc->json) {
            jst_json_end(&sc->j); /* images */
            jst_json_end(&sc->j); /* file */
        } else {
            print_groups(sc, fs);
            if (fs->n)
                printf("  %zu image%s run%s as SASS (%s)\n", fs->n, fs->n == 1 ? "" : "s",
                       fs->n == 1 ? "s" : "", fs->archs);
        }
        sc->file_open = 0;
    } else if (explicit_path) {
        if (sc->json) {
            file_begin(sc, path);
            sc->file_open = 0;
            jst_json_end(&sc->j);
            jst_json_end(&sc->j);
        } else {
            printf("%s\n  no CUDA code\n", path);
        }
    }
    memset(fs, 0, sizeof(*fs));
}

/* ---- devices ---- */

typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_count_fn)(int *);
typedef int (*cu_get_fn)(int *, int);
typedef int (*cu_attr_fn)(int *, int, int);

/* Asks the driver for the compute capability of every GPU. Returns the
 * number of distinct ones, or -1 with a message. */
static int device_archs(unsigned *ccs, int max)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        jst_errorf(cmd, "--device: no NVIDIA driver (libcuda.so.1: %s); use --arch sm_XY",
                   dlerror());
        return -1;
    }
    cu_init_fn init = (cu_init_fn)dlsym(h, "cuInit");
    cu_count_fn count = (cu_count_fn)dlsym(h, "cuDeviceGetCount");
    cu_get_fn get = (cu_get_fn)dlsym(h, "cuDeviceGet");
    cu_attr_fn attr = (cu_attr_fn)dlsym(h, "cuDeviceGetAttribute");
    int n = 0, rc;
    if (!init || !count || !get || !attr) {
        jst_errorf(cmd, "--device: libcuda.so.1 lacks the device API");
        return -1;
    }
    if ((rc = init(0)) != 0 || (rc = count(&n)) != 0 || n == 0) {
        jst_errorf(cmd, "--device: the driver found no usable GPU (CUresult %d); use --arch sm_XY",
                   rc);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        int dev, major = 0, minor = 0;
        /* 75, 76: CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR / _MINOR */
        if (get(&dev, i) || attr(&major, 75, dev) || attr(&minor, 76, dev))
            continue;
        unsigned cc = (unsigned)(major * 10 + minor);
        int dup = 0;
        for (int j = 0; j < k; j++)
            dup |= ccs[j] == cc;
        if (!dup && k < max)
            ccs[k++] = cc;
    }
    if (!k)
        jst_errorf(cmd, "--device: could not read any GPU's compute capability");
    return k ? k : -1;
}

/* ---- command ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: jitstall scan [--arch sm_XY | --device] [--json] PATH...\n\n"
               "For every CUDA image in PATH (ELF executable, shared library or object, fatbin,\n"
               "cubin, PTX file, or a directory walked recursively), say whether it runs as SASS\n"
               "on the GPU architecture, which kernels would be JIT-compiled from which PTX,\n"
               "which cannot run at all, and the -gencode to add.\n\n"
               "  --arch sm_XY  judge against this architecture (also 9.0, compute_90)\n"
               "  --device      ask the driver which GPUs are present\n"
               "  --json        one JSON object (one per architecture with --device)\n"
               "  -h, --help    show this help\n\n"
               "One of --arch and --device is required. Exit status: 0 when at least one PATH\n"
               "could be read; 2 on a usage error or when no PATH could be read.\n");
}

static void summary(struct scan *sc)
{
    const struct scan_totals *t = &sc->t;
    if (sc->json) {
        struct jst_json *j = &sc->j;
        jst_json_key(j, "summary");
        jst_json_obj(j);
        jst_json_ku64(j, "files", sc->walk.files);
        jst_json_ku64(j, "cuda_files", t->cuda_files);
        jst_json_ku64(j, "images", t->images);
        for (unsigned v = JST_V_SASS; v <= SCAN_V_EMPTY; v++)
            jst_json_ku64(j, verdict_name(v), t->verdicts[v]);
        jst_json_ku64(j, "kernels_jit", t->kernels_jit);
        jst_json_ku64(j, "kernels_cannot_run", t->kernels_dead);
        jst_json_ku64(j, "bytes", sc->walk.bytes);
        jst_json_end(j);
        return;
    }
    printf("summary for sm_%u: %zu file%s read, %zu with CUDA code, %zu image%s: %zu sass, "
           "%zu ptx_jit, %zu no_compatible, %zu damaged, %zu empty; %zu kernel%s would JIT, "
           "%zu cannot run\n",
           sc->cc, sc->walk.files, sc->walk.files == 1 ? "" : "s", t->cuda_files, t->images,
           t->images == 1 ? "" : "s", t->verdicts[JST_V_SASS], t->verdicts[JST_V_PTX_JIT],
           t->verdicts[JST_V_NO_COMPATIBLE], t->verdicts[JST_V_DAMAGED], t->verdicts[SCAN_V_EMPTY],
           t->kernels_jit, t->kernels_jit == 1 ? "" : "s", t->kernels_dead);
}

static int run_scan(unsigned cc, int json, int npaths, char **paths)
{
    struct scan sc;
    memset(&sc, 0, sizeof(sc));
    sc.cc = cc;
    sc.json = json;
    sc.walk.cmd = cmd;
    sc.walk.ctx = &sc;
    sc.walk.image = scan_image;
    sc.walk.file_done = scan_file_done;
    if (json) {
        jst_json_init(&sc.j, stdout, 0);
        jst_json_obj(&sc.j);
        char a[16];
        jst_json_kstr(&sc.j, "arch", jst_arch_str(a, sizeof(a), 0, cc, JST_A_PLAIN));
        jst_json_key(&sc.j, "files");
        jst_json_arr(&sc.j);
    }
    for (int i = 0; i < npaths; i++)
        if (jst_walk_path(&sc.walk, paths[i]) == 0)
            sc.readable++;
    if (json)
        jst_json_end(&sc.j);
    summary(&sc);
    int werr = 0;
    if (json) {
        jst_json_end(&sc.j);
        werr = jst_json_finish(&sc.j);
    } else {
        werr = fflush(stdout) != 0 || ferror(stdout);
    }
    jst_walk_free(&sc.walk);
    if (werr) {
        jst_errorf(cmd, "write error on standard output");
        return JST_EXIT_USAGE;
    }
    return sc.readable ? JST_EXIT_OK : JST_EXIT_USAGE;
}

static int cmd_scan(int argc, char **argv)
{
    static const struct option opts[] = {
        {"arch", required_argument, 0, 'a'},
        {"device", no_argument, 0, 'd'},
        {"json", no_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    unsigned ccs[SCAN_MAX_ARCHS];
    int nccs = 0, device = 0, json = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "a:djh", opts, NULL)) != -1) {
        switch (c) {
        case 'a': {
            unsigned var = 0, cc = jst_arch_parse(optarg, &var);
            if (!cc) {
                jst_errorf(cmd, "bad --arch '%s' (want sm_90, 9.0 or compute_90)", optarg);
                return JST_EXIT_USAGE;
            }
            if (!jst_arch_known(cc, var)) {
                jst_errorf(cmd,
                           "--arch '%s' is not a GPU architecture (known: sm_30 to sm_121, "
                           "a from sm_90, f from sm_100)",
                           optarg);
                return JST_EXIT_USAGE;
            }
            if (nccs) {
                jst_errorf(cmd, "--arch given twice");
                return JST_EXIT_USAGE;
            }
            ccs[nccs++] = cc;
            break;
        }
        case 'd':
            device = 1;
            break;
        case 'j':
            json = 1;
            break;
        case 'h':
            usage(stdout);
            return JST_EXIT_OK;
        default:
            usage(stderr);
            return JST_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        jst_errorf(cmd, "no PATH given");
        usage(stderr);
        return JST_EXIT_USAGE;
    }
    if (device && nccs) {
        jst_errorf(cmd, "--arch and --device exclude each other");
        return JST_EXIT_USAGE;
    }
    if (!device && !nccs) {
        jst_errorf(cmd, "--arch sm_XY is required without --device (no GPU is asked by default)");
        return JST_EXIT_USAGE;
    }
    if (device) {
        nccs = device_archs(ccs, SCAN_MAX_ARCHS);
        if (nccs < 0)
            return JST_EXIT_USAGE;
    }
    int rc = JST_EXIT_OK;
    for (int i = 0; i < nccs; i++) {
        int r = run_scan(ccs[i], json, argc - optind, argv + optind);
        if (r != JST_EXIT_OK)
            rc = r;
    }
    return rc;
}

JST_COMMAND(scan, cmd_scan, "which CUDA images in files would JIT or cannot run on a GPU arch")
