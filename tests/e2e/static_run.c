/*
 * A statically linked launcher for the build-tree test (test_build.sh): the
 * preload cannot enter it (no dynamic loader), so a traced parent must count
 * it by its program name alone. Runs argv[1] with its arguments, waits, and
 * exits with its status.
 */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    pid_t pid = fork();
    if (pid == 0) {
        execv(argv[1], argv + 1);
        _exit(127);
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) < 0)
        return 1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
