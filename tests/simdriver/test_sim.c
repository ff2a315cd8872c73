/*
 * sim.basic: pins down the simulated driver's behaviour (tests/simdriver),
 * linked directly against it, no preload. The driver reads its environment
 * at cuInit, so every case runs in a forked child with its own environment;
 * the child checks and exits 0, and the parent asserts on that.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "image.h"
#include "sim.h"

#define SKIP_CODE 77

/* ---- checks inside the child ---- */

#define CK(cond)                                                                                   \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)

#define CKR(call, want)                                                                            \
    do {                                                                                           \
        CUresult r_ = (call);                                                                      \
        if (r_ != (want)) {                                                                        \
            fprintf(stderr, "%s:%d: %s returned %d, want %d\n", __FILE__, __LINE__, #call,         \
                    (int)r_, (int)(want));                                                         \
            _exit(1);                                                                              \
        }                                                                                          \
    } while (0)

/* ---- inputs ---- */

/* Two kernels (one mangled) and a device function; comments pad it to about
 * 4 KiB so that the JIT cost is measurable. Built once by ptx_text(). */
static const char ptx_head[] =
    ".version 8.0\n"
    ".target sm_75\n"
    ".address_size 64\n"
    "\n"
    ".func _Z6helperi()\n{\n\tret;\n}\n"
    ".visible .entry add_one(\n\t.param .u64 add_one_param_0\n)\n"
    "{\n\tret;\n}\n"
    ".visible .entry _Z4fillPii(\n\t.param .u64 p0,\n\t.param .u32 p1\n)\n"
    "{\n\tret;\n}\n";

static char g_ptx[8192];
static char g_ptx2[8192]; /* the same kernels, other bytes: another cache key */
static char g_ptx3[8192];
static char g_tmp[256]; /* per-test temporary directory */
static char g_cache[320];

static void ptx_build(char *out, size_t n, int variant)
{
    size_t len = (size_t)snprintf(out, n, "%s// variant %d\n", ptx_head, variant);
    while (len + 64 < 4096)
        len += (size_t)snprintf(out + len, n - len, "// padding line %04zu of the test PTX\n", len);
}

static uint8_t *read_fixture(const char *name, size_t *size)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", JST_FIXTURES, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "missing fixture %s\n", path);
        _exit(1);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    /* 8-byte aligned, as fatbins are in a program's data */
    uint8_t *buf = aligned_alloc(8, ((size_t)n + 8) & ~(size_t)7);
    CK(buf && fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

static void fixture_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", JST_FIXTURES, name);
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Entry files in the cache: <root>/<hex>/<hex>/<file>, dot files excluded. */
static int g_count;
static char g_entry[512]; /* the last entry file counted */
static int count_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    const char *base = path + ftw->base;
    if (type == FTW_F && ftw->level == 3 && base[0] != '.') {
        g_count++;
        snprintf(g_entry, sizeof g_entry, "%s", path);
    }
    return 0;
}

static int cache_entries(void)
{
    g_count = 0;
    nftw(g_cache, count_cb, 16, FTW_PHYS);
    return g_count;
}

static int exists(const char *rel)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", g_cache, rel);
    return stat(p, &st) == 0;
}

/* cuInit and a context on device 0: the start of every driver-API program. */
static CUcontext start(void)
{
    CUdevice dev;
    CUcontext ctx;
    CKR(cuInit(0), CUDA_SUCCESS);
    CKR(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    CKR(cuCtxCreate(&ctx, NULL, 0, dev), CUDA_SUCCESS);
    return ctx;
}

/* Loads PTX text; returns the microseconds it took. */
static double timed_load(const char *ptx, CUresult want, CUmodule *out)
{
    CUmodule m = NULL;
    double t0 = now_us();
    CKR(cuModuleLoadData(&m, ptx), want);
    double dt = now_us() - t0;
    if (out)
        *out = m;
    else if (m)
        CKR(cuModuleUnload(m), CUDA_SUCCESS);
    return dt;
}

/* The lower bound of a cold JIT of ptx at us_per_kb. */
static double jit_cost_us(const char *ptx, unsigned us_per_kb)
{
    return (double)(strlen(ptx) * us_per_kb / 1024);
}

/* ---- the fork harness ---- */

static int rm_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    chmod(path, 0700);
    remove(path);
    return 0;
}

static int setup_tmp(void **state)
{
    snprintf(g_tmp, sizeof g_tmp, "/tmp/jst_sim_XXXXXX");
    if (!mkdtemp(g_tmp))
        return -1;
    chmod(g_tmp, 0755); /* the read-only case runs as nobody when started as root */
    snprintf(g_cache, sizeof g_cache, "%s/cache", g_tmp);
    return 0;
}

static int teardown_tmp(void **state)
{
    /* chmod everything writable first so that the walk can remove it */
    nftw(g_tmp, rm_cb, 16, FTW_PHYS | FTW_DEPTH);
    return 0;
}

/* Runs fn in a child with the extra environment env (NULL-terminated
 * "NAME=value"; "CACHE" stands for CUDA_CACHE_PATH=<g_cache>). */
