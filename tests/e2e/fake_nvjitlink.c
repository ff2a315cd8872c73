/*
 * A stand-in libnvJitLink.so.13 (test double): nvJitLinkComplete and the
 * versioned __nvJitLinkComplete_13_0 that nvJitLink.h makes programs call
 * sleep $JST_FAKE_RTC_MS milliseconds (a link) and return
 * $JST_FAKE_RTC_RESULT (default NVJITLINK_SUCCESS).
 */
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <stdlib.h>
#include <time.h>

nvJitLinkResult nvJitLinkComplete(nvJitLinkHandle handle);

/* Sleeps the configured time and returns the configured result. */
static nvJitLinkResult fake_link(void)
{
    const char *ms = getenv("JST_FAKE_RTC_MS");
    long v = ms ? atol(ms) : 0;
    if (v > 0) {
        struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    const char *res = getenv("JST_FAKE_RTC_RESULT");
    return (nvJitLinkResult)(res ? atoi(res) : 0);
}

nvJitLinkResult __nvJitLinkComplete_13_0(nvJitLinkHandle handle)
{
    (void)handle;
    return fake_link();
}

nvJitLinkResult nvJitLinkComplete(nvJitLinkHandle handle)
{
    (void)handle;
    return fake_link();
}
