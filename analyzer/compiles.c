/*
 * Every compile of a process as one kind of row (analyzer/compiles.h): the
 * driver's JIT events, runtime compiler calls, compiler subprocesses and the
 * compile ranges a framework marks with NVTX. Which compiler a call, a program
 * or a range is, and which framework a stack belongs to, are table rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "model.h"
#include "trace.h"

struct compiler_row {
    const char *name, *label;
    unsigned cause;
    int encloses; /* jst_compiler_encloses */
};

static const struct compiler_row compilers[JST_CMP_MAX_] = {
    [JST_CMP_DRIVER] = {"driver", "driver PTX JIT", JST_CAUSE_DRIVER_JIT, 0},
    [JST_CMP_NVRTC] = {"nvrtc", "NVRTC", JST_CAUSE_RUNTIME_COMPILER, 0},
    [JST_CMP_NVJITLINK] = {"nvjitlink", "nvJitLink", JST_CAUSE_RUNTIME_COMPILER, 0},
    [JST_CMP_NVVM] = {"nvvm", "NVVM", JST_CAUSE_RUNTIME_COMPILER, 0},
    [JST_CMP_NVPTXCOMPILER] = {"nvptxcompiler", "nvPTXCompiler", JST_CAUSE_RUNTIME_COMPILER, 0},
    [JST_CMP_PTXAS] = {"ptxas", "ptxas (subprocess)", JST_CAUSE_SUBPROCESS, 0},
    [JST_CMP_NVCC] = {"nvcc", "nvcc (subprocess)", JST_CAUSE_SUBPROCESS, 0},
    [JST_CMP_CICC] = {"cicc", "cicc (subprocess)", JST_CAUSE_SUBPROCESS, 0},
    [JST_CMP_NVLINK] = {"nvlink", "nvlink (subprocess)", JST_CAUSE_SUBPROCESS, 0},
    [JST_CMP_FATBINARY] = {"fatbinary", "fatbinary (subprocess)", JST_CAUSE_SUBPROCESS, 0},
    [JST_CMP_HOST_CC] = {"host_cc", "host C compiler (subprocess)", JST_CAUSE_SUBPROCESS, 0},
    [JST_CMP_XLA] = {"xla", "XLA compile", JST_CAUSE_FRAMEWORK_COMPILE, 1},
    [JST_CMP_BUILD] = {"build", "build tool (subprocess)", JST_CAUSE_BUILD, 1},
    [JST_CMP_FRAMEWORK] = {"framework", "framework compile (its own events)",
                           JST_CAUSE_FRAMEWORK_COMPILE, 1},
};

static const char *const frameworks[JST_FW_MAX_] = {
    [JST_FW_TRITON] = "triton", [JST_FW_INDUCTOR] = "inductor", [JST_FW_XLA] = "xla",
    [JST_FW_NUMBA] = "numba",   [JST_FW_CUPY] = "cupy",
};

static const struct {
    const char *name, *label;
} causes[JST_CAUSE_MAX_] = {
    [JST_CAUSE_DRIVER_JIT] = {"driver_jit", "driver JIT"},
    [JST_CAUSE_RUNTIME_COMPILER] = {"runtime_compiler", "runtime compilers"},
    [JST_CAUSE_SUBPROCESS] = {"subprocess", "compiler subprocesses"},
    [JST_CAUSE_FRAMEWORK_COMPILE] = {"framework_compile", "framework compiles"},
    [JST_CAUSE_MODULE_LOAD] = {"module_load", "module loads"},
    [JST_CAUSE_DRIVER_INIT] = {"driver_init", "driver init and context"},
    [JST_CAUSE_PYTHON] = {"python", "Python (sampled)"},
    [JST_CAUSE_UNEXPLAINED] = {"unexplained", "unexplained"},
    [JST_CAUSE_GRAPH_CAPTURE] = {"graph_capture", "CUDA graph capture"},
    [JST_CAUSE_BUILD] = {"build", "build tools"},
};

const char *jst_compiler_name(unsigned c)
{
    return c < JST_CMP_MAX_ ? compilers[c].name : NULL;
}

const char *jst_compiler_label(unsigned c)
{
    return c < JST_CMP_MAX_ && compilers[c].label ? compilers[c].label : "compiler";
}

unsigned jst_compiler_cause(unsigned c)
{
    return c < JST_CMP_MAX_ && compilers[c].name ? compilers[c].cause : JST_CAUSE_UNEXPLAINED;
}

