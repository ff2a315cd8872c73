/*
 * jitstall's simulated CUDA driver: a libcuda.so.1 TEST DOUBLE for machines
 * without a GPU. Never ship it or install it as a driver: it runs no kernel
 * and allocates "device" memory with malloc.
 *
 * It behaves like the real driver on the points docs/DRIVER.md records:
 * the exported names and exact signatures (from the toolkit's cuda.h), the
 * cuGetProcAddress versioning (PFN_* suffixes of cudaTypedefs.h), which image
 * a load uses (its own table of NVIDIA's rules, sim_rules.c), the PTX JIT cost and the on-disk JIT
 * cache (sim_cache.c), and the errors of CUDA_FORCE_PTX_JIT and
 * CUDA_DISABLE_PTX_JIT.
 *
 * Environment, read once at the first cuInit (as the real driver does):
 *   JITSTALL_SIM_DEVICES       number of devices (default 1, at most 16; 0: no device)
 *   JITSTALL_SIM_CC            compute capability, "90", "9.0" or "sm_90"; a comma
 *                              list gives one per device, the last one repeats (default 90)
 *                              (a value that is not a GPU's compute capability makes
 *                              cuInit fail with CUDA_ERROR_INVALID_VALUE, said on stderr)
 *   JITSTALL_SIM_DRIVER_VERSION the CUDA version cuDriverGetVersion reports (default
 *                              13000); PTX with a newer .version is refused with
 *                              CUDA_ERROR_UNSUPPORTED_PTX_VERSION, as the real driver does
 *   JITSTALL_SIM_JIT_US_PER_KB JIT cost in microseconds per KiB of PTX (default 100);
 *                              a cache hit costs 1/100 of that, at least 100 us
 *   JITSTALL_SIM_CAPTURE_US    what cuStreamEndCapture costs, in microseconds (default 0)
 *   JITSTALL_SIM_INSTANTIATE_US what a cuGraphInstantiate* costs (default 0)
 *   CUDA_CACHE_PATH, CUDA_CACHE_DISABLE, CUDA_CACHE_MAXSIZE, CUDA_FORCE_PTX_JIT,
 *   CUDA_FORCE_JIT, CUDA_DISABLE_PTX_JIT, CUDA_DISABLE_JIT as documented by NVIDIA.
 *
 * A JIT costs JITSTALL_SIM_JIT_US_PER_KB per KiB of the PTX chosen and stores
 * an entry of max(25/16 of the PTX, 16 KiB) bytes (sim_cache.c has the layout); a hit
 * reads that entry instead. Loads, links and the cache take no global lock:
 * the cache's index is guarded by flock, so processes and threads may share it.
 *
 * Handles are heap objects that start with a magic number, checked on use.
 * Module loads, links and memory need a current context; libraries do not.
 * Not simulated: cudart's private export tables (cuGetExportTable fails),
 * linking of objects, archives and LTO-IR, and everything not listed in
 * sim_syms below.
 */
#define __CUDA_API_VERSION_INTERNAL 1 /* declares every versioned variant */
#include <cuda.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "image.h"
#include "sim.h"

#define SIM_MAX_DEV 16
#define SIM_DRIVER_VERSION 13000

enum {
    SIM_MAGIC_CTX = 0x4a535843,  /* "JSXC" */
    SIM_MAGIC_MOD = 0x4a53584d,  /* module */
    SIM_MAGIC_LIB = 0x4a53584c,  /* library */
    SIM_MAGIC_FUNC = 0x4a535846, /* CUfunction */
    SIM_MAGIC_KERN = 0x4a53584b, /* CUkernel */
    SIM_MAGIC_LINK = 0x4a53584e,
    SIM_MAGIC_MEM = 0x4a535852,
    SIM_MAGIC_STREAM = 0x4a535853,
    SIM_MAGIC_GRAPH = 0x4a535847,
    SIM_MAGIC_GEXEC = 0x4a535845,
};

struct sim_ctx {
    uint32_t magic;
    int dev;
    int primary;
};

struct sim_mod;

/* A CUfunction, or a CUkernel of a library (which carries its CUfunction). */
struct sim_fn {
    uint32_t magic;
    struct sim_mod *mod;
    const char *name;
    struct sim_fn *func; /* for a CUkernel: its CUfunction */
};

struct sim_names {
    char **v;
    size_t n, cap;
};

struct sim_mod {
    uint32_t magic; /* SIM_MAGIC_MOD or SIM_MAGIC_LIB */
    struct sim_names names;
    struct sim_fn *funcs; /* one per name */
    struct sim_fn *kerns; /* libraries only: one per name */
};

struct sim_link {
    uint32_t magic;
    unsigned cc;
    unsigned inputs;
    unsigned nopt; /* cuLinkCreate's options, written back at cuLinkComplete */
    CUjit_option *opt;
    void **val;
    double wall_ms; /* accumulated over the adds */
    struct sim_names names;
    uint8_t *cubin;
    size_t cubin_size;
};

