/*
 * Optional ground truth from CUPTI (JITSTALL_CUPTI=1, off by default because a
 * program that profiles itself owns CUPTI). libcupti is dlopen'ed, never
 * linked; its JIT activity records (CUpti_ActivityJit2: compile, cache load,
 * cache store, with the cache path) become JST_REC_CUPTI_JIT records with
 * times converted to CLOCK_MONOTONIC. The analyzer ties them to loads by time.
 * Without libcupti, one NOTE record says so and nothing else changes.
 */
#include <cupti_activity.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ext.h"
#include "state.h"
#include "real.h"

#define JST_CUPTI_BUF_SIZE (256u << 10)

static pthread_once_t cupti_once = PTHREAD_ONCE_INIT;
static _Atomic int cupti_on;
static int64_t cupti_offset_ns; /* CLOCK_MONOTONIC minus CUPTI time */

static __typeof__(&cuptiActivityRegisterCallbacks) p_register;
static __typeof__(&cuptiActivityEnable) p_enable;
static __typeof__(&cuptiActivityFlushAll) p_flush_all;
static __typeof__(&cuptiActivityGetNextRecord) p_next;
static __typeof__(&cuptiGetTimestamp) p_timestamp;

static void cupti_note(int level, const char *msg)
{
    uint8_t buf[1024];
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof buf, JST_REC_NOTE);
    jst_rec_u64(&r, JST_F_LEVEL, (uint64_t)level);
    jst_rec_str(&r, JST_F_MESSAGE, msg);
    jst_emit(&r, 1);
}

/* The places libcupti is usually found. JITSTALL_CUPTI_PATH names the one
 * file to use instead (and lets tests point at none). */
static void *cupti_open(char *tried, size_t n)
{
    const char *only = secure_getenv("JITSTALL_CUPTI_PATH");
    if (only && *only) {
        snprintf(tried, n, "%s", only);
        return dlopen(only, RTLD_NOW | RTLD_LOCAL);
    }
    static const char *names[] = {"libcupti.so", "libcupti.so.13", "libcupti.so.12"};
    tried[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    const char *home = secure_getenv("CUDA_HOME");
    const char *dirs[] = {home, "/usr/local/cuda"};
    for (size_t i = 0; i < 2; i++) {
        if (!dirs[i] || !*dirs[i])
            continue;
        const char *subs[] = {"extras/CUPTI/lib64", "lib64"};
        for (size_t j = 0; j < 2; j++) {
            char *path = NULL; /* on the heap: the first trace may open on a small stack */
            void *h = asprintf(&path, "%s/%s/libcupti.so", dirs[i], subs[j]) >= 0
                          ? dlopen(path, RTLD_NOW | RTLD_LOCAL)
                          : NULL;
            free(path);
            if (h)
                return h;
        }
    }
    snprintf(tried, n,
             "libcupti.so, libcupti.so.13, libcupti.so.12, $CUDA_HOME and /usr/local/cuda "
             "(extras/CUPTI/lib64, lib64)");
    return NULL;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cupti_to_mono(uint64_t t)
{
    int64_t v = (int64_t)t + cupti_offset_ns;
    return v < 0 ? 0 : (uint64_t)v;
}

static void CUPTIAPI cupti_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    if (posix_memalign(&p, 8, JST_CUPTI_BUF_SIZE) != 0)
        p = NULL;
    *buffer = p;
    *size = p ? JST_CUPTI_BUF_SIZE : 0;
    *max_records = 0;
}

static unsigned cupti_op(CUpti_ActivityJitOperationType t)
{
    switch (t) {
    case CUPTI_ACTIVITY_JIT_OPERATION_CACHE_LOAD:
        return JST_CUPTI_CACHE_LOAD;
    case CUPTI_ACTIVITY_JIT_OPERATION_CACHE_STORE:
        return JST_CUPTI_CACHE_STORE;
    case CUPTI_ACTIVITY_JIT_OPERATION_COMPILE:
        return JST_CUPTI_COMPILE;
    default:
        return 0;
    }
}

static void cupti_emit_jit(const CUpti_ActivityJit2 *j)
{
    enum { cap = 4608 };
    uint8_t *buf = malloc(cap); /* not on the stack: a flush may run on a small one */
    if (!buf)
        return;
    struct jst_rec r;
    jst_rec_begin(&r, buf, cap, JST_REC_CUPTI_JIT);
    jst_rec_u64(&r, JST_F_CUPTI_OP, cupti_op(j->jitOperationType));
    jst_rec_u64(&r, JST_F_CUPTI_START_NS, cupti_to_mono(j->start));
    jst_rec_u64(&r, JST_F_CUPTI_END_NS, cupti_to_mono(j->end));
    if (j->cachePath)
        jst_rec_strn(&r, JST_F_CUPTI_CACHE_PATH, j->cachePath, strnlen(j->cachePath, 4096));
    jst_rec_u64(&r, JST_F_CUPTI_CACHE_SIZE, j->cacheSize);
    jst_rec_u64(&r, JST_F_CUPTI_LOAD_SEQ, 0); /* tied to its load by time, offline */
    jst_rec_u64(&r, JST_F_DEVICE, j->deviceId);
    if (j->threadId)
        jst_rec_u64(&r, JST_F_TID, j->threadId);
    jst_emit(&r, 1);
    free(buf);
}

/* Runs on a CUPTI thread, or inside cuptiActivityFlushAll. */
static void CUPTIAPI cupti_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                            size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    int saved_guard = jst_guard;
    jst_guard = 1;
    CUpti_Activity *rec = NULL;
    while (buffer && valid > 0 && p_next(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_JIT)
            cupti_emit_jit((const CUpti_ActivityJit2 *)rec);
    }
    jst_guard = saved_guard;
    free(buffer);
}

