/*
 * `jitstall status DIR`: the live state of each process whose trace is in
 * DIR, read from traces still being written (no end record yet, a last block
 * maybe cut): starting, compiling, ready or exited; how long it has run and
 * compiled. With --stuck it answers a Kubernetes liveness probe: a process
 * that compiles is alive, one that has done nothing for that long is not.
 * "Now" is CLOCK_MONOTONIC, the clock the traces' times are on.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "check_util.h"
#include "cli.h"
#include "compiles.h"
#include "jsonw.h"
#include "model.h"
#include "report_view.h"
#include "utf8.h"

static const char usage_text[] =
    "usage: jitstall status [--stuck SECONDS] [--json] DIR|TRACE...\n"
    "\n"
    "The live state of each process whose trace is in DIR, read from the traces\n"
    "while they are written: its phase (starting, compiling WHAT for N s,\n"
    "capturing a CUDA graph, ready, exited), how long it has run and how long it\n"
    "has compiled so far.\n"
    "\n"
    "  --stuck SECONDS  a live process is stuck when it is neither ready,\n"
    "                   compiling nor capturing a CUDA graph, and has made no\n"
    "                   driver call and started no compile for SECONDS (a\n"
    "                   liveness probe: a pod that compiles is alive)\n"
    "  --json           write the same state as one JSON object\n"
    "  -h, --help       show this help\n"
    "\n"
    "A process is live when its pid exists on this host and its trace has no\n"
    "end record. A directory with no trace yet is reported as such (exit 0).\n"
    "\n"
    "exit codes: 0 every live process is ready or making progress, 1 a process\n"
    "is stuck, 2 usage error or unreadable input\n";

struct status_opts {
    double stuck_s; /* < 0: not judged */
    int json;
};

enum { O_STUCK = 256, O_JSON };

static const struct option status_longopts[] = {
    {"stuck", required_argument, NULL, O_STUCK},
    {"json", no_argument, NULL, O_JSON},
    JST_CLI_HELP_END,
};

