/*
 * Test helper for e2e.python: calls a driver load after a delay, so that the
 * calling Python thread has released the GIL long enough for another thread
 * to hold it when the load reaches jitstall's hook.
 */
#include <cuda.h>
#include <unistd.h>

typedef CUresult (*py_delay_load_fn)(CUmodule *, const void *);

/* Sleeps ms milliseconds, then calls load(mod, image) (not as a tail call:
 * this frame stays on the stack). */
__attribute__((visibility("default"))) int py_delay_load(py_delay_load_fn load, CUmodule *mod,
                                                         const void *image, int ms)
{
    usleep((useconds_t)ms * 1000u);
    volatile int r = (int)load(mod, image);
    return r;
}
