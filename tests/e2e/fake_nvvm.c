/*
 * A stand-in libnvvm.so.4 (test double) for the NVVM hook: nvvmCompileProgram
 * sleeps $JST_FAKE_NVVM_MS milliseconds and returns $JST_FAKE_NVVM_RESULT
 * (default 0, NVVM_SUCCESS). Programs reach it as Numba does: dlopen by path,
 * then dlsym. Nothing else of NVVM is here.
 */
#include <stdlib.h>
#include <time.h>

int nvvmCompileProgram(void *prog, int numOptions, const char **options)
{
    (void)prog;
    (void)numOptions;
    (void)options;
    const char *ms = getenv("JST_FAKE_NVVM_MS");
    long v = ms ? atol(ms) : 0;
    if (v > 0) {
        struct timespec ts = {v / 1000, (v % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0)
            ;
    }
    const char *res = getenv("JST_FAKE_NVVM_RESULT");
    return res ? atoi(res) : 0;
}
