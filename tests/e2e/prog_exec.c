/*
 * End-to-end program for exec under the preload, linked with -lcuda. It
 * JIT-loads ptx75.fatbin and launches its kernel, then:
 *   exec PROG ARGS...  execv(PROG): the trace must end with the exec;
 *   fail               execl() of a missing file, which fails; it goes on to
 *                      load k75.ptx and exits 5;
 *   vfork              vfork(), and execl() of a missing file in the child,
 *                      which exits 7; the parent loads k75.ptx and exits 0.
 * Usage: prog_exec FIXTURES_DIR exec|fail|vfork [PROG ARGS...]
 */
#include <errno.h>
#include <sys/wait.h>

#include "e2e_common.h"

#define MISSING "/nonexistent/jst-no-such-program"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s FIXTURES_DIR exec|fail|vfork [PROG ARGS...]\n", argv[0]);
        return 2;
    }
    struct e2e_api a;
#define E2E_DIRECT(name) a.name = name;
    E2E_FUNCS(E2E_DIRECT)
#undef E2E_DIRECT
    const char *dir = argv[1], *mode = argv[2];
    CUdeviceptr buf = 0;
    if (e2e_setup(&a, &buf) != CUDA_SUCCESS)
        return 3;
    e2e_flow_module(&a, dir, "ptx75.fatbin", buf);
    fflush(stdout);
    if (strcmp(mode, "exec") == 0 && argc > 3) {
        execv(argv[3], argv + 3);
        printf("exec failed: %s\n", strerror(errno));
        return 4;
    }
    if (strcmp(mode, "fail") == 0) {
        execl(MISSING, MISSING, (char *)NULL);
        printf("exec failed: %s\n", strerror(errno));
        e2e_flow_module(&a, dir, "k75.ptx", buf);
        return 5;
    }
    if (strcmp(mode, "vfork") == 0) {
        pid_t pid = vfork();
        if (pid == 0) {
            execl(MISSING, MISSING, (char *)NULL);
            _exit(7);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        printf("vfork child: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        e2e_flow_module(&a, dir, "k75.ptx", buf);
        return 0;
    }
    return 2;
}
