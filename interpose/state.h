/*
 * Internal interface of the preload: tracing state, the trace writer, the real
 * driver, the hook table and the helpers the hooks share. Nothing here is
 * exported from libjitstall.so.
 */
#ifndef JST_INTERPOSE_STATE_H
#define JST_INTERPOSE_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>

#include "trace.h"

#define JST_EXPORT __attribute__((visibility("default")))
#define JST_LIKELY(x) __builtin_expect(!!(x), 1)
#define JST_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* For code that may run while a sanitizer runtime in the program is still
 * starting (dlsym.c): no instrumentation in a sanitized build of jitstall. */
#define JST_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))

/* ---- sink.c: state, trace file, records (init.c: exit, exec, fork) ---- */

/* Tracing state. OFF is final (JITSTALL_DISABLE=1 or a failure). */
enum { JST_ST_NEW = 0, JST_ST_OPENING = 1, JST_ST_ON = 2, JST_ST_OFF = 3 };
extern _Atomic int jst_state;
extern int jst_debug_on;

/* Recursion guard in initial-exec TLS: touching it never calls malloc. Set
 * while a hook does its own work and while it runs the real function, so
 * driver-internal calls that come back through our exports pass straight on. */
extern __thread int jst_guard __attribute__((tls_model("initial-exec")));

/* A secure-execution process (AT_SECURE: setuid, setgid, capabilities): the
 * preload then traces nothing and reads no JITSTALL_* variable. */
int jst_secure_exec(void);
/* Reads the configuration once (thread-safe, lock-free for the fast case).
 * Returns 1 if tracing may happen in this process, 0 when disabled. */
int jst_config(void);
/* The writer for this process, opening the trace file on first use (and again
 * in a forked child). NULL when tracing is off. */
struct jst_writer *jst_trace(void);
/* Appends a record to the trace; failures turn tracing off. */
int jst_emit(const struct jst_rec *r, int flush);
/* Before an exec: ends the trace with END "exec" (exec_path: path) when this
 * process owns an open trace. 1 if it did. */
int jst_exec_end(const char *path);
/* The exec after jst_exec_end() returned 1 failed with err: the process goes
 * on, traced into a new file that names the old one in a note. */
void jst_exec_failed(const char *path, int err);
/* Turns tracing off for good, with one line on stderr. */
void jst_disable(const char *reason);
/* write(2) of all n bytes to fd, again after EINTR; stops at an error. */
void jst_write_all(int fd, const char *s, size_t n);
/* The loaded object that holds addr (dladdr1), or NULL. */
struct link_map;
struct link_map *jst_object_of(const void *addr);
/* A note record in the trace: a message from jitstall itself (level 0 info, 1 warning). */
void jst_note(int level, const char *msg);
/* Debug line to stderr when JITSTALL_DEBUG=1 (stack buffer + write(2)). */
void jst_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t jst_now_ns(void); /* CLOCK_MONOTONIC */
uint64_t jst_next_seq(void);
uint32_t jst_tid(void);
/* The executable's path (readlink /proc/self/exe), "" if unknown. */
const char *jst_exe_path(void);

/* ---- argv.c: the command line without its secrets ---- */
/* Writes argument a (n bytes) to out (cap bytes) with a credential's value
 * replaced by "***"; returns the length written. *next_secret carries "the
 * next argument is the value of --password" from one call to the next. */
size_t jst_arg_redact(const char *a, size_t n, int *next_secret, char *out, size_t cap);
/* 0 when JITSTALL_ARGV=0: record no argument. */
int jst_argv_wanted(void);

/* ---- real.c: the real driver ---- */

/* The real dlsym (dlvsym GLIBC_2.34, else GLIBC_2.2.5). */
void *jst_real_dlsym(void *handle, const char *name);
/* The real dlsym itself (resolved once), NULL if not found. */
JST_NO_SANITIZE void *jst_real_dlsym_fn(void);
/* Opens the real driver once and resolves every hooked symbol in it.
 * Returns the driver handle or NULL. */
