/*
 * The runtime compilers: nvrtcCompileProgram (NVRTC), nvJitLinkComplete
 * (nvJitLink), nvvmCompileProgram (NVVM, which Numba dlopens by path) and
 * nvPTXCompilerCompile (nvPTXCompiler, where a program has it as a shared
 * library). A first run can stall in them as long as in the driver's JIT
 * (hashcat: 11 s of NVRTC against 0.14 s of driver JIT), so each call is timed
 * and written like a driver call. Reached directly (the program links the
 * library) or through dlsym on a libnvrtc / libnvJitLink handle (CuPy dlopens
 * it). Only the toolkit's headers are used: libjitstall never links either
 * library; the real function is looked up on first use. nvrtcCreateProgram
 * is hooked too, only to keep the program's name (its `name` argument, a
 * file name such as "kernels.cu") for that program's compile record.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVJITLINK_NO_INLINE /* nvJitLinkComplete is defined here, not inlined */
#include <nvJitLink.h>
#include <nvrtc.h>

#include "backtrace.h"
#include "image.h"
#include "state.h"
#include "rtc.h"
#include "real.h"
#include "inflight.h"
#include "fwcache.h"

/* CUDA 12's versioned name; the CUDA 13 header declares only _13_0. */
extern nvJitLinkResult __nvJitLinkComplete_12_0(nvJitLinkHandle handle);

/* The exports, one per exact name a program can call. */
JST_EXPORT nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions,
                                           const char *const *options);
JST_EXPORT nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                                          int numHeaders, const char *const *headers,
                                          const char *const *includeNames);
JST_EXPORT nvJitLinkResult nvJitLinkComplete(nvJitLinkHandle handle);
JST_EXPORT nvJitLinkResult __nvJitLinkComplete_13_0(nvJitLinkHandle handle);
JST_EXPORT nvJitLinkResult __nvJitLinkComplete_12_0(nvJitLinkHandle handle);
/* NVVM and nvPTXCompiler, declared here (their headers are not always
 * installed): handle, option count, options; the results are enums (int). */
JST_EXPORT int nvvmCompileProgram(void *prog, int numOptions, const char **options);
JST_EXPORT int nvPTXCompilerCompile(void *compiler, int numOptions, const char *const *options);
static int jst_l_nvvmCompileProgram(void *prog, int numOptions, const char **options);
static int jst_l_nvPTXCompilerCompile(void *compiler, int numOptions, const char *const *options);

static nvrtcResult jst_l_nvrtcCompileProgram(nvrtcProgram prog, int numOptions,
                                             const char *const *options);
static nvJitLinkResult jst_l_nvJitLinkComplete(nvJitLinkHandle handle);
static nvrtcResult jst_l_nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                                            int numHeaders, const char *const *headers,
                                            const char *const *includeNames);
static nvJitLinkResult jst_l___nvJitLinkComplete_13_0(nvJitLinkHandle handle);
static nvJitLinkResult jst_l___nvJitLinkComplete_12_0(nvJitLinkHandle handle);

/* No cuGetProcAddress wrapper: the route does not reach these. */
#define JST_RTC_WRAPS(v) ((void *const[JST_NROUTES]){NULL, (void *)v, (void *)jst_l_##v, NULL})
#define JST_RTC_ROW(v, c)                                                                          \
    {                                                                                              \
        .name = #v, .base = #v, .call_id = c, .wrap = JST_RTC_WRAPS(v), .real = NULL,              \
        .real_dl = NULL                                                                            \
    }

/* Not in jst_hooks: no cuGetProcAddress route, and the real function is not
 * in the driver. real: the definition a direct call would have reached;
 * real_dl: what dlsym returned, for the dlsym route. */
enum {
    JST_RTC_NVRTC,
    JST_RTC_LINK,
    JST_RTC_LINK_13,
    JST_RTC_LINK_12,
    JST_RTC_NVVM,
    JST_RTC_PTXC,
    JST_RTC_CREATE, /* nvrtcCreateProgram: no record of its own (call id 0) */
    JST_RTC_COUNT
};
static struct jst_hook rtc_hooks[JST_RTC_COUNT] = {
    JST_RTC_ROW(nvrtcCompileProgram, JST_CALL_nvrtcCompileProgram),
    JST_RTC_ROW(nvJitLinkComplete, JST_CALL_nvJitLinkComplete),
    JST_RTC_ROW(__nvJitLinkComplete_13_0, JST_CALL_nvJitLinkComplete),
    JST_RTC_ROW(__nvJitLinkComplete_12_0, JST_CALL_nvJitLinkComplete),
    JST_RTC_ROW(nvvmCompileProgram, JST_CALL_nvvmCompileProgram),
    JST_RTC_ROW(nvPTXCompilerCompile, JST_CALL_nvPTXCompilerCompile),
    JST_RTC_ROW(nvrtcCreateProgram, 0),
};

