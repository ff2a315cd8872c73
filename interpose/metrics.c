/*
 * JITSTALL_PROM_DIR=DIR: at exit, the preload writes this process's
 * cold-start figures as Prometheus text into DIR, for node_exporter's textfile
 * collector (docs/fleet.md). The figures come from the records the process
 * emits, observed as they are written (jst_metrics_observe), so the hooks
 * stay as they are and nothing is counted twice. With the variable unset the
 * observer returns at its first test: no cost.
 *
 * The file is DIR/jitstall_<program>_<hash of labels>.prom, written through a
 * temporary file in DIR and rename(2): one file per program and label set,
 * replaced by each new process, so files never pile up.
 *
 * A live view: while the process runs, the preload's background thread
 * (interpose/inflight.c, through jst_live_tick) rewrites the file every
 * JITSTALL_LIVE_MS (default 5000; 0: at exit only), never a program thread.
 * Then it also says whether the process is ready (interpose/ready.c), which
 * compilers are running now (a load that JITs, a link step, a runtime
 * compile: from the BEGIN records, until their call record), the compile
 * time so far, the compiles that started after ready, whether a CUDA graph
 * capture is open now, and, written at exit, that the process has ended.
 * Graph capture is counted as the report counts it (analyzer/graphs.c): a
 * begin paired with the next end of its stream, a graph when that end
 * succeeded, instantiations added; summed here, so two captures open at once
 * on one thread count twice (the report merges them).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "image.h"
#include "children.h"
#include "labels.h"
#include "metrics.h"
#include "ready.h"
#include "state.h"

static int m_on;             /* JITSTALL_PROM_DIR was set (read once) */
static uint64_t m_live_ns;   /* JITSTALL_LIVE_MS, 0: at exit only */
static uint64_t m_live_next; /* the background thread's next write */
static char m_dir[PATH_MAX];
static pthread_mutex_t m_lock = PTHREAD_MUTEX_INITIALIZER;

/* The compilers a live file names, with the names the analyzer gives them
 * (analyzer/compiles.c): the in-process ones, from the BEGIN records of the
 * calls that may compile, then the compiler children (JST_CC_* order). */
enum m_compiler {
    MC_NONE,
    MC_DRIVER,
    MC_NVRTC,
    MC_NVJITLINK,
    MC_NVVM,
    MC_NVPTXCOMPILER,
    MC_PTXAS, /* JST_CC_PTXAS + MC_CHILD0 - 1 */
    MC_NVCC,
    MC_CICC,
    MC_NVLINK,
    MC_FATBINARY,
    MC_HOST_CC,
    MC_N
};
#define MC_CHILD0 MC_PTXAS
static const char *const m_compiler_names[MC_N] = {
    NULL,    "driver", "nvrtc", "nvjitlink", "nvvm",      "nvptxcompiler",
    "ptxas", "nvcc",   "cicc",  "nvlink",    "fatbinary", "host_cc",
};
#define M_INFLIGHT 32 /* calls in flight that are tracked; more are not shown */
#define M_CAPTURES 16 /* streams capturing at once that are tracked; more are not counted */

/* What the process did, from its records. Times on CLOCK_MONOTONIC. */
static struct m_figures {
    uint64_t proc_start, first_launch;
    uint64_t jit, compile, cache_load, rtc;
    uint64_t loads[JST_V_DAMAGED + 1];
    uint64_t cache[JST_C_UNKNOWN + 1];
    unsigned cc_major, cc_minor;
    uint64_t driver;
    int have_device;
    uint64_t realtime, mono;
    uint64_t cmp_ns[MC_N];    /* compiles that ended, by compiler */
    uint64_t late_n, late_ns; /* those that started after ready */
    struct {
        uint64_t seq, start;
        unsigned kind; /* enum m_compiler, MC_NONE: a free slot */
    } fl[M_INFLIGHT];
    uint64_t graphs, graph_ns; /* graphs captured; capture and instantiation time */
    struct {
        uint64_t stream, start; /* start 0: a free slot */
    } cap[M_CAPTURES];          /* captures begun and not yet ended */
} m;

#define M_LIVE_DEFAULT_MS 5000
#define M_LIVE_MIN_MS 10
#define M_LIVE_MAX_MS 3600000

