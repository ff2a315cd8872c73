/*
 * The real driver: the real dlsym, dlopen("libcuda.so.1") (or
 * $JITSTALL_REAL_LIBCUDA) and every hooked symbol in it, recognising libcuda
 * handles, and the device facts jitstall needs (compute capability per device,
 * DEVICE records), always asked through the real driver so no hook runs.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitcache.h"
#include "state.h"
#include "real.h"
#include "inflight.h"
#include "launch.h"

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlopen_fn)(const char *, int);

JST_START_DATA static dlsym_fn real_dlsym_p;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;
static void *drv_handle;
_Atomic int jst_cuinit_ok;

/* Used by the dlsym and exec wrappers in every process: in the start-up
 * pages, with its strings (state.h). */
JST_START_RODATA static const char name_dlsym[] = "dlsym";
JST_START_RODATA static const char ver_234[] = "GLIBC_2.34";
/* Before 2.34, dlsym and dlopen live in libdl at the architecture's oldest
 * symbol version: the one its first glibc port shipped. */
#if defined(__aarch64__)
#define JST_GLIBC_BASE "GLIBC_2.17"
#elif defined(__x86_64__)
#define JST_GLIBC_BASE "GLIBC_2.2.5"
#else
#error "jitstall: the oldest glibc symbol version of this architecture is unknown"
#endif
JST_START_RODATA static const char ver_base[] = JST_GLIBC_BASE;

JST_NO_SANITIZE JST_IDLE_TEXT void *jst_real_dlsym_fn(void)
{
    dlsym_fn f = __atomic_load_n(&real_dlsym_p, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (dlsym_fn)dlvsym(RTLD_NEXT, name_dlsym, ver_234);
        if (!f)
            f = (dlsym_fn)dlvsym(RTLD_NEXT, name_dlsym, ver_base);
        if (!f)
            return NULL;
        __atomic_store_n(&real_dlsym_p, f, __ATOMIC_RELEASE);
    }
    return (void *)f;
}

JST_IDLE_TEXT void *jst_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = (dlsym_fn)jst_real_dlsym_fn();
    return f ? f(handle, name) : NULL;
}

int jst_file_named(const char *path, const char *prefix)
{
    if (!path)
        return 0;
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    return strncmp(b, prefix, strlen(prefix)) == 0;
}

/* What is wrong with the library JITSTALL_REAL_LIBCUDA names, set once by
 * drv_open; said by jst_driver_report, outside the once. */
static char *drv_problem;
static _Atomic int drv_reported;

/* A library named by JITSTALL_REAL_LIBCUDA that cannot be opened (calls then
 * go to the next definition, as without jitstall), or is not a CUDA driver
 * (neither cuInit nor cuGetProcAddress: every call fails, as before): the
 * user must be told why. */
static void drv_check(const char *path, void *h)
{
    char *msg = NULL;
    int k = 0;
    if (!h)
        k = asprintf(&msg,
                     "JITSTALL_REAL_LIBCUDA=%s cannot be loaded (%s): CUDA calls go to the "
                     "driver the program would use without jitstall",
                     path, dlerror());
    else if (!jst_real_dlsym(h, "cuInit") && !jst_real_dlsym(h, "cuGetProcAddress"))
        k = asprintf(&msg,
                     "JITSTALL_REAL_LIBCUDA=%s is not a CUDA driver (it has neither cuInit nor "
                     "cuGetProcAddress): every CUDA call fails",
                     path);
    drv_problem = k >= 0 ? msg : NULL;
}

void jst_driver_report(void)
{
    if (!drv_problem || atomic_exchange(&drv_reported, 1) || !jst_config())
        return;
    int saved = errno;
    size_t n = strlen(drv_problem);
    char *line = malloc(n + 12);
    if (line) {
        memcpy(line, "jitstall: ", 10);
        memcpy(line + 10, drv_problem, n);
        line[10 + n] = '\n';
        jst_say(line, n + 11);
        free(line);
    }
    jst_note(1, drv_problem);
    errno = saved;
}

static void drv_open(void)
{
    int saved = errno;
    /* Never a library named by the environment in a setuid/setgid process. */
    const char *path = secure_getenv("JITSTALL_REAL_LIBCUDA");
    int named = path && *path;
    if (!named)
        path = "libcuda.so.1";
    /* The loader's own dlopen: the wrapper in modmap.c is for the program. */
    dlopen_fn op = (dlopen_fn)dlvsym(RTLD_NEXT, "dlopen", "GLIBC_2.34");
    if (!op)
        op = (dlopen_fn)dlvsym(RTLD_NEXT, "dlopen", JST_GLIBC_BASE);
    void *h = op ? op(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (named)
        drv_check(path, h);
    else if (!h)
        jst_dbg("cannot open the real driver %s: %s", path, dlerror());
    drv_handle = h;
    for (int i = 0; i < JST_H_COUNT; i++) {
        struct jst_hook *hk = &jst_hooks[i];
        /* Without a driver handle, the definition after ours in the search
         * order is the one the program would have called. */
        void *f = h ? jst_real_dlsym(h, hk->name) : jst_real_dlsym(RTLD_NEXT, hk->name);
        if (f == hk->wrap[JST_ROUTE_DIRECT])
            f = NULL; /* never call ourselves */
        atomic_store(&hk->real, f);
    }
    jst_launch_sync();
    jst_dbg("real driver %s: handle %p", path, h);
    errno = saved;
}

void *jst_driver(void)
{
    pthread_once(&drv_once, drv_open);
    return drv_handle;
}

void *jst_driver_sym(const char *name)
{
    void *h = jst_driver();
    return jst_real_dlsym(h ? h : RTLD_NEXT, name);
}

int jst_is_libcuda_handle(void *handle)
{
    if (!handle || handle == RTLD_DEFAULT || handle == RTLD_NEXT)
        return 0;
    if (handle == jst_driver())
        return 1;
    struct link_map *lm = NULL;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm)
        return jst_file_named(lm->l_name, "libcuda.so");
    return 0;
}

