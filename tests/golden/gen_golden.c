/*
 * gen_golden: writes the stored traces of the golden report tests through the
 * real trace writer (common/trace.h), so they are byte-stable and need neither
 * the preload nor a GPU. Every scenario is spelled out below, with the times
 * and sizes docs/DRIVER.md records from an H200.
 *
 * usage: gen_golden OUTDIR     (writes OUTDIR/<case>.jst and OUTDIR/ranks/)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "trace.h"

#define MS 1000000ull
#define US 1000ull
#define S 1000000000ull
#define GIB (1ull << 30)

static struct jst_writer *w;
static struct jst_rec r;
static uint8_t buf[1 << 16];
static uint64_t seq;

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("gen_golden: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static void open_trace(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    unlink(path);
    w = jst_writer_open(path);
    if (!w)
        die("%s: %s", path, strerror(errno));
    seq = 0;
}

static void begin(uint16_t type)
{
    jst_rec_begin(&r, buf, sizeof(buf), type);
}

static void emit(void)
{
    if (r.overflow || jst_writer_emit(w, &r, 1) != 0)
        die("cannot write a record");
}

static void close_trace(void)
{
    if (jst_writer_close(w) != 0)
        die("cannot close a trace");
    w = NULL;
}

/* Leaves the stream unfinished, like a process killed by SIGKILL. */
static void abandon_trace(void)
{
    jst_writer_abandon(w);
    w = NULL;
}

static void process(uint64_t pid, const char *exe, const char *const *argv, const char *const *env,
                    uint64_t start)
{
    begin(JST_REC_PROCESS);
    jst_rec_u64(&r, JST_F_PID, pid);
    jst_rec_u64(&r, JST_F_PPID, 1);
    jst_rec_str(&r, JST_F_HOST, "gpu-node-1");
    jst_rec_str(&r, JST_F_EXE, exe);
    for (; argv && *argv; argv++)
        jst_rec_str(&r, JST_F_ARG, *argv);
    for (; env && *env; env++)
        jst_rec_str(&r, JST_F_ENV, *env);
    jst_rec_u64(&r, JST_F_REALTIME_NS, 1767225600ull * S + start);
    jst_rec_u64(&r, JST_F_MONO_NS, start + 20 * MS);
    jst_rec_u64(&r, JST_F_PROC_START_NS, start);
    jst_rec_str(&r, JST_F_JST_VERSION, "0.1.0");
    jst_rec_str(&r, JST_F_CWD, "/opt/app");
    emit();
}

static void device(unsigned cc)
{
    begin(JST_REC_DEVICE);
    jst_rec_u64(&r, JST_F_DEVICE, 0);
    jst_rec_u64(&r, JST_F_CC_MAJOR, cc / 10);
    jst_rec_u64(&r, JST_F_CC_MINOR, cc % 10);
    jst_rec_str(&r, JST_F_DEV_NAME, "NVIDIA H200");
    jst_rec_u64(&r, JST_F_DRIVER_VERSION, 13000);
    emit();
}

struct cache {
    const char *path;
    int from_env, exists, writable, disabled;
    uint64_t size, entries, max;
};

static void cache_state(int phase, const struct cache *c)
{
    begin(JST_REC_CACHE_STATE);
    jst_rec_u64(&r, JST_F_PHASE, (uint64_t)phase);
    jst_rec_str(&r, JST_F_CACHE_PATH, c->path);
    jst_rec_u64(&r, JST_F_CACHE_PATH_ENV, (uint64_t)c->from_env);
    jst_rec_u64(&r, JST_F_EXISTS, (uint64_t)c->exists);
    jst_rec_u64(&r, JST_F_WRITABLE, (uint64_t)c->writable);
    jst_rec_u64(&r, JST_F_DISABLED, (uint64_t)c->disabled);
    jst_rec_u64(&r, JST_F_SIZE_BYTES, c->size);
    jst_rec_u64(&r, JST_F_ENTRIES, c->entries);
    jst_rec_u64(&r, JST_F_MAX_BYTES, c->max);
    emit();
}