void jst_metrics_init(void)
{
    const char *d = getenv("JITSTALL_PROM_DIR");
    if (d && *d && strlen(d) < sizeof m_dir - 64) {
        snprintf(m_dir, sizeof m_dir, "%s", d);
        m_on = 1;
    }
    if (!m_on)
        return;
    /* JITSTALL_LIVE_MS: 0, or 10 to 3600000 ms; anything else: the default. */
    const char *v = getenv("JITSTALL_LIVE_MS");
    unsigned long long ms = M_LIVE_DEFAULT_MS;
    if (v && *v) {
        char *end = NULL;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (!errno && *end == '\0' && v[0] >= '0' && v[0] <= '9' &&
            (n == 0 || (n >= M_LIVE_MIN_MS && n <= M_LIVE_MAX_MS)))
            ms = n;
        else
            jst_dbg("JITSTALL_LIVE_MS=%s is not 0 or %d-%d; using %d", v, M_LIVE_MIN_MS,
                    M_LIVE_MAX_MS, M_LIVE_DEFAULT_MS);
    }
    m_live_ns = ms * 1000000ull;
}

uint64_t jst_metrics_live_ns(void)
{
    return m_on ? m_live_ns : 0;
}

static uint64_t get(const struct jst_record *rec, uint16_t key)
{
    uint64_t v = 0;
    jst_rec_get_u64(rec, key, &v);
    return v;
}

/* The same rules as the report (analyzer/model.c): a load is JIT when its
 * verdict says so, a link step when it adds PTX; a JIT that hit the cache is
 * cache load, any other is compile; runtime compiles count before the first
 * launch only. */
/* The runtime compiler a call is, MC_NONE for any other call. */
static unsigned rtc_kind(unsigned call)
{
    switch (call) {
    case JST_CALL_nvrtcCompileProgram:
        return MC_NVRTC;
    case JST_CALL_nvJitLinkComplete:
        return MC_NVJITLINK;
    case JST_CALL_nvvmCompileProgram:
        return MC_NVVM;
    case JST_CALL_nvPTXCompilerCompile:
        return MC_NVPTXCOMPILER;
    default:
        return MC_NONE;
    }
}

/* The compiler child a COMPILE record names. */
static unsigned child_kind(const struct jst_record *rec)
{
    const char *v = NULL;
    uint32_t n = 0;
    if (!jst_rec_get_str(rec, JST_F_COMPILER, &v, &n))
        return MC_NONE;
    for (unsigned k = MC_CHILD0; k < MC_N; k++)
        if (strlen(m_compiler_names[k]) == n && !memcmp(m_compiler_names[k], v, n))
            return k;
    return MC_NONE;
}

/* A call or compiler child that may have compiled has ended: no longer in
 * flight; its time counts when it compiled, as late after ready. */
static void compile_ended(uint64_t seq, uint64_t start, uint64_t dur, unsigned kind)
{
    for (int i = 0; seq && i < M_INFLIGHT; i++)
        if (m.fl[i].kind != MC_NONE && m.fl[i].seq == seq)
            m.fl[i].kind = MC_NONE;
    if (kind == MC_NONE || kind >= MC_N)
        return;
    m.cmp_ns[kind] += dur;
    uint64_t ready = jst_ready_ns();
    if (ready && start >= ready) {
        m.late_n++;
        m.late_ns += dur;
    }
}

/* CUDA graph capture: a begin opens its stream's slot, the end closes it. */
static void observe_graph(unsigned call, uint64_t result, uint64_t stream, uint64_t start,
                          uint64_t dur)
{
    int i = 0;
    if (call == JST_CALL_cuGraphInstantiate) {
        m.graph_ns += dur;
        return;
    }
    while (i < M_CAPTURES && !(m.cap[i].start && m.cap[i].stream == stream))
        i++;
    if (call == JST_CALL_cuStreamBeginCapture) {
        if (result != 0)
            return;
        if (i == M_CAPTURES) /* a free slot, if any */
            for (i = 0; i < M_CAPTURES && m.cap[i].start; i++)
                ;
        if (i < M_CAPTURES) {
            m.cap[i].stream = stream;
            m.cap[i].start = start ? start : 1;
        }
        return;
    }
    if (i == M_CAPTURES)
        return; /* an end without a begin the driver took */
    uint64_t end = start + dur;
    m.graph_ns += end > m.cap[i].start ? end - m.cap[i].start : 0;
    m.graphs += result == 0;
    m.cap[i].start = 0;
}

