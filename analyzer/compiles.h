/*
 * One model of a compile, whatever the compiler (implementation:
 * analyzer/compiles.c, analyzer/firstcall.c). The driver's PTX JIT, the
 * runtime compilers (NVRTC, nvJitLink, NVVM, nvPTXCompiler), compiler
 * subprocesses (ptxas, nvcc, gcc, ...) and a framework's own compiles marked by
 * NVTX ranges (XLA) all become rows of one kind: report, check, diff, export and
 * baseline read them through this, so a new compiler is a new table row.
 */
#ifndef JST_ANALYZER_COMPILES_H
#define JST_ANALYZER_COMPILES_H

#include <stddef.h>
#include <stdint.h>

struct jst_process;
struct jst_call_ev;

enum jst_compiler {
    JST_CMP_NONE = 0,
    JST_CMP_DRIVER,
    JST_CMP_NVRTC,
    JST_CMP_NVJITLINK,
    JST_CMP_NVVM,
    JST_CMP_NVPTXCOMPILER,
    JST_CMP_PTXAS,
    JST_CMP_NVCC,
    JST_CMP_CICC,
    JST_CMP_NVLINK,
    JST_CMP_FATBINARY,
    JST_CMP_HOST_CC,
    JST_CMP_XLA,
    /* a build tool or any other child a process waited for (ninja, make, a
     * script): its span holds the compiles of its descendants */
    JST_CMP_BUILD,
    /* a compile or compile stage as the framework itself reported it
     * (JST_REC_FW_EVENT): its span holds the compilers it ran */
    JST_CMP_FRAMEWORK,
    JST_CMP_MAX_
};

enum jst_framework {
    JST_FW_NONE = 0,
    JST_FW_TRITON,
    JST_FW_INDUCTOR,
    JST_FW_XLA,
    JST_FW_NUMBA,
    JST_FW_CUPY,
    JST_FW_MAX_
};

/* What a first call's time went to (its blame table), in the order that
 * decides overlaps: a moment covered by several causes counts for the first. */
enum jst_cause {
    JST_CAUSE_DRIVER_JIT = 0,
    JST_CAUSE_RUNTIME_COMPILER,
    JST_CAUSE_SUBPROCESS,
    JST_CAUSE_FRAMEWORK_COMPILE,
    JST_CAUSE_MODULE_LOAD,
    JST_CAUSE_DRIVER_INIT,
    JST_CAUSE_PYTHON,
    JST_CAUSE_UNEXPLAINED,
    JST_CAUSE_GRAPH_CAPTURE, /* CUDA graph capture and instantiation (graphs.h): after the
                                compiles, so that a compile during a capture is the compile's */
    /* waiting for a build tool; counts before every other cause (its
     * compilers run inside it) */
    JST_CAUSE_BUILD,
    JST_CAUSE_MAX_
};

struct jst_compile {
    unsigned compiler;  /* enum jst_compiler */
    unsigned framework; /* enum jst_framework */
    uint64_t start_ns, dur_ns, tid;
    uint64_t stack_id, seq;         /* seq: the call count when it started (symbolizing) */
    const struct jst_call_ev *call; /* the driver or library call it is, or NULL */
    char *target;                   /* "sm_90", or NULL */
    const char *cache;              /* cache outcome when known ("hit", ...), or NULL */
    const char *stage;              /* a framework's compile stage ("trace", "lower",
                                       "backend", ...; jst_fw_stage_name), or NULL */
    char *what;                     /* what it compiled or produced, or NULL */
    int what_is_detail;             /* what is a framework stage's detail (its event's
                                       name, "trigger=..."), no function's name */
    char *kernel;                   /* the kernel whose first call holds it, or NULL */
    uint64_t pid;                   /* a subprocess's pid, else 0 */
    unsigned spawn_how;             /* a subprocess's enum jst_spawn, else 0 */
    int has_exit;
    int64_t exit_status; /* a subprocess's, when has_exit */
    uint64_t child_of;   /* compiled in a child process of pid child_of, else 0 */
    int in_flight;       /* not finished when the trace ended */
    int late;            /* started at or after the process said it was ready
                            (JST_REC_READY): it stalled a request, not the start-up */
    int has_parent;      /* it ran inside another compile's span (a ptxas child during
                            an XLA compile range), the innermost such: */
    size_t parent;       /* that compile's index in the process's compiles, whose
                            framework (and so fix) it has */
    uint64_t parent_pid; /* nonzero: parent indexes the compiles of the process of this pid
                            (an ancestor in the run: a build tool's descendants) */
    int in_build;        /* a build tool's row encloses it, here or in an ancestor: the
                            build's fix is its fix */
    char *dir;           /* a build tool's directory (-C DIR, else its cwd), or NULL */
};

/* A kernel's first call: the compile work on its thread before its first launch. */
struct jst_sample_fn {
    char *func, *file;
    unsigned line;    /* the line most of its samples were at */
    uint64_t dur_ns;  /* all its lines */
    uint64_t line_ns; /* at that line */
};

