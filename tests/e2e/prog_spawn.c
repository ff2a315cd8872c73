/*
 * Starts stand-in compilers (tests/e2e/fake_cc.c, as BINDIR/ptxas and
 * BINDIR/nvcc) the ways programs do: fork+exec, vfork+exec (also trying a
 * missing path first, as Python's subprocess does), posix_spawn and
 * posix_spawnp, each reaped with a different wait call, and on a thread with
 * a 16 KiB stack: a child reaped there, and one spawned and reaped there. The
 * trace must hold one compile record per child (tests/e2e/test_spawn.sh).
 *   prog_spawn BINDIR OUTDIR
 * cuInit first: the process's trace is open when the children start.
 */
#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static char bindir[1024], outdir[1024];

static void path_of(char *buf, size_t cap, const char *dir, const char *name)
{
    snprintf(buf, cap, "%s/%s", dir, name);
}

/* fork, then execv in the child; waitpid. */
static void run_fork(void)
{
    char prog[1100], out[1100];
    path_of(prog, sizeof prog, bindir, "ptxas");
    path_of(out, sizeof out, outdir, "fork.cubin");
    char *argv[] = {"ptxas", "-lineinfo", "--gpu-name=sm_90a", "-o", out, "fork.ptx", NULL};
    pid_t p = fork();
    if (p == 0) {
        execv(prog, argv);
        _exit(127);
    }
    int st;
    waitpid(p, &st, 0);
    printf("fork: %d\n", WEXITSTATUS(st));
}

/* vfork, then execve in the child; wait4. The child exits 3. */
static void run_vfork(void)
{
    char prog[1100], out[1100];
    path_of(prog, sizeof prog, bindir, "nvcc");
    path_of(out, sizeof out, outdir, "vfork.o");
    char *argv[] = {"nvcc", "-arch", "sm_80", "-c", "-o", out, "k.cu", NULL};
    char *envp[] = {"FAKE_CC_RC=3", NULL};
    char *env2[64];
    size_t n = 0;
    for (char **e = environ; *e && n < 62; e++)
        if (strncmp(*e, "FAKE_CC_RC=", 11) != 0)
            env2[n++] = *e;
    env2[n++] = envp[0];
    env2[n] = NULL;
    pid_t p = vfork();
    if (p == 0) {
        execve(prog, argv, env2);
        _exit(127);
    }
    int st;
    wait4(p, &st, 0, NULL);
    printf("vfork: %d\n", WEXITSTATUS(st));
}

/* vfork, then execve over the directories of a search path, as Python's
 * subprocess does: the first candidate does not exist. waitpid. */
static void run_search(void)
{
    char missing[1100], prog[1100], out[1100];
    path_of(missing, sizeof missing, outdir, "no-such-dir/ptxas");
    path_of(prog, sizeof prog, bindir, "ptxas");
    path_of(out, sizeof out, outdir, "search.cubin");
    char *argv[] = {"ptxas", "-arch=sm_90", "-o", out, "search.ptx", NULL};
    pid_t p = vfork();
    if (p == 0) {
        execve(missing, argv, environ);
        execve(prog, argv, environ);
        _exit(127);
    }
    int st;
    waitpid(p, &st, 0);
    printf("search: %d\n", WEXITSTATUS(st));
}

/* posix_spawn; waitid. */
static void run_spawn(const char *tag)
{
    char prog[1100], out[1100], name[64];
    path_of(prog, sizeof prog, bindir, "ptxas");
    snprintf(name, sizeof name, "%s.cubin", tag);
    path_of(out, sizeof out, outdir, name);
    char *argv[] = {"ptxas", "-arch=sm_90", "-o", out, "spawn.ptx", NULL};
    pid_t p;
    if (posix_spawn(&p, prog, NULL, NULL, argv, environ) != 0) {
        printf("%s: spawn failed\n", tag);
        return;
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    waitid(P_PID, (id_t)p, &si, WEXITED);
    printf("%s: %d\n", tag, si.si_status);
}

/* posix_spawnp through PATH; wait(). */
static void run_spawnp(void)
{
    char out[1100];
    path_of(out, sizeof out, outdir, "spawnp.o");
    char *argv[] = {"nvcc", "--gpu-architecture=compute_90", "-o", out, "p.cu", NULL};
    pid_t p;
    if (posix_spawnp(&p, "nvcc", NULL, NULL, argv, environ) != 0) {
        printf("spawnp: spawn failed\n");
        return;
    }
    int st;
    wait(&st);
    printf("spawnp: %d\n", WEXITSTATUS(st));
}

/* Reaps the child pid with waitpid on a thread with a 16 KiB stack: the
 * wait wrapper, the record and the stack capture all run there. */
static void *small_thread(void *arg)
{
    pid_t p = (pid_t)(intptr_t)arg;
    int st;
    waitpid(p, &st, 0);
    printf("thread: %d\n", WEXITSTATUS(st));
    run_spawn("thread2"); /* posix_spawn and waitid on this stack too */
    return NULL;
}

static void run_thread(void)
{
    char prog[1100], out[1100];
    path_of(prog, sizeof prog, bindir, "ptxas");
    path_of(out, sizeof out, outdir, "thread.cubin");
    char *argv[] = {"ptxas", "-arch=sm_90", "-o", out, "spawn.ptx", NULL};
    pid_t p = fork();
    if (p == 0) {
        execv(prog, argv);
        _exit(127);
    }
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 16384);
    pthread_t t;
    if (pthread_create(&t, &a, small_thread, (void *)(intptr_t)p) == 0)
        pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    snprintf(bindir, sizeof bindir, "%s", argv[1]);
    snprintf(outdir, sizeof outdir, "%s", argv[2]);
    printf("cuInit: %d\n", (int)cuInit(0));
    fflush(stdout);
    run_fork();
    run_vfork();
    run_search();
    run_spawn("spawn");
    run_spawnp();
    run_thread();
    return 0;
}
