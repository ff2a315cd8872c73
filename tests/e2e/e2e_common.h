/*
 * Shared scenario of the end-to-end programs. Each prog_*.c fills a table of
 * driver entry points by its own route (linked symbols, dlsym, or
 * cuGetProcAddress) and then runs the same steps, printing one deterministic
 * line per driver call ("<step>: <CUresult name>") and nothing that varies
 * between runs (no handles, pointers or times).
 *
 * Usage of every program:
 *   prog FIXTURES_DIR EXIT_CODE FLOW [IMAGE...] [--hold]
 * FLOW: module  - cuModuleLoadData of each IMAGE (a file in FIXTURES_DIR;
 *                 "file:NAME" uses cuModuleLoad, "ex:NAME" cuModuleLoadDataEx)
 *       library - cuLibraryLoadData with a __fatBinC_Wrapper_t, like cudart
 *       link    - cuLinkCreate / cuLinkAddData (PTX) / cuLinkComplete, then
 *                 cuModuleLoadData of the linked cubin
 * --hold: after the loads print "holding" and sleep, for the SIGKILL test.
 * --on-term: the program handles SIGTERM itself (prints "own SIGTERM handler"
 *            and exits with 7), for the fatal-signal test.
 * The program exits with EXIT_CODE.
 */
#ifndef JST_E2E_COMMON_H
#define JST_E2E_COMMON_H

#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <unistd.h>

#define E2E_KERNEL "add_one"
#define E2E_CUDA_VERSION 13000

/* X(name): name may be a macro of cuda.h (cuMemAlloc -> cuMemAlloc_v2). The
 * member is declared with the expanded name and the signature of that variant;
 * #name is the base name (for cuGetProcAddress) and E2E_XSTR(name) the exported
 * symbol (for dlsym). */
#define E2E_FUNCS(X)                                                                               \
    X(cuInit)                                                                                      \
    X(cuDriverGetVersion)                                                                          \
    X(cuDeviceGetCount)                                                                            \
    X(cuDeviceGet)                                                                                 \
    X(cuDeviceGetAttribute)                                                                        \
    X(cuDevicePrimaryCtxRetain)                                                                    \
    X(cuCtxSetCurrent)                                                                             \
    X(cuCtxSynchronize)                                                                            \
    X(cuMemAlloc)                                                                                  \
    X(cuMemFree)                                                                                   \
    X(cuModuleLoad)                                                                                \
    X(cuModuleLoadData)                                                                            \
    X(cuModuleLoadDataEx)                                                                          \
    X(cuModuleGetFunction)                                                                         \
    X(cuLibraryLoadData)                                                                           \
    X(cuLibraryGetKernel)                                                                          \
    X(cuKernelGetFunction)                                                                         \
    X(cuLinkCreate)                                                                                \
    X(cuLinkAddData)                                                                               \
    X(cuLinkComplete)                                                                              \
    X(cuLaunchKernel)                                                                              \
    X(cuGetErrorName)

#define E2E_STR(x) #x
#define E2E_XSTR(x) E2E_STR(x)

struct e2e_api {
#define E2E_MEMBER(name) __typeof__(&name) name;
    E2E_FUNCS(E2E_MEMBER)
#undef E2E_MEMBER
};

static inline const char *e2e_err(const struct e2e_api *a, CUresult r)
{
    const char *s = NULL;
    if (a->cuGetErrorName(r, &s) != CUDA_SUCCESS || !s)
        return "UNKNOWN_CUresult";
    return s;
}

static inline CUresult e2e_step(const struct e2e_api *a, const char *what, CUresult r)
{
    printf("%s: %s\n", what, e2e_err(a, r));
    fflush(stdout);
    return r;
}

/* Reads a whole file, NUL-terminated (PTX text needs it). */
static inline void *e2e_read(const char *dir, const char *name, size_t *len)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("cannot read %s\n", name);
        exit(90);
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) {
        printf("cannot read %s\n", name);
        exit(90);
    }
    p[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return p;
}