void *jst_driver(void);
/* A symbol of the real driver, NULL if absent. */
void *jst_driver_sym(const char *name);
/* Is handle (from dlopen) the real driver or any object named libcuda.so*? */
int jst_is_libcuda_handle(void *handle);
/* Device ordinal current on this thread (or 0) and its compute capability
 * (major*10+minor, 0 if unknown), queried once per device through the real driver. */
unsigned jst_current_cc(int *dev_out, uint64_t *ctx_out);
/* Writes one JST_REC_DEVICE per device (after cuInit succeeded). */
void jst_emit_devices(void);
/* cuInit succeeded once in this process. */
extern _Atomic int jst_cuinit_ok;

/* ---- hooks.c: the table of hooked functions ---- */

/* Routes index the per-route wrappers (enum jst_route values 1..3). */
#define JST_NROUTES 4

struct jst_hook {
    const char *name;        /* exact variant, e.g. "cuCtxCreate_v3" */
    const char *base;        /* name the program asks cuGetProcAddress for, e.g. "cuCtxCreate" */
    uint16_t call_id;        /* enum jst_call, 0 for cuGetProcAddress */
    void *wrap[JST_NROUTES]; /* [route]: wrapper of this exact variant */
    void *_Atomic real;      /* the driver's exported symbol: DIRECT and PROCADDR routes */
    void *_Atomic real_dl;   /* what dlsym returned: DLSYM route */
};

/* X(variant, base, call id) for every hooked variant. */
#define JST_HOOK_LIST(X)                                                                           \
    X(cuInit, cuInit, JST_CALL_cuInit)                                                             \
    X(cuCtxCreate, cuCtxCreate, JST_CALL_cuCtxCreate)                                              \
    X(cuCtxCreate_v2, cuCtxCreate, JST_CALL_cuCtxCreate)                                           \
    X(cuCtxCreate_v3, cuCtxCreate, JST_CALL_cuCtxCreate)                                           \
    X(cuCtxCreate_v4, cuCtxCreate, JST_CALL_cuCtxCreate)                                           \
    X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, JST_CALL_cuDevicePrimaryCtxRetain)       \
    X(cuModuleLoad, cuModuleLoad, JST_CALL_cuModuleLoad)                                           \
    X(cuModuleLoadData, cuModuleLoadData, JST_CALL_cuModuleLoadData)                               \
    X(cuModuleLoadDataEx, cuModuleLoadDataEx, JST_CALL_cuModuleLoadDataEx)                         \
    X(cuModuleLoadFatBinary, cuModuleLoadFatBinary, JST_CALL_cuModuleLoadFatBinary)                \
    X(cuLibraryLoadData, cuLibraryLoadData, JST_CALL_cuLibraryLoadData)                            \
    X(cuLibraryLoadFromFile, cuLibraryLoadFromFile, JST_CALL_cuLibraryLoadFromFile)                \
    X(cuModuleGetFunction, cuModuleGetFunction, JST_CALL_cuModuleGetFunction)                      \
    X(cuLibraryGetKernel, cuLibraryGetKernel, JST_CALL_cuLibraryGetKernel)                         \
    X(cuKernelGetFunction, cuKernelGetFunction, JST_CALL_cuKernelGetFunction)                      \
    X(cuLinkCreate, cuLinkCreate, JST_CALL_cuLinkCreate)                                           \
    X(cuLinkCreate_v2, cuLinkCreate, JST_CALL_cuLinkCreate)                                        \
    X(cuLinkAddData, cuLinkAddData, JST_CALL_cuLinkAddData)                                        \
    X(cuLinkAddData_v2, cuLinkAddData, JST_CALL_cuLinkAddData)                                     \
    X(cuLinkAddFile, cuLinkAddFile, JST_CALL_cuLinkAddFile)                                        \
    X(cuLinkAddFile_v2, cuLinkAddFile, JST_CALL_cuLinkAddFile)                                     \
    X(cuLinkComplete, cuLinkComplete, JST_CALL_cuLinkComplete)                                     \
    X(cuModuleUnload, cuModuleUnload, JST_CALL_cuModuleUnload)                                     \
    X(cuLibraryUnload, cuLibraryUnload, JST_CALL_cuLibraryUnload)                                  \
    X(cuLaunchKernel, cuLaunchKernel, JST_CALL_cuLaunchKernel)                                     \
    X(cuLaunchKernel_ptsz, cuLaunchKernel, JST_CALL_cuLaunchKernel)                                \
    X(cuLaunchKernelEx, cuLaunchKernelEx, JST_CALL_cuLaunchKernelEx)                               \
    X(cuLaunchKernelEx_ptsz, cuLaunchKernelEx, JST_CALL_cuLaunchKernelEx)                          \
    X(cuGetProcAddress, cuGetProcAddress, 0)                                                       \
    X(cuGetProcAddress_v2, cuGetProcAddress, 0)                                                    \
    X(cuGetProcAddress_v2_ptsz, cuGetProcAddress, 0)

