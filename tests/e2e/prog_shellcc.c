/*
 * Compilers run through a shell, and execs by descriptor
 * (tests/e2e/test_shellcc.sh). ptxas and nvcc are stand-ins
 * (tests/e2e/fake_cc.c) found through PATH.
 *   prog_shellcc shell OUTDIR
 *     system() of ptxas (quoted arguments, a redirection), of
 *     "cd DIR && FAKE_CC_RC=3 nvcc ..." (exit 3) and of "true" (no compiler);
 *     popen() of ptxas, read to the end, then pclose().
 *   prog_shellcc fexecve PROGRAM ARGS...   (fexecve of an opened PROGRAM)
 *   prog_shellcc execveat PROGRAM ARGS...  (execveat(AT_FDCWD, PROGRAM))
 * cuInit first: the process's trace is open.
 */
#include <cuda.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int run_shell(const char *outdir)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "ptxas -arch=sm_90 -o '%s/sys.cubin' \"in put.ptx\" 2>/dev/null",
             outdir);
    int r = system(cmd);
    printf("system ptxas: %d\n", WIFEXITED(r) ? WEXITSTATUS(r) : -1);
    snprintf(cmd, sizeof cmd, "cd '%s' && FAKE_CC_RC=3 nvcc -arch sm_80 -c -o sys.o k.cu", outdir);
    r = system(cmd);
    printf("system nvcc: %d\n", WIFEXITED(r) ? WEXITSTATUS(r) : -1);
    r = system("true");
    printf("system true: %d\n", WIFEXITED(r) ? WEXITSTATUS(r) : -1);
    snprintf(cmd, sizeof cmd, "ptxas --gpu-name=sm_90a -o %s/pop.cubin pop.ptx; echo done", outdir);
    FILE *f = popen(cmd, "r");
    if (!f)
        return 3;
    char line[256];
    while (fgets(line, sizeof line, f))
        printf("popen: %s", line);
    r = pclose(f);
    printf("pclose: %d\n", WIFEXITED(r) ? WEXITSTATUS(r) : -1);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    printf("cuInit: %d\n", (int)cuInit(0));
    fflush(stdout);
    if (strcmp(argv[1], "shell") == 0)
        return run_shell(argv[2]);
    if (strcmp(argv[1], "fexecve") == 0) {
        int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return 4;
        fexecve(fd, argv + 2, environ);
        return 5;
    }
    if (strcmp(argv[1], "execveat") == 0) {
        execveat(AT_FDCWD, argv[2], argv + 2, environ, 0);
        return 5;
    }
    return 2;
}
