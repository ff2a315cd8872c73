/*
 * Benchmark: what the preload costs a whole process. Runs a command many
 * times, interleaving plain runs with runs under LD_PRELOAD (and, for
 * start-up, with JITSTALL_DISABLE=1 too), and prints the mean and median
 * wall time and CPU time (user + system, from wait4) of each, and the
 * difference. The targets: an idle process (one that never calls the
 * driver, e.g. /bin/true) within 5% CPU time of plain; a traced start at
 * most 1 ms (or 1%) slower.
 *
 * usage: bench_cost idle PRELOAD RUNS [CMD ARGS...]       (default /bin/true)
 *        bench_cost start PRELOAD RUNS CMD ARGS...
 * Exit: 0 target met, 1 missed, 2 usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

enum { BC_PLAIN, BC_OFF, BC_TRACED, BC_N };
static const char *const bc_names[BC_N] = {"plain", "preload, JITSTALL_DISABLE=1", "traced"};

struct bc_series {
    double *wall_us, *cpu_us;
    double faults; /* minor page faults, summed */
    int n;
};

static double bc_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* The environment of one run: ours, with LD_PRELOAD/JITSTALL_* set or not. */
static char **bc_env(int mode, const char *preload, const char *dir)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **e = calloc(n + 4, sizeof *e);
    if (!e)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 && strncmp(environ[i], "JITSTALL_", 9) != 0)
            e[k++] = environ[i];
    static char pre[4200], off[] = "JITSTALL_DISABLE=1", d[4200];
    snprintf(pre, sizeof pre, "LD_PRELOAD=%s", preload);
    snprintf(d, sizeof d, "JITSTALL_DIR=%s", dir);
    if (mode != BC_PLAIN) {
        e[k++] = pre;
        e[k++] = d;
    }
    if (mode == BC_OFF)
        e[k++] = off;
    return e;
}

/* Runs argv once; stores wall and CPU time (us) and minor page faults. -1 if
 * it could not run or did not exit 0. */
static int bc_run(char **argv, char **env, double *wall, double *cpu, double *faults)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    double t0 = bc_now_us();
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    int st;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0)
        if (errno != EINTR)
            return -1;
    *wall = bc_now_us() - t0;
    *cpu = ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_sec * 1e6 +
           ru.ru_stime.tv_usec;
    *faults = (double)ru.ru_minflt;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int bc_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double bc_mean(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return n ? s / n : 0;
}

static double bc_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bc_cmp);
    return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : 0;
}

/* Removes the traces a run left, so the directory does not grow. */
static void bc_clean(const char *dir)
{
    char cmd[4300];
    snprintf(cmd, sizeof cmd, "find '%s' -name 'jitstall-*.jst' -delete", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "bench_cost: could not clean %s\n", dir);
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "idle") && strcmp(argv[1], "start")) || atoi(argv[3]) < 1) {
        fprintf(stderr, "usage: bench_cost idle|start PRELOAD RUNS [CMD ARGS...]\n");
        return 2;
    }
    int idle = strcmp(argv[1], "idle") == 0;
    const char *preload = argv[2];
    int runs = atoi(argv[3]);
    char *deflt[] = {"/bin/true", NULL};
    char **cmd = argc > 4 ? argv + 4 : deflt;
    if (!idle && argc < 5) {
        fprintf(stderr, "bench_cost: start needs a command\n");
        return 2;
    }
    char dir[] = "/tmp/bench_cost.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("bench_cost: mkdtemp");
        return 2;
    }
    int modes[] = {BC_PLAIN, idle ? BC_TRACED : BC_OFF, BC_TRACED};
    int nmodes = idle ? 2 : 3;
    struct bc_series s[BC_N] = {0};
    for (int m = 0; m < BC_N; m++) {
        s[m].wall_us = calloc((size_t)runs, sizeof(double));
        s[m].cpu_us = calloc((size_t)runs, sizeof(double));
    }
    char **env[BC_N];
    for (int m = 0; m < BC_N; m++)
        env[m] = bc_env(m, preload, dir);
    /* One warm-up run each (page cache, JIT cache), then interleaved. */
    for (int r = -1; r < runs; r++) {
        for (int i = 0; i < nmodes; i++) {
            int m = modes[i];
            double w, c, f;
            if (bc_run(cmd, env[m], &w, &c, &f) != 0) {
                fprintf(stderr, "bench_cost: %s failed (%s)\n", cmd[0], bc_names[m]);
                return 2;
            }
            if (r >= 0) {
                s[m].wall_us[s[m].n] = w;
                s[m].faults += f;
                s[m].cpu_us[s[m].n++] = c;
            }
        }
        if (r % 20 == 0)
            bc_clean(dir);
    }
    bc_clean(dir);
    rmdir(dir);
    printf("%s: %s, %d interleaved runs each\n", idle ? "idle cost" : "start-up and exit cost",
           cmd[0], runs);
    printf("  %-28s %12s %12s %12s %12s %8s\n", "", "wall mean", "wall median", "CPU mean",
           "CPU median", "faults");
    double wall[BC_N], cpu[BC_N];
    for (int i = 0; i < nmodes; i++) {
        int m = modes[i];
        double wm = bc_mean(s[m].wall_us, runs), cm = bc_mean(s[m].cpu_us, runs);
        wall[m] = bc_median(s[m].wall_us, runs);
        cpu[m] = bc_median(s[m].cpu_us, runs);
        printf("  %-28s %9.0f us %9.0f us %9.0f us %9.0f us %8.1f\n",
               idle && m == BC_TRACED ? "preloaded (idle)" : bc_names[m], wm, wall[m], cm, cpu[m],
               s[m].faults / runs);
    }
    double dw = wall[BC_TRACED] - wall[BC_PLAIN], dc = cpu[BC_TRACED] - cpu[BC_PLAIN];
    int met;
    if (idle) {
        met = cpu[BC_TRACED] <= cpu[BC_PLAIN] * 1.05 + 1e-9;
        printf("  added: wall %+.0f us, CPU %+.0f us (%+.1f%%); target: CPU within 5%%: %s\n", dw,
               dc, cpu[BC_PLAIN] > 0 ? 100.0 * dc / cpu[BC_PLAIN] : 0.0, met ? "met" : "MISSED");
    } else {
        double limit = wall[BC_PLAIN] / 100 > 1000 ? wall[BC_PLAIN] / 100 : 1000;
        met = dw <= limit;
        printf("  added by tracing: wall %+.0f us (median), CPU %+.0f us; target <= %.0f us: %s\n",
               dw, dc, limit, met ? "met" : "MISSED");
    }
    return met ? 0 : 1;
}