#define JST_HOOK_ENUM(v, b, c) JST_H_##v,
enum { JST_HOOK_LIST(JST_HOOK_ENUM) JST_H_COUNT };
#undef JST_HOOK_ENUM

extern struct jst_hook jst_hooks[JST_H_COUNT];
/* The hook of an exact variant name, or NULL. */
struct jst_hook *jst_hook_by_name(const char *name);
/* The real function a wrapper of route must call, resolving it on first use. */
void *jst_hook_real(struct jst_hook *h, int route);

/* ---- rtc.c: the runtime compilers (NVRTC, nvJitLink) ---- */
/* The hook of an exact runtime-compiler name (nvrtcCompileProgram,
 * nvJitLinkComplete and its versioned names), or NULL. */
struct jst_hook *jst_rtc_by_name(const char *name);
/* What dlsym returns for h's name, given what the real lookup found (p, not
 * NULL): our dlsym-route wrapper when p is a libnvrtc / libnvJitLink function
 * and wrap is set; never our own export where none would have been found. */
void *jst_rtc_dlsym(struct jst_hook *h, void *handle, void *p, int wrap);

/* ---- nvtx.c: NVTX injection (the program's own ranges) ---- */
/* Writes the range records made before the trace file existed; called once
 * the file's opening records are written. */
void jst_nvtx_drain(struct jst_writer *w);
/* The NVTX_INJECTION64_PATH entry of envp that this process set, or NULL. */
const char *jst_nvtx_env_entry(char *const envp[]);

/* ---- procaddr.c ---- */
/* Maps what the real cuGetProcAddress returned for symbol to our wrapper of
 * that exact variant, or returns fn unchanged when it is not one we know. */
void *jst_procaddr_map(const char *symbol, void *fn);

/* ---- events (hooks.c, load.c) ---- */

/* One hooked call being recorded. */
struct jst_event {
    const struct jst_hook *hook;
    int route;
    int saved_errno;
    uint64_t start_ns, dur_ns;
    uint64_t stack_id;
    uint32_t tid;
    uint64_t seq;  /* taken at BEGIN (inflight.c); 0: taken when the call record is made */
    int in_flight; /* a BEGIN was written and the call has not returned */
    /* When jitstall's own work on this event began (self_ns, cost.c). */
    uint64_t self_t0;
};

/* Starts an event: 1 if this call is to be recorded (guard taken), 0 if the
 * wrapper must just call the real function (guard not taken). */
int jst_event_begin(struct jst_event *ev, const struct jst_hook *h, int route);
/* Releases the guard and restores errno to what the real function left. */
void jst_event_end(struct jst_event *ev);
/* Runs the real function with errno as the program left it, timing it. */
#define JST_TIMED(ev, res, expr)                                                                   \
    do {                                                                                           \
        errno = (ev).saved_errno;                                                                  \
        (ev).start_ns = jst_now_ns();                                                              \
        res = expr;                                                                                \
        (ev).dur_ns = jst_now_ns() - (ev).start_ns;                                                \
        (ev).saved_errno = errno;                                                                  \
    } while (0)
/* Starts a record with the fields common to every call. */
void jst_event_record(const struct jst_event *ev, struct jst_rec *r, void *buf, size_t cap,
                      int result);