int jst_compiler_encloses(unsigned c)
{
    return c < JST_CMP_MAX_ && compilers[c].encloses;
}

unsigned jst_compiler_by_name(const char *name)
{
    for (unsigned c = 1; name && c < JST_CMP_MAX_; c++)
        if (compilers[c].name && !strcmp(compilers[c].name, name))
            return c;
    return 0;
}

const char *jst_framework_name(unsigned f)
{
    return f < JST_FW_MAX_ ? frameworks[f] : NULL;
}

unsigned jst_framework_by_name(const char *name)
{
    for (unsigned f = 1; name && f < JST_FW_MAX_; f++)
        if (frameworks[f] && !strcmp(frameworks[f], name))
            return f;
    return 0;
}

const char *jst_cause_name(unsigned c)
{
    return c < JST_CAUSE_MAX_ ? causes[c].name : "unexplained";
}

const char *jst_cause_label(unsigned c)
{
    return c < JST_CAUSE_MAX_ ? causes[c].label : "unexplained";
}

/* Library calls that are compiles, by the call they were recorded as. */
static const struct {
    unsigned call, compiler;
} call_rows[] = {
    {JST_CALL_nvrtcCompileProgram, JST_CMP_NVRTC},
    {JST_CALL_nvJitLinkComplete, JST_CMP_NVJITLINK},
    {JST_CALL_nvvmCompileProgram, JST_CMP_NVVM},
    {JST_CALL_nvPTXCompilerCompile, JST_CMP_NVPTXCOMPILER},
};

/* NVTX ranges that mark a framework's compile, by name prefix. */
static const struct {
    const char *prefix;
    unsigned compiler, framework;
} range_rows[] = {
    {"XlaCompile:", JST_CMP_XLA, JST_FW_XLA},
};

unsigned jst_range_compiler(const char *name, unsigned *framework)
{
    for (size_t i = 0; name && i < sizeof range_rows / sizeof range_rows[0]; i++)
        if (!strncmp(name, range_rows[i].prefix, strlen(range_rows[i].prefix))) {
            if (framework)
                *framework = range_rows[i].framework;
            return range_rows[i].compiler;
        }
    return 0;
}

/* Frameworks by where their code lives: a Python frame's file or a native
 * frame's object path containing the needle. Earlier rows win: Inductor
 * drives Triton's compiler, and its cache is the one to keep. */
static const struct {
    const char *needle;
    unsigned framework;
} fw_rows[] = {
    {"torch/_inductor/", JST_FW_INDUCTOR},
    {"triton/compiler/", JST_FW_TRITON},
    {"triton/backends/nvidia/compiler.py", JST_FW_TRITON},
    {"triton/runtime/", JST_FW_TRITON},
    {"/libtriton", JST_FW_TRITON},
    {"jax/_src/", JST_FW_XLA},
    {"jaxlib/", JST_FW_XLA},
    {"xla_extension", JST_FW_XLA},
    {"numba/", JST_FW_NUMBA},
    {"numba_cuda/", JST_FW_NUMBA},
    {"cupy/", JST_FW_CUPY},
    {"cupy_backends/", JST_FW_CUPY},
};

#define N_FW_ROWS (sizeof fw_rows / sizeof fw_rows[0])

/* The object mapped at ip when the stack was taken, or NULL. */
static const char *object_at(const struct jst_process *p, uint64_t ip)
{
    for (size_t i = p->n_mods; i-- > 0;) {
        const struct jst_modmap *m = &p->mods[i];
        if (m->event != JST_MOD_DLCLOSE && ip >= m->start && ip < m->end)
            return m->path;
    }
    return NULL;
}

static unsigned framework_of_path(const char *s, size_t *best)
{
    for (size_t r = 0; s && r < *best; r++)
        if (strstr(s, fw_rows[r].needle)) {
            *best = r;
            return fw_rows[r].framework;
        }
    return 0;
}

unsigned jst_framework_of_file(const char *path)
{
    size_t best = N_FW_ROWS;
    return framework_of_path(path, &best);
}