/* Starts a CALL record with the fields every call has; the caller adds more
 * and calls emit(). */
static void call(unsigned id, const char *name, uint64_t start, uint64_t dur)
{
    begin(JST_REC_CALL);
    jst_rec_u64(&r, JST_F_SEQ, ++seq);
    jst_rec_u64(&r, JST_F_TID, 100);
    jst_rec_u64(&r, JST_F_CALL_ID, id);
    jst_rec_str(&r, JST_F_CALL, name);
    jst_rec_u64(&r, JST_F_ROUTE, JST_ROUTE_PROCADDR);
    jst_rec_u64(&r, JST_F_START_NS, start);
    jst_rec_u64(&r, JST_F_DUR_NS, dur);
    jst_rec_i64(&r, JST_F_RESULT, 0);
}

static void simple_call(unsigned id, const char *name, uint64_t start, uint64_t dur)
{
    call(id, name, start, dur);
    emit();
}

struct load {
    unsigned call;
    const char *call_name;
    uint64_t start, dur;
    unsigned image_kind;
    uint64_t image_size, handle;
    const char *source, *path;
    unsigned verdict;
    const char *sass_arch, *jit_from, *reason;
    const char *const *kernels;
    const char *const *entries;
    uint64_t ptx_size;
    unsigned cache, cache_reason;
    uint64_t new_bytes, new_entries, stack_id;
    int64_t result;
};

static void load(const struct load *l)
{
    call(l->call, l->call_name, l->start, l->dur);
    if (l->result) {
        /* replace the 0 result written by call(): a later field wins in the reader */
        jst_rec_i64(&r, JST_F_RESULT, l->result);
    }
    jst_rec_u64(&r, JST_F_HANDLE, l->handle);
    jst_rec_u64(&r, JST_F_IMAGE_KIND, l->image_kind);
    jst_rec_u64(&r, JST_F_IMAGE_SIZE, l->image_size);
    jst_rec_u64(&r, JST_F_IMAGE_HASH, 0x1234abcd0000ull + l->image_size);
    jst_rec_str(&r, JST_F_SOURCE, l->source);
    jst_rec_str(&r, JST_F_PATH, l->path);
    jst_rec_u64(&r, JST_F_LOAD_DEVICE, 0);
    jst_rec_u64(&r, JST_F_VERDICT, l->verdict);
    jst_rec_str(&r, JST_F_SASS_ARCH, l->sass_arch);
    jst_rec_str(&r, JST_F_JIT_FROM, l->jit_from);
    jst_rec_str(&r, JST_F_REASON, l->reason);
    for (const char *const *k = l->kernels; k && *k; k++)
        jst_rec_str(&r, JST_F_KERNEL, *k);
    for (const char *const *e = l->entries; e && *e; e++)
        jst_rec_str(&r, JST_F_ENTRY, *e);
    if (l->ptx_size)
        jst_rec_u64(&r, JST_F_PTX_SIZE, l->ptx_size);
    jst_rec_u64(&r, JST_F_TARGET_CC, 90);
    jst_rec_u64(&r, JST_F_CACHE, l->cache);
    if (l->cache_reason)
        jst_rec_u64(&r, JST_F_CACHE_REASON, l->cache_reason);
    if (l->new_bytes || l->new_entries) {
        jst_rec_u64(&r, JST_F_CACHE_NEW_BYTES, l->new_bytes);
        jst_rec_u64(&r, JST_F_CACHE_NEW_ENTRIES, l->new_entries);
    }
    if (l->stack_id)
        jst_rec_u64(&r, JST_F_STACK_ID, l->stack_id);
    emit();
}

static void get_kernel(uint64_t start, uint64_t lib, uint64_t func, const char *name)
{
    call(JST_CALL_cuLibraryGetKernel, "cuLibraryGetKernel", start, 2 * US);
    jst_rec_u64(&r, JST_F_PARENT, lib);
    jst_rec_u64(&r, JST_F_FUNC, func);
    jst_rec_str(&r, JST_F_NAME, name);
    emit();
}