static struct {
    pthread_mutex_t lock;
    atomic_int inited;
    int ndev;
    unsigned cc[SIM_MAX_DEV];
    uint64_t us_per_kb;
    uint64_t capture_us, instantiate_us;
    int env_flags;
    unsigned driver; /* CUDA version, 13000 for 13.0 */
    int bad_env;     /* a setting was refused: cuInit fails */
    struct sim_cache_cfg cache;
    struct sim_ctx primary[SIM_MAX_DEV];
    unsigned primary_refs[SIM_MAX_DEV];
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static __thread struct sim_ctx *t_current;

/* ---- small helpers ---- */

static int sim_ready(void)
{
    return atomic_load_explicit(&g.inited, memory_order_acquire);
}

#define SIM_REQUIRE_INIT()                                                                         \
    do {                                                                                           \
        if (!sim_ready())                                                                          \
            return CUDA_ERROR_NOT_INITIALIZED;                                                     \
    } while (0)

static void sim_sleep_us(uint64_t us)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += (time_t)(us / 1000000);
    t.tv_nsec += (long)(us % 1000000) * 1000;
    if (t.tv_nsec >= 1000000000L) {
        t.tv_sec++;
        t.tv_nsec -= 1000000000L;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
        ;
}

static double sim_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Writes what the driver returns through JIT options: CU_JIT_WALL_TIME gets
 * the milliseconds spent, and the info and error logs come back empty (the
 * simulated JIT has nothing to say), their size options set to 0. */
static void sim_jit_outputs(unsigned n, const CUjit_option *opt, void **val, float wall_ms)
{
    if (!opt || !val)
        return;
    for (unsigned i = 0; i < n; i++) {
        if (opt[i] == CU_JIT_WALL_TIME) {
            memcpy(&val[i], &wall_ms, sizeof wall_ms);
        } else if (opt[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES ||
                   opt[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
            CUjit_option buf = opt[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES
                                   ? CU_JIT_INFO_LOG_BUFFER
                                   : CU_JIT_ERROR_LOG_BUFFER;
            for (unsigned j = 0; j < n; j++)
                if (opt[j] == buf && val[j] && (uintptr_t)val[i] > 0)
                    *(char *)val[j] = '\0';
            val[i] = (void *)(uintptr_t)0;
        }
    }
}

/* "90", "9.0", "sm_90", "compute_90a" -> 90; 0 when unreadable. */
static unsigned sim_parse_cc(const char *s, size_t len)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    const char *p = buf;
    if (!strncmp(p, "sm_", 3))
        p += 3;
    else if (!strncmp(p, "compute_", 8))
        p += 8;
    char *end = NULL;
    unsigned long major = strtoul(p, &end, 10);
    if (end == p)
        return 0;
    if (*end == '.') {
        const char *q = end + 1;
        unsigned long minor = strtoul(q, &end, 10);
        if (end == q || minor > 9)
            return 0;
        major = major * 10 + minor;
    }
    return major >= 10 && major < 1000 ? (unsigned)major : 0;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end = NULL;
    unsigned long long n = strtoull(v, &end, 10);
    return end != v && *end == '\0' ? n : def;
}

static void sim_read_env(void)
{
    g.ndev = (int)env_u64("JITSTALL_SIM_DEVICES", 1);
    if (g.ndev > SIM_MAX_DEV)
        g.ndev = SIM_MAX_DEV;
    const char *ccs = getenv("JITSTALL_SIM_CC");
    unsigned last = 90;
    for (int d = 0; d < SIM_MAX_DEV; d++) {
        if (ccs && *ccs) {
            size_t len = strcspn(ccs, ",");
            unsigned cc = sim_parse_cc(ccs, len);
            if (cc && sim_cc_known(cc)) {
                last = cc;
            } else if (!g.bad_env) {
                g.bad_env = 1;
                fprintf(stderr,
                        "simulated libcuda: JITSTALL_SIM_CC '%.*s' is not a GPU's compute "
                        "capability; cuInit fails\n",
                        (int)len, ccs);
            }
            ccs += len + (ccs[len] == ',');
        }
        g.cc[d] = last;
        g.primary[d] = (struct sim_ctx){SIM_MAGIC_CTX, d, 1};
    }
    g.us_per_kb = env_u64("JITSTALL_SIM_JIT_US_PER_KB", 100);
    g.capture_us = env_u64("JITSTALL_SIM_CAPTURE_US", 0);
    g.instantiate_us = env_u64("JITSTALL_SIM_INSTANTIATE_US", 0);
    const char *dv = getenv("JITSTALL_SIM_DRIVER_VERSION");
    uint64_t drv = env_u64("JITSTALL_SIM_DRIVER_VERSION", 0);
    g.driver = SIM_DRIVER_VERSION;
    if (dv && *dv) {
        if (drv >= 1000 && drv < 100000 && drv % 10 == 0) {
            g.driver = (unsigned)drv;
        } else {
            g.bad_env = 1;
            fprintf(stderr,
                    "simulated libcuda: JITSTALL_SIM_DRIVER_VERSION '%s' is not a CUDA version "
                    "such as 13000; cuInit fails\n",
                    dv);
        }
    }
    g.env_flags = jst_env_jit_flags();
    sim_cache_config(&g.cache);
}

static struct sim_ctx *sim_ctx_of(CUcontext c)
{
    struct sim_ctx *x = (struct sim_ctx *)c;
    return x && x->magic == SIM_MAGIC_CTX ? x : NULL;
}

static int sim_valid_dev(CUdevice d)
{
    return d >= 0 && d < g.ndev;
}

/* Device of the current context, or device 0 for context-free library loads. */
static unsigned sim_current_cc(void)
{
    return g.cc[t_current ? t_current->dev : 0];
}

static int names_add(struct sim_names *s, const char *name, size_t len)
{
    for (size_t i = 0; i < s->n; i++)
        if (strlen(s->v[i]) == len && !memcmp(s->v[i], name, len))
            return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        char **v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -1;
        s->v = v;
        s->cap = cap;
    }
    char *copy = strndup(name, len);
    if (!copy)
        return -1;
    s->v[s->n++] = copy;
    return 0;
}

static void names_free(struct sim_names *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

struct names_cb {
    struct sim_names *names;
    int failed;
};

static void names_cb(void *ctx, const char *name, size_t len)
{
    struct names_cb *c = ctx;
    if (names_add(c->names, name, len) != 0)
        c->failed = 1;
}

static CUresult entry_names(const struct jst_entry *e, struct sim_names *names)
{
    struct names_cb c = {names, 0};
    if (jst_entry_kernels(e, names_cb, &c) < 0)
        return CUDA_ERROR_INVALID_IMAGE;
    return c.failed ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_SUCCESS;
}

/* ---- the JIT and the image choice ---- */

/* "Compiles" PTX entry e for cc: the cost of a JIT, or of a cache hit. */
static CUresult sim_jit(const struct jst_entry *e, unsigned cc, struct sim_names *names)
{
    size_t len = 0;
    uint8_t *ptx = jst_entry_data(e, &len);
    if (!ptx)
        return CUDA_ERROR_INVALID_IMAGE;
    uint64_t h[2] = {jst_hash64(ptx, len), cc};
    uint64_t key = jst_hash64(h, sizeof h);
    free(ptx);
    CUresult rc = entry_names(e, names);
    if (rc != CUDA_SUCCESS)
        return rc;
    uint64_t jit_us = (uint64_t)len * g.us_per_kb / 1024;
    if (sim_cache_lookup(&g.cache, key, cc)) {
        sim_sleep_us(jit_us / 100 > 100 ? jit_us / 100 : 100);
        return CUDA_SUCCESS;
    }
    sim_sleep_us(jit_us);
    sim_cache_store(&g.cache, key, cc, len);
    return CUDA_SUCCESS;
}

/* Does what the driver does with an image for compute capability cc: picks
 * SASS or JITs PTX (NVIDIA's rules, common/image.h), and collects the kernels. */
static CUresult sim_resolve(const void *ptr, size_t known, unsigned cc, struct sim_names *names)
{
    if (!ptr)
        return CUDA_ERROR_INVALID_VALUE;
    struct jst_image img;
    memset(&img, 0, sizeof img);
    jst_image_inspect(ptr, known, &img);
    int si = -1, pi = -1;
    CUresult rc;
    switch (sim_choose(&img, cc, g.env_flags, g.driver, &si, &pi)) {
    case SIM_PICK_SASS:
        rc = entry_names(&img.entries[si], names);
        break;
    case SIM_PICK_JIT:
        rc = sim_jit(&img.entries[pi], cc, names);
        break;
    case SIM_PICK_NO_BINARY:
        rc = CUDA_ERROR_NO_BINARY_FOR_GPU;
        break;
    case SIM_PICK_JIT_DISABLED:
        rc = CUDA_ERROR_JIT_COMPILATION_DISABLED;
        break;
    case SIM_PICK_PTX_TOO_NEW:
        rc = CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
        break;
    default:
        rc = CUDA_ERROR_INVALID_IMAGE;
        break;
    }
    jst_image_free(&img);
    return rc;
}

/* Reads a whole file (cuModuleLoad, cuLibraryLoadFromFile, cuLinkAddFile). */
static CUresult sim_read_file(const char *path, uint8_t **data, size_t *size)
{
    if (!path)
        return CUDA_ERROR_INVALID_VALUE;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return CUDA_ERROR_FILE_NOT_FOUND;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return CUDA_ERROR_FILE_NOT_FOUND;
    }
    size_t n = (size_t)st.st_size, got = 0;
    uint8_t *buf = malloc(n + 1);
    if (!buf) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    while (got < n) {
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    buf[got] = '\0'; /* PTX text files end here */
    *data = buf;
    *size = got;
    return CUDA_SUCCESS;
}

static void sim_mod_free(struct sim_mod *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->names.n; i++) {
        m->funcs[i].magic = 0;
        if (m->kerns)
            m->kerns[i].magic = 0;
    }
    m->magic = 0;
    free(m->funcs);
    free(m->kerns);
    names_free(&m->names);
    free(m);
}

/* Loads a module (library = 0) or a library (library = 1) from memory. */
static CUresult sim_load(const void *image, size_t known, int library, struct sim_mod **out)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (!library && !t_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct sim_mod *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult rc = sim_resolve(image, known, sim_current_cc(), &m->names);
    if (rc == CUDA_SUCCESS) {
        size_t n = m->names.n ? m->names.n : 1;
        m->funcs = calloc(n, sizeof *m->funcs);
        m->kerns = library ? calloc(n, sizeof *m->kerns) : NULL;
        if (!m->funcs || (library && !m->kerns))
            rc = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (rc != CUDA_SUCCESS) {
        sim_mod_free(m);
        return rc;
    }
    for (size_t i = 0; i < m->names.n; i++) {
        m->funcs[i] = (struct sim_fn){SIM_MAGIC_FUNC, m, m->names.v[i], NULL};
        if (library)
            m->kerns[i] = (struct sim_fn){SIM_MAGIC_KERN, m, m->names.v[i], &m->funcs[i]};
    }
    m->magic = library ? SIM_MAGIC_LIB : SIM_MAGIC_MOD;
    *out = m;
    return CUDA_SUCCESS;
}

static CUresult sim_load_file(const char *path, int library, struct sim_mod **out)
{
    uint8_t *data = NULL;
    size_t size = 0;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (!library && !t_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    CUresult rc = sim_read_file(path, &data, &size);
    if (rc == CUDA_SUCCESS)
        rc = sim_load(data, size, library, out);
    free(data);
    return rc;
}

static struct sim_fn *sim_find(struct sim_mod *m, const char *name, int kernel)
{
    for (size_t i = 0; i < m->names.n; i++)
        if (!strcmp(m->names.v[i], name))
            return kernel ? &m->kerns[i] : &m->funcs[i];
    return NULL;
}

/* ---- initialization, devices, version ---- */

CUresult CUDAAPI cuInit(unsigned int Flags)
{
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g.lock);
    if (!sim_ready()) {
        sim_read_env();
        if (g.bad_env) {
            pthread_mutex_unlock(&g.lock);
            return CUDA_ERROR_INVALID_VALUE;
        }
        if (g.ndev > 0)
            atomic_store_explicit(&g.inited, 1, memory_order_release);
    }
    pthread_mutex_unlock(&g.lock);
    return g.ndev > 0 ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    /* The real driver answers before cuInit: so does this one, from the
     * environment when cuInit has not read it yet. */
    uint64_t env = env_u64("JITSTALL_SIM_DRIVER_VERSION", SIM_DRIVER_VERSION);
    if (env < 1000 || env >= 100000 || env % 10)
        env = SIM_DRIVER_VERSION;
    *driverVersion = (int)(g.driver ? g.driver : env);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
    SIM_REQUIRE_INIT();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_valid_dev(ordinal))
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
    SIM_REQUIRE_INIT();
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = g.ndev;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "jitstall simulated GPU (sm_%u)", g.cc[dev]);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (!pi || attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
        *pi = (int)(g.cc[dev] / 10);
        break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
        *pi = (int)(g.cc[dev] % 10);
        break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
        *pi = 1024;
        break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
        *pi = 32;
        break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
        *pi = 132;
        break;
    default:
        *pi = 0;
        break;
    }
    return CUDA_SUCCESS;
}

/* ---- contexts ---- */

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g.lock);
    g.primary_refs[dev]++;
    pthread_mutex_unlock(&g.lock);
    *pctx = (CUcontext)&g.primary[dev];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g.lock);
    if (g.primary_refs[dev] == 0)
        rc = CUDA_ERROR_INVALID_CONTEXT;
    else
        g.primary_refs[dev]--;
    pthread_mutex_unlock(&g.lock);
    return rc;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev)
{
    return cuDevicePrimaryCtxRelease_v2(dev);
}