static unsigned framework_of_stack(const struct jst_process *p, uint64_t stack_id)
{
    const struct jst_stack *s = jst_model_stack(p, stack_id);
    if (!s)
        return 0;
    size_t best = N_FW_ROWS;
    for (size_t i = 0; i < s->n_py; i++)
        if (s->py_frames[i]) {
            const char *file = strchr(s->py_frames[i], '\t');
            framework_of_path(file, &best);
        }
    for (size_t i = 0; i < s->n && i < 64; i++) /* native frames: enough of them */
        framework_of_path(object_at(p, s->ips[i]), &best);
    return best < N_FW_ROWS ? fw_rows[best].framework : 0;
}

/* A runtime compile that is a framework's cache lookup, not a compile of a
 * kernel: CuPy compiles an empty program with NVRTC (its _preprocess, from
 * _compile_with_cache_cuda) once per process to put the compiler's version
 * into its cache key, hit or miss. Like `ptxas --version`, no compile row. */
int jst_call_is_cache_probe(const struct jst_process *p, const struct jst_call_ev *e)
{
    if (e->call != JST_CALL_nvrtcCompileProgram || !e->stack_id)
        return 0;
    const struct jst_stack *s = jst_model_stack(p, e->stack_id);
    for (size_t i = 0; s && i + 1 < s->n_py && i < 4; i++) {
        const char *f = s->py_frames[i], *up = s->py_frames[i + 1];
        if (f && up && !strncmp(f, "_preprocess\t", 12) && strstr(f, "cupy/cuda/compiler.py") &&
            !strncmp(up, "_compile_with_cache_cuda\t", 25))
            return 1;
    }
    return 0;
}

int jst_path_under(const char *path, const char *dir)
{
    size_t n = dir ? strlen(dir) : 0;
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return path && n && !strncmp(path, dir, n) && (path[n] == '/' || path[n] == 0);
}

static char *xstrdup(const char *s)
{
    return s ? strdup(s) : NULL;
}

static char *fmt_target(unsigned cc)
{
    char b[32];
    if (!cc)
        return NULL;
    snprintf(b, sizeof b, "sm_%u", cc);
    return strdup(b);
}

/* The kernels a load made, joined: "a, b, c and 4 more". */
static char *kernels_what(const struct jst_call_ev *c)
{
    if (!c->n_kernels)
        return xstrdup(c->source ? c->source : c->path ? c->path : c->name);
    char b[512] = "";
    size_t i = 0;
    for (; i < c->n_kernels && i < 3; i++) {
        size_t l = strlen(b);
        snprintf(b + l, sizeof b - l, "%s%s", i ? ", " : "", c->kernels[i] ? c->kernels[i] : "?");
    }
    if (i < c->n_kernels) {
        size_t l = strlen(b);
        snprintf(b + l, sizeof b - l, " and %zu more", c->n_kernels - i);
    }
    return strdup(b);
}

struct jst_compile *jst_compiles_push(struct jst_process *p, size_t *cap)
{
    if (p->n_compiles == *cap) {
        size_t n = *cap ? *cap * 2 : 16;
        struct jst_compile *v = realloc(p->compiles, n * sizeof(*v));
        if (!v) {
            p->n_oom++;
            return NULL;
        }
        p->compiles = v;
        *cap = n;
    }
    struct jst_compile *c = &p->compiles[p->n_compiles++];
    memset(c, 0, sizeof *c);
    return c;
}

static unsigned call_compiler(const struct jst_process *p, const struct jst_call_ev *c)
{
    if (jst_is_jit_event(p, c))
        return JST_CMP_DRIVER;
    for (size_t i = 0; i < sizeof call_rows / sizeof call_rows[0]; i++)
        if (call_rows[i].call == c->call)
            return call_rows[i].compiler;
    return 0;
}

static void from_calls(struct jst_process *p, size_t *cap)
{
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct jst_call_ev *e = &p->calls[i];
        unsigned k = call_compiler(p, e);
        if (!k || jst_call_is_cache_probe(p, e))
            continue;
        struct jst_compile *c = jst_compiles_push(p, cap);
        if (!c)
            return;
        c->compiler = k;
        c->start_ns = e->start_ns;
        c->dur_ns = e->dur_ns;
        c->tid = e->tid;
        c->stack_id = e->stack_id;
        c->seq = e->seq;
        c->call = e;
        c->in_flight = e->in_flight;
        c->target = fmt_target(e->target_cc);
        if (k == JST_CMP_DRIVER)
            c->cache = e->cache ? jst_cache_name(e->cache) : NULL;
        c->what = k == JST_CMP_DRIVER ? kernels_what(e) : xstrdup(e->name ? e->name : e->path);
        if (k == JST_CMP_NVRTC && e->rtc_program) {
            /* the program's own name ("kernels.cu") says what it compiled;
             * the -arch option is its target */
            if (!c->target && e->name)
                c->target = xstrdup(e->name);
            free(c->what);
            c->what = xstrdup(e->rtc_program);
        }
    }
}