static void launch(uint64_t start, uint64_t func, const char *name)
{
    call(JST_CALL_cuLaunchKernel, "cuLaunchKernel", start, 4 * US);
    jst_rec_u64(&r, JST_F_FUNC, func);
    jst_rec_str(&r, JST_F_NAME, name);
    emit();
}

static void end(uint64_t t, int64_t status)
{
    begin(JST_REC_END);
    jst_rec_i64(&r, JST_F_EXIT_STATUS, status);
    jst_rec_u64(&r, JST_F_EVENTS, seq);
    jst_rec_str(&r, JST_F_END_REASON, "exit");
    jst_rec_u64(&r, JST_F_START_NS, t);
    jst_rec_u64(&r, JST_F_SELF_NS, 800 * US);
    emit();
}

static void note(const char *msg)
{
    begin(JST_REC_NOTE);
    jst_rec_str(&r, JST_F_MESSAGE, msg);
    jst_rec_u64(&r, JST_F_LEVEL, 1);
    emit();
}

static const char *const gemm_kernels[] = {
    "_Z11gemm_kernelPKfS0_Pfiii", "_Z6reducePKfPfi", "_Z4scanPKfPfi",
    "_Z9transposePfPKfii",        "softmax_rows",    NULL};
static const char *const ptx75[] = {"ptx compute_75 zstd", NULL};
static const char *const sass90[] = {"cubin sm_90 none", NULL};

/* A modmap entry; the files do not exist on the test machine, so the call
 * site is reported as module+offset, which keeps the golden output stable. */
static void modmap(const char *path, uint64_t start, uint64_t size)
{
    static const uint8_t id[] = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04};
    begin(JST_REC_MODMAP);
    jst_rec_u64(&r, JST_F_MOD_EVENT, JST_MOD_INITIAL);
    jst_rec_str(&r, JST_F_MOD_PATH, path);
    jst_rec_u64(&r, JST_F_MOD_BIAS, start);
    jst_rec_u64(&r, JST_F_MOD_START, start);
    jst_rec_u64(&r, JST_F_MOD_END, start + size);
    jst_rec_bytes(&r, JST_F_BUILD_ID, id, sizeof(id));
    jst_rec_u64(&r, JST_F_FILE_SIZE, size);
    jst_rec_u64(&r, JST_F_MTIME_NS, 1700000000ull * S);
    emit();
}

static void stack(uint64_t id, const uint64_t *ips, size_t n)
{
    uint8_t le[8 * 16];
    for (size_t i = 0; i < n && i < 16; i++)
        for (int b = 0; b < 8; b++)
            le[i * 8 + (size_t)b] = (uint8_t)(ips[i] >> (8 * b));
    begin(JST_REC_STACK);
    jst_rec_u64(&r, JST_F_STACK_ID, id);
    jst_rec_bytes(&r, JST_F_IPS, le, n * 8);
    emit();
}

/* The seed's story: a PTX-only library in a fresh container, cold cache. With
 * cut != 0 the process is killed right after the JIT load. */
