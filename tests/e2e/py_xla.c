/*
 * For e2e.compilers' XLA-like program: a native "compile" inside an NVTX
 * range in the default domain named as XLA names its compiles, spinning the
 * CPU for ms milliseconds.
 */
#include <nvtx3/nvToolsExt.h>
#include <time.h>

static unsigned long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000ull + (unsigned long long)ts.tv_nsec / 1000000ull;
}

int py_xla_compile(int ms)
{
    nvtxRangePushA("XlaCompile:#module=jit_foo#");
    unsigned long long end = now_ms() + (unsigned long long)ms;
    volatile unsigned long n = 0;
    while (now_ms() < end)
        n++;
    nvtxRangePop();
    return 0;
}