/* ---- load.c: what a load was given, and what the driver did with it ---- */
struct jst_load {
    int active;          /* inspection done */
    unsigned image_kind; /* enum jst_image_kind */
    const void *ptr;     /* image bytes (mapped file for paths) */
    size_t size;
    uint64_t hash;
    const char *path; /* for file loads */
    void *map;        /* mmap of the file, if any */
    size_t map_len;
    int jit;        /* verdict is ptx_jit / forced_jit */
    int scan_cache; /* take cache snapshots around the call */
    unsigned cc;
    int dev;
    uint64_t ctx;
    void *priv; /* inspection results (struct in load.c) */
};
/* Before the real call. known_size: 0 to derive it from headers. */
void jst_load_pre_mem(struct jst_load *ld, const void *image, size_t known_size, int cache);
void jst_load_pre_file(struct jst_load *ld, const char *path, int cache);
/* What is known before the real call (image, source, verdict, kernels); the
 * BEGIN record and jst_load_post share it. */
void jst_load_describe(struct jst_load *ld, struct jst_rec *r);
/* After the real call: cache outcome, kernels, budget; appends the fields. */
void jst_load_post(struct jst_load *ld, struct jst_rec *r, uint64_t dur_ns, int result);
void jst_load_free(struct jst_load *ld);

/* ---- inflight.c: calls begun and not yet returned ---- */

/* Starts ev's BEGIN record in buf (type, a seq taken now and kept for the
 * call record, the common call fields); the caller adds what it knows. */
void jst_inflight_open(struct jst_event *ev, struct jst_rec *r, void *buf, size_t cap);
/* Writes the BEGIN record, flushed, and counts ev as in flight (the
 * progress thread writes while any call is). */
void jst_inflight_emit(struct jst_event *ev, const struct jst_rec *r);
/* ev returned: no longer in flight. */
void jst_inflight_close(struct jst_event *ev);

/* ---- launch.c: first launch of each function ---- */
#include "launch_seen.h" /* JST_SEEN_BITS, JST_SEEN_SIZE */
/* The current table (JST_SEEN_SIZE slots): 0 empty, -1 tombstone, else a key. */
extern _Atomic uintptr_t *_Atomic jst_seen_tab;

/* Real pointers the launch fast path reads; refreshed by jst_launch_sync()
 * whenever a launch hook's real or real_dl changes. */
extern void *_Atomic jst_launch_real[8];
void jst_launch_sync(void);

/* Lock-free membership test; key 0 counts as seen (nothing to record). */
static inline int jst_seen_has(uintptr_t key)
{
    uint32_t i = (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - JST_SEEN_BITS));
    for (;;) {
        _Atomic uintptr_t *t = atomic_load_explicit(&jst_seen_tab, memory_order_acquire);
        uintptr_t v = atomic_load_explicit(&t[i], memory_order_relaxed);
        if (v == key)
            return 1;
        if (v == 0)
            return 0;
        i = (i + 1) & (JST_SEEN_SIZE - 1);
    }
}
/* Claims key: 1 if this caller inserted it (its first launch), 0 otherwise
 * (seen before, or the set is full of live functions: counted as dropped). */
int jst_seen_claim(uintptr_t key);
/* Launches whose first-launch check was skipped because the set was full. */
uint64_t jst_seen_dropped(void);
/* JITSTALL_SEEN_LIMIT (tests): slots the seen set may use; 0 for the default. */
uint32_t jst_seen_limit_override(void);
/* Remembers where a function or kernel came from (name, module/library). */
void jst_func_note(uintptr_t func, uintptr_t parent, const char *name);
/* func came from kernel (cuKernelGetFunction): same name, same library. */
void jst_func_alias(uintptr_t func, uintptr_t kernel);
/* Forgets every function taken from parent (module or library unload). */
void jst_func_forget_parent(uintptr_t parent);
/* In a forked child: the map's lock may have been held by another thread. */
void jst_launch_atfork_child(void);
/* Adds JST_F_NAME / JST_F_PARENT for func if known. */
void jst_func_describe(uintptr_t func, struct jst_rec *r);

#endif
