/*
 * `jitstall run`: runs a command under libjitstall.so (LD_PRELOAD), passes
 * signals on to it, and then prints a three-line summary of its traces. It
 * exits with the command's own status, as a shell would.
 * The --help text is the man page's SYNOPSIS and OPTIONS (docs/jitstall-run.1.md).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "cli.h"
#include "model.h"
#include "readyspec.h"
#include "report_view.h"

static const char run_help[] =
    "usage: jitstall run [-o DIR [--force]] [--ready SPEC] [--] COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND under libjitstall.so, the way heaptrack or nsys profile do,\n"
    "then prints three lines: the time to the first kernel launch, the time\n"
    "spent in the driver's JIT, and the command that shows the full report.\n"
    "Forked and exec'd children write their traces into the same directory.\n"
    "\n"
    "options:\n"
    "  -o, --output DIR  write the traces to DIR, created if needed (default: a\n"
    "                    new directory jitstall-COMMAND-YYYYmmdd-HHMMSS here);\n"
    "                    refused when DIR already holds traces\n"
    "  --force           with -o: delete the traces already in DIR first\n"
    "  --ready SPEC      when COMMAND is ready to serve: nvtx:NAME (an NVTX mark\n"
    "                    NAME, or the end of the first range NAME), file:PATH\n"
    "                    (when PATH exists) or after:SECONDS (after its start);\n"
    "                    sets JITSTALL_READY, and compiles after it are late\n"
    "  -h, --help        show this help\n"
    "\n"
    "libjitstall.so is put first in LD_PRELOAD, keeping what was there, and\n"
    "JITSTALL_DIR is set to the trace directory. SIGINT, SIGTERM, SIGHUP,\n"
    "SIGQUIT, SIGUSR1 and SIGUSR2 sent to jitstall are passed on to COMMAND.\n"
    "Options stop at the first word that is not one: COMMAND's own options are\n"
    "left alone. A trace directory that jitstall created and that stays empty\n"
    "(COMMAND made no CUDA driver call) is removed.\n"
    "\n"
    "exit status: the status of COMMAND, or 128+N when signal N killed it;\n"
    "127 COMMAND not found; 126 COMMAND cannot be run; 2 usage error, or\n"
    "libjitstall.so or the trace directory cannot be set up.\n";

static const int fwd_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define N_FWD (sizeof(fwd_signals) / sizeof(fwd_signals[0]))

static volatile sig_atomic_t child_pid;

/* Passes a signal sent to us (kill, timeout, a batch system) on to the
 * child. A signal the terminal generated (^C) already went to the whole
 * foreground process group, child included, so it is not sent twice. */
static void forward(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    if (child_pid > 0 && (!si || si->si_code <= 0))
        kill((pid_t)child_pid, sig);
    errno = saved;
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The library directory as seen from the binary's, from the install
 * layout CMake was configured with (GNUInstallDirs: "../lib", or
 * "../lib/x86_64-linux-gnu" on Debian). */
#ifndef JITSTALL_BIN_TO_LIB
#define JITSTALL_BIN_TO_LIB "../lib"
#endif

/* Finds libjitstall.so next to the jitstall binary (a build tree), then in
 * the configured library directory relative to it (and its jitstall/
 * subdirectory), then in ../lib and ../lib/jitstall. Writes the absolute
 * path to out. */
static int find_preload(char *out, size_t n)
{
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0)
        return -1;
    self[len] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    static const char *const rel[] = {"/libjitstall.so", "/" JITSTALL_BIN_TO_LIB "/libjitstall.so",
                                      "/" JITSTALL_BIN_TO_LIB "/jitstall/libjitstall.so",
                                      "/../lib/libjitstall.so", "/../lib/jitstall/libjitstall.so"};
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        char cand[PATH_MAX + 256];
        snprintf(cand, sizeof(cand), "%s%s", self, rel[i]);
        if (file_exists(cand) && realpath(cand, out) && strlen(out) < n)
            return 0;
    }
    return -1;
}