/* The compiles of a pool's workers (child processes of one parent, the
 * pool's owner, in the run) that ran during a first call: they count once
 * in its blame, as the union of their intervals. */
struct jst_fc_pool {
    uint64_t pid;              /* the workers' parent */
    size_t n_workers;          /* workers with compiles in the first call */
    size_t runs[JST_CMP_MAX_]; /* their compiles, by compiler */
    uint64_t wall_ns;          /* union of those compiles within the first call */
};

/* A phase of a first call's sampled Python (samplefn.h's table): its share
 * of the first call's Python time and the function that named it most. */
struct jst_fc_phase {
    unsigned phase; /* enum jst_phase */
    char *func, *file;
    uint64_t dur_ns; /* the phases' dur_ns sum to the first call's Python blame */
};

struct jst_first_call {
    char *kernel;
    uint64_t tid, start_ns, dur_ns; /* start of its compile work to its launch */
    uint64_t launch_seq;            /* seq of the launch call */
    uint64_t blame[JST_CAUSE_MAX_]; /* sums to dur_ns */
    unsigned top_framework;         /* framework of its compiles, or 0 */
    struct jst_sample_fn *samples;  /* top Python functions by sampled time */
    size_t n_samples;
    struct jst_fc_pool *pools; /* descendants' compiles in it, by pool */
    size_t n_pools;
    char *call_site; /* the program's own innermost Python frame that asked for
                        it, "func (file:line)", or NULL */
    char *function;  /* the framework's compiled function (an XLA module, the
                        Triton kernel its compile loaded), or NULL */
    /* its Python time by phase, largest first */
    struct jst_fc_phase *phases;
    size_t n_phases;
    /* its framework's cache outcome (jst_fw_cache_outcome), or NULL */
    const char *cache;
    size_t graphs; /* CUDA graphs captured on its thread in it (graph_capture) */
};

/* The table rows: names as the JSON and the options spell them. */
const char *jst_compiler_name(unsigned compiler);  /* "ptxas"; NULL when out of range */
const char *jst_compiler_label(unsigned compiler); /* "driver PTX JIT", "ptxas (subprocess)" */
unsigned jst_compiler_cause(unsigned compiler);    /* enum jst_cause */
/* Whether a compile of this compiler spans the work of others (a framework's
 * compile range does; a ptxas child does not, even when a parallel one falls
 * inside its time): compiles inside such a span belong to it. */
int jst_compiler_encloses(unsigned compiler);
unsigned jst_compiler_by_name(const char *name);    /* 0 when unknown */
/* Is path dir itself, or below it ("/a/b" under "/a" and "/a/"; "/ab" not)?
 * 0 when either is NULL or dir is empty. (Build directories, framework
 * caches, a bundle's directory.) */
int jst_path_under(const char *path, const char *dir);
/* A runtime compile that only reads the compiler's version into a
 * framework's cache key (CuPy's NVRTC of an empty program): no compile, no
 * culprit, no fix. */
int jst_call_is_cache_probe(const struct jst_process *p, const struct jst_call_ev *e);
/* Whether compile c compiled: every row does but a framework's own report
 * of a compile that hit its cache, or of a stage that a warm cache does not
 * skip (tracing, lowering, the cache's lookup, load and store). A framework
 * whose rows all did not compile compiled nothing: its cache hit. */
int jst_compile_compiled(const struct jst_compile *c);
/* Whether compile c counts as a compile of its own in counts and budgets:
 * every row but a framework's stage (its whole compile counts; a stage that
 * no whole compile holds counts only as the backend compile: JAX's). */
int jst_compile_counts(const struct jst_compile *c);
/* A framework event's stage as the JSON spells it ("trace", "lower",
 * "backend", "autotune", "cache_lookup", "cache_load", "cache_store",
 * "graph_record"); NULL for a whole compile ("compile") or a stage unknown
 * to this reader. */
const char *jst_fw_stage_name(const char *stage);
const char *jst_framework_name(unsigned framework); /* "triton"; NULL for none */
unsigned jst_framework_by_name(const char *name);   /* 0 when unknown */
/* The framework whose code lives at path (a Python file or an object), or 0. */
unsigned jst_framework_of_file(const char *path);
const char *jst_cause_name(unsigned cause);  /* "driver_jit" */
const char *jst_cause_label(unsigned cause); /* "driver JIT" */

/* A range name that marks a framework's compile (XLA's "XlaCompile:..."): the
 * compiler, else 0. Such ranges are never queries. */
unsigned jst_range_compiler(const char *name, unsigned *framework);

/* A framework's cache outcome in process p (analyzer/firstcall.c): what
 * its own events said (jst_fw_events_outcome) when they said it, else "miss"
 * when the framework compiled there (compiled: in p or a process it
 * started), "disabled" when it had no cache directory (JAX's default) or
 * its cache could not be made or written, "hit" when it
 * compiled nothing and its cache held entries at start, else "unknown" (no
 * FW_CACHE record, or an empty cache and no compile). */