static void in_child(void (*fn)(void), const char *const *env)
{
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static const char *const clear[] = {"CUDA_CACHE_PATH",      "CUDA_CACHE_DISABLE",
                                            "CUDA_CACHE_MAXSIZE",   "CUDA_FORCE_PTX_JIT",
                                            "CUDA_FORCE_JIT",       "CUDA_DISABLE_PTX_JIT",
                                            "CUDA_DISABLE_JIT",     "JITSTALL_SIM_CC",
                                            "JITSTALL_SIM_DEVICES", "JITSTALL_SIM_JIT_US_PER_KB"};
        for (size_t i = 0; i < sizeof clear / sizeof clear[0]; i++)
            unsetenv(clear[i]);
        setenv("HOME", g_tmp, 1); /* never touch the real ~/.nv */
        setenv("CUDA_CACHE_PATH", g_cache, 1);
        for (size_t i = 0; env && env[i]; i++)
            putenv((char *)env[i]);
        fn();
        fflush(NULL);
        _exit(0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == SKIP_CODE)
        skip();
    assert_int_equal(WEXITSTATUS(st), 0);
}

/* ---- cases ---- */

static void c_init_and_devices(void)
{
    CUdevice dev;
    int n = 0, v = 0;
    char name[64];
    CKR(cuDeviceGet(&dev, 0), CUDA_ERROR_NOT_INITIALIZED);
    CKR(cuDriverGetVersion(&v), CUDA_SUCCESS); /* works before cuInit */
    CK(v == 13000);
    CKR(cuInit(1), CUDA_ERROR_INVALID_VALUE);
    CKR(cuInit(0), CUDA_SUCCESS);
    CKR(cuInit(0), CUDA_SUCCESS);
    CKR(cuDeviceGetCount(&n), CUDA_SUCCESS);
    CK(n == 2);
    CKR(cuDeviceGet(&dev, 2), CUDA_ERROR_INVALID_DEVICE);
    CKR(cuDeviceGet(&dev, 1), CUDA_SUCCESS);
    CKR(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), CUDA_SUCCESS);
    CK(v == 8);
    CKR(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), CUDA_SUCCESS);
    CK(v == 6);
    CKR(cuDeviceGetName(name, sizeof name, dev), CUDA_SUCCESS);
    CK(strcmp(name, "jitstall simulated GPU (sm_86)") == 0);
    CKR(cuDeviceGetName(name, sizeof name, 0), CUDA_SUCCESS);
    CK(strcmp(name, "jitstall simulated GPU (sm_90)") == 0);
}

static void t_init_and_devices(void **state)
{
    const char *env[] = {"JITSTALL_SIM_DEVICES=2", "JITSTALL_SIM_CC=90,8.6", NULL};
    in_child(c_init_and_devices, env);
}

static void c_default_device(void)
{
    CUdevice dev;
    int v = 0;
    CKR(cuInit(0), CUDA_SUCCESS);
    CKR(cuDeviceGetCount(&v), CUDA_SUCCESS);
    CK(v == 1);
    CKR(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
    CKR(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev), CUDA_SUCCESS);
    CK(v == 9);
    CKR(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev), CUDA_SUCCESS);
    CK(v == 0);
}

static void t_default_device(void **state)
{
    in_child(c_default_device, NULL);
}

typedef CUresult (*ctx_v2_fn)(CUcontext *, unsigned, CUdevice);
typedef CUresult (*ctx_v3_fn)(CUcontext *, CUexecAffinityParam *, int, unsigned, CUdevice);
typedef CUresult (*ctx_v4_fn)(CUcontext *, CUctxCreateParams *, unsigned, CUdevice);

