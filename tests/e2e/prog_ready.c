/*
 * End-to-end program for JITSTALL_READY: a server that warms up, says it is
 * ready, and then compiles anyway. It loads and launches FIRST (its warm-up),
 * says "ready" the way MODE names, waits WAIT_S seconds (so that the
 * preload's poll of a file or timer sees it before what follows), then loads
 * and launches LATE, whose PTX the simulated driver JITs: a late compile.
 *
 * Usage: prog_ready FIXTURES_DIR MODE WAIT_S FIRST LATE [PATH]
 * LATE may be cc:PROGRAM instead of an image: the late compile is then a
 * compiler child (posix_spawn, waitpid), as Triton runs ptxas.
 * MODE: mark (nvtxMarkA "warmup_done"), range (a push/pop range
 * "warmup_done" around the warm-up), start (a start/end range
 * "warmup_done" around it), file (creates PATH), none (says nothing: the
 * after: form). Before the warm-up it marks "not_yet" and pushes and pops
 * "other", which must not count. Prints one line per step.
 */
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <nvtx3/nvToolsExt.h>

#include "e2e_common.h"

extern char **environ;

static void run_cc(const char *prog)
{
    char *args[] = {(char *)prog, "-o", "/dev/null", NULL};
    pid_t pid;
    int st = 0;
    if (posix_spawn(&pid, prog, NULL, NULL, args, environ) != 0) {
        printf("cannot run %s\n", prog);
        return;
    }
    waitpid(pid, &st, 0);
    printf("%s exited %d\n", prog, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: %s FIXTURES_DIR MODE WAIT_S FIRST LATE [PATH]\n", argv[0]);
        return 2;
    }
    struct e2e_api a;
#define E2E_DIRECT(name) a.name = name;
    E2E_FUNCS(E2E_DIRECT)
#undef E2E_DIRECT
    const char *dir = argv[1], *mode = argv[2];
    CUdeviceptr buf = 0;
    if (e2e_setup(&a, &buf) != CUDA_SUCCESS)
        return 1;
    nvtxMarkA("not_yet");
    nvtxRangePushA("other");
    nvtxRangePop();
    nvtxRangeId_t id = 0;
    if (!strcmp(mode, "range"))
        nvtxRangePushA("warmup_done");
    else if (!strcmp(mode, "start"))
        id = nvtxRangeStartA("warmup_done");
    e2e_flow_module(&a, dir, argv[4], buf);
    if (!strcmp(mode, "mark"))
        nvtxMarkA("warmup_done");
    else if (!strcmp(mode, "range"))
        nvtxRangePop();
    else if (!strcmp(mode, "start"))
        nvtxRangeEnd(id);
    else if (!strcmp(mode, "file") && argc > 6) {
        int fd = open(argv[6], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
            close(fd);
    }
    printf("ready (%s)\n", mode);
    fflush(stdout);
    double w = atof(argv[3]);
    struct timespec ts = {(time_t)w, (long)((w - (double)(time_t)w) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
    if (!strncmp(argv[5], "cc:", 3))
        run_cc(argv[5] + 3);
    else
        e2e_flow_module(&a, dir, argv[5], buf);
    e2e_step(&a, "cuMemFree", a.cuMemFree(buf));
    return 0;
}