/* "XlaCompile:#module=jit_f#" -> "jit_f"; otherwise the name after the prefix. */
static char *range_what(const char *name)
{
    const char *m = strstr(name, "#module=");
    if (m) {
        m += 8;
        size_t l = strcspn(m, "#");
        char *s = malloc(l + 1);
        if (s) {
            memcpy(s, m, l);
            s[l] = 0;
        }
        return s;
    }
    const char *c = strchr(name, ':');
    return strdup(c && c[1] ? c + 1 : name);
}

/* Compile ranges: each push (or start) with a compile name, paired with its
 * pop (or end) the way queries pair them, by thread, domain and depth. */
static void from_ranges(struct jst_process *p, size_t *cap)
{
    for (size_t i = 0; i < p->n_ranges; i++) {
        const struct jst_range_ev *o = &p->ranges[i];
        unsigned fw = 0, k;
        if (o->op != JST_RANGE_PUSH && o->op != JST_RANGE_START)
            continue;
        if (!(k = jst_range_compiler(o->name, &fw)))
            continue;
        uint64_t end = 0;
        int found = 0;
        size_t depth = 0; /* pushes of the same thread and domain opened since */
        for (size_t j = i + 1; j < p->n_ranges && !found; j++) {
            const struct jst_range_ev *e = &p->ranges[j];
            int same =
                e->tid == o->tid && ((!e->domain && !o->domain) ||
                                     (e->domain && o->domain && !strcmp(e->domain, o->domain)));
            if (o->op == JST_RANGE_START) {
                if (e->op == JST_RANGE_END && e->id && e->id == o->id)
                    found = 1, end = e->t_ns;
                continue;
            }
            if (!same)
                continue;
            if (e->op == JST_RANGE_PUSH)
                depth++;
            else if (e->op == JST_RANGE_POP) {
                if (depth)
                    depth--;
                else
                    found = 1, end = e->t_ns;
            }
        }
        struct jst_compile *c = jst_compiles_push(p, cap);
        if (!c)
            return;
        c->compiler = k;
        c->framework = fw;
        c->start_ns = o->t_ns;
        c->in_flight = !found;
        if (!found)
            end = p->end_ns;
        c->dur_ns = end > o->t_ns ? end - o->t_ns : 0;
        c->tid = o->tid;
        c->what = range_what(o->name);
    }
}

static const char *const fw_stages[] = {"trace",      "lower",        "backend",     "autotune",
                                        "cache_lookup", "cache_load", "cache_store", "graph_record"};

const char *jst_fw_stage_name(const char *stage)
{
    for (size_t i = 0; stage && i < sizeof fw_stages / sizeof fw_stages[0]; i++)
        if (!strcmp(stage, fw_stages[i]))
            return fw_stages[i];
    return NULL;
}

int jst_compile_compiled(const struct jst_compile *c)
{
    if (c->compiler != JST_CMP_FRAMEWORK)
        return 1;
    if (c->cache && !strcmp(c->cache, "hit"))
        return 0;
    return !c->stage || !strcmp(c->stage, "backend") || !strcmp(c->stage, "autotune");
}

int jst_compile_counts(const struct jst_compile *c)
{
    return c->compiler != JST_CMP_FRAMEWORK || !c->stage ||
           (!c->has_parent && !strcmp(c->stage, "backend"));
}

/* The framework a FW_EVENT names: "jax" is XLA's row. */
static unsigned event_framework(const char *name)
{
    if (name && !strcmp(name, "jax"))
        return JST_FW_XLA;
    return name ? jst_framework_by_name(name) : 0;
}

static const char *event_cache(const char *c)
{
    return !c ? NULL : !strcmp(c, "hit") ? "hit" : !strcmp(c, "miss") ? "miss" : NULL;
}

/* The frameworks' own compile events: a row each for a whole compile and
 * each stage with a span. A point event (JAX's cache hit or miss) makes no
 * row: it gives its outcome to the framework's next backend compile or cache
 * load on its thread. */