static void observe_call(const struct jst_record *rec)
{
    unsigned call = (unsigned)get(rec, JST_F_CALL_ID);
    unsigned verdict = (unsigned)get(rec, JST_F_VERDICT);
    unsigned cache = (unsigned)get(rec, JST_F_CACHE);
    uint64_t start = get(rec, JST_F_START_NS), dur = get(rec, JST_F_DUR_NS);
    uint64_t input = 0;
    int has_input = jst_rec_get_u64(rec, JST_F_JIT_INPUT, &input);
    if ((call == JST_CALL_cuLaunchKernel || call == JST_CALL_cuLaunchKernelEx) && !m.first_launch)
        m.first_launch = start;
    if (call == JST_CALL_cuStreamBeginCapture || call == JST_CALL_cuStreamEndCapture ||
        call == JST_CALL_cuGraphInstantiate) {
        observe_graph(call, get(rec, JST_F_RESULT), get(rec, JST_F_HANDLE), start, dur);
        return;
    }
    if (verdict && verdict <= JST_V_DAMAGED)
        m.loads[verdict]++;
    int jit = verdict == JST_V_PTX_JIT || verdict == JST_V_FORCED_JIT ||
              (!verdict && (call == JST_CALL_cuLinkAddData || call == JST_CALL_cuLinkAddFile) &&
               has_input && input == 1 /* CU_JIT_INPUT_PTX */);
    if (jit) {
        m.jit += dur;
        if (cache == JST_C_HIT)
            m.cache_load += dur;
        else
            m.compile += dur;
        if (cache <= JST_C_UNKNOWN)
            m.cache[cache]++;
    }
    if ((call == JST_CALL_nvrtcCompileProgram || call == JST_CALL_nvJitLinkComplete) &&
        (!m.first_launch || start < m.first_launch))
        m.rtc += dur;
    compile_ended(get(rec, JST_F_SEQ), start, dur, jit ? MC_DRIVER : rtc_kind(call));
}

/* The compiler a BEGIN record starts, MC_NONE when it will not compile (a
 * load with SASS for the device, or one that could not be inspected). */
static unsigned begin_kind(const struct jst_record *rec)
{
    unsigned call = (unsigned)get(rec, JST_F_CALL_ID);
    unsigned verdict = (unsigned)get(rec, JST_F_VERDICT);
    uint64_t input = 0;
    if (rtc_kind(call) != MC_NONE)
        return rtc_kind(call);
    switch (call) {
    case JST_CALL_cuLinkComplete:
        return MC_DRIVER;
    case JST_CALL_cuLinkAddData:
    case JST_CALL_cuLinkAddFile:
        return jst_rec_get_u64(rec, JST_F_JIT_INPUT, &input) && input == 1 /* PTX */
                   ? MC_DRIVER
                   : MC_NONE;
    default:
        return verdict == JST_V_PTX_JIT || verdict == JST_V_FORCED_JIT ? MC_DRIVER : MC_NONE;
    }
}

static void observe_begin(const struct jst_record *rec)
{
    unsigned kind = begin_kind(rec);
    if (kind == MC_NONE)
        return;
    for (int i = 0; i < M_INFLIGHT; i++)
        if (m.fl[i].kind == MC_NONE) {
            m.fl[i].kind = kind;
            m.fl[i].seq = get(rec, JST_F_SEQ);
            m.fl[i].start = get(rec, JST_F_START_NS);
            return;
        }
}

void jst_metrics_observe(const struct jst_rec *r)
{
    if (r->len < JST_REC_HDR_SIZE)
        return;
    struct jst_record rec;
    memcpy(&rec.type, r->buf, sizeof rec.type);
    rec.flags = 0;
    rec.len = (uint32_t)(r->len - JST_REC_HDR_SIZE);
    rec.payload = r->buf + JST_REC_HDR_SIZE;
    if (rec.type == JST_REC_PROCESS) /* after:SECONDS counts from here */
        jst_ready_started(get(&rec, JST_F_PROC_START_NS));
    else if (rec.type == JST_REC_DEVICE) /* the driver is in use: the live thread may start */
        jst_ready_driver_up();
    if (!m_on)
        return;
    pthread_mutex_lock(&m_lock);
    switch (rec.type) {
    case JST_REC_PROCESS:
        m.proc_start = get(&rec, JST_F_PROC_START_NS);
        m.realtime = get(&rec, JST_F_REALTIME_NS);
        m.mono = get(&rec, JST_F_MONO_NS);
        break;
    case JST_REC_DEVICE:
        if (!m.have_device) {
            m.have_device = 1;
            m.cc_major = (unsigned)get(&rec, JST_F_CC_MAJOR);
            m.cc_minor = (unsigned)get(&rec, JST_F_CC_MINOR);
            m.driver = get(&rec, JST_F_DRIVER_VERSION);
        }
        break;
    case JST_REC_CALL:
        observe_call(&rec);
        break;
    case JST_REC_BEGIN:
        observe_begin(&rec);
        break;
    case JST_REC_COMPILE: /* a compiler child, reaped */
        compile_ended(0, get(&rec, JST_F_START_NS), get(&rec, JST_F_DUR_NS), child_kind(&rec));
        break;
    default:
        break;
    }
    pthread_mutex_unlock(&m_lock);
}