/* The common part of every cuCtxCreate: a new context, made current. */
static CUresult sim_ctx_create(CUcontext *pctx, CUdevice dev)
{
    SIM_REQUIRE_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (!sim_valid_dev(dev))
        return CUDA_ERROR_INVALID_DEVICE;
    struct sim_ctx *c = malloc(sizeof *c);
    if (!c)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *c = (struct sim_ctx){SIM_MAGIC_CTX, dev, 0};
    t_current = c;
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return sim_ctx_create(pctx, dev);
}

CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    return sim_ctx_create(pctx, dev);
}

CUresult CUDAAPI cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                                unsigned int flags, CUdevice dev)
{
    if (numParams < 0 || (numParams > 0 && !paramsArray))
        return CUDA_ERROR_INVALID_VALUE;
    return sim_ctx_create(pctx, dev);
}

CUresult CUDAAPI cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams,
                                unsigned int flags, CUdevice dev)
{
    return sim_ctx_create(pctx, dev);
}

CUresult CUDAAPI cuCtxDestroy_v2(CUcontext ctx)
{
    SIM_REQUIRE_INIT();
    struct sim_ctx *c = sim_ctx_of(ctx);
    if (!c || c->primary)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (t_current == c)
        t_current = NULL;
    c->magic = 0;
    free(c);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxDestroy(CUcontext ctx)
{
    return cuCtxDestroy_v2(ctx);
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx)
{
    SIM_REQUIRE_INIT();
    if (ctx && !sim_ctx_of(ctx))
        return CUDA_ERROR_INVALID_CONTEXT;
    t_current = (struct sim_ctx *)ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *pctx)
{
    SIM_REQUIRE_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)t_current;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *device)
{
    SIM_REQUIRE_INIT();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!t_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    *device = t_current->dev;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice_v2(CUdevice *device, CUcontext ctx)
{
    SIM_REQUIRE_INIT();
    struct sim_ctx *c = ctx ? sim_ctx_of(ctx) : t_current;
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (!c)
        return CUDA_ERROR_INVALID_CONTEXT;
    *device = c->dev;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void)
{
    SIM_REQUIRE_INIT();
    return t_current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

CUresult CUDAAPI cuCtxSynchronize_v2(CUcontext ctx)
{
    SIM_REQUIRE_INIT();
    return (ctx ? sim_ctx_of(ctx) : t_current) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/* ---- modules and libraries ---- */

CUresult CUDAAPI cuModuleLoad(CUmodule *module, const char *fname)
{
    SIM_REQUIRE_INIT();
    return sim_load_file(fname, 0, (struct sim_mod **)module);
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *module, const void *image)
{
    SIM_REQUIRE_INIT();
    return sim_load(image, 0, 0, (struct sim_mod **)module);
}

CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                    CUjit_option *options, void **optionValues)
{
    SIM_REQUIRE_INIT();
    if (numOptions && (!options || !optionValues))
        return CUDA_ERROR_INVALID_VALUE;
    double t0 = sim_now_ms();
    CUresult rc = sim_load(image, 0, 0, (struct sim_mod **)module);
    sim_jit_outputs(numOptions, options, optionValues, (float)(sim_now_ms() - t0));
    return rc;
}

CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
    SIM_REQUIRE_INIT();
    return sim_load(fatCubin, 0, 0, (struct sim_mod **)module);
}

CUresult CUDAAPI cuModuleUnload(CUmodule hmod)
{
    SIM_REQUIRE_INIT();
    struct sim_mod *m = (struct sim_mod *)hmod;
    if (!m || m->magic != SIM_MAGIC_MOD)
        return CUDA_ERROR_INVALID_HANDLE;
    sim_mod_free(m);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    SIM_REQUIRE_INIT();
    struct sim_mod *m = (struct sim_mod *)hmod;
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!m || m->magic != SIM_MAGIC_MOD)
        return CUDA_ERROR_INVALID_HANDLE;
    struct sim_fn *f = sim_find(m, name, 0);
    if (!f)
        return CUDA_ERROR_NOT_FOUND;
    *hfunc = (CUfunction)f;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                   void **jitOptionsValues, unsigned int numJitOptions,
                                   CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                   unsigned int numLibraryOptions)
{
    SIM_REQUIRE_INIT();
    if (numJitOptions && (!jitOptions || !jitOptionsValues))
        return CUDA_ERROR_INVALID_VALUE;
    double t0 = sim_now_ms();
    CUresult rc = sim_load(code, 0, 1, (struct sim_mod **)library);
    sim_jit_outputs(numJitOptions, jitOptions, jitOptionsValues, (float)(sim_now_ms() - t0));
    return rc;
}

