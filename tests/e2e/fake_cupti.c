/*
 * A stand-in libcupti.so for the CUPTI test on machines without a GPU: just
 * the five activity calls interpose/cupti.c uses. Its clock is CLOCK_REALTIME
 * (so the preload must convert to CLOCK_MONOTONIC), and at the first flush it
 * hands back two CUpti_ActivityJit2 records, a COMPILE spanning the time from
 * cuptiActivityEnable to the flush and a CACHE_STORE at the flush, both with
 * CUDA_CACHE_PATH as their cache path. A TEST DOUBLE: never ship it.
 */
#include <cupti_activity.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static CUpti_BuffersCallbackRequestFunc fake_request;
static CUpti_BuffersCallbackCompleteFunc fake_complete;
static int fake_jit_on;
static uint64_t fake_enabled_at;
static int fake_flushed;

static uint64_t fake_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
    if (!timestamp)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *timestamp = fake_now();
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                    CUpti_BuffersCallbackCompleteFunc done)
{
    if (!req || !done)
        return CUPTI_ERROR_INVALID_PARAMETER;
    fake_request = req;
    fake_complete = done;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if (kind != CUPTI_ACTIVITY_KIND_JIT)
        return CUPTI_ERROR_NOT_SUPPORTED;
    fake_jit_on = 1;
    fake_enabled_at = fake_now();
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
                                                CUpti_Activity **record)
{
    size_t off = *record ? (size_t)((uint8_t *)*record - buffer) + sizeof(CUpti_ActivityJit2) : 0;
    if (off + sizeof(CUpti_ActivityJit2) > valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)(buffer + off);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    if (!fake_jit_on || !fake_request || fake_flushed)
        return CUPTI_SUCCESS;
    fake_flushed = 1;
    uint8_t *buf = NULL;
    size_t size = 0, max_records = 0;
    fake_request(&buf, &size, &max_records);
    if (!buf || size < 2 * sizeof(CUpti_ActivityJit2))
        return CUPTI_ERROR_INVALID_PARAMETER;
    static char path[4096];
    const char *p = getenv("CUDA_CACHE_PATH");
    strncpy(path, p ? p : "", sizeof path - 1);
    uint64_t now = fake_now();
    CUpti_ActivityJit2 r[2];
    memset(r, 0, sizeof r);
    for (int i = 0; i < 2; i++) {
        r[i].kind = CUPTI_ACTIVITY_KIND_JIT;
        r[i].jitEntryType = CUPTI_ACTIVITY_JIT_ENTRY_PTX_TO_CUBIN;
        r[i].cacheSize = 1ull << 30;
        r[i].cachePath = path;
        r[i].deviceId = 0;
    }
    r[0].jitOperationType = CUPTI_ACTIVITY_JIT_OPERATION_COMPILE;
    r[0].start = fake_enabled_at;
    r[0].end = now;
    r[1].jitOperationType = CUPTI_ACTIVITY_JIT_OPERATION_CACHE_STORE;
    r[1].start = now;
    r[1].end = now;
    memcpy(buf, r, sizeof r);
    fake_complete(NULL, 0, buf, size, sizeof r);
    return CUPTI_SUCCESS;
}
