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
#include "curesult.h"
#include "utf8.h"
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
    scan_file_flush(sc, path);
    if (sc->file_open) {
        sc->t.cuda_files++;
        if (sc->json) {
            jst_json_end(&sc->j); /* images */
            jst_json_end(&sc->j); /* file */
        } else {
            scan_print_groups(sc, fs);
            if (fs->n && !sc->summary_only)
                printf("  %zu image%s run%s as SASS (%s)\n", fs->n, fs->n == 1 ? "" : "s",
                       fs->n == 1 ? "s" : "", jst_text(fs->archs));
            scan_print_other(sc, fs);
        }
        sc->file_open = 0;
    } else if (explicit_path) {
        if (sc->json) {
            scan_file_begin(sc, path);
            sc->file_open = 0;
            jst_json_end(&sc->j);
            jst_json_end(&sc->j);
        } else if (!sc->summary_only) {
            printf("%s\n  no CUDA code\n", jst_text(path));
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
static int device_archs(unsigned *ccs, int max, unsigned *driver_cuda, int only)
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
    cu_count_fn version = (cu_count_fn)dlsym(h, "cuDriverGetVersion");
    int n = 0, rc;
    if (!init || !count || !get || !attr) {
        jst_errorf(cmd, "--device: libcuda.so.1 lacks the device API");
        return -1;
    }
    if ((rc = init(0)) != 0 || (rc = count(&n)) != 0 || n == 0) {
        char rs[96];
        jst_errorf(cmd, "--device: the driver found no usable GPU (%s); use --arch sm_XY",
                   rc ? jst_curesult_str(rs, sizeof rs, rc) : "0 devices");
        return -1;
    }
    if (only >= n) {
        jst_errorf(cmd, "--device=%d: no such GPU (the driver found %d)", only, n);
        return -1;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        int dev, major = 0, minor = 0;
        if (only >= 0 && i != only)
            continue;
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
    /* The driver present judges PTX versions too, unless --driver names another. */
    int v = 0;
    if (k && !*driver_cuda && version && version(&v) == 0 && v > 0 &&
        jst_cuda_max_ptx_isa((unsigned)v))
        *driver_cuda = (unsigned)v;
    return k ? k : -1;
}

/* ---- command ---- */

static const char usage_text[] =
    "usage: jitstall scan [--arch sm_XY[,sm_XY...] | --device[=N]] [--driver VERSION]\n"
    "                     [--fail-on VERDICT[,VERDICT...] [--allow-empty]] [--summary]\n"
    "                     [--json] PATH...\n\n"
    "For every CUDA image in PATH (ELF executable, shared library or object, fatbin,\n"
    "cubin, PTX file, or a directory walked recursively), say whether it runs as SASS\n"
    "on each GPU architecture, which kernels would be JIT-compiled from which PTX,\n"
    "which cannot run at all, and the -gencode to add. Images that carry only other\n"
    "GPUs' SASS, in a file that has code for the architecture, are variants for other\n"
    "GPUs (other_gpus), not failures.\n\n"
    "  --arch LIST       judge against these architectures (sm_90,sm_100,sm_120; also\n"
    "                    9.0, compute_90); one report per architecture\n"
    "  --device          ask the driver which GPUs are present (every one;\n"
    "                    --device=N: GPU N only, as warm's --device N)\n"
    "  --driver VERSION  the driver that will run them: a CUDA version (12.4) or a driver\n"
    "                    release (550.54); PTX newer than it JITs is ptx_too_new\n"
    "  --fail-on LIST    exit 1 when any image has one of these verdicts: ptx_jit,\n"
    "                    no_compatible, ptx_too_new, jit_disabled, damaged (for CI);\n"
    "                    a scan that found no CUDA code at all fails it too\n"
    "  --allow-empty     with --fail-on: finding no CUDA code is no failure\n"
    "  --summary         text: the summary lines only, no file listing\n"
    "  --json            one JSON object per architecture (every image, whole)\n"
    "  -h, --help        show this help\n\n"
    "One of --arch and --device is required. Exit status: 0 when every PATH could be\n"
    "read and no image met --fail-on; 1 when one did, or with --fail-on when no PATH\n"
    "held CUDA code (unless --allow-empty); 2 on a usage error or when a PATH could\n"
    "not be read.\n";

/* Estimated cold JIT time of PTX: 11 s for 5.6 MB of PTX on an H200 (about
 * 2 ms per KiB), the driver's JIT of one large module. */
#define SCAN_JIT_NS_PER_KIB 2000000ull

static double jit_estimate_s(uint64_t ptx_bytes)
{
    return (double)(ptx_bytes / 1024 * SCAN_JIT_NS_PER_KIB) / 1e9;
}

/* "about 11.2 s" / "about 6 ms" */
static const char *jit_estimate(char *buf, size_t n, uint64_t ptx_bytes)
{
    double s = jit_estimate_s(ptx_bytes);
    if (s >= 1.0)
        snprintf(buf, n, "about %.1f s", s);
    else
        snprintf(buf, n, "about %.0f ms", s * 1000.0);
    return buf;
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
            jst_json_ku64(j, scan_verdict_name(v), t->verdicts[v]);
        jst_json_ku64(j, "kernels_jit", t->kernels_jit);
        jst_json_ku64(j, "kernels_cannot_run", t->kernels_dead);
        jst_json_ku64(j, "ptx_jit_bytes", t->ptx_jit_bytes);
        jst_json_ku64(j, "jit_estimate_ms",
                      t->ptx_jit_bytes / 1024 * SCAN_JIT_NS_PER_KIB / 1000000);
        jst_json_ku64(j, "fail_on_images", sc->failed);
        jst_json_ku64(j, "bytes", sc->walk.bytes);
        jst_json_end(j);
        return;
    }
    printf("summary for sm_%u: %zu file%s read, %zu with CUDA code, %zu image%s: %zu sass, "
           "%zu ptx_jit, %zu no_compatible, %zu damaged, %zu empty",
           sc->cc, sc->walk.files, sc->walk.files == 1 ? "" : "s", t->cuda_files, t->images,
           t->images == 1 ? "" : "s", t->verdicts[JST_V_SASS], t->verdicts[JST_V_PTX_JIT],
           t->verdicts[JST_V_NO_COMPATIBLE], t->verdicts[JST_V_DAMAGED], t->verdicts[SCAN_V_EMPTY]);
    if (t->verdicts[JST_V_OTHER_GPUS])
        printf(", %zu for other GPUs", t->verdicts[JST_V_OTHER_GPUS]);
    if (t->verdicts[JST_V_PTX_TOO_NEW])
        printf(", %zu ptx_too_new", t->verdicts[JST_V_PTX_TOO_NEW]);
    printf("; %zu kernel%s would JIT, %zu cannot run", t->kernels_jit,
           t->kernels_jit == 1 ? "" : "s", t->kernels_dead);
    char est[48];
    if (t->ptx_jit_bytes)
        printf(" (JIT of %llu KiB of PTX, %s on a cold cache)",
               (unsigned long long)(t->ptx_jit_bytes / 1024),
               jit_estimate(est, sizeof est, t->ptx_jit_bytes));
    printf("\n");
}

/* One architecture's verdict over everything scanned, for the fleet lines. */
struct arch_result {
    unsigned cc;
    struct scan_totals t;
    size_t failed, files;
};

static int run_scan(struct scan *sc, int npaths, char **paths, struct arch_result *res)
{
    int json = sc->json;
    sc->walk.cmd = cmd;
    sc->walk.ctx = sc;
    sc->walk.image = scan_image;
    sc->walk.file_done = scan_file_done;
    if (json) {
        jst_json_init(&sc->j, stdout, 0);
        jst_json_obj(&sc->j);
        char a[16];
        jst_json_kstr(&sc->j, "arch", jst_arch_str(a, sizeof(a), 0, sc->cc, JST_A_PLAIN));
        if (sc->driver_cuda) {
            char v[16];
            jst_json_kstr(&sc->j, "driver_cuda", jst_cuda_str(v, sizeof v, sc->driver_cuda));
        }
        jst_json_key(&sc->j, "files");
        jst_json_arr(&sc->j);
    }
    for (int i = 0; i < npaths; i++)
        if (jst_walk_path(&sc->walk, paths[i]) == 0)
            sc->readable++;
    if (json)
        jst_json_end(&sc->j);
    summary(sc);
    int werr = 0;
    if (json) {
        jst_json_end(&sc->j);
        werr = jst_json_finish(&sc->j);
    } else {
        werr = fflush(stdout) != 0 || ferror(stdout);
    }
    jst_walk_free(&sc->walk);
    res->cc = sc->cc;
    res->t = sc->t;
    res->failed = sc->failed;
    res->files = sc->walk.files;
    if (werr) {
        jst_errorf(cmd, "write error on standard output");
        return JST_EXIT_USAGE;
    }
    if (sc->readable < (size_t)npaths) /* a PATH could not be read: not a pass */
        return JST_EXIT_USAGE;
    return sc->failed ? JST_EXIT_FAIL : JST_EXIT_OK;
}

/* With several architectures: one line each, what the whole scan means there. */
static void fleet_lines(const struct arch_result *r, int n)
{
    char est[48];
    printf("per architecture:\n");
    for (int i = 0; i < n; i++) {
        const struct scan_totals *t = &r[i].t;
        size_t dead = t->verdicts[JST_V_NO_COMPATIBLE] + t->verdicts[JST_V_PTX_TOO_NEW] +
                      t->verdicts[JST_V_JIT_DISABLED] + t->verdicts[JST_V_DAMAGED];
        printf("  sm_%u: ", r[i].cc);
        if (dead)
            printf("cannot run: %zu image%s with no code for it", dead, dead == 1 ? "" : "s");
        else if (t->verdicts[JST_V_PTX_JIT])
            printf("JIT from PTX: %zu image%s, %zu kernel%s, %s of JIT on a cold cache",
                   t->verdicts[JST_V_PTX_JIT], t->verdicts[JST_V_PTX_JIT] == 1 ? "" : "s",
                   t->kernels_jit, t->kernels_jit == 1 ? "" : "s",
                   jit_estimate(est, sizeof est, t->ptx_jit_bytes));
        else if (t->verdicts[JST_V_SASS])
            printf("SASS: %zu image%s", t->verdicts[JST_V_SASS],
                   t->verdicts[JST_V_SASS] == 1 ? "" : "s");
        else
            printf("no CUDA code");
        if (dead && t->verdicts[JST_V_PTX_JIT])
            printf("; %zu image%s JIT from PTX (%s)", t->verdicts[JST_V_PTX_JIT],
                   t->verdicts[JST_V_PTX_JIT] == 1 ? "" : "s",
                   jit_estimate(est, sizeof est, t->ptx_jit_bytes));
        if ((dead || t->verdicts[JST_V_PTX_JIT]) && t->verdicts[JST_V_SASS])
            printf("; %zu run%s as SASS", t->verdicts[JST_V_SASS],
                   t->verdicts[JST_V_SASS] == 1 ? "s" : "");
        if (t->verdicts[JST_V_OTHER_GPUS])
            printf("; %zu for other GPUs", t->verdicts[JST_V_OTHER_GPUS]);
        if (r[i].failed)
            printf("; %zu meet --fail-on", r[i].failed);
        printf("\n");
    }
}

struct scan_opts {
    unsigned ccs[SCAN_MAX_ARCHS];
    int nccs, device, json, summary_only, allow_empty;
    unsigned driver_cuda, fail_mask;
    int ordinal; /* --device=N; -1: every GPU */
};

/* `jitstall scan --list-archs` (not in --help; for the shell completion):
 * every architecture --arch accepts, one a line, so the completion never
 * lags behind the program. */
static void list_archs(void)
{
    for (unsigned sm = 10; sm < 1000; sm++) {
        if (jst_arch_known(sm, JST_A_PLAIN))
            printf("sm_%u\n", sm);
        if (jst_arch_known(sm, JST_A_SPECIFIC))
            printf("sm_%ua\n", sm);
        if (jst_arch_known(sm, JST_A_FAMILY))
            printf("sm_%uf\n", sm);
    }
}

/* One architecture of --arch: a known one, in any of its spellings. */
static int scan_arch_one(struct scan_opts *o, const char *arg)
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
    if (cc == 101) {
        /* CUDA 13 renamed Thor: no CUDA 13 device reports 10.1. */
        fprintf(stderr,
                "jitstall scan: note: sm_101 is the old name of sm_110 (Jetson Thor, compute "
                "capability 11.0, renamed in CUDA 13); judging as sm_110\n");
        cc = 110;
    }
    for (int i = 0; i < o->nccs; i++)
        if (o->ccs[i] == cc)
            return 0;
    if (o->nccs >= SCAN_MAX_ARCHS) {
        jst_errorf(cmd, "--arch: at most %d architectures", SCAN_MAX_ARCHS);
        return -1;
    }
    o->ccs[o->nccs++] = cc;
    return 0;
}