static void cold_container(const char *dir, const char *name, int cut)
{
    static const char *const argv[] = {"/opt/app/bin/query", "--sql", "SELECT 1", NULL};
    static const char *const env[] = {"CUDA_MODULE_LOADING=LAZY", NULL};
    const uint64_t t0 = 1000 * S;
    struct cache c = {"/root/.nv/ComputeCache", 0, 0, 1, 0, 0, 0, GIB};
    open_trace(dir, name);
    process(cut ? 4243 : 4242, "/opt/app/bin/query", argv, env, t0);
    cache_state(0, &c);
    modmap("/opt/app/bin/query", 0x555555554000ull, 0x20000);
    modmap("/opt/app/lib/libfoo.so", 0x7f0000000000ull, 0x800000);
    modmap("/usr/lib/x86_64-linux-gnu/libcuda.so.1", 0x7f1000000000ull, 0x2000000);
    const uint64_t ips[] = {0x7f1000123456ull, 0x7f0000004321ull, 0x555555555abcull};
    stack(1, ips, 3);
    simple_call(JST_CALL_cuInit, "cuInit", t0 + 50 * MS, 180 * MS);
    device(90);
    simple_call(JST_CALL_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", t0 + 240 * MS,
                120 * MS);
    load(&(struct load){JST_CALL_cuLibraryLoadData,
                        "cuLibraryLoadData",
                        t0 + 370 * MS,
                        2400 * US,
                        JST_IMG_FATBIN_WRAPPER,
                        1200000,
                        0xa000,
                        "/opt/app/lib/libbar.so",
                        NULL,
                        JST_V_SASS,
                        "sm_90",
                        NULL,
                        "SASS sm_90 runs on sm_90",
                        NULL,
                        sass90,
                        0,
                        JST_C_NONE,
                        0,
                        0,
                        0,
                        0,
                        0});
    load(&(struct load){JST_CALL_cuLibraryLoadData,
                        "cuLibraryLoadData",
                        t0 + 380 * MS,
                        11800 * MS,
                        JST_IMG_FATBIN_WRAPPER,
                        5600000,
                        0xb000,
                        "/opt/app/lib/libfoo.so",
                        NULL,
                        JST_V_PTX_JIT,
                        NULL,
                        "compute_75",
                        "PTX compute_75 only; GPU is sm_90",
                        gemm_kernels,
                        ptx75,
                        5600000,
                        JST_C_MISS_STORED,
                        0,
                        1363148,
                        1,
                        1,
                        0});
    if (cut) {
        abandon_trace();
        return;
    }
    get_kernel(t0 + 12190 * MS, 0xb000, 0xc001, "_Z11gemm_kernelPKfS0_Pfiii");
    launch(t0 + 12200 * MS, 0xc001, "_Z11gemm_kernelPKfS0_Pfiii");
    c.exists = 1;
    c.size = 1363148;
    c.entries = 1;
    cache_state(1, &c);
    end(t0 + 12500 * MS, 0);
    close_trace();
}

/* Nothing wrong: SASS for the GPU, warm start. */
static void all_sass(const char *dir)
{
    static const char *const argv[] = {"/opt/app/bin/query", NULL};
    const uint64_t t0 = 50 * S;
    struct cache c = {"/root/.nv/ComputeCache", 0, 1, 1, 0, 1363148, 1, GIB};
    open_trace(dir, "all_sass.jst");
    process(777, "/opt/app/bin/query", argv, NULL, t0);
    cache_state(0, &c);
    simple_call(JST_CALL_cuInit, "cuInit", t0 + 40 * MS, 150 * MS);
    device(90);
    simple_call(JST_CALL_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", t0 + 200 * MS,
                110 * MS);
    load(&(struct load){JST_CALL_cuModuleLoadData,
                        "cuModuleLoadData",
                        t0 + 320 * MS,
                        2400 * US,
                        JST_IMG_FATBIN,
                        900000,
                        0xa000,
                        "/opt/app/lib/libfoo.so",
                        NULL,
                        JST_V_SASS,
                        "sm_90",
                        NULL,
                        "SASS sm_90 runs on sm_90",
                        NULL,
                        sass90,
                        0,
                        JST_C_NONE,
                        0,
                        0,
                        0,
                        0,
                        0});
    call(JST_CALL_cuModuleGetFunction, "cuModuleGetFunction", t0 + 323 * MS, 1 * US);
    jst_rec_u64(&r, JST_F_PARENT, 0xa000);
    jst_rec_u64(&r, JST_F_FUNC, 0xc001);
    jst_rec_str(&r, JST_F_NAME, "softmax_rows");
    emit();
    launch(t0 + 330 * MS, 0xc001, "softmax_rows");
    cache_state(1, &c);
    end(t0 + 400 * MS, 0);
    close_trace();
}

static const char *const ext_kernels[] = {"_Z8fused_opPfPKfi", NULL};
static const char *const ptx80[] = {"ptx compute_80 zstd", NULL};
static const char *const fat_forced[] = {"cubin sm_90 none", "ptx compute_90 zstd", NULL};