static int status_option(int c, const char *arg, void *ctx)
{
    struct status_opts *o = ctx;
    if (c == O_JSON) {
        o->json = 1;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    if (!*arg || *end || errno || !isfinite(v) || v < 0 || v > 1e9) {
        jst_errorf("status", "--stuck: '%s' is not a number of seconds", arg);
        return -1;
    }
    o->stuck_s = v;
    return 0;
}

static const struct jst_cli status_cli = {
    "status", "h", status_longopts, usage_text, "trace directory", status_option,
};

enum phase { PH_STARTING, PH_COMPILING, PH_READY, PH_EXITED, PH_CAPTURING };
static const char *const phase_names[] = {"starting", "compiling", "ready", "exited", "capturing"};

/* What the status of one process says. */
struct pstat {
    const struct jst_process *p;
    enum phase phase;
    int live;  /* 1 live, 0 gone, -1 unknown (a trace from another host) */
    int stuck; /* live, neither ready nor compiling, idle past --stuck */
    const struct jst_compile *compiling; /* the oldest compile in flight */
    uint64_t up_ns, compile_ns, idle_ns, compiling_ns, capturing_ns;
    char what[512]; /* what it compiles: "ptxas k.cubin" */
};

static uint64_t clock_of(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* When process pid started, on the CLOCK_MONOTONIC scale, as the preload
 * records it (/proc/PID/stat starttime); 0 when unknown. */
static uint64_t pid_start(pid_t pid)
{
    char path[64], buf[2048];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *q = strrchr(buf, ')'); /* the command may hold spaces and parens */
    for (int field = 2; q && field < 22; field++)
        q = strchr(q + 1, ' ');
    long hz = sysconf(_SC_CLK_TCK);
    if (!q || hz <= 0)
        return 0;
    uint64_t boot_ns = strtoull(q + 1, NULL, 10) * (1000000000ull / (uint64_t)hz);
    uint64_t b = clock_of(CLOCK_BOOTTIME), m = clock_of(CLOCK_MONOTONIC);
    uint64_t off = b > m ? b - m : 0; /* time spent suspended */
    return boot_ns > off ? boot_ns - off : 0;
}

/* Whether the trace's pid runs here: 1, 0, or -1 when the trace comes from
 * another host (its pid means nothing here). A pid that runs but started at
 * another time than the trace's process is another process: pids are
 * reused, and a container that restarts keeps the traces of its last run in
 * its volume while its new process likely has the same small pid. */
static int pid_live(const struct jst_process *p)
{
    char host[256];
    if (p->host && gethostname(host, sizeof host) == 0) {
        host[sizeof host - 1] = 0;
        if (strcmp(host, p->host))
            return -1;
    }
    if (!p->pid || p->pid > INT32_MAX)
        return 0;
    if (kill((pid_t)p->pid, 0) != 0 && errno != EPERM)
        return 0;
    uint64_t t = p->proc_start_ns ? pid_start((pid_t)p->pid) : 0;
    /* ticks of 10 ms, and the suspended time read at two moments */
    return !t || (t > p->proc_start_ns ? t - p->proc_start_ns : p->proc_start_ns - t) < 1000000000u;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* The last time the process made a driver call or started a compile: the
 * end of its latest call (or the start of one still running), the start of
 * its latest compile; its start when it did neither. */
static uint64_t last_activity(const struct jst_process *p, uint64_t anchor)
{
    uint64_t t = max_u64(anchor, p->fold_last_end);
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct jst_call_ev *c = &p->calls[i];
        t = max_u64(t, c->in_flight ? c->start_ns : c->start_ns + c->dur_ns);
    }
    for (size_t i = 0; i < p->n_launches; i++)
        t = max_u64(t, p->launches[i].start_ns + p->launches[i].dur_ns);
    for (size_t i = 0; i < p->n_compiles; i++)
        t = max_u64(t, p->compiles[i].start_ns);
    return t;
}

/* "driver PTX JIT of _Z3addPfS_", "ptxas (subprocess) k.cubin" */
static void compile_what(const struct jst_compile *c, char *buf, size_t n)
{
    const char *w = c->kernel ? c->kernel : c->what;
    if (!w && c->call)
        w = c->call->source ? c->call->source : c->call->path;
    snprintf(buf, n, "%s%s%s", jst_compiler_label(c->compiler), w ? " " : "", w ? w : "");
}

static void judge(struct pstat *s, const struct jst_process *p, uint64_t now, double stuck_s)
{
    uint64_t anchor = p->proc_start_ns ? p->proc_start_ns : p->mono_ns;
    memset(s, 0, sizeof *s);
    s->p = p;
    s->live = p->has_end ? 0 : pid_live(p);
    /* a live process's clock runs to now; a finished one's to its end */
    uint64_t until = s->live > 0 ? max_u64(now, p->end_ns) : p->end_ns;
    if (!anchor)
        anchor = p->n_calls ? p->calls[0].start_ns : until;
    s->up_ns = until > anchor ? until - anchor : 0;
    s->compile_ns = jst_compile_ns_within(p, 0, UINT64_MAX);
    for (size_t i = 0; i < p->n_compiles; i++) {
        const struct jst_compile *c = &p->compiles[i];
        if (c->in_flight && (!s->compiling || c->start_ns < s->compiling->start_ns))
            s->compiling = c;
    }
    if (!s->live) {
        s->phase = PH_EXITED;
        s->compiling = NULL;
        return;
    }
    if (s->compiling) {
        s->phase = PH_COMPILING;
        s->compiling_ns = until > s->compiling->start_ns ? until - s->compiling->start_ns : 0;
        /* the model's in-flight time runs to the trace's last record */
        if (until > p->end_ns)
            s->compile_ns += until - p->end_ns;
        compile_what(s->compiling, s->what, sizeof s->what);
    } else if (p->graphs.n_open && p->graphs.open_since_ns) {
        /* a CUDA graph capture begun and not ended: work, not a hang */
        s->phase = PH_CAPTURING;
        s->capturing_ns = until > p->graphs.open_since_ns ? until - p->graphs.open_since_ns : 0;
    } else {
        s->phase = p->ready.present ? PH_READY : PH_STARTING;
    }
    uint64_t act = last_activity(p, anchor);
    s->idle_ns = until > act ? until - act : 0;
    s->stuck = s->live > 0 && s->phase == PH_STARTING && stuck_s >= 0 &&
               (double)s->idle_ns >= stuck_s * 1e9;
}

static void put_text(FILE *f, const struct pstat *v, size_t n, double stuck_s)
{
    char a[32], b[32];
    fprintf(f, "%-8s %-16s %10s %10s  %s\n", "PID", "PROGRAM", "UP", "COMPILED", "PHASE");
    for (size_t i = 0; i < n; i++) {
        const struct pstat *s = &v[i];
        const struct jst_process *p = s->p;
        fprintf(f, "%-8" PRIu64 " ", p->pid);
        char prog[64];
        snprintf(prog, sizeof prog, "%s", jst_exe_base(p));
        jst_text_put(f, prog);
        fprintf(f, "%*s %10s %10s  ", (int)(strlen(prog) < 16 ? 16 - strlen(prog) : 0), "",
                rv_dur(s->up_ns, a, sizeof a), rv_dur(s->compile_ns, b, sizeof b));
        switch (s->phase) {
        case PH_COMPILING:
            fputs("compiling ", f);
            jst_text_put(f, s->what);
            fprintf(f, " for %s", rv_dur(s->compiling_ns, a, sizeof a));
            break;
        case PH_READY:
            fprintf(f, "ready (after %s)", rv_dur(p->ttr_ns, a, sizeof a));
            break;
        case PH_CAPTURING:
            fprintf(f, "capturing a CUDA graph for %s (%zu captured so far)",
                    rv_dur(s->capturing_ns, a, sizeof a), p->graphs.count);
            break;
        case PH_EXITED:
            if (p->has_end)
                fprintf(f, "exited (status %" PRId64 ")", p->exit_status);
            else
                fputs("exited (no end record: killed, or crashed)", f);
            break;
        default:
            fputs("starting", f);
            break;
        }
        if (s->stuck)
            fprintf(f, "  STUCK: no driver call or compile for %s (--stuck %g s)",
                    rv_dur(s->idle_ns, b, sizeof b), stuck_s);
        else if (s->live < 0 && !p->has_end)
            fputs("  (traced on another host: liveness unknown)", f);
        fputc('\n', f);
    }
}

static void put_json(FILE *f, const struct pstat *v, size_t n, uint64_t now, double stuck_s,
                     size_t n_stuck)
{
    struct jst_json j;
    jst_json_init(&j, f, 1);
    jst_json_obj(&j);
    jst_json_ku64(&j, "now_ns", now);
    jst_json_kopt_u64(&j, "stuck_after_ns", stuck_s >= 0, (uint64_t)(stuck_s * 1e9));
    jst_json_ku64(&j, "stuck", n_stuck);
    jst_json_key(&j, "processes");
    jst_json_arr(&j);
    for (size_t i = 0; i < n; i++) {
        const struct pstat *s = &v[i];
        const struct jst_process *p = s->p;
        jst_json_obj(&j);
        jst_json_ku64(&j, "pid", p->pid);
        jst_json_kstr(&j, "program", jst_exe_base(p));
        jst_json_kstr(&j, "trace", p->trace_path);
        jst_json_kstr(&j, "phase", phase_names[s->phase]);
        if (s->live < 0)
            jst_json_knull(&j, "live");
        else
            jst_json_kbool(&j, "live", s->live);
        jst_json_kbool(&j, "stuck", s->stuck);
        jst_json_ku64(&j, "up_ns", s->up_ns);
        jst_json_ku64(&j, "compile_ns", s->compile_ns);
        jst_json_kopt_u64(&j, "idle_ns", s->live > 0, s->idle_ns);
        jst_json_kstr(&j, "compiling", s->compiling ? s->what : NULL);
        jst_json_kstr(&j, "compiler",
                      s->compiling ? jst_compiler_name(s->compiling->compiler) : NULL);
        jst_json_kopt_u64(&j, "compiling_ns", s->compiling != NULL, s->compiling_ns);
        jst_json_kopt_u64(&j, "capturing_ns", s->phase == PH_CAPTURING, s->capturing_ns);
        jst_json_ku64(&j, "graphs_captured", p->graphs.count);
        jst_json_kopt_u64(&j, "ttr_ns", p->ready.present, p->ttr_ns);
        jst_json_kstr(&j, "ready_spec", p->ready.present ? p->ready.spec : NULL);
        jst_json_kopt_i64(&j, "exit_status", p->has_end, p->exit_status);
        jst_json_end(&j);
    }
    jst_json_end(&j);
    jst_json_end(&j);
    jst_json_finish(&j);
}

/* Reads every operand: 0, or JST_EXIT_USAGE after one line. A directory
 * with no trace yet is no error: the process has not started tracing. */
static int load(char **paths, int n, struct jst_run *run)
{
    for (int i = 0; i < n; i++) {
        char err[1024] = "";
        struct stat st;
        if (stat(paths[i], &st) != 0) {
            jst_errorf("status", "%s: %s", paths[i], strerror(errno));
            return JST_EXIT_USAGE;
        }
        size_t bad = run->n_unreadable;
        if (jst_model_add(run, paths[i], err, sizeof err) < 0 && !S_ISDIR(st.st_mode)) {
            jst_errorf("status", "%s", err);
            return JST_EXIT_USAGE;
        }
        /* A file too new to have its header, or not a trace: said, skipped. */
        if (run->n_unreadable > bad && !strstr(err, "no *.jst traces"))
            jst_warnf("status", "%s", err);
    }
    return JST_EXIT_OK;
}

static int cmp_pstat(const void *a, const void *b)
{
    const struct pstat *x = a, *y = b;
    if (x->p->pid != y->p->pid)
        return x->p->pid < y->p->pid ? -1 : 1;
    return strcmp(x->p->trace_path ? x->p->trace_path : "",
                  y->p->trace_path ? y->p->trace_path : "");
}

static int cmd_status(int argc, char **argv)
{
    struct status_opts o = {-1, 0};
    int rc = jst_cli_parse(&status_cli, argc, argv, &o);
    if (rc != JST_CLI_GO)
        return rc;
    struct jst_run run = {0};
    if ((rc = load(argv + optind, argc - optind, &run)) != JST_EXIT_OK) {
        jst_model_free(&run);
        return rc;
    }
    uint64_t now = clock_of(CLOCK_MONOTONIC);
    struct pstat *v = calloc(run.n_procs + 1, sizeof *v);
    if (!v) {
        jst_errorf("status", "out of memory");
        jst_model_free(&run);
        return JST_EXIT_USAGE;
    }
    size_t n_stuck = 0;
    for (size_t i = 0; i < run.n_procs; i++) {
        judge(&v[i], &run.procs[i], now, o.stuck_s);
        n_stuck += v[i].stuck;
    }
    qsort(v, run.n_procs, sizeof *v, cmp_pstat);
    if (o.json)
        put_json(stdout, v, run.n_procs, now, o.stuck_s, n_stuck);
    else if (!run.n_procs)
        printf("jitstall status: no trace yet in %s\n", argv[optind]);
    else
        put_text(stdout, v, run.n_procs, o.stuck_s);
    free(v);
    jst_model_free(&run);
    return n_stuck ? JST_EXIT_FAIL : JST_EXIT_OK;
}

JST_COMMAND(status, cmd_status, "the live state of traced processes: compiling, ready or stuck")
