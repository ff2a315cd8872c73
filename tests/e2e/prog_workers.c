/*
 * A pool of compile workers, as Inductor's compile worker runs one: the
 * parent calls cuInit, then forks NWORKERS workers; each runs three stand-in
 * ptxas (tests/e2e/fake_cc.c, as BINDIR/ptxas) through posix_spawn, one after
 * the other, waiting for each, and tells the parent through a pipe. The
 * parent waits for all of them (its first call is in progress meanwhile),
 * loads an image and launches its kernel, then ends the workers the way MODE
 * says and reaps them (tests/e2e/test_workers.sh):
 *   term   the workers wait; the parent ends them with SIGTERM
 *   exit   the workers call exit(0) after their compiles
 *   _exit  the workers call _exit(0) after their compiles
 *   crash  the workers abort() after their compiles (they crashed on their own)
 *   lookup_exit  no workers: the parent looks up a kernel the image lacks (a
 *          failed call) and calls _exit(0) at once (tests/e2e/test_flush.sh)
 * Usage: prog_workers MODE BINDIR OUTDIR FIXTURES_DIR IMAGE [NWORKERS]
 * It prints how each worker ended, in worker order.
 */
#include <cuda.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "e2e_common.h"

extern char **environ;

#define MAX_WORKERS 16
#define COMPILES_PER_WORKER 3

/* A worker: its compiles, one byte to the parent, then its end by mode. */
static void worker(int k, const char *mode, const char *bindir, const char *outdir, int done_fd)
{
    char prog[2048], out[2048], in[64];
    snprintf(prog, sizeof prog, "%s/ptxas", bindir);
    for (int i = 0; i < COMPILES_PER_WORKER; i++) {
        snprintf(out, sizeof out, "%s/w%d-%d.cubin", outdir, k, i);
        snprintf(in, sizeof in, "w%d-%d.ptx", k, i);
        char *argv[] = {"ptxas", "-arch=sm_90", "-o", out, in, NULL};
        pid_t pid;
        int st = 0;
        if (posix_spawn(&pid, prog, NULL, NULL, argv, environ) != 0 ||
            waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            _exit(10);
    }
    char c = 'x';
    if (write(done_fd, &c, 1) != 1)
        _exit(11);
    if (!strcmp(mode, "exit"))
        exit(0);
    if (!strcmp(mode, "_exit"))
        _exit(0);
    if (!strcmp(mode, "crash"))
        abort();
    for (;;)
        pause(); /* until the parent's SIGTERM */
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr,
                "usage: %s term|exit|_exit|crash BINDIR OUTDIR FIXTURES_DIR IMAGE "
                "[NWORKERS]\n",
                argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    int n = argc > 6 ? atoi(argv[6]) : 4;
    if (n < 1 || n > MAX_WORKERS)
        return 2;
    CUdevice dev;
    CUcontext ctx;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return 3;
    void *image = e2e_read(argv[4], argv[5], NULL);
    if (!strcmp(mode, "lookup_exit")) {
        CUmodule mod;
        CUfunction f;
        printf("load: %d\n", (int)cuModuleLoadData(&mod, image));
        printf("lookup: %d\n", (int)cuModuleGetFunction(&f, mod, "no_such_kernel"));
        fflush(stdout);
        _exit(0);
    }
    int fds[2];
    if (pipe(fds) != 0)
        return 4;
    fflush(stdout);
    pid_t pids[MAX_WORKERS];
    for (int k = 0; k < n; k++) {
        pids[k] = fork();
        if (pids[k] < 0)
            return 5;
        if (pids[k] == 0) {
            close(fds[0]);
            worker(k, mode, argv[2], argv[3], fds[1]);
        }
    }
    close(fds[1]);
    /* The first call: waiting for the pool, then the module and the launch. */
    int done = 0;
    char c;
    while (done < n && read(fds[0], &c, 1) == 1)
        done++;
    printf("workers done: %d\n", done);
    CUmodule mod;
    CUfunction f;
    CUdeviceptr buf;
    if (cuMemAlloc(&buf, 32 * sizeof(int)) != CUDA_SUCCESS ||
        cuModuleLoadData(&mod, image) != CUDA_SUCCESS ||
        cuModuleGetFunction(&f, mod, E2E_KERNEL) != CUDA_SUCCESS)
        return 6;
    void *params[] = {&buf};
    printf("launch: %d\n", (int)cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL));
    printf("synchronize: %d\n", (int)cuCtxSynchronize());
    if (!strcmp(mode, "term"))
        for (int k = 0; k < n; k++)
            kill(pids[k], SIGTERM);
    for (int k = 0; k < n; k++) {
        int st = 0;
        if (waitpid(pids[k], &st, 0) != pids[k])
            return 7;
        if (WIFEXITED(st))
            printf("worker %d: exited %d\n", k, WEXITSTATUS(st));
        else
            printf("worker %d: signal %d\n", k, WTERMSIG(st));
    }
    return 0;
}
