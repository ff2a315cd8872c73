/*
 * End-to-end program for threads at exit, linked with -lcuda: THREADS threads
 * load a module, launch its kernel and unload it in a loop while the main
 * thread calls exit(EXIT_CODE) in the middle of their loads. The preload's end
 * of trace races with their hooks; the output and status must not change, and
 * a ThreadSanitizer build (JITSTALL_TSAN) must report nothing.
 * Usage: prog_threads FIXTURES_DIR EXIT_CODE THREADS
 */
#include <pthread.h>
#include <time.h>

#include "e2e_common.h"

static struct e2e_api api;
static CUcontext g_ctx;
static void *g_image;
static CUdeviceptr g_buf;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_loaded;

/* Loads, launches, unloads, forever; the process ends under it. */
static void *worker(void *arg)
{
    (void)arg;
    api.cuCtxSetCurrent(g_ctx);
    void *params[] = {&g_buf};
    for (int n = 0;; n++) {
        CUmodule m = NULL;
        CUfunction f = NULL;
        if (api.cuModuleLoadData(&m, g_image) == CUDA_SUCCESS &&
            api.cuModuleGetFunction(&f, m, E2E_KERNEL) == CUDA_SUCCESS)
            api.cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL);
        if (m)
            cuModuleUnload(m);
        if (n == 0) {
            pthread_mutex_lock(&g_lock);
            g_loaded++;
            pthread_cond_signal(&g_cond);
            pthread_mutex_unlock(&g_lock);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s FIXTURES_DIR EXIT_CODE THREADS\n", argv[0]);
        return 2;
    }
#define E2E_DIRECT(name) api.name = name;
    E2E_FUNCS(E2E_DIRECT)
#undef E2E_DIRECT
    int code = atoi(argv[2]), n = atoi(argv[3]);
    g_image = e2e_read(argv[1], "sm90.fatbin", NULL);
    if (e2e_setup(&api, &g_buf) != CUDA_SUCCESS)
        return code;
    if (cuCtxGetCurrent(&g_ctx) != CUDA_SUCCESS)
        return code;
    for (int i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, worker, NULL) != 0)
            return 93;
    }
    /* Every thread has finished one load; exit while they keep loading. */
    pthread_mutex_lock(&g_lock);
    while (g_loaded < n)
        pthread_cond_wait(&g_cond, &g_lock);
    pthread_mutex_unlock(&g_lock);
    printf("exiting with %d while %d threads load\n", code, n);
    fflush(stdout);
    exit(code);
}