CUresult CUDAAPI cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
                                       CUjit_option *jitOptions, void **jitOptionsValues,
                                       unsigned int numJitOptions, CUlibraryOption *libraryOptions,
                                       void **libraryOptionValues, unsigned int numLibraryOptions)
{
    SIM_REQUIRE_INIT();
    if (numJitOptions && (!jitOptions || !jitOptionsValues))
        return CUDA_ERROR_INVALID_VALUE;
    double t0 = sim_now_ms();
    CUresult rc = sim_load_file(fileName, 1, (struct sim_mod **)library);
    sim_jit_outputs(numJitOptions, jitOptions, jitOptionsValues, (float)(sim_now_ms() - t0));
    return rc;
}

CUresult CUDAAPI cuLibraryUnload(CUlibrary library)
{
    SIM_REQUIRE_INIT();
    struct sim_mod *m = (struct sim_mod *)library;
    if (!m || m->magic != SIM_MAGIC_LIB)
        return CUDA_ERROR_INVALID_HANDLE;
    sim_mod_free(m);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    SIM_REQUIRE_INIT();
    struct sim_mod *m = (struct sim_mod *)library;
    if (!pKernel || !name)
        return CUDA_ERROR_INVALID_VALUE;
    if (!m || m->magic != SIM_MAGIC_LIB)
        return CUDA_ERROR_INVALID_HANDLE;
    struct sim_fn *k = sim_find(m, name, 1);
    if (!k)
        return CUDA_ERROR_NOT_FOUND;
    *pKernel = (CUkernel)k;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    SIM_REQUIRE_INIT();
    struct sim_fn *k = (struct sim_fn *)kernel;
    if (!pFunc)
        return CUDA_ERROR_INVALID_VALUE;
    if (!k || k->magic != SIM_MAGIC_KERN)
        return CUDA_ERROR_INVALID_HANDLE;
    *pFunc = (CUfunction)k->func;
    return CUDA_SUCCESS;
}

/* ---- launches: validated, then nothing runs ---- */

static CUresult sim_launchable(CUfunction f)
{
    const struct sim_fn *x = (const struct sim_fn *)f;
    if (!x || (x->magic != SIM_MAGIC_FUNC && x->magic != SIM_MAGIC_KERN))
        return CUDA_ERROR_INVALID_HANDLE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                unsigned int gridDimZ, unsigned int blockDimX,
                                unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void **kernelParams,
                                void **extra)
{
    return sim_launchable(f);
}

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                     unsigned int gridDimZ, unsigned int blockDimX,
                                     unsigned int blockDimY, unsigned int blockDimZ,
                                     unsigned int sharedMemBytes, CUstream hStream,
                                     void **kernelParams, void **extra)
{
    return sim_launchable(f);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
                                  void **extra)
{
    return config ? sim_launchable(f) : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                       void **kernelParams, void **extra)
{
    return config ? sim_launchable(f) : CUDA_ERROR_INVALID_VALUE;
}

/* ---- memory ---- */

/* "Device" memory is malloc'd behind a 16-byte tag, so that cuMemFree can
 * refuse a pointer it never handed out instead of corrupting the heap. */
#define SIM_MEM_TAG 16

CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    SIM_REQUIRE_INIT();
    if (!dptr || bytesize == 0 || bytesize > SIZE_MAX - SIM_MEM_TAG)
        return CUDA_ERROR_INVALID_VALUE;
    if (!t_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    uint8_t *p = calloc(1, bytesize + SIM_MEM_TAG);
    if (!p)
        return CUDA_ERROR_OUT_OF_MEMORY;
    uint32_t magic = SIM_MAGIC_MEM;
    memcpy(p, &magic, sizeof magic);
    *dptr = (CUdeviceptr)(uintptr_t)(p + SIM_MEM_TAG);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    SIM_REQUIRE_INIT();
    if (!t_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    uint8_t *p = (uint8_t *)(uintptr_t)dptr;
    uint32_t magic = 0;
    if (!p || (uintptr_t)p < SIM_MEM_TAG)
        return CUDA_ERROR_INVALID_VALUE;
    p -= SIM_MEM_TAG;
    memcpy(&magic, p, sizeof magic);
    if (magic != SIM_MAGIC_MEM)
        return CUDA_ERROR_INVALID_VALUE;
    memset(p, 0, sizeof magic);
    free(p);
    return CUDA_SUCCESS;
}

/* Copies out of "device" memory; kernels do nothing here, so the bytes are
 * whatever was there (zero-filled at allocation). Lets GPU test programs that
 * read results back run unchanged on the simulator. */
CUresult CUDAAPI cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
    SIM_REQUIRE_INIT();
    if (!t_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!dst || !src)
        return CUDA_ERROR_INVALID_VALUE;
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return CUDA_SUCCESS;
}

/* ---- the linker ---- */

static struct sim_link *sim_link_of(CUlinkState s)
{
    struct sim_link *l = (struct sim_link *)s;
    return l && l->magic == SIM_MAGIC_LINK ? l : NULL;
}

CUresult CUDAAPI cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options,
                                 void **optionValues, CUlinkState *stateOut)
{
    SIM_REQUIRE_INIT();
    if (!stateOut || (numOptions && (!options || !optionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    if (!t_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct sim_link *l = calloc(1, sizeof *l);
    if (!l)
        return CUDA_ERROR_OUT_OF_MEMORY;
    l->magic = SIM_MAGIC_LINK;
    l->cc = g.cc[t_current->dev];
    l->nopt = numOptions;
    l->opt = options;
    l->val = optionValues;
    for (unsigned i = 0; i < numOptions; i++)
        if (options[i] == CU_JIT_TARGET) /* CUjit_target values are cc numbers: 90 */
            l->cc = (unsigned)(uintptr_t)optionValues[i];
    *stateOut = (CUlinkState)l;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkCreate(unsigned int numOptions, CUjit_option *options, void **optionValues,
                              CUlinkState *stateOut)
{
    return cuLinkCreate_v2(numOptions, options, optionValues, stateOut);
}

static CUresult sim_link_add(struct sim_link *l, CUjitInputType type, const void *data, size_t size)
{
    switch (type) {
    case CU_JIT_INPUT_CUBIN:
    case CU_JIT_INPUT_PTX:
    case CU_JIT_INPUT_FATBINARY:
        break;
    default:
        return CUDA_ERROR_NOT_SUPPORTED; /* objects, archives, LTO-IR: not simulated */
    }
    double t0 = sim_now_ms();
    CUresult rc = sim_resolve(data, size, l->cc, &l->names);
    l->wall_ms += sim_now_ms() - t0;
    if (rc == CUDA_SUCCESS)
        l->inputs++;
    return rc;
}

CUresult CUDAAPI cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size,
                                  const char *name, unsigned int numOptions, CUjit_option *options,
                                  void **optionValues)
{
    SIM_REQUIRE_INIT();
    struct sim_link *l = sim_link_of(state);
    if (!l)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!data || !size)
        return CUDA_ERROR_INVALID_VALUE;
    return sim_link_add(l, type, data, size);
}

CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size,
                               const char *name, unsigned int numOptions, CUjit_option *options,
                               void **optionValues)
{
    return cuLinkAddData_v2(state, type, data, size, name, numOptions, options, optionValues);
}

CUresult CUDAAPI cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
                                  unsigned int numOptions, CUjit_option *options,
                                  void **optionValues)
{
    SIM_REQUIRE_INIT();
    struct sim_link *l = sim_link_of(state);
    if (!l)
        return CUDA_ERROR_INVALID_HANDLE;
    uint8_t *data = NULL;
    size_t size = 0;
    CUresult rc = sim_read_file(path, &data, &size);
    if (rc == CUDA_SUCCESS)
        rc = sim_link_add(l, type, data, size);
    free(data);
    return rc;
}

CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path,
                               unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    return cuLinkAddFile_v2(state, type, path, numOptions, options, optionValues);
}

/* Appends s to a string table at *pos; returns its offset. */
static Elf64_Word put_str(char *tab, size_t *pos, const char *s)
{
    size_t at = *pos, l = strlen(s) + 1;
    memcpy(tab + at, s, l);
    *pos += l;
    return (Elf64_Word)at;
}

/*
 * Builds the smallest cubin that inspection accepts: an ELF64 header shaped
 * like nvcc 13's (OS/ABI 0x41, ABI version 8, EM_CUDA, sm in e_flags bits
 * 8-15), then .shstrtab, .strtab, .symtab and one 16-byte .text.<name> per
 * kernel, each kernel a global FUNC symbol marked STO_CUDA_ENTRY (0x10).
 * Section headers come last, so the extent can be derived from the header.
 */
