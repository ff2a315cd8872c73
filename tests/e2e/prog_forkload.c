/*
 * End-to-end program for calls in flight across fork (test_inflight.sh),
 * linked with -lcuda: the parent loads a SASS image (which starts the
 * preload's progress thread), then forks; the child JIT-loads a PTX image,
 * which the test makes slow and kills. The child's trace must still get
 * progress records: the thread is not inherited by fork and must be started
 * again in the child. The parent prints how the child ended.
 * Usage: prog_forkload FIXTURES_DIR SASS_IMAGE PTX_IMAGE
 */
#include <sys/wait.h>

#include "e2e_common.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s FIXTURES_DIR SASS_IMAGE PTX_IMAGE\n", argv[0]);
        return 2;
    }
    CUdevice dev;
    CUcontext ctx;
    CUmodule m;
    void *sass = e2e_read(argv[1], argv[2], NULL);
    void *ptx = e2e_read(argv[1], argv[3], NULL);
    if (!sass || !ptx || cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
        return 3;
    printf("parent load: %d\n", (int)cuModuleLoadData(&m, sass));
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        printf("child load: %d\n", (int)cuModuleLoadData(&m, ptx));
        fflush(stdout);
        _exit(0);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return 4;
    printf("child %s %d\n", WIFEXITED(st) ? "exited" : "killed by signal",
           WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
    return 0;
}