/* Room for every label: jitstall's four and the user's JST_MAX_LABELS, each
 * a name, =, quotes, a comma and a value of at most JST_PROM_VALUE_MAX bytes
 * escaped. A label is added whole or not at all, so the set can never end in
 * a name without its value. */
#define M_LABELS_CAP ((4 + JST_MAX_LABELS) * (JST_LABEL_NAME_MAX + 4 + JST_PROM_VALUE_MAX))

/* Appends name="value" to buf (n bytes, NUL-terminated), the value escaped
 * and made valid UTF-8 (jst_prom_value); nothing when it does not fit. */
static void label(char *buf, size_t n, const char *name, const char *value)
{
    size_t len = strlen(buf), nl = strlen(name);
    size_t need = (len ? 1 : 0) + nl + 2; /* [,]name=" */
    if (len + need + 2 > n)               /* and at least the closing quote and NUL */
        return;
    char *p = buf + len;
    if (len)
        *p++ = ',';
    memcpy(p, name, nl);
    p += nl;
    *p++ = '=';
    *p++ = '"';
    size_t room = n - (size_t)(p - buf) - 1; /* the closing quote */
    if (room > JST_PROM_VALUE_MAX)
        room = JST_PROM_VALUE_MAX;
    p += jst_prom_value(p, room, value);
    *p++ = '"';
    *p = '\0';
}

static void put_as(FILE *f, const char *type, const char *name, const char *help,
                   const char *labels, const char *extra, double v, int first)
{
    if (first)
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    fprintf(f, v >= 1e6 ? "%s{%s%s} %.3f\n" : "%s{%s%s} %.9g\n", name, labels, extra, v);
}

static void put(FILE *f, const char *name, const char *help, const char *labels, const char *extra,
                double v, int first)
{
    put_as(f, "gauge", name, help, labels, extra, v, first);
}

/* The live part: ready, compiling now (calls in flight, and compiler
 * children not yet reaped), compile time so far, late compiles, and
 * whether the process has ended. */
static void write_live(FILE *f, const char *labels, const struct m_figures *s, uint64_t now,
                       int exited)
{
    if (s->proc_start && jst_ready_ns() > s->proc_start)
        put(f, "jitstall_time_to_ready_seconds", "Process start to the moment it said it is ready.",
            labels, "", (double)(jst_ready_ns() - s->proc_start) / 1e9, 1);
    put(f, "jitstall_ready", "1 once the process said it is ready (JITSTALL_READY).", labels, "",
        jst_ready_ns() ? 1 : 0, 1);
    double ns[MC_N] = {0};
    int on[MC_N] = {0};
    for (int i = 0; i < M_INFLIGHT && !exited; i++)
        if (s->fl[i].kind != MC_NONE && s->fl[i].kind < MC_N) {
            on[s->fl[i].kind] = 1;
            if (now > s->fl[i].start)
                ns[s->fl[i].kind] += (double)(now - s->fl[i].start);
        }
    unsigned ck[M_INFLIGHT];
    uint64_t cs[M_INFLIGHT];
    size_t nc = exited ? 0 : jst_spawn_running(ck, cs, M_INFLIGHT);
    for (size_t i = 0; i < nc; i++) {
        unsigned k = ck[i] - JST_CC_PTXAS + MC_CHILD0;
        if (ck[i] < JST_CC_PTXAS || k >= MC_N)
            continue;
        on[k] = 1;
        if (now > cs[i])
            ns[k] += (double)(now - cs[i]);
    }
    char extra[96];
    for (unsigned k = MC_DRIVER; k < MC_N; k++) {
        snprintf(extra, sizeof extra, ",compiler=\"%s\",framework=\"\"", m_compiler_names[k]);
        put(f, "jitstall_compiling", "1 while a compile of this compiler is in flight.", labels,
            extra, on[k], k == MC_DRIVER);
    }
    int first = 1;
    for (unsigned k = MC_DRIVER; k < MC_N; k++) {
        if (!on[k] && !s->cmp_ns[k])
            continue;
        snprintf(extra, sizeof extra, ",compiler=\"%s\"", m_compiler_names[k]);
        put(f, "jitstall_compile_seconds",
            "Time in compiles so far, by compiler, those still running included.", labels, extra,
            ((double)s->cmp_ns[k] + ns[k]) / 1e9, first);
        first = 0;
    }
    put_as(f, "counter", "jitstall_late_compiles_total", "Compiles that started after ready.",
           labels, "", (double)s->late_n, 1);
    put_as(f, "counter", "jitstall_late_compile_seconds_total",
           "Time in compiles that started after ready.", labels, "", (double)s->late_ns / 1e9, 1);
    int capturing = 0;
    for (int i = 0; i < M_CAPTURES && !exited; i++)
        capturing |= s->cap[i].start != 0;
    put(f, "jitstall_capturing", "1 while a CUDA graph capture is open.", labels, "", capturing, 1);
    put(f, "jitstall_exited", "1 once the process has ended (the file is its last).", labels, "",
        exited, 1);
}