const char *jst_fw_cache_outcome(const struct jst_process *p, unsigned framework, int compiled);
/* What framework's own events in p said of its cache: "miss" when any
 * compile missed, "hit" when some hit and none missed, NULL when they said
 * nothing (no events, or none with an outcome). */
const char *jst_fw_events_outcome(const struct jst_process *p, unsigned framework);
/* The FW_CACHE record of framework in p, or NULL. */
struct jst_fw_cache;
const struct jst_fw_cache *jst_fw_cache_of(const struct jst_process *p, unsigned framework);
/* Builds p->compiles (in start order) and p->first_calls; jst_model_derive
 * calls it. Child processes (p->ppid) are tied later by jst_compiles_link. */
void jst_compiles_derive(struct jst_process *p);
void jst_first_calls_derive(struct jst_process *p);
/* Ties the compiles of each process's descendants (traces of the same run
 * whose parent, or parent's parent..., it is: a pool's workers) into its
 * first calls: a kernel's first launch after such a compile began is a first
 * call, and they count in its blame once (the union of their intervals),
 * grouped by pool (jst_first_call.pools). Then keeps only the first calls
 * that had compile work (a launch after module loads, driver start-up and
 * the program's Python alone has none). */
struct jst_run;
void jst_compiles_link(struct jst_run *run);
/* Ties the compiles of a build tool's descendants (the traces of the child a
 * build row names, and of their children) to that row, or to the innermost
 * compile row of an ancestor that ran their process (nvcc under ninja):
 * parent_pid, parent and in_build (jst_compiles_link calls it first). */
void jst_compiles_link_builds(struct jst_run *run);
void jst_compiles_free(struct jst_process *p);
/* Frees what one first call owns (its kernel name and sampled functions). */
void jst_first_call_free(struct jst_first_call *f);

/* analyzer/compile_read.c: COMPILE, SAMPLE and FW_CACHE records into the
 * model (-1: not one of them; else 1 when a field ran past the record). */
struct jst_record;
int jst_compile_read_record(struct jst_process *p, const struct jst_record *rec);
void jst_compile_records_free(struct jst_process *p);
/* Whether a compiler child only asked the compiler about itself: every
 * argument after argv[0] is a version, help or print option ("ptxas
 * --version", "gcc -dumpversion", "nvcc --list-gpu-arch"). Such a child is
 * no compile: it has no row (dump still shows its record). For a build tool
 * (build nonzero), one-letter options are no probe: `ninja -v` builds. */
struct jst_subproc_ev;
int jst_subproc_is_probe(const struct jst_subproc_ev *e, int build);
/* Whether program (a path) is a build tool by its name: ninja, make,
 * cmake, meson, bazel, ... */
int jst_build_tool_name(const char *program);
/* Adds a compile row for each compiler child that is no probe (used by
 * jst_compiles_derive). */
void jst_subprocs_compiles(struct jst_process *p, size_t *cap);
struct jst_compile *jst_compiles_push(struct jst_process *p, size_t *cap);
/* Merges [s, e) intervals in place (sorted by start); returns how many remain. */
size_t jst_iv_merge(uint64_t (*iv)[2], size_t n);

/* Compile time (union of intervals, any compiler, any thread) within [a, b). */
uint64_t jst_compile_ns_within(const struct jst_process *p, uint64_t a, uint64_t b);
/* The same for the compiles pick(compile, arg) chooses (all when pick is
 * NULL): compiles that ran at the same time count once. */
uint64_t jst_compiles_wall(const struct jst_process *p,
                           int (*pick)(const struct jst_compile *, const void *), const void *arg,
                           uint64_t a, uint64_t b);
/* The wall time of compiler k's compiles in p (0: every compiler's): the
 * time a compiler took, whatever ran in parallel. */
uint64_t jst_compiler_wall(const struct jst_process *p, unsigned k);
/* The wall time of the first calls of p that the compiles pick chooses ran
 * in (the union of their windows), or 0 when they ran in none: what a fix of
 * those compiles can save at most. */
uint64_t jst_first_calls_wall(const struct jst_process *p,
                              int (*pick)(const struct jst_compile *, const void *),
                              const void *arg);
/* Is a compiler child that no compiler list knows a build tool of its
 * process? When it lasted at least this long; a short one (uname, git
 * rev-parse, ldconfig -p) has no row. */
#define JST_BUILD_MIN_NS 100000000ull
/* A compile that ranks among the Culprits of its own: one that is no driver
 * or library call (those rank as the calls they are) nor part of a build
 * (the build ranks for it), that took time, failed or was still running. */
int jst_compile_is_culprit(const struct jst_compile *k);
/* The first call that took longest, or NULL. */
const struct jst_first_call *jst_slowest_first_call(const struct jst_process *p);

#endif
