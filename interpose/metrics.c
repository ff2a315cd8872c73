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
#include "labels.h"
#include "metrics.h"
#include "state.h"

static int m_on; /* JITSTALL_PROM_DIR was set (read once) */
static char m_dir[PATH_MAX];
static pthread_mutex_t m_lock = PTHREAD_MUTEX_INITIALIZER;

/* What the process did, from its records. Times on CLOCK_MONOTONIC. */
static struct {
    uint64_t proc_start, first_launch;
    uint64_t jit, compile, cache_load, rtc;
    uint64_t loads[JST_V_DAMAGED + 1];
    uint64_t cache[JST_C_UNKNOWN + 1];
    unsigned cc_major, cc_minor;
    uint64_t driver;
    int have_device;
    uint64_t realtime, mono;
} m;

void jst_metrics_init(void)
{
    const char *d = getenv("JITSTALL_PROM_DIR");
    if (d && *d && strlen(d) < sizeof m_dir - 64) {
        snprintf(m_dir, sizeof m_dir, "%s", d);
        m_on = 1;
    }
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
}

void jst_metrics_observe(const struct jst_rec *r)
{
    if (!m_on || r->len < JST_REC_HDR_SIZE)
        return;
    struct jst_record rec;
    memcpy(&rec.type, r->buf, sizeof rec.type);
    rec.flags = 0;
    rec.len = (uint32_t)(r->len - JST_REC_HDR_SIZE);
    rec.payload = r->buf + JST_REC_HDR_SIZE;
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
    if (len + need + 2 > n)           /* and at least the closing quote and NUL */
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

static void put(FILE *f, const char *name, const char *help, const char *labels, const char *extra,
                double v, int first)
{
    if (first)
        fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
    fprintf(f, v >= 1e6 ? "%s{%s%s} %.3f\n" : "%s{%s%s} %.9g\n", name, labels, extra, v);
}

static void write_body(FILE *f, const char *labels, uint64_t self_ns)
{
    if (m.first_launch && m.proc_start && m.first_launch >= m.proc_start)
        put(f, "jitstall_time_to_first_kernel_seconds",
            "Process start to its first kernel launch (slowest process of the set).", labels, "",
            (double)(m.first_launch - m.proc_start) / 1e9, 1);
    put(f, "jitstall_jit_seconds", "Time in the driver's PTX JIT, compile and cache load.", labels,
        "", (double)m.jit / 1e9, 1);
    put(f, "jitstall_jit_compile_seconds", "PTX JIT time that compiled (cache missed).", labels, "",
        (double)m.compile / 1e9, 1);
    put(f, "jitstall_jit_cache_load_seconds", "PTX JIT time served from the JIT cache.", labels, "",
        (double)m.cache_load / 1e9, 1);
    put(f, "jitstall_runtime_compile_seconds",
        "Time in runtime compilers (NVRTC, nvJitLink) before the first launch.", labels, "",
        (double)m.rtc / 1e9, 1);
    if (self_ns)
        put(f, "jitstall_self_seconds", "Time jitstall itself spent in the process.", labels, "",
            (double)self_ns / 1e9, 1);
    char extra[64];
    for (unsigned v = JST_V_SASS; v <= JST_V_DAMAGED; v++) {
        snprintf(extra, sizeof extra, ",verdict=\"%s\"", jst_verdict_name(v));
        put(f, "jitstall_loads", "Module loads and link steps, by verdict.", labels, extra,
            (double)m.loads[v], v == JST_V_SASS);
    }
    for (unsigned c = JST_C_HIT; c <= JST_C_UNKNOWN; c++) {
        snprintf(extra, sizeof extra, ",outcome=\"%s\"", jst_cache_name(c));
        put(f, "jitstall_jit_cache_outcomes", "JIT loads by JIT cache outcome.", labels, extra,
            (double)m.cache[c], c == JST_C_HIT);
    }
    put(f, "jitstall_processes", "Processes traced in the set.", labels, "", 1, 1);
    if (m.realtime && m.mono >= m.proc_start && m.proc_start)
        put(f, "jitstall_last_start_timestamp_seconds",
            "Unix time of the latest process start in the set.", labels, "",
            (double)(m.realtime - (m.mono - m.proc_start)) / 1e9, 1);
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
};

void jst_metrics_write(uint64_t self_ns)
{
    if (!m_on)
        return;
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
    const char *exe = jst_exe_path();
    const char *base = strrchr(exe, '/');
    label(labels, sizeof o->labels, "program", base ? base + 1 : exe);
    label(labels, sizeof o->labels, "host", host);
    snprintf(v, sizeof o->v, "sm_%u%u", m.cc_major, m.cc_minor);
    label(labels, sizeof o->labels, "gpu_arch", m.have_device ? v : "");
    if (m.have_device && m.driver)
        snprintf(v, sizeof o->v, "%" PRIu64 ".%" PRIu64, m.driver / 1000, m.driver % 1000 / 10);
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
        write_body(f, labels, self_ns);
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
    pthread_mutex_unlock(&m_lock);
    free(o);
    errno = saved;
}

void jst_metrics_atfork_child(void)
{
    pthread_mutex_init(&m_lock, NULL);
    memset(&m, 0, sizeof m);
}