static uint8_t *sim_build_cubin(const struct sim_names *k, unsigned cc, size_t *size_out)
{
    enum { TEXT_SIZE = 16 };
    size_t nsec = 4 + k->n;
    size_t shstr_len = 1 + sizeof ".shstrtab" + sizeof ".strtab" + sizeof ".symtab";
    size_t str_len = 1;
    for (size_t i = 0; i < k->n; i++) {
        size_t l = strlen(k->v[i]);
        shstr_len += sizeof ".text." - 1 + l + 1;
        str_len += l + 1;
    }
    size_t off_shstr = sizeof(Elf64_Ehdr);
    size_t off_str = off_shstr + shstr_len;
    size_t off_sym = (off_str + str_len + 7) & ~(size_t)7;
    size_t sym_size = (1 + k->n) * sizeof(Elf64_Sym);
    size_t off_text = (off_sym + sym_size + 15) & ~(size_t)15;
    size_t off_sh = (off_text + k->n * TEXT_SIZE + 7) & ~(size_t)7;
    size_t total = off_sh + nsec * sizeof(Elf64_Shdr);
    uint8_t *b = calloc(1, total);
    if (!b)
        return NULL;

    Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
    memcpy(eh->e_ident, ELFMAG, SELFMAG);
    eh->e_ident[EI_CLASS] = ELFCLASS64;
    eh->e_ident[EI_DATA] = ELFDATA2LSB;
    eh->e_ident[EI_VERSION] = EV_CURRENT;
    eh->e_ident[EI_OSABI] = 0x41;
    eh->e_ident[EI_ABIVERSION] = 8;
    eh->e_type = ET_EXEC;
    eh->e_machine = 190; /* EM_CUDA */
    eh->e_version = EV_CURRENT;
    eh->e_flags = 0x06000000u | ((cc & 0xffu) << 8) | (cc >= 100 ? 0x2u : 0x4u);
    eh->e_ehsize = sizeof(Elf64_Ehdr);
    eh->e_shoff = off_sh;
    eh->e_shentsize = sizeof(Elf64_Shdr);
    eh->e_shnum = (Elf64_Half)nsec;
    eh->e_shstrndx = 1;

    Elf64_Shdr *sh = (Elf64_Shdr *)(b + off_sh);
    char *shstr = (char *)b + off_shstr, *str = (char *)b + off_str;
    Elf64_Sym *sym = (Elf64_Sym *)(b + off_sym);
    size_t sp = 1, tp = 1;
    sh[1] = (Elf64_Shdr){.sh_name = put_str(shstr, &sp, ".shstrtab"),
                         .sh_type = SHT_STRTAB,
                         .sh_offset = off_shstr,
                         .sh_size = shstr_len,
                         .sh_addralign = 1};
    sh[2] = (Elf64_Shdr){.sh_name = put_str(shstr, &sp, ".strtab"),
                         .sh_type = SHT_STRTAB,
                         .sh_offset = off_str,
                         .sh_size = str_len,
                         .sh_addralign = 1};
    sh[3] = (Elf64_Shdr){.sh_name = put_str(shstr, &sp, ".symtab"),
                         .sh_type = SHT_SYMTAB,
                         .sh_offset = off_sym,
                         .sh_size = sym_size,
                         .sh_link = 2,
                         .sh_info = 1,
                         .sh_addralign = 8,
                         .sh_entsize = sizeof(Elf64_Sym)};
    for (size_t i = 0; i < k->n; i++) {
        size_t l = strlen(k->v[i]);
        Elf64_Word nm = (Elf64_Word)sp;
        memcpy(shstr + sp, ".text.", 6);
        memcpy(shstr + sp + 6, k->v[i], l + 1);
        sp += 6 + l + 1;
        sh[4 + i] = (Elf64_Shdr){.sh_name = nm,
                                 .sh_type = SHT_PROGBITS,
                                 .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
                                 .sh_offset = off_text + i * TEXT_SIZE,
                                 .sh_size = TEXT_SIZE,
                                 .sh_link = 3,
                                 .sh_addralign = 16};
        memcpy(str + tp, k->v[i], l + 1);
        sym[1 + i] = (Elf64_Sym){.st_name = (Elf64_Word)tp,
                                 .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
                                 .st_other = 0x10, /* STO_CUDA_ENTRY: a kernel */
                                 .st_shndx = (Elf64_Section)(4 + i),
                                 .st_size = TEXT_SIZE};
        tp += l + 1;
    }
    *size_out = total;
    return b;
}

CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    SIM_REQUIRE_INIT();
    struct sim_link *l = sim_link_of(state);
    if (!l)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!cubinOut || !sizeOut || l->inputs == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (!l->cubin) {
        l->cubin = sim_build_cubin(&l->names, l->cc, &l->cubin_size);
        if (!l->cubin)
            return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *cubinOut = l->cubin;
    *sizeOut = l->cubin_size;
    sim_jit_outputs(l->nopt, l->opt, l->val, (float)l->wall_ms);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state)
{
    SIM_REQUIRE_INIT();
    struct sim_link *l = sim_link_of(state);
    if (!l)
        return CUDA_ERROR_INVALID_HANDLE;
    l->magic = 0;
    names_free(&l->names);
    free(l->cubin);
    free(l);
    return CUDA_SUCCESS;
}

/* ---- streams and graph capture ---- */

/* A stream: its capture state. Capture of the NULL (legacy) stream is refused,
 * as the real driver refuses it. */
struct sim_stream {
    uint32_t magic;
    atomic_int capturing;
    void *into; /* cuStreamBeginCaptureToGraph's graph, or NULL: a new one */
};

struct sim_graph {
    uint32_t magic;
};

static struct sim_stream *sim_stream_of(CUstream s)
{
    struct sim_stream *x = (struct sim_stream *)s;
    return x && x->magic == SIM_MAGIC_STREAM ? x : NULL;
}

static struct sim_graph *sim_graph_of(CUgraph gr)
{
    struct sim_graph *x = (struct sim_graph *)gr;
    return x && x->magic == SIM_MAGIC_GRAPH ? x : NULL;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    SIM_REQUIRE_INIT();
    if (!phStream)
        return CUDA_ERROR_INVALID_VALUE;
    if (!t_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct sim_stream *x = calloc(1, sizeof *x);
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    x->magic = SIM_MAGIC_STREAM;
    *phStream = (CUstream)x;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
    SIM_REQUIRE_INIT();
    struct sim_stream *x = sim_stream_of(hStream);
    if (!x)
        return CUDA_ERROR_INVALID_HANDLE;
    x->magic = 0;
    free(x);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
    return cuStreamDestroy_v2(hStream);
}

static CUresult sim_begin_capture(CUstream hStream, CUgraph into)
{
    SIM_REQUIRE_INIT();
    if (!hStream)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    struct sim_stream *x = sim_stream_of(hStream);
    if (!x)
        return CUDA_ERROR_INVALID_HANDLE;
    if (into && !sim_graph_of(into))
        return CUDA_ERROR_INVALID_VALUE;
    int idle = 0;
    if (!atomic_compare_exchange_strong(&x->capturing, &idle, 1))
        return CUDA_ERROR_ILLEGAL_STATE; /* already capturing */
    x->into = into;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
    return sim_begin_capture(hStream, NULL);
}

CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{
    return sim_begin_capture(hStream, NULL);
}

CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    return sim_begin_capture(hStream, NULL);
}

CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode);
CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream, CUstreamCaptureMode mode)
{
    return sim_begin_capture(hStream, NULL);
}

CUresult CUDAAPI cuStreamBeginCaptureToGraph(CUstream hStream, CUgraph hGraph,
                                             const CUgraphNode *dependencies,
                                             const CUgraphEdgeData *dependencyData,
                                             size_t numDependencies, CUstreamCaptureMode mode)
{
    return hGraph ? sim_begin_capture(hStream, hGraph) : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuStreamBeginCaptureToGraph_ptsz(CUstream hStream, CUgraph hGraph,
                                                  const CUgraphNode *dependencies,
                                                  const CUgraphEdgeData *dependencyData,
                                                  size_t numDependencies, CUstreamCaptureMode mode)
{
    return hGraph ? sim_begin_capture(hStream, hGraph) : CUDA_ERROR_INVALID_VALUE;
}

/* Ends the capture of hStream: the graph it captured into (a new one unless
 * cuStreamBeginCaptureToGraph gave one), after JITSTALL_SIM_CAPTURE_US. An end
 * without a begin is CUDA_ERROR_ILLEGAL_STATE. */
CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    SIM_REQUIRE_INIT();
    if (!phGraph)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_stream *x = sim_stream_of(hStream);
    if (!hStream)
        return CUDA_ERROR_ILLEGAL_STATE;
    if (!x)
        return CUDA_ERROR_INVALID_HANDLE;
    int busy = 1;
    if (!atomic_compare_exchange_strong(&x->capturing, &busy, 0))
        return CUDA_ERROR_ILLEGAL_STATE;
    sim_sleep_us(g.capture_us);
    if (x->into) {
        *phGraph = (CUgraph)x->into;
        return CUDA_SUCCESS;
    }
    struct sim_graph *gr = calloc(1, sizeof *gr);
    if (!gr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    gr->magic = SIM_MAGIC_GRAPH;
    *phGraph = (CUgraph)gr;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph);
CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    return cuStreamEndCapture(hStream, phGraph);
}