static void write_body(FILE *f, const char *labels, uint64_t self_ns, const struct m_figures *s)
{
    if (s->first_launch && s->proc_start && s->first_launch >= s->proc_start)
        put(f, "jitstall_time_to_first_kernel_seconds",
            "Process start to its first kernel launch (slowest process of the set).", labels, "",
            (double)(s->first_launch - s->proc_start) / 1e9, 1);
    put(f, "jitstall_jit_seconds", "Time in the driver's PTX JIT, compile and cache load.", labels,
        "", (double)s->jit / 1e9, 1);
    put(f, "jitstall_jit_compile_seconds", "PTX JIT time that compiled (cache missed).", labels, "",
        (double)s->compile / 1e9, 1);
    put(f, "jitstall_jit_cache_load_seconds", "PTX JIT time served from the JIT cache.", labels, "",
        (double)s->cache_load / 1e9, 1);
    put(f, "jitstall_runtime_compile_seconds",
        "Time in runtime compilers (NVRTC, nvJitLink) before the first launch.", labels, "",
        (double)s->rtc / 1e9, 1);
    if (self_ns)
        put(f, "jitstall_self_seconds", "Time jitstall itself spent in the process.", labels, "",
            (double)self_ns / 1e9, 1);
    char extra[64];
    for (unsigned v = JST_V_SASS; v <= JST_V_DAMAGED; v++) {
        snprintf(extra, sizeof extra, ",verdict=\"%s\"", jst_verdict_name(v));
        put(f, "jitstall_loads", "Module loads and link steps, by verdict.", labels, extra,
            (double)s->loads[v], v == JST_V_SASS);
    }
    for (unsigned c = JST_C_HIT; c <= JST_C_UNKNOWN; c++) {
        snprintf(extra, sizeof extra, ",outcome=\"%s\"", jst_cache_name(c));
        put(f, "jitstall_jit_cache_outcomes", "JIT loads by JIT cache outcome.", labels, extra,
            (double)s->cache[c], c == JST_C_HIT);
    }
    put(f, "jitstall_graphs_captured", "CUDA graphs captured (cuStreamEndCapture).", labels, "",
        (double)s->graphs, 1);
    put(f, "jitstall_graph_capture_seconds",
        "Time capturing and instantiating CUDA graphs (wall time per thread).", labels, "",
        (double)s->graph_ns / 1e9, 1);
    put(f, "jitstall_processes", "Processes traced in the set.", labels, "", 1, 1);
    if (s->realtime && s->mono >= s->proc_start && s->proc_start)
        put(f, "jitstall_last_start_timestamp_seconds",
            "Unix time of the latest process start in the set.", labels, "",
            (double)(s->realtime - (s->mono - s->proc_start)) / 1e9, 1);
}

/* The program's base name, made safe for a file name. */
static void program_name(char *out, size_t n)
{
    const char *exe = jst_exe_path();
    const char *b = strrchr(exe, '/');
    b = b ? b + 1 : exe;
    size_t k = 0;
    for (; *b && k + 1 < n; b++)
        out[k++] = (*b == '/' || *b == '.' || *b < ' ') ? '_' : *b;
    out[k] = '\0';
    if (!k)
        snprintf(out, n, "unknown");
}

/* What jst_metrics_write builds, on the heap: exit and exec may run on a
 * thread with a small stack. */
