/*
 * `jitstall scan`: says from the files alone which CUDA images would run as
 * SASS, which would be JIT-compiled from PTX (and which kernels), and which
 * cannot run at all on a given GPU architecture, with the -gencode to add.
 * Files are mmap'd, only headers are walked, and only entries whose kernel
 * names the output needs are decompressed.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "image.h"
#include "imgwalk.h"
#include "jsonw.h"
#include "scan.h"
#include "trace.h"

static const char *cmd = "scan";

/* ---- files ---- */

static void scan_image(void *ctx, const char *path, size_t off, const struct jst_image *img,
                       int text)
{
    struct scan *sc = ctx;
    scan_report_image(sc, path, off, img, &sc->fs, text);
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
            scan_print_groups(sc, fs);
            if (fs->n)
                printf("  %zu image%s run%s as SASS (%s)\n", fs->n, fs->n == 1 ? "" : "s",
                       fs->n == 1 ? "s" : "", fs->archs);
        }
        sc->file_open = 0;
    } else if (explicit_path) {
        if (sc->json) {
            scan_file_begin(sc, path);
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

static const char usage_text[] =
    "usage: jitstall scan [--arch sm_XY | --device] [--json] PATH...\n\n"
    "For every CUDA image in PATH (ELF executable, shared library or object, fatbin,\n"
    "cubin, PTX file, or a directory walked recursively), say whether it runs as SASS\n"
    "on the GPU architecture, which kernels would be JIT-compiled from which PTX,\n"
    "which cannot run at all, and the -gencode to add.\n\n"
    "  --arch sm_XY  judge against this architecture (also 9.0, compute_90)\n"
    "  --device      ask the driver which GPUs are present\n"
    "  --json        one JSON object (one per architecture with --device)\n"
    "  -h, --help    show this help\n\n"
    "One of --arch and --device is required. Exit status: 0 when at least one PATH\n"
    "could be read; 2 on a usage error or when no PATH could be read.\n";

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
            jst_json_ku64(j, scan_verdict_name(v), t->verdicts[v]);
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

struct scan_opts {
    unsigned ccs[SCAN_MAX_ARCHS];
    int nccs, device, json;
};

/* --arch once: a known architecture, in any of its spellings. */
static int scan_arch(struct scan_opts *o, const char *arg)
{
    unsigned var = 0, cc = jst_arch_parse(arg, &var);
    if (!cc) {
        jst_errorf(cmd, "bad --arch '%s' (want sm_90, 9.0 or compute_90)", arg);
        return -1;
    }
    if (!jst_arch_known(cc, var)) {
        jst_errorf(cmd,
                   "--arch '%s' is not a GPU architecture (known: sm_30 to sm_121, "
                   "a from sm_90, f from sm_100)",
                   arg);
        return -1;
    }
    if (o->nccs) {
        jst_errorf(cmd, "--arch given twice");
        return -1;
    }
    o->ccs[o->nccs++] = cc;
    return 0;
}

static int scan_option(int c, const char *arg, void *ctx)
{
    struct scan_opts *o = ctx;
    if (c == 'a')
        return scan_arch(o, arg);
    if (c == 'd')
        o->device = 1;
    else
        o->json = 1;
    return 0;
}

static const struct option scan_longopts[] = {
    {"arch", required_argument, 0, 'a'},
    {"device", no_argument, 0, 'd'},
    {"json", no_argument, 0, 'j'},
    JST_CLI_HELP_END,
};
static const struct jst_cli scan_cli = {
    "scan", "a:djh", scan_longopts, usage_text, "PATH", scan_option,
};

static int cmd_scan(int argc, char **argv)
{
    struct scan_opts o;
    memset(&o, 0, sizeof o);
    int rc = jst_cli_parse(&scan_cli, argc, argv, &o);
    if (rc != JST_CLI_GO)
        return rc;
    if (o.device && o.nccs) {
        jst_errorf(cmd, "--arch and --device exclude each other");
        return JST_EXIT_USAGE;
    }
    if (!o.device && !o.nccs) {
        jst_errorf(cmd, "--arch sm_XY is required without --device (no GPU is asked by default)");
        return JST_EXIT_USAGE;
    }
    if (o.device) {
        o.nccs = device_archs(o.ccs, SCAN_MAX_ARCHS);
        if (o.nccs < 0)
            return JST_EXIT_USAGE;
    }
    rc = JST_EXIT_OK;
    for (int i = 0; i < o.nccs; i++) {
        int r = run_scan(o.ccs[i], o.json, argc - optind, argv + optind);
        if (r != JST_EXIT_OK)
            rc = r;
    }
    return rc;
}

JST_COMMAND(scan, cmd_scan, "which CUDA images in files would JIT or cannot run on a GPU arch")