CUresult CUDAAPI cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    SIM_REQUIRE_INIT();
    if (!phGraph || flags)
        return CUDA_ERROR_INVALID_VALUE;
    struct sim_graph *gr = calloc(1, sizeof *gr);
    if (!gr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    gr->magic = SIM_MAGIC_GRAPH;
    *phGraph = (CUgraph)gr;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
    SIM_REQUIRE_INIT();
    struct sim_graph *gr = sim_graph_of(hGraph);
    if (!gr)
        return CUDA_ERROR_INVALID_VALUE;
    gr->magic = 0;
    free(gr);
    return CUDA_SUCCESS;
}

/* An executable graph of hGraph, after JITSTALL_SIM_INSTANTIATE_US. */
static CUresult sim_instantiate(CUgraphExec *phGraphExec, CUgraph hGraph)
{
    SIM_REQUIRE_INIT();
    if (!phGraphExec || !sim_graph_of(hGraph))
        return CUDA_ERROR_INVALID_VALUE;
    if (!t_current)
        return CUDA_ERROR_INVALID_CONTEXT;
    sim_sleep_us(g.instantiate_us);
    struct sim_graph *x = calloc(1, sizeof *x);
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    x->magic = SIM_MAGIC_GEXEC;
    *phGraphExec = (CUgraphExec)x;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
                                    CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)
{
    return sim_instantiate(phGraphExec, hGraph);
}

CUresult CUDAAPI cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
                                       CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)
{
    return sim_instantiate(phGraphExec, hGraph);
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                             unsigned long long flags)
{
    return sim_instantiate(phGraphExec, hGraph);
}

CUresult CUDAAPI cuGraphInstantiateWithParams(CUgraphExec *phGraphExec, CUgraph hGraph,
                                              CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return instantiateParams ? sim_instantiate(phGraphExec, hGraph) : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(
    CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams);
CUresult CUDAAPI cuGraphInstantiateWithParams_ptsz(CUgraphExec *phGraphExec, CUgraph hGraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams)
{
    return cuGraphInstantiateWithParams(phGraphExec, hGraph, instantiateParams);
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    SIM_REQUIRE_INIT();
    struct sim_graph *x = (struct sim_graph *)hGraphExec;
    if (!x || x->magic != SIM_MAGIC_GEXEC)
        return CUDA_ERROR_INVALID_VALUE;
    x->magic = 0;
    free(x);
    return CUDA_SUCCESS;
}

/* ---- errors ---- */

static const struct {
    CUresult code;
    const char *name, *text;
} sim_errors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_JIT_COMPILATION_DISABLED, "CUDA_ERROR_JIT_COMPILATION_DISABLED",
     "PTX JIT compilation was disabled"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND", "file not found"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE",
     "the operation is not permitted when the stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
};

static CUresult sim_error_lookup(CUresult error, const char **pStr, int text)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof sim_errors / sizeof sim_errors[0]; i++) {
        if (sim_errors[i].code == error) {
            *pStr = text ? sim_errors[i].text : sim_errors[i].name;
            return CUDA_SUCCESS;
        }
    }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
    return sim_error_lookup(error, pStr, 0);
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
    return sim_error_lookup(error, pStr, 1);
}

CUresult CUDAAPI cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
    if (ppExportTable)
        *ppExportTable = NULL;
    return CUDA_ERROR_NOT_SUPPORTED; /* cudart's private tables are not simulated */
}

/* ---- cuGetProcAddress ---- */

/* One variant of a driver function: the CUDA version it appeared in (the
 * suffix of its PFN_* typedef in cudaTypedefs.h) and whether it is the
 * per-thread-default-stream (_ptsz/_ptds) variant. */
struct sim_sym {
    const char *name;
    int version;
    int ptds;
    void *fn;
};

#define SIM_SYM(name, ver, fn)                                                                     \
    {                                                                                              \
        name, ver, 0, (void *)(fn)                                                                 \
    }
#define SIM_SYM_PT(name, ver, fn)                                                                  \
    {                                                                                              \
        name, ver, 1, (void *)(fn)                                                                 \
    }