/* The definition of name that is not ours. RTLD_NEXT finds it in the global
 * scope; a library dlopen'd RTLD_LOCAL that links libnvrtc is not there, yet
 * its calls reach our export (the preload comes first in every scope), so the
 * loaded objects are searched next, in load order. */
static void *rtc_find(const char *name)
{
    struct link_map *me = jst_object_of((const void *)rtc_find);
    void *p = jst_real_dlsym(RTLD_NEXT, name);
    if (p && (!me || jst_object_of(p) != me))
        return p;
    if (!me)
        return NULL;
    struct link_map *l = me;
    while (l->l_prev)
        l = l->l_prev;
    for (; l; l = l->l_next)
        if (l != me && (p = jst_object_sym(l, name)) != NULL)
            return p;
    return NULL;
}

/* The real function a wrapper of route calls, resolved on first use. */
static void *rtc_real(struct jst_hook *h, int route)
{
    if (route == JST_ROUTE_DLSYM)
        return atomic_load(&h->real_dl);
    void *f = atomic_load(&h->real);
    if (f)
        return f;
    int saved = errno;
    jst_guard++; /* dlopen may run constructors that call back into hooks */
    f = rtc_find(h->name);
    jst_guard--;
    errno = saved;
    if (f) {
        void *expected = NULL;
        if (!atomic_compare_exchange_strong(&h->real, &expected, f))
            f = expected;
    }
    return f;
}

/* The value of -arch=X, --gpu-architecture=X, --gpu-name=X or "-arch X"
 * among options. */
static const char *nvrtc_arch(int n, const char *const *opts)
{
    static const char *const keys[] = {"-arch", "--gpu-architecture", "--gpu-name"};
    if (!opts)
        return NULL;
    for (int i = 0; i < n; i++) {
        const char *o = opts[i];
        if (!o)
            continue;
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            size_t l = strlen(keys[k]);
            if (strncmp(o, keys[k], l) != 0)
                continue;
            if (o[l] == '=')
                return o + l + 1;
            if (o[l] == '\0' && i + 1 < n)
                return opts[i + 1];
        }
    }
    return NULL;
}

typedef nvrtcResult (*nvrtc_ptxsize_fn)(nvrtcProgram, size_t *);
typedef nvrtcResult (*nvrtc_getptx_fn)(nvrtcProgram, char *);

/* After a successful compile: the hash of the PTX the program will read with
 * nvrtcGetPTX and may hand to cuModuleLoadData or cuLinkAddData, so that the
 * analyzer can tell NVRTC's output from other PTX in memory (the load hashes
 * its image the same way: text and NUL; a link input may come without the
 * NUL, hence both). The getters are those of the library that compiled, and
 * only read the program. h[] stays 0 when they are missing or fail. */
static void nvrtc_ptx_hashes(void *compile, nvrtcProgram prog, uint64_t h[2])
{
    Dl_info info;
    h[0] = h[1] = 0;
    if (!dladdr(compile, &info) || !info.dli_fname)
        return;
    int saved = errno;
    jst_guard++; /* dlopen may run constructors that call back into hooks */
    void *lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    nvrtc_ptxsize_fn size_of =
        lib ? (nvrtc_ptxsize_fn)jst_real_dlsym(lib, "nvrtcGetPTXSize") : NULL;
    nvrtc_getptx_fn get = lib ? (nvrtc_getptx_fn)jst_real_dlsym(lib, "nvrtcGetPTX") : NULL;
    size_t n = 0;
    if (size_of && get && size_of(prog, &n) == NVRTC_SUCCESS && n > 0 && n <= (256u << 20)) {
        char *ptx = malloc(n);
        if (ptx && get(prog, ptx) == NVRTC_SUCCESS) {
            size_t len = strnlen(ptx, n);
            h[0] = jst_hash64(ptx, len < n ? len + 1 : n);
            h[1] = jst_hash64(ptx, len);
        }
        free(ptx);
    }
    if (lib)
        dlclose(lib);
    jst_guard--;
    errno = saved;
}