struct m_out {
    char prog[128], host[256], v[64];
    char labels[M_LABELS_CAP];
    char user[JST_MAX_LABELS * (JST_LABEL_NAME_MAX + 4 + JST_PROM_VALUE_MAX)];
    struct jst_label lab[JST_MAX_LABELS];
    char path[PATH_MAX + 256], tmp[PATH_MAX + 256];
    struct m_figures fig; /* taken under the lock, written out without it */
};

/* Writes the file: live (exited 0) from the background thread, or at exit. */
static void metrics_write(uint64_t self_ns, int exited)
{
    int saved = errno;
    struct m_out *o = calloc(1, sizeof *o);
    if (!o) {
        errno = saved;
        return;
    }
    char *prog = o->prog, *host = o->host, *labels = o->labels, *v = o->v;
    program_name(prog, sizeof o->prog);
    gethostname(host, sizeof o->host - 1);
    pthread_mutex_lock(&m_lock);
    o->fig = m;
    pthread_mutex_unlock(&m_lock);
    const struct m_figures *s = &o->fig;
    const char *exe = jst_exe_path();
    const char *base = strrchr(exe, '/');
    label(labels, sizeof o->labels, "program", base ? base + 1 : exe);
    label(labels, sizeof o->labels, "host", host);
    snprintf(v, sizeof o->v, "sm_%u%u", s->cc_major, s->cc_minor);
    label(labels, sizeof o->labels, "gpu_arch", s->have_device ? v : "");
    if (s->have_device && s->driver)
        snprintf(v, sizeof o->v, "%" PRIu64 ".%" PRIu64, s->driver / 1000, s->driver % 1000 / 10);
    else
        v[0] = '\0';
    label(labels, sizeof o->labels, "driver_version", v);
    struct jst_label *lab = o->lab;
    size_t nl = jst_parse_labels(getenv("JITSTALL_LABELS"), lab, JST_MAX_LABELS);
    for (size_t i = 0; i < nl; i++)
        label(labels, sizeof o->labels, lab[i].name, lab[i].value);
    /* The file name: program and a hash of the user's labels (not of host or
     * GPU: one node, one file per program and label set). */
    char *user = o->user, *path = o->path, *tmp = o->tmp;
    for (size_t i = 0; i < nl; i++)
        label(user, sizeof o->user, lab[i].name, lab[i].value);
    snprintf(path, sizeof o->path, "%s/jitstall_%s_%016" PRIx64 ".prom", m_dir, prog,
             jst_hash64(user, strlen(user)));
    snprintf(tmp, sizeof o->tmp, "%s/.jitstall_%s.XXXXXX", m_dir, prog);
    mkdir(m_dir, 0755); /* a missing directory is made; its parent must exist */
    int fd = mkostemp(tmp, O_CLOEXEC);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f) {
        fchmod(fd, 0644); /* the collector often runs as another user */
        write_body(f, labels, self_ns, s);
        if (m_live_ns || exited) /* a live file, or its last state */
            write_live(f, labels, s, jst_now_ns(), exited);
        int bad = ferror(f);
        bad |= fclose(f) != 0;
        if (bad || rename(tmp, path) != 0) {
            unlink(tmp);
            jst_dbg("cannot write %s", path);
        }
    } else {
        if (fd >= 0)
            close(fd), unlink(tmp);
        jst_dbg("JITSTALL_PROM_DIR: cannot create a file in %s: %s", m_dir, strerror(errno));
    }
    free(o);
    errno = saved;
}

/* The writes of the background thread and of exit: one at a time, so a
 * live write never renames over the exit's. */
static pthread_mutex_t m_write_lock = PTHREAD_MUTEX_INITIALIZER;
static int m_exited;

void jst_metrics_write(uint64_t self_ns)
{
    if (!m_on)
        return;
    pthread_mutex_lock(&m_write_lock);
    m_exited = 1;
    metrics_write(self_ns, 1);
    pthread_mutex_unlock(&m_write_lock);
}

uint64_t jst_metrics_tick(uint64_t now)
{
    if (!m_on || !m_live_ns)
        return 0;
    if (now >= m_live_next) {
        pthread_mutex_lock(&m_write_lock);
        if (!m_exited)
            metrics_write(0, 0);
        pthread_mutex_unlock(&m_write_lock);
        m_live_next = now + m_live_ns;
    }
    return m_live_next > now ? m_live_next - now : m_live_ns;
}

void jst_metrics_atfork_child(void)
{
    pthread_mutex_init(&m_lock, NULL);
    pthread_mutex_init(&m_write_lock, NULL);
    m_exited = 0;
    m_live_next = 0;
    memset(&m, 0, sizeof m);
}