static void c_contexts(void)
{
    CUcontext a, b, c, p, cur;
    CUdevice dev;
    CUmodule m;
    CKR(cuInit(0), CUDA_SUCCESS);
    CKR(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    CK(cur == NULL);
    CKR(cuModuleLoadData(&m, g_ptx), CUDA_ERROR_INVALID_CONTEXT);
    CKR(cuCtxGetDevice(&dev), CUDA_ERROR_INVALID_CONTEXT);

    ctx_v2_fn v2 = (ctx_v2_fn)dlsym(RTLD_DEFAULT, "cuCtxCreate_v2");
    ctx_v3_fn v3 = (ctx_v3_fn)dlsym(RTLD_DEFAULT, "cuCtxCreate_v3");
    ctx_v4_fn v4 = (ctx_v4_fn)dlsym(RTLD_DEFAULT, "cuCtxCreate_v4");
    CK(v2 && v3 && v4);
    CKR(v2(&a, 0, 0), CUDA_SUCCESS);
    CKR(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    CK(cur == a);
    CKR(v3(&b, NULL, 0, 0, 0), CUDA_SUCCESS);
    CKR(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    CK(cur == b && b != a);
    CKR(v4(&c, NULL, 0, 0), CUDA_SUCCESS);
    CKR(cuCtxGetDevice(&dev), CUDA_SUCCESS);
    CK(dev == 0);
    CKR(v4(&c, NULL, 0, 5), CUDA_ERROR_INVALID_DEVICE);

    CKR(cuDevicePrimaryCtxRetain(&p, 0), CUDA_SUCCESS);
    CKR(cuCtxSetCurrent(p), CUDA_SUCCESS);
    CKR(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    CK(cur == p);
    CKR(cuCtxDestroy(p), CUDA_ERROR_INVALID_CONTEXT); /* primary: release, not destroy */
    CKR(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
    CKR(cuDevicePrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT);
    CKR(cuCtxSetCurrent(a), CUDA_SUCCESS);
    CKR(cuCtxDestroy(a), CUDA_SUCCESS);
    CKR(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    CK(cur == NULL);
    CKR(cuCtxSynchronize(), CUDA_ERROR_INVALID_CONTEXT);
    CKR(cuCtxSetCurrent(b), CUDA_SUCCESS);
    CKR(cuCtxSynchronize(), CUDA_SUCCESS);

    CUdeviceptr d;
    CKR(cuMemAlloc(&d, 256), CUDA_SUCCESS);
    CK(d != 0);
    CKR(cuMemFree(d), CUDA_SUCCESS);
    CKR(cuMemFree(0), CUDA_ERROR_INVALID_VALUE);
    uint64_t junk[4] = {0, 0, 0, 0};
    CKR(cuMemFree((CUdeviceptr)(uintptr_t)&junk[2]), CUDA_ERROR_INVALID_VALUE);
}

static void t_contexts(void **state)
{
    in_child(c_contexts, NULL);
}

static void c_sass_fast(void)
{
    size_t n;
    uint8_t *cubin = read_fixture("sm90.cubin", &n);
    CUmodule m;
    CUfunction f;
    char path[512];
    start();
    double t0 = now_us();
    CKR(cuModuleLoadData(&m, cubin), CUDA_SUCCESS);
    double dt = now_us() - t0;
    /* A JIT here would sleep 1 s per KiB of the 7 KiB cubin: 0.5 s is far from both. */
    CK(dt < 500000.0);
    CKR(cuModuleGetFunction(&f, m, "add_one"), CUDA_SUCCESS);
    CKR(cuModuleGetFunction(&f, m, "_Z4fillPii"), CUDA_SUCCESS);
    CKR(cuModuleGetFunction(&f, m, "no_such_kernel"), CUDA_ERROR_NOT_FOUND);
    CKR(cuModuleGetFunction(&f, m, "add_one"), CUDA_SUCCESS);
    CKR(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
    CUlaunchConfig cfg = {.gridDimX = 1,
                          .gridDimY = 1,
                          .gridDimZ = 1,
                          .blockDimX = 1,
                          .blockDimY = 1,
                          .blockDimZ = 1};
    CKR(cuLaunchKernelEx(&cfg, f, NULL, NULL), CUDA_SUCCESS);
    CKR(cuCtxSynchronize(), CUDA_SUCCESS);
    CKR(cuModuleUnload(m), CUDA_SUCCESS);

    fixture_path(path, sizeof path, "sm90.fatbin");
    CKR(cuModuleLoad(&m, path), CUDA_SUCCESS);
    CKR(cuModuleGetFunction(&f, m, "add_one"), CUDA_SUCCESS);
    CKR(cuModuleUnload(m), CUDA_SUCCESS);
    CKR(cuModuleLoad(&m, "/nonexistent/k.cubin"), CUDA_ERROR_FILE_NOT_FOUND);
    CK(cache_entries() == 0);
    free(cubin);
}

static void t_sass_fast(void **state)
{
    const char *env[] = {"JITSTALL_SIM_JIT_US_PER_KB=1000000", NULL};
    in_child(c_sass_fast, env);
}

#define US_PER_KB 4000u

static void c_ptx_cold(void)
{
    CUmodule m;
    CUfunction f;
    start();
    CK(cache_entries() == 0);
    double dt = timed_load(g_ptx, CUDA_SUCCESS, &m);
    CK(dt >= jit_cost_us(g_ptx, US_PER_KB));
    CKR(cuModuleGetFunction(&f, m, "add_one"), CUDA_SUCCESS);
    CKR(cuModuleGetFunction(&f, m, "_Z4fillPii"), CUDA_SUCCESS);
    CKR(cuModuleGetFunction(&f, m, "_Z6helperi"), CUDA_ERROR_NOT_FOUND); /* not a kernel */
    CKR(cuModuleUnload(m), CUDA_SUCCESS);
    CK(cache_entries() == 1);
    CK(exists("index"));
}

/* The warm run, in another process: the same entry serves it, untouched. */
static void c_ptx_warm(void)
{
    start();
    CK(cache_entries() == 1);
    struct stat before;
    char idx[512];
    snprintf(idx, sizeof idx, "%s/index", g_cache);
    CK(stat(idx, &before) == 0);
    timed_load(g_ptx, CUDA_SUCCESS, NULL);
    timed_load(g_ptx, CUDA_SUCCESS, NULL);
    struct stat after;
    CK(stat(idx, &after) == 0);
    /* A hit writes nothing: the index is the same file, unchanged. */
    CK(before.st_ino == after.st_ino && before.st_size == after.st_size &&
       before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
       before.st_mtim.tv_nsec == after.st_mtim.tv_nsec);
    CK(cache_entries() == 1);
}

static void t_ptx_cold_then_warm(void **state)
{
    const char *env[] = {"JITSTALL_SIM_JIT_US_PER_KB=4000", NULL};
    in_child(c_ptx_cold, env);
    in_child(c_ptx_warm, env);
}

/* The entry's name follows the real layout and holds what the driver stores. */
static void c_entry_layout(void)
{
    start();
    timed_load(g_ptx, CUDA_SUCCESS, NULL);
    CK(cache_entries() == 1);
    struct sim_cache_cfg cfg;
    sim_cache_config(&cfg);
    CK(strcmp(cfg.path, g_cache) == 0);
    /* <1 hex>/<1 hex>/<14 hex digits> as on the H200, the 16 KiB minimum entry. */
    const char *rel = g_entry + strlen(g_cache) + 1;
    CK(strlen(rel) == 1 + 1 + 1 + 1 + 14 && rel[1] == '/' && rel[3] == '/');
    CK(strspn(rel, "0123456789abcdef/") == strlen(rel));
    struct stat st;
    CK(stat(g_entry, &st) == 0 && st.st_size == 16384);
    /* Damage the entry: the next load must miss and store it again. */
    FILE *f = fopen(g_entry, "r+");
    CK(f && fputs("garbage", f) >= 0 && fclose(f) == 0);
    double dt = timed_load(g_ptx, CUDA_SUCCESS, NULL);
    CK(dt >= jit_cost_us(g_ptx, US_PER_KB));
    CK(cache_entries() == 1);
}

static void t_entry_layout(void **state)
{
    const char *env[] = {"JITSTALL_SIM_JIT_US_PER_KB=4000", NULL};
    in_child(c_entry_layout, env);
}

static void c_jit_not_stored(void)
{
    start();
    double dt = timed_load(g_ptx, CUDA_SUCCESS, NULL);
    CK(dt >= jit_cost_us(g_ptx, US_PER_KB));
    dt = timed_load(g_ptx, CUDA_SUCCESS, NULL); /* JITs again: nothing was stored */
    CK(dt >= jit_cost_us(g_ptx, US_PER_KB));
    CK(cache_entries() == 0);
}

static void t_cache_disable(void **state)
{
    const char *env[] = {"JITSTALL_SIM_JIT_US_PER_KB=4000", "CUDA_CACHE_DISABLE=1", NULL};
    in_child(c_jit_not_stored, env);
    struct stat st;
    assert_int_not_equal(stat(g_cache, &st), 0); /* not even created */
}

static void t_cache_tiny_maxsize(void **state)
{
    const char *env[] = {"JITSTALL_SIM_JIT_US_PER_KB=4000", "CUDA_CACHE_MAXSIZE=4096", NULL};
    in_child(c_jit_not_stored, env);
}

static void c_read_only(void)
{
    if (geteuid() == 0) {
        /* root writes into a 0555 directory: become nobody, as a user would be */
        struct passwd *pw = getpwnam("nobody");
        if (!pw || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0)
            _exit(SKIP_CODE);
    }
    c_jit_not_stored();
}

static void t_cache_read_only(void **state)
{
    const char *env[] = {"JITSTALL_SIM_JIT_US_PER_KB=4000", NULL};
    assert_int_equal(mkdir(g_cache, 0555), 0);
    in_child(c_read_only, env);
}

static void t_cache_cannot_create(void **state)
{
    /* CUDA_CACHE_PATH below a regular file: mkdir fails, the load still works. */
    static char env_path[400];
    char file[300];
    snprintf(file, sizeof file, "%s/file", g_tmp);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fclose(f);
    snprintf(env_path, sizeof env_path, "CUDA_CACHE_PATH=%s/cache", file);
    const char *env[] = {"JITSTALL_SIM_JIT_US_PER_KB=4000", env_path, NULL};
    in_child(c_jit_not_stored, env);
}

/* Entries are 16 KiB here; a 40000-byte cache holds two, the third evicts the first. */
static void c_evict(void)
{
    start();
    timed_load(g_ptx, CUDA_SUCCESS, NULL);
    timed_load(g_ptx2, CUDA_SUCCESS, NULL);
    CK(cache_entries() == 2);
    timed_load(g_ptx3, CUDA_SUCCESS, NULL);
    CK(cache_entries() == 2);
    /* The oldest (g_ptx) is gone: loading it JITs again; g_ptx3 hits. */
    double dt = timed_load(g_ptx, CUDA_SUCCESS, NULL);
    CK(dt >= jit_cost_us(g_ptx, US_PER_KB));
    CK(cache_entries() == 2);
}

static void t_cache_evicts_oldest(void **state)
{
    const char *env[] = {"JITSTALL_SIM_JIT_US_PER_KB=4000", "CUDA_CACHE_MAXSIZE=40000", NULL};
    in_child(c_evict, env);
}

static void c_force_jit(void)
{
    size_t n1, n2, n3;
    uint8_t *cubin = read_fixture("sm90.cubin", &n1);
    uint8_t *fatbin = read_fixture("sm90.fatbin", &n2);
    uint8_t *both = read_fixture("sm80_ptx80.fatbin", &n3);
    CUmodule m;
    start();
    CKR(cuModuleLoadData(&m, cubin), CUDA_ERROR_NO_BINARY_FOR_GPU);
    CKR(cuModuleLoadData(&m, fatbin), CUDA_ERROR_NO_BINARY_FOR_GPU);
    CK(cache_entries() == 0);
    CKR(cuModuleLoadData(&m, both), CUDA_SUCCESS); /* SASS ignored, its PTX JITs */
    CK(cache_entries() == 1);
    CKR(cuModuleUnload(m), CUDA_SUCCESS);
    free(cubin);
    free(fatbin);
    free(both);
}

static void t_force_jit(void **state)
{
    const char *env[] = {"CUDA_FORCE_PTX_JIT=1", NULL};
    in_child(c_force_jit, env);
}

static void c_disable_jit(void)
{
    size_t n1, n2;
    uint8_t *ptxfb = read_fixture("ptx75.fatbin", &n1);
    uint8_t *cubin = read_fixture("sm90.cubin", &n2);
    CUmodule m;
    start();
    CKR(cuModuleLoadData(&m, g_ptx), CUDA_ERROR_JIT_COMPILATION_DISABLED);
    CKR(cuModuleLoadData(&m, ptxfb), CUDA_ERROR_JIT_COMPILATION_DISABLED);
    CKR(cuModuleLoadData(&m, cubin), CUDA_SUCCESS);
    CKR(cuModuleUnload(m), CUDA_SUCCESS);
    CK(cache_entries() == 0);
    free(ptxfb);
    free(cubin);
}

static void t_disable_jit(void **state)
{
    const char *env[] = {"CUDA_DISABLE_PTX_JIT=1", NULL};
    in_child(c_disable_jit, env);
}

static void c_no_compatible_and_damaged(void)
{
    size_t n;
    uint8_t *cubin = read_fixture("sm90.cubin", &n);
    uint8_t *fb = read_fixture("sm90.fatbin", &n);
    CUmodule m;
    start(); /* device is sm_80 */
    CKR(cuModuleLoadData(&m, cubin), CUDA_ERROR_NO_BINARY_FOR_GPU);
    CKR(cuModuleLoadData(&m, fb), CUDA_ERROR_NO_BINARY_FOR_GPU);
    /* A fatbin whose declared size runs past what a file holds is damaged. */
    char path[512];
    snprintf(path, sizeof path, "%s/trunc.fatbin", g_tmp);
    FILE *f = fopen(path, "wb");
    CK(f && fwrite(fb, 1, n / 2, f) == n / 2 && fclose(f) == 0);
    CKR(cuModuleLoad(&m, path), CUDA_ERROR_INVALID_IMAGE);
    static const char junk[] = "\x7f"
                               "ELF this is not a cubin at all";
    CKR(cuModuleLoadData(&m, junk), CUDA_ERROR_INVALID_IMAGE);
    CKR(cuModuleLoadData(&m, NULL), CUDA_ERROR_INVALID_VALUE);
    free(cubin);
    free(fb);
}

static void t_no_compatible_and_damaged(void **state)
{
    const char *env[] = {"JITSTALL_SIM_CC=80", NULL};
    in_child(c_no_compatible_and_damaged, env);
}

/* __fatBinC_Wrapper_t as nvcc emits it (fatbinary_section.h). */
struct fatbin_wrapper {
    int magic;
    int version;
    const unsigned long long *data;
    void *filename_or_fatbins;
};

static void c_library(void)
{
    size_t n;
    uint8_t *fb = read_fixture("ptx75.fatbin", &n);
    struct fatbin_wrapper w = {0x466243b1, 1, (const unsigned long long *)fb, NULL};
    CUlibrary lib, lib2;
    CUkernel k;
    CUfunction f;
    char path[512];
    CKR(cuLibraryLoadData(&lib, &w, NULL, NULL, 0, NULL, NULL, 0), CUDA_ERROR_NOT_INITIALIZED);
    CKR(cuInit(0), CUDA_SUCCESS);
    /* no context needed for a library, as with cudart's lazy loading */
    CKR(cuLibraryLoadData(&lib, &w, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
    CK(cache_entries() == 1);
    CKR(cuLibraryGetKernel(&k, lib, "add_one"), CUDA_SUCCESS);
    CKR(cuLibraryGetKernel(&k, lib, "_ZN3jst5scaleIfEEvPT_S1_"), CUDA_SUCCESS);
    CKR(cuLibraryGetKernel(&k, lib, "nope"), CUDA_ERROR_NOT_FOUND);
    CKR(cuKernelGetFunction(&f, k), CUDA_SUCCESS);
    CKR(cuKernelGetFunction(&f, (CUkernel)f), CUDA_ERROR_INVALID_HANDLE);
    CKR(cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
    CKR(cuLaunchKernel((CUfunction)k, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS);
    CKR(cuModuleUnload((CUmodule)lib), CUDA_ERROR_INVALID_HANDLE);
    fixture_path(path, sizeof path, "sm90.fatbin");
    CKR(cuLibraryLoadFromFile(&lib2, path, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
    CKR(cuLibraryGetKernel(&k, lib2, "_Z4fillPii"), CUDA_SUCCESS);
    CKR(cuLibraryUnload(lib2), CUDA_SUCCESS);
    CKR(cuLibraryUnload(lib), CUDA_SUCCESS);
    /* a bogus handle is refused, not followed */
    struct {
        uint32_t magic;
    } fake = {0x12345678};
    CKR(cuLaunchKernel((CUfunction)&fake, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL),
        CUDA_ERROR_INVALID_HANDLE);
    CKR(cuLibraryGetKernel(&k, (CUlibrary)&fake, "add_one"), CUDA_ERROR_INVALID_HANDLE);
    free(fb);
}

static void t_library(void **state)
{
    in_child(c_library, NULL);
}

typedef CUresult (*gpa_v2_fn)(const char *, void **, int, cuuint64_t,
                              CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa_v1_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*init_fn)(unsigned);

static void *sym(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    CK(p != NULL);
    return p;
}

static void c_proc_address(void)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    /* What cudart does: dlsym the resolver, then ask it for itself. */
    gpa_v2_fn gpa = (gpa_v2_fn)sym("cuGetProcAddress_v2");
    CKR(gpa("cuGetProcAddress", &p, 13000, 0, &st), CUDA_SUCCESS);
    CK(st == CU_GET_PROC_ADDRESS_SUCCESS && p == (void *)gpa);
    gpa_v2_fn again = (gpa_v2_fn)p;
    CKR(again("cuInit", &p, 13000, 0, &st), CUDA_SUCCESS);
    CKR(((init_fn)p)(0), CUDA_SUCCESS);
    CKR(gpa("cuGetProcAddress", &p, 11030, 0, &st), CUDA_SUCCESS);
    CK(p == sym("cuGetProcAddress"));
    gpa_v1_fn old = (gpa_v1_fn)p;
    CKR(old("cuModuleLoadData", &p, 11030, 0), CUDA_SUCCESS);
    CK(p == sym("cuModuleLoadData"));

    static const struct {
        const char *name;
        int version;
        cuuint64_t flags;
        const char *want;
    } map[] = {
        {"cuCtxCreate", 13000, 0, "cuCtxCreate_v4"},
        {"cuCtxCreate", 12050, 0, "cuCtxCreate_v4"},
        {"cuCtxCreate", 12040, 0, "cuCtxCreate_v3"},
        {"cuCtxCreate", 11040, 0, "cuCtxCreate_v3"},
        {"cuCtxCreate", 11000, 0, "cuCtxCreate_v2"},
        {"cuCtxCreate", 3020, 0, "cuCtxCreate_v2"},
        {"cuCtxCreate", 3010, 0, "cuCtxCreate"},
        {"cuLaunchKernel", 13000, 0, "cuLaunchKernel"},
        {"cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, "cuLaunchKernel"},
        {"cuLaunchKernel", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
         "cuLaunchKernel_ptsz"},
        {"cuLaunchKernelEx", 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
         "cuLaunchKernelEx_ptsz"},
        {"cuModuleLoadData", 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
         "cuModuleLoadData"},
        {"cuLinkCreate", 13000, 0, "cuLinkCreate_v2"},
        {"cuLinkCreate", 6000, 0, "cuLinkCreate"},
        {"cuLinkAddData", 6050, 0, "cuLinkAddData_v2"},
        {"cuMemAlloc", 3020, 0, "cuMemAlloc_v2"},
        {"cuMemFree", 13000, 0, "cuMemFree_v2"},
        {"cuDevicePrimaryCtxRelease", 11000, 0, "cuDevicePrimaryCtxRelease_v2"},
        {"cuDevicePrimaryCtxRelease", 10020, 0, "cuDevicePrimaryCtxRelease"},
        {"cuCtxDestroy", 13000, 0, "cuCtxDestroy_v2"},
        {"cuLibraryLoadData", 12000, 0, "cuLibraryLoadData"},
        {"cuCtxSynchronize", 12090, 0, "cuCtxSynchronize"},
        {"cuCtxSynchronize", 13000, 0, "cuCtxSynchronize_v2"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        p = NULL;
        CKR(gpa(map[i].name, &p, map[i].version, map[i].flags, &st), CUDA_SUCCESS);
        if (p != sym(map[i].want)) {
            fprintf(stderr, "%s@%d flags %llu: not %s\n", map[i].name, map[i].version,
                    (unsigned long long)map[i].flags, map[i].want);
            _exit(1);
        }
    }
    gpa_v2_fn ptsz = (gpa_v2_fn)sym("cuGetProcAddress_v2_ptsz");
    CKR(ptsz("cuLaunchKernel", &p, 13000, 0, &st), CUDA_SUCCESS);
    CK(p == sym("cuLaunchKernel_ptsz"));
    CKR(ptsz("cuLaunchKernel", &p, 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st), CUDA_SUCCESS);
    CK(p == sym("cuLaunchKernel"));
    CKR(gpa("cuNoSuchThing", &p, 13000, 0, &st), CUDA_ERROR_NOT_FOUND);
    CK(st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND && p == NULL);
    CKR(gpa("cuCtxCreate_v4", &p, 13000, 0, &st), CUDA_ERROR_NOT_FOUND); /* base names only */
    CKR(gpa("cuLibraryLoadData", &p, 11080, 0, &st), CUDA_ERROR_NOT_FOUND);
    CK(st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    CKR(gpa("cuInit", &p, 13000, 4, &st), CUDA_ERROR_INVALID_VALUE);
    CKR(gpa("cuInit", NULL, 13000, 0, &st), CUDA_ERROR_INVALID_VALUE);

    const char *s = NULL;
    CKR(cuGetErrorName(CUDA_ERROR_NO_BINARY_FOR_GPU, &s), CUDA_SUCCESS);
    CK(strcmp(s, "CUDA_ERROR_NO_BINARY_FOR_GPU") == 0);
    CKR(cuGetErrorString(CUDA_ERROR_JIT_COMPILATION_DISABLED, &s), CUDA_SUCCESS);
    CK(s && *s);
    CKR(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
    CK(s == NULL);
    const void *table = &s;
    CUuuid id = {{0}};
    CKR(cuGetExportTable(&table, &id), CUDA_ERROR_NOT_SUPPORTED);
    CK(table == NULL);
}

static void t_proc_address(void **state)
{
    in_child(c_proc_address, NULL);
}

struct names {
    int add_one, fill, other;
};

static void name_cb(void *ctx, const char *name, size_t len)
{
    struct names *n = ctx;
    if (len == 7 && !memcmp(name, "add_one", 7))
        n->add_one++;
    else if (len == 10 && !memcmp(name, "_Z4fillPii", 10))
        n->fill++;
    else
        n->other++;
}

static void c_link(void)
{
    CUlinkState ls;
    void *cubin = NULL;
    size_t size = 0;
    CUmodule m;
    CUfunction f;
    char path[512];
    start();
    CKR(cuLinkCreate(0, NULL, NULL, &ls), CUDA_SUCCESS);
    CKR(cuLinkComplete(ls, &cubin, &size), CUDA_ERROR_INVALID_VALUE); /* nothing added */
    double t0 = now_us();
    CKR(cuLinkAddData(ls, CU_JIT_INPUT_PTX, g_ptx, strlen(g_ptx) + 1, "a.ptx", 0, NULL, NULL),
        CUDA_SUCCESS);
    CK(now_us() - t0 >= jit_cost_us(g_ptx, US_PER_KB)); /* PTX input: a JIT */
    CK(cache_entries() == 1);
    fixture_path(path, sizeof path, "sm90.cubin");
    CKR(cuLinkAddFile(ls, CU_JIT_INPUT_CUBIN, path, 0, NULL, NULL), CUDA_SUCCESS);
    CKR(cuLinkAddFile(ls, CU_JIT_INPUT_CUBIN, "/nonexistent.cubin", 0, NULL, NULL),
        CUDA_ERROR_FILE_NOT_FOUND);
    CKR(cuLinkAddData(ls, CU_JIT_INPUT_LIBRARY, g_ptx, 10, "x", 0, NULL, NULL),
        CUDA_ERROR_NOT_SUPPORTED);
    CKR(cuLinkComplete(ls, &cubin, &size), CUDA_SUCCESS);
    CK(cubin && size > 64);

    /* The output is a cubin that image inspection reads: sm_90, the kernels. */
    struct jst_image img;
    CK(jst_image_inspect(cubin, size, &img) == 0);
    CK(!img.damaged && img.kind == JST_IMG_CUBIN && img.n_entries == 1);
    CK(img.entries[0].kind == JST_E_CUBIN && img.entries[0].sm == 90);
    struct names nm = {0, 0, 0};
    CK(jst_entry_kernels(&img.entries[0], name_cb, &nm) >= 2);
    CK(nm.add_one == 1 && nm.fill == 1);
    jst_image_free(&img);
    CK(jst_image_inspect(cubin, 0, &img) == 0 && !img.damaged && img.size == size);
    jst_image_free(&img);

    /* ... and that loads as SASS: fast, no new cache entry. */
    t0 = now_us();
    CKR(cuModuleLoadData(&m, cubin), CUDA_SUCCESS);
    CKR(cuModuleGetFunction(&f, m, "add_one"), CUDA_SUCCESS);
    CKR(cuModuleGetFunction(&f, m, "_ZN3jst5scaleIfEEvPT_S1_"), CUDA_SUCCESS);
    CKR(cuModuleUnload(m), CUDA_SUCCESS);
    CK(cache_entries() == 1);
    CKR(cuLinkDestroy(ls), CUDA_SUCCESS);

    /* A second link of the same PTX hits the cache. */
    CKR(cuLinkCreate(0, NULL, NULL, &ls), CUDA_SUCCESS);
    CKR(cuLinkAddData(ls, CU_JIT_INPUT_PTX, g_ptx, strlen(g_ptx) + 1, "a.ptx", 0, NULL, NULL),
        CUDA_SUCCESS);
    CK(cache_entries() == 1);
    CKR(cuLinkDestroy(ls), CUDA_SUCCESS);
}

static void t_link(void **state)
{
    const char *env[] = {"JITSTALL_SIM_JIT_US_PER_KB=4000", NULL};
    in_child(c_link, env);
}

/* Outputs through JIT options: wall time, empty logs; CU_JIT_TARGET picks the link's arch. */
static void c_jit_options(void)
{
    char info[64] = "stale", err[64] = "stale";
    CUjit_option opt[5] = {CU_JIT_WALL_TIME, CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                           CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *val[5] = {NULL, info, (void *)(uintptr_t)sizeof info, err, (void *)(uintptr_t)sizeof err};
    CUmodule m;
    float ms;
    start();
    CKR(cuModuleLoadDataEx(&m, g_ptx, 5, opt, val), CUDA_SUCCESS);
    memcpy(&ms, &val[0], sizeof ms);
    CK(ms * 1000.0 >= jit_cost_us(g_ptx, US_PER_KB));
    CK(info[0] == '\0' && err[0] == '\0' && val[2] == NULL && val[4] == NULL);
    CKR(cuModuleUnload(m), CUDA_SUCCESS);

    CUjit_option lopt[2] = {CU_JIT_WALL_TIME, CU_JIT_TARGET};
    void *lval[2] = {NULL, (void *)(uintptr_t)CU_TARGET_COMPUTE_80};
    CUlinkState ls;
    void *cubin;
    size_t size;
    CKR(cuLinkCreate(2, lopt, lval, &ls), CUDA_SUCCESS);
    CKR(cuLinkAddData(ls, CU_JIT_INPUT_PTX, g_ptx2, strlen(g_ptx2), "b.ptx", 0, NULL, NULL),
        CUDA_SUCCESS);
    CKR(cuLinkComplete(ls, &cubin, &size), CUDA_SUCCESS);
    memcpy(&ms, &lval[0], sizeof ms);
    CK(ms * 1000.0 >= jit_cost_us(g_ptx2, US_PER_KB));
    struct jst_image img;
    CK(jst_image_inspect(cubin, size, &img) == 0 && img.n_entries == 1);
    CK(img.entries[0].sm == 80);
    jst_image_free(&img);
    CKR(cuLinkDestroy(ls), CUDA_SUCCESS);
}

static void t_jit_options(void **state)
{
    const char *env[] = {"JITSTALL_SIM_JIT_US_PER_KB=4000", NULL};
    in_child(c_jit_options, env);
}

static CUcontext g_shared_ctx;

static void *load_thread(void *arg)
{
    CUmodule m;
    if (cuCtxSetCurrent(g_shared_ctx) != CUDA_SUCCESS)
        return (void *)1;
    for (int i = 0; i < 4; i++) {
        if (cuModuleLoadData(&m, arg) != CUDA_SUCCESS || cuModuleUnload(m) != CUDA_SUCCESS)
            return (void *)1;
    }
    return NULL;
}

static void c_threads(void)
{
    pthread_t t[4];
    g_shared_ctx = start();
    const char *inputs[4] = {g_ptx, g_ptx2, g_ptx, g_ptx3};
    for (int i = 0; i < 4; i++)
        CK(pthread_create(&t[i], NULL, load_thread, (void *)inputs[i]) == 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        CK(pthread_join(t[i], &r) == 0 && r == NULL);
    }
    CK(cache_entries() == 3);
}

static void t_threads(void **state)
{
    const char *env[] = {"JITSTALL_SIM_JIT_US_PER_KB=500", NULL};
    in_child(c_threads, env);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_tmp, teardown_tmp)

int main(void)
{
    ptx_build(g_ptx, sizeof g_ptx, 1);
    ptx_build(g_ptx2, sizeof g_ptx2, 2);
    ptx_build(g_ptx3, sizeof g_ptx3, 3);
    const struct CMUnitTest tests[] = {
        T(t_init_and_devices),
        T(t_default_device),
        T(t_contexts),
        T(t_sass_fast),
        T(t_ptx_cold_then_warm),
        T(t_entry_layout),
        T(t_cache_disable),
        T(t_cache_tiny_maxsize),
        T(t_cache_read_only),
        T(t_cache_cannot_create),
        T(t_cache_evicts_oldest),
        T(t_force_jit),
        T(t_disable_jit),
        T(t_no_compatible_and_damaged),
        T(t_library),
        T(t_proc_address),
        T(t_link),
        T(t_jit_options),
        T(t_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