/* The names programs were created with, by handle: a small table that a
 * newer program of the same slot replaces (a compile follows its create);
 * each name cut to fit. Creates are few and never on a launch path. */
#define RTC_NAMES 64
#define RTC_NAME_MAX 128
static struct {
    uintptr_t prog;
    char name[RTC_NAME_MAX];
} rtc_names[RTC_NAMES];
static pthread_mutex_t rtc_names_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t rtc_slot(uintptr_t prog)
{
    return (size_t)(jst_hash64(&prog, sizeof prog) % RTC_NAMES);
}

/* The name prog was created with, into out (n bytes); 0 when unknown. */
static int rtc_name_of(nvrtcProgram prog, char *out, size_t n)
{
    size_t i = rtc_slot((uintptr_t)prog);
    int found = 0;
    pthread_mutex_lock(&rtc_names_lock);
    if (prog && rtc_names[i].prog == (uintptr_t)prog) {
        snprintf(out, n, "%s", rtc_names[i].name);
        found = 1;
    }
    pthread_mutex_unlock(&rtc_names_lock);
    return found;
}

typedef nvrtcResult (*nvrtc_create_fn)(nvrtcProgram *, const char *, const char *, int,
                                       const char *const *, const char *const *);
static nvrtcResult h_create(struct jst_hook *h, int route, nvrtcProgram *prog, const char *src,
                            const char *name, int nh, const char *const *headers,
                            const char *const *inc)
{
    nvrtc_create_fn real = (nvrtc_create_fn)rtc_real(h, route);
    if (!real)
        return NVRTC_ERROR_INTERNAL_ERROR; /* no real one: the program could not call it */
    nvrtcResult r = real(prog, src, name, nh, headers, inc);
    if (r != NVRTC_SUCCESS || !prog || !*prog || !name || jst_guard ||
        atomic_load_explicit(&jst_state, memory_order_relaxed) == JST_ST_OFF)
        return r;
    int saved = errno;
    size_t i = rtc_slot((uintptr_t)*prog), len = strnlen(name, RTC_NAME_MAX - 1);
    pthread_mutex_lock(&rtc_names_lock);
    rtc_names[i].prog = (uintptr_t)*prog;
    memcpy(rtc_names[i].name, name, len);
    rtc_names[i].name[len] = '\0';
    pthread_mutex_unlock(&rtc_names_lock);
    errno = saved;
    return r;
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                               int numHeaders, const char *const *headers,
                               const char *const *includeNames)
{
    return h_create(&rtc_hooks[JST_RTC_CREATE], JST_ROUTE_DIRECT, prog, src, name, numHeaders,
                    headers, includeNames);
}
static nvrtcResult jst_l_nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                                            int numHeaders, const char *const *headers,
                                            const char *const *includeNames)
{
    return h_create(&rtc_hooks[JST_RTC_CREATE], JST_ROUTE_DLSYM, prog, src, name, numHeaders,
                    headers, includeNames);
}

typedef nvrtcResult (*nvrtc_compile_fn)(nvrtcProgram, int, const char *const *);
static nvrtcResult h_nvrtc(struct jst_hook *h, int route, nvrtcProgram prog, int n,
                           const char *const *opts)
{
    nvrtc_compile_fn real = (nvrtc_compile_fn)rtc_real(h, route);
    if (!real)
        return NVRTC_ERROR_INTERNAL_ERROR; /* no real one: the program could not call it */
    struct jst_event ev;
    if (!jst_event_begin(&ev, h, route))
        return real(prog, n, opts);
    ev.stack_id = jst_bt_capture();
    jst_fwcache_once();
    const char *arch = nvrtc_arch(n, opts); /* read before: the call may not keep them */
    char arch_buf[64] = "";
    if (arch) {
        strncpy(arch_buf, arch, sizeof arch_buf - 1);
        arch_buf[sizeof arch_buf - 1] = '\0';
    }
    char pname[RTC_NAME_MAX];
    int has_name = rtc_name_of(prog, pname, sizeof pname);
    uint8_t buf[640];
    struct jst_rec rec;
    jst_inflight_open(&ev, &rec, buf, sizeof buf);
    jst_rec_u64(&rec, JST_F_HANDLE, (uint64_t)(uintptr_t)prog);
    jst_rec_u64(&rec, JST_F_NUM_OPTIONS, (uint64_t)(n > 0 ? n : 0));
    if (arch)
        jst_rec_str(&rec, JST_F_NAME, arch_buf);
    if (has_name)
        jst_rec_str(&rec, JST_F_RTC_PROGRAM, pname);
    jst_inflight_emit(&ev, &rec, 1);
    nvrtcResult r;
    JST_TIMED(ev, r, real(prog, n, opts));
    jst_inflight_close(&ev);
    jst_event_record(&ev, &rec, buf, sizeof buf, (int)r);
    jst_rec_u64(&rec, JST_F_HANDLE, (uint64_t)(uintptr_t)prog);
    jst_rec_u64(&rec, JST_F_NUM_OPTIONS, (uint64_t)(n > 0 ? n : 0));
    if (arch)
        jst_rec_str(&rec, JST_F_NAME, arch_buf);
    if (has_name)
        jst_rec_str(&rec, JST_F_RTC_PROGRAM, pname);
    uint64_t ptx_hash[2] = {0, 0};
    if (r == NVRTC_SUCCESS)
        nvrtc_ptx_hashes((void *)real, prog, ptx_hash);
    if (ptx_hash[0]) {
        jst_rec_u64(&rec, JST_F_RTC_PTX_HASH, ptx_hash[0]);
        jst_rec_u64(&rec, JST_F_RTC_PTX_HASH_T, ptx_hash[1]);
    }
    jst_emit(&rec, 1);
    jst_event_end(&ev);
    return r;
}