/* --arch LIST: comma-separated; may be given more than once. */
static int scan_arch(struct scan_opts *o, const char *arg)
{
    char buf[256];
    if (!*arg || strlen(arg) >= sizeof buf) {
        jst_errorf(cmd, "bad --arch '%s'", arg);
        return -1;
    }
    strcpy(buf, arg);
    for (char *s = buf, *e; s; s = e) {
        e = strchr(s, ',');
        if (e)
            *e++ = 0;
        if (scan_arch_one(o, s) != 0)
            return -1;
    }
    return 0;
}

static int scan_fail_on(struct scan_opts *o, const char *arg)
{
    char buf[256];
    if (!*arg || strlen(arg) >= sizeof buf) {
        jst_errorf(cmd, "bad --fail-on '%s'", arg);
        return -1;
    }
    strcpy(buf, arg);
    for (char *s = buf, *e; s; s = e) {
        e = strchr(s, ',');
        if (e)
            *e++ = 0;
        unsigned v = 0;
        for (unsigned k = JST_V_PTX_JIT; k <= SCAN_V_EMPTY && !v; k++)
            if (k != JST_V_FORCED_JIT && !strcmp(s, scan_verdict_name(k)))
                v = k;
        if (!v) {
            jst_errorf(cmd,
                       "--fail-on: unknown verdict '%s' (one of ptx_jit, no_compatible, "
                       "ptx_too_new, jit_disabled, damaged, other_gpus, empty)",
                       s);
            return -1;
        }
        o->fail_mask |= 1u << v;
    }
    return 0;
}