static void cupti_start_once(void)
{
    const char *v = getenv("JITSTALL_CUPTI");
    if (!v || strcmp(v, "1") != 0)
        return;
    char tried[512];
    void *h = cupti_open(tried, sizeof tried);
    if (!h) {
        char *msg = NULL;
        if (asprintf(&msg, "JITSTALL_CUPTI=1: libcupti not found (tried %s); no CUPTI JIT records",
                     tried) >= 0)
            cupti_note(1, msg);
        free(msg);
        return;
    }
    p_register = (__typeof__(p_register))jst_real_dlsym(h, "cuptiActivityRegisterCallbacks");
    p_enable = (__typeof__(p_enable))jst_real_dlsym(h, "cuptiActivityEnable");
    p_flush_all = (__typeof__(p_flush_all))jst_real_dlsym(h, "cuptiActivityFlushAll");
    p_next = (__typeof__(p_next))jst_real_dlsym(h, "cuptiActivityGetNextRecord");
    p_timestamp = (__typeof__(p_timestamp))jst_real_dlsym(h, "cuptiGetTimestamp");
    if (!p_register || !p_enable || !p_flush_all || !p_next || !p_timestamp) {
        cupti_note(1, "JITSTALL_CUPTI=1: libcupti lacks the activity API; no CUPTI JIT records");
        return;
    }
    int saved_guard = jst_guard;
    jst_guard = 1; /* driver calls CUPTI makes pass straight through the hooks */
    uint64_t ts = 0, m0 = mono_ns();
    CUptiResult rc = p_timestamp(&ts);
    uint64_t m1 = mono_ns();
    if (rc == CUPTI_SUCCESS)
        cupti_offset_ns = (int64_t)(m0 + (m1 - m0) / 2) - (int64_t)ts;
    if (rc == CUPTI_SUCCESS)
        rc = p_register(cupti_buffer_requested, cupti_buffer_completed);
    if (rc == CUPTI_SUCCESS)
        rc = p_enable(CUPTI_ACTIVITY_KIND_JIT);
    jst_guard = saved_guard;
    if (rc != CUPTI_SUCCESS) {
        char msg[160];
        snprintf(msg, sizeof msg,
                 "JITSTALL_CUPTI=1: CUPTI JIT activity could not be enabled (CUptiResult %d); "
                 "no CUPTI JIT records",
                 (int)rc);
        cupti_note(1, msg);
        return;
    }
    atomic_store(&cupti_on, 1);
    cupti_note(0, "JITSTALL_CUPTI=1: CUPTI JIT activity on");
}

void jst_cupti_start(void)
{
    pthread_once(&cupti_once, cupti_start_once);
}

void jst_cupti_flush(void)
{
    if (!atomic_load(&cupti_on))
        return;
    int saved_guard = jst_guard;
    jst_guard = 1;
    p_flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    jst_guard = saved_guard;
}