static inline void e2e_launch_twice(const struct e2e_api *a, CUfunction f, CUdeviceptr buf)
{
    void *params[] = {&buf};
    for (int i = 0; i < 2; i++)
        e2e_step(a, "launch " E2E_KERNEL,
                 a->cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    e2e_step(a, "synchronize", a->cuCtxSynchronize());
}

static inline void e2e_flow_module(const struct e2e_api *a, const char *dir, const char *img,
                                   CUdeviceptr buf)
{
    char what[512];
    CUmodule mod = NULL;
    CUresult r;
    if (strncmp(img, "file:", 5) == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, img + 5);
        r = a->cuModuleLoad(&mod, path);
        snprintf(what, sizeof what, "cuModuleLoad %s", img + 5);
    } else if (strncmp(img, "ex:", 3) == 0) {
        void *data = e2e_read(dir, img + 3, NULL);
        r = a->cuModuleLoadDataEx(&mod, data, 0, NULL, NULL);
        snprintf(what, sizeof what, "cuModuleLoadDataEx %s", img + 3);
    } else {
        void *data = e2e_read(dir, img, NULL);
        r = a->cuModuleLoadData(&mod, data);
        snprintf(what, sizeof what, "cuModuleLoadData %s", img);
    }
    if (e2e_step(a, what, r) != CUDA_SUCCESS)
        return;
    CUfunction f = NULL;
    if (e2e_step(a, "cuModuleGetFunction " E2E_KERNEL,
                 a->cuModuleGetFunction(&f, mod, E2E_KERNEL)) == CUDA_SUCCESS)
        e2e_launch_twice(a, f, buf);
}

/* The layout of fatbinary_section.h's __fatBinC_Wrapper_t. */
struct e2e_fatbin_wrapper {
    int magic;
    int version;
    const unsigned long long *data;
    void *filename_or_fatbins;
};

static inline void e2e_flow_library(const struct e2e_api *a, const char *dir, const char *img,
                                    CUdeviceptr buf)
{
    char what[512];
    /* 8-byte aligned like a real .nv_fatbin section. */
    size_t len = 0;
    void *raw = e2e_read(dir, img, &len);
    unsigned long long *fat = calloc(len / 8 + 1, 8);
    memcpy(fat, raw, len);
    static struct e2e_fatbin_wrapper w;
    w.magic = 0x466243B1;
    w.version = 1;
    w.data = fat;
    w.filename_or_fatbins = NULL;
    CUlibrary lib = NULL;
    snprintf(what, sizeof what, "cuLibraryLoadData %s", img);
    if (e2e_step(a, what, a->cuLibraryLoadData(&lib, &w, NULL, NULL, 0, NULL, NULL, 0)) !=
        CUDA_SUCCESS)
        return;
    CUkernel k = NULL;
    if (e2e_step(a, "cuLibraryGetKernel " E2E_KERNEL, a->cuLibraryGetKernel(&k, lib, E2E_KERNEL)) !=
        CUDA_SUCCESS)
        return;
    CUfunction f = NULL;
    if (e2e_step(a, "cuKernelGetFunction", a->cuKernelGetFunction(&f, k)) == CUDA_SUCCESS)
        e2e_launch_twice(a, f, buf);
}

static inline void e2e_flow_link(const struct e2e_api *a, const char *dir, const char *img,
                                 CUdeviceptr buf)
{
    char what[512];
    size_t len = 0;
    char *ptx = e2e_read(dir, img, &len);
    CUlinkState ls = NULL;
    if (e2e_step(a, "cuLinkCreate", a->cuLinkCreate(0, NULL, NULL, &ls)) != CUDA_SUCCESS)
        return;
    snprintf(what, sizeof what, "cuLinkAddData %s", img);
    if (e2e_step(a, what,
                 a->cuLinkAddData(ls, CU_JIT_INPUT_PTX, ptx, len + 1, img, 0, NULL, NULL)) !=
        CUDA_SUCCESS)
        return;
    void *cubin = NULL;
    size_t cubin_size = 0;
    if (e2e_step(a, "cuLinkComplete", a->cuLinkComplete(ls, &cubin, &cubin_size)) != CUDA_SUCCESS)
        return;
    printf("linked cubin: %s\n", cubin && cubin_size > 0 ? "non-empty" : "EMPTY");
    CUmodule mod = NULL;
    if (e2e_step(a, "cuModuleLoadData linked", a->cuModuleLoadData(&mod, cubin)) != CUDA_SUCCESS)
        return;
    CUfunction f = NULL;
    if (e2e_step(a, "cuModuleGetFunction " E2E_KERNEL,
                 a->cuModuleGetFunction(&f, mod, E2E_KERNEL)) == CUDA_SUCCESS)
        e2e_launch_twice(a, f, buf);
}

