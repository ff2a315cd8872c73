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
 *   prog_sigchld execsig N PROGRAM ARG
 *     a SIGALRM handler execs PROGRAM ARG (exec is async-signal-safe) while
 *     the main thread mallocs and frees; the timer fires every N ms.
 * cuInit first: the process's trace is open when the children start.
 */
#include <cuda.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
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

static char *exec_argv[3];
/* Sizes the main thread allocates from: past 1 KiB, malloc takes its arena's lock. */
static size_t churn_base = 16;

static void on_alrm(int sig)
{
    (void)sig;
    execv(exec_argv[0], exec_argv);
    _exit(126);
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
                b[k] = malloc(churn_base + 97 * (size_t)k);                                        \
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

static void *idle_thread(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

static int run_execsig(int ms)
{
    /* A second thread, as a real driver starts: malloc then locks its
     * arenas. SIGALRM blocked there: the handler runs on the main thread. */
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL);
    pthread_t t;
    pthread_create(&t, NULL, idle_thread, NULL);
    pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alrm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, ms * 1000}, {0, ms * 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    churn_base = 4096;
    CHURN_UNTIL(0);
    return 3; /* the handler never ran */
}

int main(int argc, char **argv)
{
    if (argc < 5)
        return 2;
    if (strcmp(argv[1], "execsig") == 0) {
        exec_argv[0] = argv[3];
        exec_argv[1] = argv[4];
        printf("cuInit: %d\n", (int)cuInit(0));
        fflush(stdout);
        return run_execsig(atoi(argv[2]));
    }
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
