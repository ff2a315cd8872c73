/*
 * Compiler children reaped where the preload's wait wrappers cannot do
 * their usual work (tests/e2e/test_sigchld.sh). BINDIR/ptxas is the stand-in
 * compiler (tests/e2e/fake_cc.c).
 *   prog_sigchld handler N BINDIR OUTDIR
 *     a SIGCHLD handler reaps with while (waitpid(-1, &st, WNOHANG) > 0);
 *     the main thread forks and execs ptxas N times (up to 4 at a time) and
 *     mallocs and frees all along; prints "reaped N".
 *   prog_sigchld ignore N BINDIR OUTDIR
 *     SIGCHLD ignored: N children are reaped by the kernel (each waited for
 *     with waitpid, which fails with ECHILD); then SIGCHLD is restored and 5
 *     more are reaped with waitpid.
 *   prog_sigchld burst N BINDIR OUTDIR
 *     SIGCHLD ignored: N children started at once and never waited for
 *     (the program polls until they are gone); then 5 reaped with waitpid.
 * cuInit first: the process's trace is open when the children start.
 */
#include <cuda.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t reaped;
static char prog[1100], outdir[1024];

static void on_chld(int sig)
{
    (void)sig;
    int saved = errno, st;
    while (waitpid(-1, &st, WNOHANG) > 0)
        reaped++;
    errno = saved;
}

static pid_t start_ptxas(int i)
{
    char out[1200];
    snprintf(out, sizeof out, "%s/k%d.cubin", outdir, i);
    pid_t p = fork();
    if (p == 0) {
        execl(prog, "ptxas", "-arch=sm_90", "-o", out, "k.ptx", (char *)NULL);
        _exit(127);
    }
    return p;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Mallocs and frees until cond holds or 60 s have passed. */
#define CHURN_UNTIL(cond)                                                                          \
    do {                                                                                           \
        double t_end = now_s() + 60;                                                               \
        while (!(cond) && now_s() < t_end) {                                                       \
            void *b[16];                                                                           \
            for (int k = 0; k < 16; k++)                                                           \
                b[k] = malloc(16 + 97 * (size_t)k);                                                \
            for (int k = 0; k < 16; k++)                                                           \
                free(b[k]);                                                                        \
        }                                                                                          \
    } while (0)

static int run_handler(int n)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_chld;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGCHLD, &sa, NULL);
    for (int i = 0; i < n; i++) {
        if (start_ptxas(i) < 0)
            return 3;
        CHURN_UNTIL(reaped > i - 4);
    }
    CHURN_UNTIL(reaped >= n);
    printf("reaped %d\n", (int)reaped);
    return reaped == n ? 0 : 1;
}

/* The last 5: SIGCHLD back to its default, each reaped with waitpid. */
static int run_five(int base)
{
    signal(SIGCHLD, SIG_DFL);
    int ok = 0;
    for (int i = 0; i < 5; i++) {
        int st;
        pid_t p = start_ptxas(base + i);
        if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0)
            ok++;
    }
    printf("waited %d\n", ok);
    return ok == 5 ? 0 : 1;
}

static int run_ignore(int n)
{
    signal(SIGCHLD, SIG_IGN);
    int echild = 0;
    for (int i = 0; i < n; i++) {
        int st;
        pid_t p = start_ptxas(i);
        if (p > 0 && waitpid(p, &st, 0) < 0 && errno == ECHILD)
            echild++;
    }
    printf("kernel reaped %d\n", echild);
    return run_five(n);
}

static int run_burst(int n)
{
    signal(SIGCHLD, SIG_IGN);
    pid_t pids[256];
    if (n > 256)
        return 2;
    for (int i = 0; i < n; i++)
        pids[i] = start_ptxas(i);
    int gone = 0;
    double t_end = now_s() + 60;
    while (gone < n && now_s() < t_end) {
        gone = 0;
        for (int i = 0; i < n; i++)
            gone += pids[i] > 0 && kill(pids[i], 0) < 0 && errno == ESRCH;
        struct timespec ts = {0, 5000000};
        nanosleep(&ts, NULL);
    }
    printf("gone %d\n", gone);
    return run_five(n);
}

int main(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    int n = atoi(argv[2]);
    snprintf(prog, sizeof prog, "%s/ptxas", argv[3]);
    snprintf(outdir, sizeof outdir, "%s", argv[4]);
    printf("cuInit: %d\n", (int)cuInit(0));
    fflush(stdout);
    if (strcmp(argv[1], "handler") == 0)
        return run_handler(n);
    if (strcmp(argv[1], "ignore") == 0)
        return run_ignore(n);
    if (strcmp(argv[1], "burst") == 0)
        return run_burst(n);
    return 2;
}