/* ---- devices ---- */

typedef CUresult (*ctx_get_device_fn)(CUdevice *);
typedef CUresult (*ctx_get_current_fn)(CUcontext *);
typedef CUresult (*dev_attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*dev_count_fn)(int *);
typedef CUresult (*dev_get_fn)(CUdevice *, int);
typedef CUresult (*dev_name_fn)(char *, int, CUdevice);
typedef CUresult (*drv_version_fn)(int *);

#define JST_MAX_DEV 64
static _Atomic unsigned dev_cc[JST_MAX_DEV]; /* 0: not asked yet */

static unsigned device_cc(CUdevice dev)
{
    if (dev < 0 || dev >= JST_MAX_DEV)
        return 0;
    unsigned cc = atomic_load(&dev_cc[dev]);
    if (cc)
        return cc;
    dev_attr_fn attr = (dev_attr_fn)jst_driver_sym("cuDeviceGetAttribute");
    int maj = 0, min = 0;
    if (attr && attr(&maj, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev) == CUDA_SUCCESS &&
        attr(&min, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev) == CUDA_SUCCESS && maj > 0) {
        cc = (unsigned)(maj * 10 + min);
        atomic_store(&dev_cc[dev], cc);
    }
    return cc;
}

unsigned jst_current_cc(int *dev_out, uint64_t *ctx_out)
{
    int saved = errno;
    ctx_get_current_fn cur = (ctx_get_current_fn)jst_driver_sym("cuCtxGetCurrent");
    ctx_get_device_fn getdev = (ctx_get_device_fn)jst_driver_sym("cuCtxGetDevice");
    CUcontext ctx = NULL;
    CUdevice dev = 0;
    if (cur && cur(&ctx) != CUDA_SUCCESS)
        ctx = NULL;
    /* No current context (cuLibraryLoadData needs none): judge against device 0. */
    if (!ctx || !getdev || getdev(&dev) != CUDA_SUCCESS)
        dev = 0;
    if (dev_out)
        *dev_out = dev;
    if (ctx_out)
        *ctx_out = (uint64_t)(uintptr_t)ctx;
    unsigned cc = device_cc(dev);
    errno = saved;
    return cc;
}

void jst_emit_devices(void)
{
    int saved = errno;
    dev_count_fn count = (dev_count_fn)jst_driver_sym("cuDeviceGetCount");
    dev_get_fn get = (dev_get_fn)jst_driver_sym("cuDeviceGet");
    dev_name_fn name = (dev_name_fn)jst_driver_sym("cuDeviceGetName");
    drv_version_fn ver = (drv_version_fn)jst_driver_sym("cuDriverGetVersion");
    int n = 0, v = 0;
    char rel[64]; /* the driver build, which JIT cache entries belong to */
    jst_driver_release(rel, sizeof rel);
    if (!count || count(&n) != CUDA_SUCCESS)
        n = 0;
    if (!ver || ver(&v) != CUDA_SUCCESS)
        v = 0;
    for (int i = 0; i < n && i < JST_MAX_DEV; i++) {
        CUdevice d = i;
        if (get && get(&d, i) != CUDA_SUCCESS)
            continue;
        char nm[256] = "";
        if (name && name(nm, (int)sizeof nm - 1, d) != CUDA_SUCCESS)
            nm[0] = '\0';
        nm[sizeof nm - 1] = '\0';
        unsigned cc = device_cc(d);
        uint8_t buf[512];
        struct jst_rec r;
        jst_rec_begin(&r, buf, sizeof buf, JST_REC_DEVICE);
        jst_rec_u64(&r, JST_F_DEVICE, (uint64_t)i);
        jst_rec_u64(&r, JST_F_CC_MAJOR, cc / 10);
        jst_rec_u64(&r, JST_F_CC_MINOR, cc % 10);
        jst_rec_str(&r, JST_F_DEV_NAME, nm);
        jst_rec_u64(&r, JST_F_DRIVER_VERSION, (uint64_t)v);
        jst_rec_str(&r, JST_F_DRIVER_RELEASE, rel[0] ? rel : NULL);
        jst_emit(&r, 1);
    }
    errno = saved;
}