#define FW_POINTS 64 /* threads and frameworks with a point event, at most */
static void from_fw_events(struct jst_process *p, size_t *cap)
{
    struct {
        uint64_t tid;
        unsigned fw;
        const char *cache;
    } last[FW_POINTS];
    size_t n_last = 0;
    for (size_t i = 0; i < p->n_fw_events; i++) {
        const struct jst_fw_event_ev *e = &p->fw_events[i];
        unsigned fw = event_framework(e->framework);
        if (!fw)
            continue;
        if (!e->dur_ns) { /* the latest point event of its thread and framework */
            size_t k = 0;
            while (k < n_last && (last[k].tid != e->tid || last[k].fw != fw))
                k++;
            if (k == n_last && n_last < FW_POINTS)
                n_last++;
            if (k < n_last) {
                last[k].tid = e->tid;
                last[k].fw = fw;
                last[k].cache = event_cache(e->cache);
            }
            continue;
        }
        struct jst_compile *c = jst_compiles_push(p, cap);
        if (!c)
            return;
        c->compiler = JST_CMP_FRAMEWORK;
        c->framework = fw;
        c->start_ns = e->start_ns;
        c->dur_ns = e->dur_ns;
        c->tid = e->tid;
        c->stack_id = e->stack_id;
        c->stage = jst_fw_stage_name(e->stage);
        c->cache = event_cache(e->cache);
        c->what = e->name ? xstrdup(e->name) : e->detail && c->stage ? xstrdup(e->detail) : NULL;
        c->what_is_detail = !e->name && c->what;
        if (c->cache || !c->stage || (strcmp(c->stage, "backend") && strcmp(c->stage, "cache_load")))
            continue;
        for (size_t k = 0; k < n_last; k++)
            if (last[k].tid == e->tid && last[k].fw == fw)
                c->cache = last[k].cache;
    }
}

_Static_assert(JST_FW_MAX_ <= 8, "jst_process.fw_said holds every framework");

/* p->fw_said: what each framework's events said of its cache */
static void fw_said(struct jst_process *p)
{
    for (size_t f = 0; f < sizeof p->fw_said / sizeof p->fw_said[0]; f++)
        p->fw_said[f] = NULL;
    for (size_t i = 0; i < p->n_fw_events; i++) {
        const struct jst_fw_event_ev *e = &p->fw_events[i];
        const char *o = event_cache(e->cache);
        unsigned fw = event_framework(e->framework);
        if (o && fw < sizeof p->fw_said / sizeof p->fw_said[0] &&
            (!p->fw_said[fw] || !strcmp(o, "miss")))
            p->fw_said[fw] = o;
    }
}

const char *jst_fw_events_outcome(const struct jst_process *p, unsigned framework)
{
    return framework < sizeof p->fw_said / sizeof p->fw_said[0] ? p->fw_said[framework] : NULL;
}

static int cmp_compile(const void *a, const void *b)
{
    const struct jst_compile *x = a, *y = b;
    if (x->start_ns != y->start_ns)
        return x->start_ns < y->start_ns ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->compiler < y->compiler ? -1 : x->compiler > y->compiler;
}

void jst_first_call_free(struct jst_first_call *f)
{
    free(f->kernel);
    for (size_t k = 0; k < f->n_samples; k++) {
        free(f->samples[k].func);
        free(f->samples[k].file);
    }
    free(f->samples);
    free(f->pools);
    free(f->call_site);
    free(f->function);
    for (size_t k = 0; k < f->n_phases; k++) {
        free(f->phases[k].func);
        free(f->phases[k].file);
    }
    free(f->phases);
}

void jst_compiles_free(struct jst_process *p)
{
    for (size_t i = 0; i < p->n_compiles; i++) {
        free(p->compiles[i].target);
        free(p->compiles[i].what);
        free(p->compiles[i].kernel);
        free(p->compiles[i].dir);
    }
    free(p->compiles);
    p->compiles = NULL;
    p->n_compiles = 0;
    for (size_t i = 0; i < p->n_first_calls; i++)
        jst_first_call_free(&p->first_calls[i]);
    free(p->first_calls);
    p->first_calls = NULL;
    p->n_first_calls = 0;
}

static uint64_t compile_end(const struct jst_compile *c)
{
    return c->start_ns > UINT64_MAX - c->dur_ns ? UINT64_MAX : c->start_ns + c->dur_ns;
}

