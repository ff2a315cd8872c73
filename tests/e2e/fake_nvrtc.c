/*
 * A stand-in libnvrtc.so.13 (test double) for the runtime-compiler hook on
 * machines without the real one: nvrtcCompileProgram sleeps
 * $JST_FAKE_RTC_MS milliseconds (a compile) and returns $JST_FAKE_RTC_RESULT
 * (default NVRTC_SUCCESS). nvrtcGetPTXSize and nvrtcGetPTX give the bytes of
 * the file $JST_FAKE_RTC_PTX and a NUL (an error when it is not set or
 * unreadable), as the compiled program's PTX. nvrtcCreateProgram hands out
 * the program 0x1234 whatever it is given. Nothing else of NVRTC is here.
 */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Sleeps the configured time and returns the configured result. */
static int fake_compile(void)
{
    const char *ms = getenv("JST_FAKE_RTC_MS");
    long v = ms ? atol(ms) : 0;
    if (v > 0) {
        struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    const char *res = getenv("JST_FAKE_RTC_RESULT");
    return res ? atoi(res) : 0;
}

nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name,
                               int numHeaders, const char *const *headers,
                               const char *const *includeNames)
{
    (void)src;
    (void)name;
    (void)numHeaders;
    (void)headers;
    (void)includeNames;
    if (!prog)
        return NVRTC_ERROR_INVALID_INPUT;
    *prog = (nvrtcProgram)0x1234;
    return NVRTC_SUCCESS;
}

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char *const *options)
{
    (void)prog;
    (void)numOptions;
    (void)options;
    return (nvrtcResult)fake_compile();
}

/* The PTX of $JST_FAKE_RTC_PTX with its NUL, malloc'd; NULL when unset or
 * unreadable. */
static char *fake_ptx(size_t *n)
{
    const char *path = getenv("JST_FAKE_RTC_PTX");
    FILE *f = path ? fopen(path, "rb") : NULL;
    char *buf = NULL;
    long len;
    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = calloc(1, (size_t)len + 1)) && fread(buf, 1, (size_t)len, f) == (size_t)len)
        *n = (size_t)len + 1;
    else {
        free(buf);
        buf = NULL;
    }
    if (f)
        fclose(f);
    return buf;
}

nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *size)
{
    (void)prog;
    size_t n = 0;
    char *ptx = fake_ptx(&n);
    if (!ptx || !size) {
        free(ptx);
        return NVRTC_ERROR_INVALID_PROGRAM;
    }
    free(ptx);
    *size = n;
    return NVRTC_SUCCESS;
}

nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *out)
{
    (void)prog;
    size_t n = 0;
    char *ptx = fake_ptx(&n);
    if (!ptx || !out) {
        free(ptx);
        return NVRTC_ERROR_INVALID_PROGRAM;
    }
    memcpy(out, ptx, n);
    free(ptx);
    return NVRTC_SUCCESS;
}