/* cuInit, device 0, its primary context, and a buffer for the kernels. */
static inline CUresult e2e_setup(const struct e2e_api *a, CUdeviceptr *buf)
{
    CUresult r = e2e_step(a, "cuInit", a->cuInit(0));
    if (r != CUDA_SUCCESS)
        return r;
    int ver = 0, count = 0;
    e2e_step(a, "cuDriverGetVersion", a->cuDriverGetVersion(&ver));
    e2e_step(a, "cuDeviceGetCount", a->cuDeviceGetCount(&count));
    printf("devices: %d\n", count);
    CUdevice dev = 0;
    e2e_step(a, "cuDeviceGet", a->cuDeviceGet(&dev, 0));
    CUcontext ctx = NULL;
    r = e2e_step(a, "cuDevicePrimaryCtxRetain", a->cuDevicePrimaryCtxRetain(&ctx, dev));
    if (r != CUDA_SUCCESS)
        return r;
    e2e_step(a, "cuCtxSetCurrent", a->cuCtxSetCurrent(ctx));
    return e2e_step(a, "cuMemAlloc", a->cuMemAlloc(buf, 32 * sizeof(int)));
}

static inline void e2e_on_term(int sig)
{
    static const char msg[] = "own SIGTERM handler\n";
    (void)sig;
    if (write(1, msg, sizeof msg - 1) < 0)
        _exit(8);
    _exit(7);
}

/* Checks that every entry point was found, then runs the steps. */
static inline int e2e_run(const struct e2e_api *a, int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr,
                "usage: %s FIXTURES_DIR EXIT_CODE module|library|link [IMAGE...] [--hold]\n",
                argv[0]);
        return 2;
    }
#define E2E_CHECK(name)                                                                            \
    if (!a->name) {                                                                                \
        printf("missing entry point %s\n", #name);                                                 \
        return 91;                                                                                 \
    }
    E2E_FUNCS(E2E_CHECK)
#undef E2E_CHECK
    const char *dir = argv[1];
    int code = atoi(argv[2]);
    const char *flow = argv[3];
    int hold = 0;

    CUdeviceptr buf = 0;
    if (e2e_setup(a, &buf) != CUDA_SUCCESS)
        return code;

    for (int i = 4; i < argc; i++) {
        if (strcmp(argv[i], "--hold") == 0) {
            hold = 1;
            continue;
        }
        if (strcmp(argv[i], "--on-term") == 0) {
            signal(SIGTERM, e2e_on_term);
            continue;
        }
        if (strcmp(flow, "module") == 0)
            e2e_flow_module(a, dir, argv[i], buf);
        else if (strcmp(flow, "library") == 0)
            e2e_flow_library(a, dir, argv[i], buf);
        else if (strcmp(flow, "link") == 0)
            e2e_flow_link(a, dir, argv[i], buf);
        else {
            printf("unknown flow %s\n", flow);
            return 2;
        }
    }
    e2e_step(a, "cuMemFree", a->cuMemFree(buf));
    if (hold) {
        printf("holding\n");
        fflush(stdout);
        for (;;)
            pause();
    }
    printf("done, exit %d\n", code);
    fflush(stdout);
    fprintf(stderr, "%s: finished with %d\n", flow, code);
    return code;
}

#endif