/* Each compile's enclosing compile (the innermost compile of an enclosing
 * compiler whose span holds its own, any thread of the process: XLA runs
 * ptxas from its own threads while the range is open on the caller's), and
 * the framework it takes from it. One sweep by start over p->compiles
 * (sorted): the spans still open are kept; a compile's parent is the
 * shortest open span that holds it. */
static void link_parents(struct jst_process *p)
{
    size_t *open = NULL, n_open = 0, cap = 0;
    for (size_t i = 0, at = 0; i < p->n_compiles; i++) {
        struct jst_compile *c = &p->compiles[i];
        /* open the enclosing spans that start at or before c (equal starts
         * too, whatever their order in the sort) */
        for (; at < p->n_compiles && p->compiles[at].start_ns <= c->start_ns; at++) {
            if (!jst_compiler_encloses(p->compiles[at].compiler))
                continue;
            if (n_open == cap) {
                size_t nc = cap ? cap * 2 : 8;
                size_t *v = realloc(open, nc * sizeof *v);
                if (!v) {
                    p->n_oom++;
                    free(open);
                    return;
                }
                open = v;
                cap = nc;
            }
            open[n_open++] = at;
        }
        uint64_t e = compile_end(c), best_len = UINT64_MAX;
        size_t k = 0;
        for (size_t j = 0; j < n_open; j++) {
            const struct jst_compile *o = &p->compiles[open[j]];
            uint64_t oe = compile_end(o);
            if (oe < c->start_ns)
                continue; /* closed for c and every later compile: dropped */
            open[k++] = open[j];
            /* an equal span encloses only a later one (never each other) */
            if (open[j] == i || oe < e || (o->start_ns == c->start_ns && oe == e && open[j] > i))
                continue;
            if (oe - o->start_ns < best_len) {
                best_len = oe - o->start_ns;
                c->has_parent = 1;
                c->parent = open[j];
            }
        }
        n_open = k;
    }
    free(open);
    /* frameworks down the chains, outermost first (a parent starts no later
     * than its child, so it comes first unless the starts are equal) */
    for (size_t i = 0; i < p->n_compiles; i++) {
        struct jst_compile *c = &p->compiles[i];
        const struct jst_compile *r = c;
        for (size_t hops = 0; r->has_parent && hops < 64; hops++)
            r = &p->compiles[r->parent];
        if (r != c && r->framework)
            c->framework = r->framework;
        for (r = c; r->has_parent && !c->in_build; r = &p->compiles[r->parent])
            c->in_build = p->compiles[r->parent].compiler == JST_CMP_BUILD;
    }
}

/* The ancestor of q in the run whose pid is pid, or NULL. */
static const struct jst_process *ancestor_of(const struct jst_run *run, const struct jst_process *q,
                                             uint64_t pid)
{
    for (size_t hops = 0; hops < 64 && q->parent_ix < run->n_procs; hops++) {
        q = &run->procs[q->parent_ix];
        if (q->pid == pid)
            return q;
    }
    return NULL;
}