static int scan_option(int c, const char *arg, void *ctx)
{
    struct scan_opts *o = ctx;
    if (c == 'a')
        return scan_arch(o, arg);
    if (c == 'F')
        return scan_fail_on(o, arg);
    if (c == 'E' || c == 'S') {
        *(c == 'E' ? &o->allow_empty : &o->summary_only) = 1;
        return 0;
    }
    if (c == 'D') {
        o->driver_cuda = jst_driver_arg_cuda(arg);
        if (!o->driver_cuda || !jst_cuda_max_ptx_isa(o->driver_cuda)) {
            jst_errorf(cmd,
                       "bad --driver '%s' (want a CUDA version such as 12.4 or a driver "
                       "release such as 550.54)",
                       arg);
            return -1;
        }
        return 0;
    }
    if (c == 'd') {
        o->device = 1;
        if (arg) { /* --device=N: that GPU only, as warm's --device N */
            char *end;
            long v = strtol(arg, &end, 10);
            if (!*arg || *end || v < 0 || v > 1023) {
                jst_errorf(cmd, "bad --device '%s' (want a GPU ordinal: 0, 1, ...)", arg);
                return -1;
            }
            o->ordinal = (int)v;
        }
    } else {
        o->json = 1;
    }
    return 0;
}

static const struct option scan_longopts[] = {
    {"arch", required_argument, 0, 'a'},   {"device", optional_argument, 0, 'd'},
    {"driver", required_argument, 0, 'D'}, {"fail-on", required_argument, 0, 'F'},
    {"json", no_argument, 0, 'j'},         {"summary", no_argument, 0, 'S'},
    {"allow-empty", no_argument, 0, 'E'},  JST_CLI_HELP_END,
};
static const struct jst_cli scan_cli = {
    "scan", "a:djh", scan_longopts, usage_text, "PATH", scan_option,
};

