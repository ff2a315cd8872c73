/*
 * A stand-in libnvrtc.so.13 (test double) for the runtime-compiler hook on
 * machines without the real one: nvrtcCompileProgram sleeps
 * $JST_FAKE_RTC_MS milliseconds (a compile) and returns $JST_FAKE_RTC_RESULT
 * (default NVRTC_SUCCESS). Nothing else of NVRTC is here.
 */
#include <nvrtc.h>
#include <stdlib.h>
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

nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char *const *options)
{
    (void)prog;
    (void)numOptions;
    (void)options;
    return (nvrtcResult)fake_compile();
}