void jst_compiles_link_builds(struct jst_run *run)
{
    size_t *cand = NULL, cap = 0;
    /* Up each process's chain: the rows of an ancestor that ran it (or ran
     * the process that ran it ...), found once per hop; each compile not yet
     * tied takes the shortest of them that holds it. */
    for (size_t i = 0; i < run->n_procs; i++) {
        struct jst_process *ch = &run->procs[i];
        const struct jst_process *cur = ch;
        for (size_t hops = 0; ch->n_compiles && hops < 16 && cur->parent_ix < run->n_procs;
             hops++) {
            const struct jst_process *par = &run->procs[cur->parent_ix];
            size_t n = 0;
            for (size_t r = 0; r < par->n_compiles; r++) {
                if (par->compiles[r].pid != cur->pid)
                    continue;
                if (n == cap) {
                    size_t nc = cap ? cap * 2 : 8;
                    size_t *v = realloc(cand, nc * sizeof *v);
                    if (!v) {
                        ch->n_oom++;
                        free(cand);
                        return;
                    }
                    cand = v;
                    cap = nc;
                }
                cand[n++] = r;
            }
            for (size_t j = 0; n && j < ch->n_compiles; j++) {
                struct jst_compile *c = &ch->compiles[j];
                uint64_t e = compile_end(c), len = UINT64_MAX;
                for (size_t k = 0; !c->has_parent && k < n; k++) {
                    const struct jst_compile *r = &par->compiles[cand[k]];
                    uint64_t re = compile_end(r);
                    if (r->start_ns > c->start_ns || re < e || re - r->start_ns >= len)
                        continue;
                    len = re - r->start_ns;
                    c->parent = cand[k];
                    c->parent_pid = par->pid;
                }
                if (c->parent_pid)
                    c->has_parent = 1;
            }
            cur = par;
        }
    }
    free(cand);
    /* Then each compile up its whole chain, across processes: under a
     * build anywhere above it, it is in that build; the outermost framework
     * is its own. */
    for (size_t i = 0; i < run->n_procs; i++) {
        const struct jst_process *p = &run->procs[i];
        for (size_t j = 0; j < p->n_compiles; j++) {
            struct jst_compile *c = &p->compiles[j];
            const struct jst_process *q = p;
            const struct jst_compile *r = c;
            unsigned fw = 0;
            int crossed = 0;
            for (size_t hops = 0; r->has_parent && hops < 64; hops++) {
                if (r->parent_pid) {
                    q = ancestor_of(run, q, r->parent_pid);
                    crossed = 1;
                }
                if (!q || r->parent >= q->n_compiles)
                    break;
                r = &q->compiles[r->parent];
                c->in_build |= r->compiler == JST_CMP_BUILD;
                if (r->framework)
                    fw = r->framework;
            }
            if (crossed && fw)
                c->framework = fw;
        }
    }
}

void jst_compiles_derive(struct jst_process *p)
{
    size_t cap = 0;
    jst_compiles_free(p);
    from_calls(p, &cap);
    from_ranges(p, &cap);
    from_fw_events(p, &cap);
    fw_said(p);
    jst_subprocs_compiles(p, &cap);
    for (size_t i = 0; i < p->n_compiles; i++) {
        struct jst_compile *c = &p->compiles[i];
        if (!c->framework && c->stack_id)
            c->framework = framework_of_stack(p, c->stack_id);
        /* Whatever the compiler: after ready, a compile stalls a request. */
        c->late = p->ready.present && c->start_ns >= p->ready.t_ns;
    }
    if (p->n_compiles > 1)
        qsort(p->compiles, p->n_compiles, sizeof *p->compiles, cmp_compile);
    link_parents(p);
}

/* Merged intervals of [s, e) pairs, in place; returns how many remain. */
size_t jst_iv_merge(uint64_t (*iv)[2], size_t n);

static int by_compiler(const struct jst_compile *c, const void *k)
{
    return c->compiler == *(const unsigned *)k;
}

uint64_t jst_compiler_wall(const struct jst_process *p, unsigned k)
{
    return jst_compiles_wall(p, k ? by_compiler : NULL, &k, 0, UINT64_MAX);
}

int jst_compile_is_culprit(const struct jst_compile *k)
{
    /* a stage of a compile the framework reported whole: in that row */
    if (k->compiler == JST_CMP_FRAMEWORK && k->stage && k->has_parent)
        return 0;
    return !k->call && !k->in_build &&
           (k->dur_ns || k->in_flight || (k->has_exit && k->exit_status != 0));
}

uint64_t jst_compile_ns_within(const struct jst_process *p, uint64_t a, uint64_t b)
{
    return jst_compiles_wall(p, NULL, NULL, a, b);
}

uint64_t jst_compiles_wall(const struct jst_process *p,
                           int (*pick)(const struct jst_compile *, const void *), const void *arg,
                           uint64_t a, uint64_t b)
{
    uint64_t(*iv)[2] = malloc((p->n_compiles ? p->n_compiles : 1) * sizeof *iv);
    size_t n = 0;
    uint64_t sum = 0;
    if (!iv)
        return 0;
    for (size_t i = 0; i < p->n_compiles; i++) {
        const struct jst_compile *c = &p->compiles[i];
        uint64_t s = c->start_ns, e = c->start_ns + c->dur_ns;
        if (pick && !pick(c, arg))
            continue;
        if (e < s)
            e = UINT64_MAX;
        s = s > a ? s : a;
        e = e < b ? e : b;
        if (e > s) {
            iv[n][0] = s;
            iv[n][1] = e;
            n++;
        }
    }
    n = jst_iv_merge(iv, n);
    for (size_t i = 0; i < n; i++)
        sum += iv[i][1] - iv[i][0];
    free(iv);
    return sum;
}