static int cmd_scan(int argc, char **argv)
{
    struct scan_opts o;
    memset(&o, 0, sizeof o);
    o.ordinal = -1;
    if (argc == 2 && !strcmp(argv[1], "--list-archs")) { /* takes no PATH */
        list_archs();
        return JST_EXIT_OK;
    }
    if (argc == 2 && !strcmp(argv[1], "--list-verdicts")) { /* --fail-on's, for completion */
        for (unsigned k = JST_V_PTX_JIT; k <= SCAN_V_EMPTY; k++)
            if (k != JST_V_FORCED_JIT)
                printf("%s\n", scan_verdict_name(k));
        return JST_EXIT_OK;
    }
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
    if (o.allow_empty && !o.fail_mask) {
        jst_errorf(cmd, "--allow-empty goes with --fail-on");
        return JST_EXIT_USAGE;
    }
    if (jst_walk_check_paths(cmd, argc - optind, argv + optind))
        return JST_EXIT_USAGE;
    if (o.device) {
        o.nccs = device_archs(o.ccs, SCAN_MAX_ARCHS, &o.driver_cuda, o.ordinal);
        if (o.nccs < 0)
            return JST_EXIT_USAGE;
    }
    size_t width = scan_text_width();
    struct arch_result res[SCAN_MAX_ARCHS];
    int usage = 0, failed = 0;
    for (int i = 0; i < o.nccs; i++) {
        struct scan *sc = calloc(1, sizeof(*sc));
        if (!sc) {
            jst_errorf(cmd, "out of memory");
            return JST_EXIT_USAGE;
        }
        sc->cc = o.ccs[i];
        sc->json = o.json;
        sc->driver_cuda = o.driver_cuda;
        sc->fail_mask = o.fail_mask;
        sc->summary_only = o.summary_only;
        sc->width = width;
        int r = run_scan(sc, argc - optind, argv + optind, &res[i]);
        free(sc);
        usage |= r == JST_EXIT_USAGE;
        failed |= r == JST_EXIT_FAIL;
    }
    if (!o.json && o.nccs > 1 && !usage)
        fleet_lines(res, o.nccs);
    /* A gate that scanned nothing must not pass: a wrong directory, a glob
     * that matched text files, a build that produced no CUDA code. */
    if (!usage && o.nccs > 0 && !res[0].t.images) {
        fflush(stdout);
        if (o.fail_mask && !o.allow_empty) {
            jst_errorf(cmd,
                       "no CUDA code in any PATH (%zu file%s read): nothing to gate; "
                       "--allow-empty accepts that",
                       res[0].files, res[0].files == 1 ? "" : "s");
            failed = 1;
        } else {
            jst_warnf(cmd, "no CUDA code in any PATH (%zu file%s read)", res[0].files,
                      res[0].files == 1 ? "" : "s");
        }
    }
    return usage ? JST_EXIT_USAGE : failed ? JST_EXIT_FAIL : JST_EXIT_OK;
}

JST_COMMAND(scan, cmd_scan, "which CUDA images in files would JIT or cannot run on a GPU arch")