/* Three torchrun ranks, each losing its JIT output to a different cache
 * mistake; rank 1 also JIT-links PTX, rank 2 also forces the JIT and has CUPTI
 * ground truth. */
static void ranks(const char *dir)
{
    static const char *const argv[] = {"/usr/bin/python3", "train.py", NULL};
    const char *ext = "/env/lib/python3.12/site-packages/fused/_ext.so";
    char sub[4096];
    snprintf(sub, sizeof(sub), "%s/ranks", dir);
    if (mkdir(sub, 0755) != 0 && errno != EEXIST)
        die("%s: %s", sub, strerror(errno));

    for (int rank = 0; rank < 3; rank++) {
        static const char *const env0[] = {"CUDA_CACHE_DISABLE=1", NULL};
        static const char *const env1[] = {"CUDA_CACHE_MAXSIZE=4096", NULL};
        static const char *const env2[] = {"CUDA_CACHE_PATH=/ro/cache", "CUDA_FORCE_PTX_JIT=1",
                                           NULL};
        const char *const *envs[] = {env0, env1, env2};
        struct cache cs[] = {
            {"/root/.nv/ComputeCache", 0, 1, 1, 1, 0, 0, GIB},
            {"/root/.nv/ComputeCache", 0, 1, 1, 0, 0, 0, 4096},
            {"/ro/cache", 1, 1, 0, 0, 52428800, 12, GIB},
        };
        static const unsigned reasons[] = {JST_CR_DISABLED, JST_CR_TOO_SMALL, JST_CR_READ_ONLY};
        char name[32];
        const uint64_t t0 = (2000 + 100 * (uint64_t)rank) * S;
        snprintf(name, sizeof(name), "rank%d.jst", rank);
        open_trace(sub, name);
        process(5001 + (uint64_t)rank, "/usr/bin/python3.12", argv, envs[rank], t0);
        cache_state(0, &cs[rank]);
        simple_call(JST_CALL_cuInit, "cuInit", t0 + 900 * MS, 200 * MS);
        device(90);
        simple_call(JST_CALL_cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", t0 + 1110 * MS,
                    130 * MS);
        load(&(struct load){JST_CALL_cuModuleLoadData,
                            "cuModuleLoadData",
                            t0 + 1300 * MS,
                            (2400 + 100 * (uint64_t)rank) * MS,
                            JST_IMG_FATBIN,
                            3000000,
                            0xa000,
                            ext,
                            NULL,
                            JST_V_PTX_JIT,
                            NULL,
                            "compute_80",
                            "PTX compute_80 only; GPU is sm_90",
                            ext_kernels,
                            ptx80,
                            3000000,
                            JST_C_MISS_NOT_STORED,
                            reasons[rank],
                            0,
                            0,
                            0,
                            0});
        uint64_t t = t0 + 4000 * MS;
        if (rank == 1) {
            call(JST_CALL_cuLinkCreate, "cuLinkCreate_v2", t, 10 * US);
            jst_rec_u64(&r, JST_F_HANDLE, 0x77);
            emit();
            call(JST_CALL_cuLinkAddData, "cuLinkAddData_v2", t + 1 * MS, 400 * MS);
            jst_rec_u64(&r, JST_F_HANDLE, 0x77);
            jst_rec_u64(&r, JST_F_JIT_INPUT, 1);
            jst_rec_str(&r, JST_F_NAME, "generated.ptx");
            emit();
            call(JST_CALL_cuLinkComplete, "cuLinkComplete", t + 402 * MS, 50 * MS);
            jst_rec_u64(&r, JST_F_HANDLE, 0x77);
            jst_rec_u64(&r, JST_F_CUBIN_SIZE, 65536);
            emit();
            t += 500 * MS;
        }
        if (rank == 2) {
            load(&(struct load){JST_CALL_cuLibraryLoadData,
                                "cuLibraryLoadData",
                                t,
                                45 * MS,
                                JST_IMG_FATBIN_WRAPPER,
                                2000000,
                                0xd000,
                                "/env/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so",
                                NULL,
                                JST_V_FORCED_JIT,
                                NULL,
                                "compute_90",
                                "CUDA_FORCE_PTX_JIT=1: SASS sm_90 ignored, PTX compute_90 JIT",
                                NULL,
                                fat_forced,
                                1500000,
                                JST_C_HIT,
                                0,
                                0,
                                0,
                                0,
                                0});
            begin(JST_REC_CUPTI_JIT);
            jst_rec_u64(&r, JST_F_CUPTI_OP, JST_CUPTI_COMPILE);
            jst_rec_u64(&r, JST_F_CUPTI_START_NS, t0 + 1310 * MS);
            jst_rec_u64(&r, JST_F_CUPTI_END_NS, t0 + 3790 * MS);
            emit();
            begin(JST_REC_CUPTI_JIT);
            jst_rec_u64(&r, JST_F_CUPTI_OP, JST_CUPTI_CACHE_LOAD);
            jst_rec_u64(&r, JST_F_CUPTI_START_NS, t + 10 * MS);
            jst_rec_u64(&r, JST_F_CUPTI_END_NS, t + 40 * MS);
            jst_rec_str(&r, JST_F_CUPTI_CACHE_PATH, "/ro/cache");
            emit();
            t += 950 * MS;
        }
        call(JST_CALL_cuModuleGetFunction, "cuModuleGetFunction", t, 1 * US);
        jst_rec_u64(&r, JST_F_PARENT, 0xa000);
        jst_rec_u64(&r, JST_F_FUNC, 0xc001);
        jst_rec_str(&r, JST_F_NAME, "_Z8fused_opPfPKfi");
        emit();
        launch(t + 5 * MS, 0xc001, "_Z8fused_opPfPKfi");
        if (rank == 0)
            note("tracing of cuLaunchKernelEx is off: its signature did not match");
        cache_state(1, &cs[rank]);
        end(t + 2 * S, 0);
        close_trace();
    }
}

