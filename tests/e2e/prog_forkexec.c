/*
 * End-to-end program for fork and exec under the preload, linked with -lcuda.
 * The parent JIT-loads a module, forks a child that touches no CUDA and exits,
 * forks and execs CHILD_PROG (which loads sm90.fatbin and exits 5), then
 * JIT-loads k75.ptx itself, so the trace must stay intact across both forks.
 * Usage: prog_forkexec FIXTURES_DIR EXIT_CODE CHILD_PROG
 */
#include <sys/wait.h>

#include "e2e_common.h"

static int wait_child(pid_t pid)
{
    int st = 0;
    if (waitpid(pid, &st, 0) != pid)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s FIXTURES_DIR EXIT_CODE CHILD_PROG\n", argv[0]);
        return 2;
    }
    struct e2e_api a;
#define E2E_DIRECT(name) a.name = name;
    E2E_FUNCS(E2E_DIRECT)
#undef E2E_DIRECT
    const char *dir = argv[1];
    int code = atoi(argv[2]);
    CUdeviceptr buf = 0;
    if (e2e_setup(&a, &buf) != CUDA_SUCCESS)
        return code;
    e2e_flow_module(&a, dir, "ptx75.fatbin", buf);

    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        printf("plain child: exiting 0\n");
        exit(0);
    }
    printf("plain child status: %d\n", wait_child(pid));

    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        execl(argv[3], argv[3], dir, "5", "module", "sm90.fatbin", (char *)NULL);
        _exit(127);
    }
    printf("exec child status: %d\n", wait_child(pid));

    e2e_flow_module(&a, dir, "k75.ptx", buf);
    printf("done, exit %d\n", code);
    return code;
}