static const struct sim_sym sim_syms[] = {
    SIM_SYM("cuInit", 2000, cuInit),
    SIM_SYM("cuDriverGetVersion", 2020, cuDriverGetVersion),
    SIM_SYM("cuDeviceGet", 2000, cuDeviceGet),
    SIM_SYM("cuDeviceGetCount", 2000, cuDeviceGetCount),
    SIM_SYM("cuDeviceGetName", 2000, cuDeviceGetName),
    SIM_SYM("cuDeviceGetAttribute", 2000, cuDeviceGetAttribute),
    SIM_SYM("cuDevicePrimaryCtxRetain", 7000, cuDevicePrimaryCtxRetain),
    SIM_SYM("cuDevicePrimaryCtxRelease", 7000, cuDevicePrimaryCtxRelease),
    SIM_SYM("cuDevicePrimaryCtxRelease", 11000, cuDevicePrimaryCtxRelease_v2),
    SIM_SYM("cuCtxCreate", 2000, cuCtxCreate),
    SIM_SYM("cuCtxCreate", 3020, cuCtxCreate_v2),
    SIM_SYM("cuCtxCreate", 11040, cuCtxCreate_v3),
    SIM_SYM("cuCtxCreate", 12050, cuCtxCreate_v4),
    SIM_SYM("cuCtxDestroy", 2000, cuCtxDestroy),
    SIM_SYM("cuCtxDestroy", 4000, cuCtxDestroy_v2),
    SIM_SYM("cuCtxSetCurrent", 4000, cuCtxSetCurrent),
    SIM_SYM("cuCtxGetCurrent", 4000, cuCtxGetCurrent),
    SIM_SYM("cuCtxGetDevice", 2000, cuCtxGetDevice),
    SIM_SYM("cuCtxGetDevice", 13000, cuCtxGetDevice_v2),
    SIM_SYM("cuCtxSynchronize", 2000, cuCtxSynchronize),
    SIM_SYM("cuCtxSynchronize", 13000, cuCtxSynchronize_v2),
    SIM_SYM("cuModuleLoad", 2000, cuModuleLoad),
    SIM_SYM("cuModuleLoadData", 2000, cuModuleLoadData),
    SIM_SYM("cuModuleLoadDataEx", 2010, cuModuleLoadDataEx),
    SIM_SYM("cuModuleLoadFatBinary", 2000, cuModuleLoadFatBinary),
    SIM_SYM("cuModuleUnload", 2000, cuModuleUnload),
    SIM_SYM("cuModuleGetFunction", 2000, cuModuleGetFunction),
    SIM_SYM("cuLibraryLoadData", 12000, cuLibraryLoadData),
    SIM_SYM("cuLibraryLoadFromFile", 12000, cuLibraryLoadFromFile),
    SIM_SYM("cuLibraryUnload", 12000, cuLibraryUnload),
    SIM_SYM("cuLibraryGetKernel", 12000, cuLibraryGetKernel),
    SIM_SYM("cuKernelGetFunction", 12000, cuKernelGetFunction),
    SIM_SYM("cuLinkCreate", 5050, cuLinkCreate),
    SIM_SYM("cuLinkCreate", 6050, cuLinkCreate_v2),
    SIM_SYM("cuLinkAddData", 5050, cuLinkAddData),
    SIM_SYM("cuLinkAddData", 6050, cuLinkAddData_v2),
    SIM_SYM("cuLinkAddFile", 5050, cuLinkAddFile),
    SIM_SYM("cuLinkAddFile", 6050, cuLinkAddFile_v2),
    SIM_SYM("cuLinkComplete", 5050, cuLinkComplete),
    SIM_SYM("cuLinkDestroy", 5050, cuLinkDestroy),
    SIM_SYM("cuMemAlloc", 3020, cuMemAlloc_v2),
    SIM_SYM("cuMemFree", 3020, cuMemFree_v2),
    SIM_SYM("cuMemcpyDtoH", 3020, cuMemcpyDtoH_v2),
    SIM_SYM("cuLaunchKernel", 4000, cuLaunchKernel),
    SIM_SYM_PT("cuLaunchKernel", 7000, cuLaunchKernel_ptsz),
    SIM_SYM("cuLaunchKernelEx", 11060, cuLaunchKernelEx),
    SIM_SYM_PT("cuLaunchKernelEx", 11060, cuLaunchKernelEx_ptsz),
    SIM_SYM("cuStreamCreate", 2000, cuStreamCreate),
    SIM_SYM("cuStreamDestroy", 2000, cuStreamDestroy),
    SIM_SYM("cuStreamDestroy", 4000, cuStreamDestroy_v2),
    SIM_SYM("cuStreamBeginCapture", 10000, cuStreamBeginCapture),
    SIM_SYM_PT("cuStreamBeginCapture", 10000, cuStreamBeginCapture_ptsz),
    SIM_SYM("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2),
    SIM_SYM_PT("cuStreamBeginCapture", 10010, cuStreamBeginCapture_v2_ptsz),
    SIM_SYM("cuStreamBeginCaptureToGraph", 12030, cuStreamBeginCaptureToGraph),
    SIM_SYM_PT("cuStreamBeginCaptureToGraph", 12030, cuStreamBeginCaptureToGraph_ptsz),
    SIM_SYM("cuStreamEndCapture", 10000, cuStreamEndCapture),
    SIM_SYM_PT("cuStreamEndCapture", 10000, cuStreamEndCapture_ptsz),
    SIM_SYM("cuGraphCreate", 10000, cuGraphCreate),
    SIM_SYM("cuGraphDestroy", 10000, cuGraphDestroy),
    SIM_SYM("cuGraphInstantiate", 10000, cuGraphInstantiate),
    SIM_SYM("cuGraphInstantiate", 11000, cuGraphInstantiate_v2),
    SIM_SYM("cuGraphInstantiateWithFlags", 11040, cuGraphInstantiateWithFlags),
    SIM_SYM("cuGraphInstantiateWithParams", 12000, cuGraphInstantiateWithParams),
    SIM_SYM_PT("cuGraphInstantiateWithParams", 12000, cuGraphInstantiateWithParams_ptsz),
    SIM_SYM("cuGraphExecDestroy", 10000, cuGraphExecDestroy),
    SIM_SYM("cuGetErrorName", 6000, cuGetErrorName),
    SIM_SYM("cuGetErrorString", 6000, cuGetErrorString),
    SIM_SYM("cuGetExportTable", 3000, cuGetExportTable),
    SIM_SYM("cuGetProcAddress", 11030, cuGetProcAddress),
    SIM_SYM("cuGetProcAddress", 12000, cuGetProcAddress_v2),
};

/*
 * The newest variant of symbol whose version is <= cudaVersion; with
 * CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM a per-thread variant wins
 * over a legacy one of the same or an older version (functions without a
 * stream have no such variant and resolve to their legacy one).
 */
static CUresult sim_proc_lookup(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                CUdriverProcAddressQueryResult *status)
{
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    const uint64_t known =
        CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    if (status)
        *status = st;
    if (!symbol || !pfn || (flags & ~known))
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    int want_pt = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    const struct sim_sym *best = NULL;
    for (size_t i = 0; i < sizeof sim_syms / sizeof sim_syms[0]; i++) {
        const struct sim_sym *s = &sim_syms[i];
        if (strcmp(s->name, symbol) != 0)
            continue;
        st = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        if (s->version > cudaVersion || (s->ptds && !want_pt))
            continue;
        if (!best || (s->ptds && !best->ptds) ||
            (s->ptds == best->ptds && s->version > best->version))
            best = s;
    }
    if (!best) {
        if (status)
            *status = st;
        return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = best->fn;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion,
                                     cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
    return sim_proc_lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}

CUresult CUDAAPI cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return sim_proc_lookup(symbol, pfn, cudaVersion, flags, NULL);
}

/* Exported by the driver (cuda.h only has an inline of that name): the
 * per-thread-default-stream resolver, which asks for per-thread variants
 * unless the caller picked a stream mode itself. */
CUresult CUDAAPI cuGetProcAddress_v2_ptsz(const char *symbol, void **pfn, int cudaVersion,
                                          cuuint64_t flags,
                                          CUdriverProcAddressQueryResult *symbolStatus);
CUresult CUDAAPI cuGetProcAddress_v2_ptsz(const char *symbol, void **pfn, int cudaVersion,
                                          cuuint64_t flags,
                                          CUdriverProcAddressQueryResult *symbolStatus)
{
    if (!(flags &
          (CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
        flags |= CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    return sim_proc_lookup(symbol, pfn, cudaVersion, flags, symbolStatus);
}