/* Hostile strings: quotes, a newline, a terminal escape, invalid UTF-8,
 * Markdown table separators. Reports must stay well-formed. */
static void odd_strings(const char *dir)
{
    static const char *const argv[] = {"/opt/we\"ird\n\x1b[2Japp\xff\xfe", "--a|b", NULL};
    static const char *const kernels[] = {"k|`x`\x1b]0;t\x07", "_Z3fooi", NULL};
    const uint64_t t0 = 10 * S;
    open_trace(dir, "odd.jst");
    process(31337, argv[0], argv, NULL, t0);
    simple_call(JST_CALL_cuInit, "cuInit", t0 + 10 * MS, 100 * MS);
    device(90);
    load(&(struct load){JST_CALL_cuModuleLoad,
                        "cuModuleLoad",
                        t0 + 200 * MS,
                        300 * MS,
                        JST_IMG_FILE,
                        4096,
                        0xa000,
                        NULL,
                        "/opt/my lib/k|odd\n.ptx",
                        JST_V_PTX_JIT,
                        NULL,
                        "compute_75",
                        "PTX compute_75 only; GPU is sm_90",
                        kernels,
                        NULL,
                        4096,
                        JST_C_UNKNOWN,
                        0,
                        0,
                        0,
                        0,
                        0});
    launch(t0 + 600 * MS, 0xc001, "_Z3fooi");
    note("tab\there, bell\x07, \xc3\x28 invalid");
    end(t0 + 700 * MS, 0);
    close_trace();
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_golden OUTDIR\n");
        return 2;
    }
    const char *dir = argv[1];
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        die("%s: %s", dir, strerror(errno));
    cold_container(dir, "cold.jst", 0);
    cold_container(dir, "killed.jst", 1);
    all_sass(dir);
    ranks(dir);
    odd_strings(dir);

    char path[4096];
    snprintf(path, sizeof(path), "%s/garbage.jst", dir);
    FILE *f = fopen(path, "w");
    if (!f || fputs("this is not a jitstall trace\n", f) < 0 || fclose(f) != 0)
        die("%s: cannot write", path);
    return 0;
}