static int mkdir_p(const char *path)
{
    char buf[PATH_MAX];
    if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    /* The trace directory itself is private, as the preload makes it:
     * traces hold command lines and environment variables. */
    if (mkdir(buf, 0700) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(buf, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* Counts the traces (*.jst) in dir, deleting them when del is set.
 * Returns the count, or -1 (errno set). */
static long dir_traces(const char *dir, int del)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".jst") != 0)
            continue;
        if (del && unlinkat(dirfd(d), e->d_name, 0) != 0) {
            int err = errno;
            closedir(d);
            errno = err;
            return -1;
        }
        n++;
    }
    closedir(d);
    return n;
}

/* Makes -o DIR ready: created if needed (*created tells), refused when it
 * already holds traces, unless force, which deletes them. Mixing two runs
 * in one directory would make the summary quote the earlier run. */
static int prepare_outdir(const char *dir, int force, int *created)
{
    struct stat st;
    *created = stat(dir, &st) != 0;
    if (mkdir_p(dir) != 0) {
        jst_errorf("run", "%s: %s", dir, strerror(errno));
        return -1;
    }
    long n = dir_traces(dir, 0);
    if (n < 0) {
        jst_errorf("run", "%s: %s", dir, strerror(errno));
        return -1;
    }
    if (n > 0 && !force) {
        jst_errorf("run",
                   "%s already holds %ld %s of an earlier run: choose another directory, "
                   "or add --force to delete them first",
                   dir, n, n == 1 ? "trace" : "traces");
        return -1;
    }
    if (n > 0 && dir_traces(dir, 1) < 0) {
        jst_errorf("run", "%s: cannot delete the old traces: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* A new directory jitstall-<cmd>-<YYYYmmdd-HHMMSS>[-N] in the current directory. */
static int make_default_dir(const char *cmd, char *out, size_t n)
{
    const char *base = strrchr(cmd, '/');
    base = base ? base + 1 : cmd;
    char name[64];
    size_t k = 0;
    for (; *base && k < sizeof(name) - 1; base++)
        name[k++] = (*base == '/' || *base == ' ') ? '_' : *base;
    name[k] = '\0';
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32];
    localtime_r(&now, &tm);
    strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
    for (int i = 1; i < 1000; i++) {
        if (i == 1)
            snprintf(out, n, "jitstall-%s-%s", name, stamp);
        else
            snprintf(out, n, "jitstall-%s-%s-%d", name, stamp, i);
        if (mkdir(out, 0700) == 0)
            return 0;
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

/* Prints s for a shell: as is when it is plain, else in single quotes. */
static void shell_quote(FILE *f, const char *s)
{
    if (*s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-+:=@") ==
                  strlen(s)) {
        fputs(s, f);
        return;
    }
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    }
    fputc('\'', f);
}

/* The three-line summary, from every trace in dir. Returns the number of
 * processes traced. */
static size_t summary(const char *dir)
{
    struct jst_run run = {0};
    char err[1024] = "", a[32], b[32], c[32];
    jst_model_add(&run, dir, err, sizeof(err));
    if (run.n_procs == 0) {
        fprintf(stderr, "jitstall: no trace in ");
        shell_quote(stderr, dir);
        fprintf(stderr, ": the program made no CUDA driver call, or libjitstall.so could "
                        "not be loaded\n");
        jst_model_free(&run);
        return 0;
    }
    const struct jst_process *worst = NULL;
    uint64_t jit = 0, comp = 0, load = 0;
    size_t loads = 0, partial = 0;
    for (size_t i = 0; i < run.n_procs; i++) {
        const struct jst_process *p = &run.procs[i];
        if (p->first_launch_ns && (!worst || p->ttfk_ns > worst->ttfk_ns))
            worst = p;
        jit += p->jit_ns;
        comp += p->jit_compile_ns;
        load += p->jit_cache_load_ns;
        partial += jst_model_is_partial(p) != 0;
        for (size_t k = 0; k < p->n_calls; k++)
            loads += jst_is_jit_event(p, &p->calls[k]);
    }
    if (!worst)
        fprintf(stderr, "jitstall: time to first kernel: no kernel was launched\n");
    else if (run.n_procs == 1)
        fprintf(stderr, "jitstall: time to first kernel %s\n", rv_dur(worst->ttfk_ns, a, 32));
    else
        fprintf(stderr, "jitstall: time to first kernel %s (slowest of %zu processes: pid %llu)\n",
                rv_dur(worst->ttfk_ns, a, 32), run.n_procs, (unsigned long long)worst->pid);
    fprintf(stderr, "jitstall: time in JIT %s in %zu %s (compile %s, cache load %s)%s\n",
            rv_dur(jit, a, 32), loads, loads == 1 ? "load" : "loads", rv_dur(comp, b, 32),
            rv_dur(load, c, 32), run.n_procs > 1 ? ", all processes" : "");
    fprintf(stderr, "jitstall: full report: ");
    shell_quote(stderr, jst_cli_self());
    fprintf(stderr, " report ");
    shell_quote(stderr, dir);
    if (partial)
        fprintf(stderr, "  (%zu %s partial)", partial, partial == 1 ? "trace is" : "traces are");
    fputc('\n', stderr);
    size_t n = run.n_procs;
    jst_model_free(&run);
    return n;
}

enum { O_FORCE = 256, O_READY };

struct run_opts {
    const char *outdir;
    int force;
    const char *ready;
};

static int run_option(int c, const char *arg, void *ctx)
{
    struct run_opts *o = ctx;
    if (c == 'o')
        o->outdir = arg;
    else if (c == O_FORCE)
        o->force = 1;
    else if (c == O_READY) {
        struct jst_ready_spec sp;
        jst_ready_parse(arg, &sp);
        if (sp.kind != JST_READY_NVTX && sp.kind != JST_READY_FILE && sp.kind != JST_READY_AFTER) {
            jst_errorf("run", "--ready %s: %s", arg, sp.why ? sp.why : "it is empty");
            return -1;
        }
        o->ready = arg;
    } else { /* ':' */
        jst_errorf("run", "%s needs %s", arg,
                   strcmp(arg, "--ready") == 0 ? "a spec (nvtx:NAME, file:PATH or after:SECONDS)"
                                               : "a directory");
        return -1;
    }
    return 0;
}

static const struct option run_longopts[] = {
    {"output", required_argument, NULL, 'o'},
    {"force", no_argument, NULL, O_FORCE},
    {"ready", required_argument, NULL, O_READY},
    JST_CLI_HELP_END,
};
/* '+': stop at COMMAND, whose own options are not ours. */
static const struct jst_cli run_cli = {
    "run", "+:o:h", run_longopts, run_help, "command", run_option,
};

/* The trace directory, made or checked: its absolute path in absdir, and
 * whether this run created it. 0, or -1 after one error line. */
static int run_dir(const char *outdir, int force, const char *prog, char *dir, char *absdir,
                   int *created)
{
    *created = 1;
    if (outdir) {
        if (prepare_outdir(outdir, force, created) != 0)
            return -1;
        snprintf(dir, PATH_MAX, "%s", outdir);
    } else if (make_default_dir(prog, dir, PATH_MAX) != 0) {
        jst_errorf("run", "cannot create a trace directory here: %s", strerror(errno));
        return -1;
    }
    if (!realpath(dir, absdir)) {
        jst_errorf("run", "%s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* libjitstall.so into LD_PRELOAD (once, ahead of what was there) and the
 * trace directory into JITSTALL_DIR. 0, or -1 after one error line. */
static int run_env(const char *lib, const char *absdir)
{
    const char *old = getenv("LD_PRELOAD");
    char *preload = NULL;
    if (old && *old && strstr(old, lib))
        preload = strdup(old);
    else if (asprintf(&preload, "%s%s%s", lib, old && *old ? ":" : "", old && *old ? old : "") < 0)
        preload = NULL;
    if (!preload || setenv("LD_PRELOAD", preload, 1) != 0 ||
        setenv("JITSTALL_DIR", absdir, 1) != 0) {
        free(preload);
        jst_errorf("run", "cannot set the environment");
        return -1;
    }
    free(preload);
    return 0;
}

/* Runs cmd with the forwarded signals passed on, and waits for it: 0 with
 * its wait status and, when exec failed, the errno (else 0) in *exec_err;
 * or -1 after one error line. A close-on-exec pipe tells the parent whether
 * exec failed, and why. */
static int run_child(char **cmd, int *status, int *exec_err)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        jst_errorf("run", "pipe: %s", strerror(errno));
        return -1;
    }
    sigset_t fwd, old_mask;
    sigemptyset(&fwd);
    for (size_t k = 0; k < N_FWD; k++)
        sigaddset(&fwd, fwd_signals[k]);
    sigprocmask(SIG_BLOCK, &fwd, &old_mask);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        jst_errorf("run", "fork: %s", strerror(e));
        return -1;
    }
    if (pid == 0) {
        close(pfd[0]);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
        execvp(cmd[0], cmd);
        int e = errno;
        ssize_t wr = write(pfd[1], &e, sizeof(e));
        (void)wr;
        _exit(127);
    }
    close(pfd[1]);
    child_pid = pid;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < N_FWD; k++)
        sigaction(fwd_signals[k], &sa, NULL);
    sigprocmask(SIG_SETMASK, &old_mask, NULL);

    ssize_t got;
    *exec_err = 0;
    do
        got = read(pfd[0], exec_err, sizeof(*exec_err));
    while (got < 0 && errno == EINTR);
    close(pfd[0]);
    if (got != (ssize_t)sizeof(*exec_err))
        *exec_err = 0;
    while (waitpid(pid, status, 0) < 0) {
        if (errno != EINTR) {
            jst_errorf("run", "waitpid: %s", strerror(errno));
            return -1;
        }
    }
    child_pid = 0;
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    struct run_opts o = {NULL, 0, NULL};
    int r = jst_cli_parse(&run_cli, argc, argv, &o);
    if (r != JST_CLI_GO)
        return r;
    if (o.force && !o.outdir) {
        jst_errorf("run", "--force goes with -o DIR");
        return JST_EXIT_USAGE;
    }
    char **cmd = argv + optind;

    char lib[PATH_MAX];
    if (find_preload(lib, sizeof(lib)) != 0) {
        jst_errorf("run",
                   "libjitstall.so not found next to the jitstall binary, nor in %s, "
                   "../lib or ../lib/jitstall",
                   JITSTALL_BIN_TO_LIB);
        return JST_EXIT_USAGE;
    }
    char dir[PATH_MAX], absdir[PATH_MAX];
    int created, status = 0, exec_err;
    if (o.ready && setenv("JITSTALL_READY", o.ready, 1) != 0) {
        jst_errorf("run", "cannot set the environment");
        return JST_EXIT_USAGE;
    }
    if (run_dir(o.outdir, o.force, cmd[0], dir, absdir, &created) != 0 ||
        run_env(lib, absdir) != 0 || run_child(cmd, &status, &exec_err) != 0)
        return JST_EXIT_USAGE;
    if (exec_err) {
        if (exec_err == ENOENT)
            jst_errorf("run", "%s: command not found", cmd[0]);
        else
            jst_errorf("run", "%s: %s", cmd[0], strerror(exec_err));
        if (created)
            rmdir(absdir); /* the new directory, still empty */
        return exec_err == ENOENT ? 127 : 126;
    }

    /* No trace: the directory made for this run is left empty; remove it
     * (rmdir refuses when the program put files of its own there). */
    if (summary(dir) == 0 && created && rmdir(absdir) == 0) {
        fprintf(stderr, "jitstall: removed the empty trace directory ");
        shell_quote(stderr, dir);
        fputc('\n', stderr);
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return JST_EXIT_USAGE;
}

JST_COMMAND(run, cmd_run, "run a command under libjitstall.so, then summarize its JIT stalls")