typedef nvJitLinkResult (*nvjitlink_complete_fn)(nvJitLinkHandle);
static nvJitLinkResult h_link(struct jst_hook *h, int route, nvJitLinkHandle handle)
{
    nvjitlink_complete_fn real = (nvjitlink_complete_fn)rtc_real(h, route);
    if (!real)
        return NVJITLINK_ERROR_INTERNAL; /* no real one: the program could not call it */
    struct jst_event ev;
    if (!jst_event_begin(&ev, h, route))
        return real(handle);
    ev.stack_id = jst_bt_capture();
    jst_fwcache_once();
    uint8_t buf[512];
    struct jst_rec rec;
    jst_inflight_open(&ev, &rec, buf, sizeof buf);
    jst_rec_u64(&rec, JST_F_HANDLE, (uint64_t)(uintptr_t)handle);
    jst_inflight_emit(&ev, &rec, 1);
    nvJitLinkResult r;
    JST_TIMED(ev, r, real(handle));
    jst_inflight_close(&ev);
    jst_event_record(&ev, &rec, buf, sizeof buf, (int)r);
    jst_rec_u64(&rec, JST_F_HANDLE, (uint64_t)(uintptr_t)handle);
    jst_emit(&rec, 1);
    jst_event_end(&ev);
    return r;
}

/* NVVM and nvPTXCompiler: (handle, option count, options), timed like NVRTC,
 * with the target option as the record's name. */
typedef int (*libcc_fn)(void *, int, const char *const *);
static int h_libcc(struct jst_hook *h, int route, void *prog, int n, const char *const *opts)
{
    libcc_fn real = (libcc_fn)rtc_real(h, route);
    if (!real)
        return 1; /* no real one: the program could not call it (an error value) */
    struct jst_event ev;
    if (!jst_event_begin(&ev, h, route))
        return real(prog, n, opts);
    ev.stack_id = jst_bt_capture();
    jst_fwcache_once();
    const char *arch = nvrtc_arch(n, opts);
    char arch_buf[64] = "";
    if (arch) {
        strncpy(arch_buf, arch, sizeof arch_buf - 1);
        arch_buf[sizeof arch_buf - 1] = '\0';
    }
    uint8_t buf[512];
    struct jst_rec rec;
    jst_inflight_open(&ev, &rec, buf, sizeof buf);
    jst_rec_u64(&rec, JST_F_HANDLE, (uint64_t)(uintptr_t)prog);
    jst_rec_u64(&rec, JST_F_NUM_OPTIONS, (uint64_t)(n > 0 ? n : 0));
    if (arch)
        jst_rec_str(&rec, JST_F_NAME, arch_buf);
    jst_inflight_emit(&ev, &rec, 1);
    int r;
    JST_TIMED(ev, r, real(prog, n, opts));
    jst_inflight_close(&ev);
    jst_event_record(&ev, &rec, buf, sizeof buf, r);
    jst_rec_u64(&rec, JST_F_HANDLE, (uint64_t)(uintptr_t)prog);
    jst_rec_u64(&rec, JST_F_NUM_OPTIONS, (uint64_t)(n > 0 ? n : 0));
    if (arch)
        jst_rec_str(&rec, JST_F_NAME, arch_buf);
    jst_emit(&rec, 1);
    jst_event_end(&ev);
    return r;
}

