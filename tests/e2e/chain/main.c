/*
 * Entry of the chain program (tests/e2e/chain): main calls load_catalog,
 * which calls open_shard, which calls cuModuleLoadData on a PTX-only image,
 * so the JIT event's stack has a known shape.
 * Usage: chain PTX_FILE [--fork]. With --fork the load runs twice from the
 * same line, the second time in both a forked child and the parent, so the
 * child's trace needs a stack its parent has already written.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chain.h"

int main(int argc, char **argv)
{
    int fork_too = argc == 3 && strcmp(argv[2], "--fork") == 0;
    if (argc != 2 && !fork_too) {
        fprintf(stderr, "usage: chain PTX_FILE [--fork]\n");
        return 2;
    }
    pid_t child = -1;
    int rc = 0;
    for (int round = 0; round < (fork_too ? 2 : 1) && rc == 0; round++) {
        if (round == 1) {
            fflush(stdout);
            child = fork();
        }
        rc = load_catalog(argv[1]); /* chain-call */
    }
    if (child == 0)
        return rc == 0 ? 0 : 1;
    int st = 0;
    if (child > 0 && (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st)))
        rc = 1;
    printf("load_catalog: %d\n", rc);
    return rc == 0 ? 0 : 1;
}