int nvvmCompileProgram(void *prog, int numOptions, const char **options)
{
    return h_libcc(&rtc_hooks[JST_RTC_NVVM], JST_ROUTE_DIRECT, prog, numOptions,
                   (const char *const *)options);
}
static int jst_l_nvvmCompileProgram(void *prog, int numOptions, const char **options)
{
    return h_libcc(&rtc_hooks[JST_RTC_NVVM], JST_ROUTE_DLSYM, prog, numOptions,
                   (const char *const *)options);
}
int nvPTXCompilerCompile(void *compiler, int numOptions, const char *const *options)
{
    return h_libcc(&rtc_hooks[JST_RTC_PTXC], JST_ROUTE_DIRECT, compiler, numOptions, options);
}
static int jst_l_nvPTXCompilerCompile(void *compiler, int numOptions, const char *const *options)
{
    return h_libcc(&rtc_hooks[JST_RTC_PTXC], JST_ROUTE_DLSYM, compiler, numOptions, options);
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char *const *options)
{
    return h_nvrtc(&rtc_hooks[JST_RTC_NVRTC], JST_ROUTE_DIRECT, prog, numOptions, options);
}
static nvrtcResult jst_l_nvrtcCompileProgram(nvrtcProgram prog, int numOptions,
                                             const char *const *options)
{
    return h_nvrtc(&rtc_hooks[JST_RTC_NVRTC], JST_ROUTE_DLSYM, prog, numOptions, options);
}

#define JST_LINK_WRAP(v, idx)                                                                      \
    nvJitLinkResult v(nvJitLinkHandle handle)                                                      \
    {                                                                                              \
        return h_link(&rtc_hooks[idx], JST_ROUTE_DIRECT, handle);                                  \
    }                                                                                              \
    static nvJitLinkResult jst_l_##v(nvJitLinkHandle handle)                                       \
    {                                                                                              \
        return h_link(&rtc_hooks[idx], JST_ROUTE_DLSYM, handle);                                   \
    }
JST_LINK_WRAP(nvJitLinkComplete, JST_RTC_LINK)
JST_LINK_WRAP(__nvJitLinkComplete_13_0, JST_RTC_LINK_13)
JST_LINK_WRAP(__nvJitLinkComplete_12_0, JST_RTC_LINK_12)

struct jst_hook *jst_rtc_by_name(const char *name)
{
    if (!name || (name[0] != 'n' && name[0] != '_'))
        return NULL;
    for (int i = 0; i < JST_RTC_COUNT; i++)
        if (strcmp(rtc_hooks[i].name, name) == 0)
            return &rtc_hooks[i];
    return NULL;
}

/* Is the object's file a runtime compiler library (libnvrtc*, libnvJitLink*,
 * libnvvm*, libnvptxcompiler*)? */
static int name_is_rtc(const char *path)
{
    return jst_file_named(path, "libnvrtc") || jst_file_named(path, "libnvJitLink") ||
           jst_file_named(path, "libnvvm") || jst_file_named(path, "libnvptxcompiler");
}

void *jst_rtc_dlsym(struct jst_hook *h, void *handle, void *p, int wrap)
{
    void *target = p;
    if (p == h->wrap[JST_ROUTE_DIRECT]) {
        /* The lookup found our export (RTLD_DEFAULT, a global handle). Answer
         * what it would have found without us: the next definition, or a
         * failure that dlerror() reports. */
        target = jst_real_dlsym(RTLD_NEXT, h->name);
        if (!target)
            return NULL;
    }
    /* Wrapped when the definition or the handle is a runtime compiler library. */
    struct link_map *lm = jst_object_of(target);
    int rtc = lm && name_is_rtc(lm->l_name);
    lm = NULL;
    if (!rtc && handle != RTLD_DEFAULT && handle != RTLD_NEXT &&
        dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm)
        rtc = name_is_rtc(lm->l_name);
    if (!rtc || !wrap)
        return target; /* some other library's function of that name, or not tracing */
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(&h->real_dl, &expected, target) && expected != target) {
        jst_dbg("dlsym(%s): a second real function %p; not wrapped", h->name, target);
        return target;
    }
    jst_dbg("dlsym(%s) -> wrapped", h->name);
    return h->wrap[JST_ROUTE_DLSYM];
}
