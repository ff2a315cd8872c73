/*
 * The analyzer's in-memory view of traces (implementation: analyzer/model.c).
 * report, diff, export, check and baseline all read traces through this, so
 * they agree on what a trace says.
 */
#ifndef JST_ANALYZER_MODEL_H
#define JST_ANALYZER_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include "jitstall/format.h"
#include "graphs.h"

struct jst_field_iter;
struct jst_strtab;
struct jst_seq_pos;

/* One hooked call, as recorded (all JST_REC_CALL records, in order). */
struct jst_call_ev {
    uint64_t seq;
    unsigned call;           /* enum jst_call */
    char *call_name;         /* exact API name, e.g. "cuCtxCreate_v4" */
    unsigned route;          /* enum jst_route, 0 if unknown */
    uint64_t tid, start_ns, dur_ns;
    int64_t result;
    uint64_t handle, func, parent, ctx;
    uint64_t graph;          /* CUgraph of a capture or instantiation (analyzer/graphs.c) */
    char *rtc_program;       /* nvrtcCompileProgram: the name the program was created with */
    char *name;              /* kernel name (lookups, launches) */
    char *path;              /* file loads */
    uint64_t stack_id;       /* 0: none */

    /* loads only (verdict != JST_V_NONE) */
    unsigned image_kind;
    uint64_t image_size, image_hash;
    char *source;            /* ELF object the image came from */
    unsigned verdict;        /* enum jst_verdict */
    char *sass_arch, *jit_from, *reason;
    char **kernels;
    size_t n_kernels;
    char **entries;          /* "ptx compute_75 zstd" */
    size_t n_entries;
    uint64_t ptx_size;
    unsigned target_cc;
    unsigned ptx_isa, ptx_isa_max; /* .version x10 of the PTX it would JIT / of its newest PTX */
    unsigned ptx_isa_driver;       /* ptx_too_new (derived): the newest ISA the driver JITs */
    unsigned ptx_driver_cuda;      /* ptx_too_new: the driver's CUDA version, 13000 */
    unsigned cache, cache_reason; /* enum jst_cache_outcome / jst_cache_reason */
    uint64_t cache_new_bytes, cache_new_entries;

    /* CUPTI ground truth tied to this load, ns; 0 when absent */
    uint64_t cupti_compile_ns, cupti_cache_load_ns, cupti_cache_store_ns;

    /* added by analyzer/model.c: links and the device of a load */
    int has_jit_input;       /* JST_F_JIT_INPUT was recorded */
    unsigned jit_input;      /* CUjitInputType (CU_JIT_INPUT_PTX = 1) */
    uint64_t cubin_size;     /* cuLinkComplete output size */
    uint64_t rtc_ptx_hash[2]; /* nvrtcCompileProgram: its PTX's hash with, without the NUL */
    int has_load_device;
    unsigned load_device;    /* JST_F_LOAD_DEVICE */

    /* added: a BEGIN record with no call record of its seq: the call had not
     * returned when the trace ends; dur_ns runs to the trace's last record */
    int in_flight;
    int link_nvvm;           /* cuLinkComplete of a link fed LTO-IR (model_index.c) */
    /* added by jst_origin_name_files (origin.c): an image in memory's file,
     * found by content; NULL when unknown */
    const char *read_from;
    /* added by jst_origin_name_files: when no file holds it, the name of the
     * NVRTC program whose PTX it is (nvrtcCreateProgram's name); NULL else */
    const char *rtc_made;
};

struct jst_device {
    unsigned ordinal, cc_major, cc_minor;
    char *name;
    uint64_t driver_version;
    char *driver_release; /* "580.159.04", or NULL */
};

struct jst_cache_state {
    int present;             /* the record was in the trace */
    char *path;
    int from_env, exists, writable, disabled;
    uint64_t size_bytes, entries, max_bytes;
};

struct jst_stack {
    uint64_t id;
    uint64_t *ips;
    size_t n;
    /* Python frames "func\tfile\tline", innermost first, and for each the
     * index in ips of the eval frame running it (>= n: beyond the captured
     * native stack); n_py counts both. */
    char **py_frames;
    uint64_t *py_native;
    size_t n_py;
};

struct jst_modmap {
    unsigned event;          /* enum jst_mod_event */
    uint64_t seq_after;      /* number of calls recorded before this entry */
    char *path;
    uint64_t bias, start, end, file_size, mtime_ns;
    uint8_t *build_id;
    size_t build_id_len;
};

struct jst_cupti_ev {
    unsigned op;             /* enum jst_cupti_op */
    uint64_t start_ns, end_ns, load_seq, cache_size;
    char *cache_path;
};

/* An NVTX range record (JST_REC_RANGE), as recorded. */
struct jst_range_ev {
    unsigned op; /* enum jst_range_op */
    uint64_t t_ns, tid, id, depth;
    char *name, *domain; /* NULL when absent */
};

/* A top-level NVTX range of a process: one query (analyzer/queries.c). */
struct jst_query {
    char *name;           /* as recorded, numbered when repeated: "query1#2" */
    const char *domain;   /* NULL: the default domain */
    uint64_t tid, start_ns, dur_ns;
    uint64_t jit_ns, rtc_ns;                /* JIT / runtime compile inside it */
    uint64_t compile_ns;                    /* any compiler inside it (union) */
    int open;                               /* not ended before the trace did */
    const struct jst_call_ev *top_jit;      /* the JIT event longest inside it */
};

/* A compiler the process ran as a child (JST_REC_COMPILE), as recorded. */
struct jst_subproc_ev {
    uint64_t tid, start_ns, dur_ns, stack_id, seq, child_pid, wait_ns, out_size;
    uint64_t spawn_how; /* enum jst_spawn, 0 when not recorded */
    uint64_t wait_status;
    int has_status;      /* reaped: wait_status is its waitpid status */
    uint64_t end_unseen; /* reaped by the kernel: ended, status unknown */
    char *compiler, *program, *target, *output;
    char *cwd; /* a build tool's working directory, when recorded */
    char **inputs;
    size_t n_inputs;
    char **args; /* argv, argv[0] first, when recorded */
    size_t n_args;
};

/* Python frames seen by the sampler before a first launch (JST_REC_SAMPLE):
 * one distinct stack, the time its samples stand for. */
struct jst_sample_ev {
    uint64_t tid, stack_id, sample_ns, samples, before_seq, period_ns, window_ns;
    uint64_t start_ns, dur_ns; /* first sample of this stack; first to last (0: not recorded) */
    char **py; /* "func\tfile\tline" innermost first, when on the record */
    size_t n_py;
};

/* A child the process reaped (JST_REC_REAP): its pid, its wait status (as
 * waitpid gives it) and when. */
struct jst_reap_ev {
    uint64_t pid, status, t_ns, tid;
};

/* A framework's compile cache as found at start (JST_REC_FW_CACHE). */
struct jst_fw_cache {
    char *framework, *path, *env_name, *fs_type, *mount;
    int from_env, exists, has_exists, writable, ephemeral;
    int has_entries, entries_more; /* entries_more: there were more than entries */
    int not_dir;                   /* the path (or its nearest ancestor) is not a directory */
    uint64_t entries;              /* names at its top level, when recorded */
};

/* A framework's own report of a compile or a compile stage (JST_REC_FW_EVENT). */
struct jst_fw_event_ev {
    uint64_t tid, start_ns, dur_ns, stack_id;
    char *framework, *stage, *name, *cache, *detail;
};

struct jst_compile;
struct jst_first_call;
struct jst_origin_ix;

/* A kernel launch as first calls need it (analyzer/firstcall.c): every
 * launch record of the trace, 40 bytes each, whether or not the call itself
 * is kept (a program that launches many kernels once each would otherwise
 * hold a whole call record, 344 bytes, for each). */
struct jst_launch {
    uint64_t start_ns, dur_ns, tid, seq;
    const char *name; /* the kernel, interned; NULL when unknown */
};

/* The moment the program said it is ready (JST_REC_READY), the first one. */
struct jst_ready {
    int present;
    uint64_t t_ns, tid;
    char *spec; /* "nvtx:warmup_done", "file:/tmp/ready", "after:30"; NULL */
};

struct jst_process {
    char *trace_path;
    unsigned format_version;
    int truncated;           /* stream ended early or no END record */
    unsigned trace_stop;     /* enum jst_trace_stop: why the preload stopped writing, 0 unknown */
    char *damage;            /* non-NULL: reading stopped at damage (message) */
    uint64_t pid, ppid;
    char *host, *exe, *cwd, *jst_version;
    char **argv; size_t argc;
    char **env; size_t n_env;
    uint64_t realtime_ns, mono_ns;  /* the anchor pair */
    uint64_t proc_start_ns;         /* CLOCK_MONOTONIC; 0 if unknown */
    uint64_t end_ns;                /* END record's time, or last event's end */
    int has_end;
    int64_t exit_status;
    char *end_reason;               /* "exit", "atexit", "destructor"; NULL */
    uint64_t self_ns;               /* jitstall's own time (END self_ns); 0 if absent */
    size_t n_unknown;               /* records of unknown type skipped */

    struct jst_device *devices; size_t n_devices;
    struct jst_call_ev *calls; size_t n_calls;
    struct jst_launch *launches; size_t n_launches; /* every launch, compact */
    struct jst_cache_state cache_start, cache_end;
    struct jst_stack *stacks; size_t n_stacks;
    struct jst_modmap *mods; size_t n_mods;
    struct jst_cupti_ev *cupti; size_t n_cupti;
    char **notes; size_t n_notes;
    struct jst_range_ev *ranges; size_t n_ranges, cap_ranges;
    struct jst_query *queries; size_t n_queries; /* derived, in start order */
    struct jst_subproc_ev *subprocs; size_t n_subprocs;
    /* children waited for that built nothing (jst_compiles_link): their
     * pids, whose `build` records make no compile row */
    uint64_t *inert_builds; size_t n_inert_builds;
    /* compiler children that the parent process's system() or popen() row
     * already holds (the shell it ran was traced too): their start_ns,
     * whose records make no compile row (jst_compiles_link) */
    uint64_t *shell_dups; size_t n_shell_dups;
    struct jst_sample_ev *samples; size_t n_samples;
    struct jst_fw_cache *fw_caches; size_t n_fw_caches;
    struct jst_fw_event_ev *fw_events; size_t n_fw_events;
    /* derived: what each framework's events said of its cache ("hit",
     * "miss"; NULL: nothing), by enum jst_framework (jst_fw_events_outcome) */
    const char *fw_said[8];
    struct jst_reap_ev *reaps; size_t n_reaps;
    /* derived for the run (analyzer/model_tree.c): the trace of this
     * process's parent in the run, or (size_t)-1; for a trace without END,
     * the pid of the parent that reaped or outlived it (a pool's worker ended
     * by its pool), else 0: such a trace is not partial; and how many of
     * its children's traces it ended */
    size_t parent_ix;
    uint64_t ended_by;
    size_t n_ended;
    struct jst_ready ready;
    uint64_t ttr_ns;         /* derived: process start (or first event) to ready; 0 none */
    /* derived (analyzer/compiles.h): every compile, any compiler, in start
     * order; each kernel's first call that followed compile work */
    struct jst_compile *compiles; size_t n_compiles;
    struct jst_first_call *first_calls; size_t n_first_calls;
    /* derived (analyzer/graphs.h): CUDA graph capture and instantiation */
    struct jst_graphs graphs;

    /* derived by jst_model_derive() */
    uint64_t first_launch_ns;       /* start of the first launch; 0 if none */
    uint64_t ttfk_ns;               /* process start (or first event) to first launch */
    uint64_t jit_ns, jit_compile_ns, jit_cache_load_ns;
    uint64_t init_ns, ctx_ns, sass_load_ns;
    /* added: the part of jit_* that happened before the first launch (the
     * ttfk breakdown), and what is left of ttfk after jit, init, ctx, sass */
    uint64_t ttfk_jit_ns, ttfk_jit_compile_ns, ttfk_jit_cache_load_ns;
    uint64_t pre_driver_ns;  /* process start to the first driver call (imports, setup) */
    uint64_t other_ns;
    /* added: runtime compilers (nvrtcCompileProgram, nvJitLinkComplete)
     * before the first launch; not part of other_ns */
    uint64_t rtc_ns;
    /* added: calls in flight when the trace ends (jst_call_ev.in_flight) */
    uint64_t last_record_ns;        /* latest time any record carries */
    size_t n_in_flight;
    /* added: a fatal signal (SIGTERM, SIGINT) the preload recorded on a
     * progress record, and when: the calls in flight end there, exactly;
     * 0 when none (an in-flight time is then at least what is shown) */
    unsigned fatal_signal;
    uint64_t fatal_signal_ns;
    int ttfk_in_flight;             /* no launch, a call in flight: ttfk_ns is how long
                                       the process had waited for its first kernel so far */
    /* added (analyzer/model_index.c): JIT before the first launch as work
     * (summed durations) and how many of those loads overlapped another;
     * ttfk_jit_ns above is their union, the wall time they took */
    uint64_t ttfk_jit_work_ns;
    size_t ttfk_jit_overlap;

    /* added (analyzer/model_index.c): memory and lookups that stay linear */
    struct jst_strtab *strs;      /* call strings, each distinct one once */
    uint64_t n_folded;            /* calls counted but not kept, see jst_run */
    uint64_t fold_first_start, fold_last_end, fold_first_launch;
    uint64_t n_oom;               /* records or fields lost for lack of memory */
    struct jst_seq_pos *seq_ix;   /* calls sorted by seq */
    size_t *stack_ix;             /* stack positions sorted by id */
    uint64_t est_sass_ns;         /* mean successful SASS load, 0 if none */
    uint64_t est_hit_ns;          /* mean successful JIT cache hit, 0 if none */
    uint64_t cache_want_bytes;    /* what the JIT stored or failed to store */
    /* analyzer/origin.c's lookups, built on first use, and how they are
     * freed (jst_model_index_free calls it; the model does not link origin.c
     * everywhere it is built) */
    struct jst_origin_ix *origin_ix;
    void (*origin_ix_free)(struct jst_process *p);
};

/* A runtime compiler call (NVRTC, nvJitLink, NVVM, nvPTXCompiler), not a
 * driver call. */
/* Why a truncated trace ends, in words: what its trace_stop note says
 * ("the disk was full", ...), or NULL when it does not say (the process
 * was killed, crashed or is still running). */
const char *jst_trace_stop_words(const struct jst_process *p);

/* A call of CUDA graph capture or instantiation (analyzer/graphs.c). */
static inline int jst_is_graph_call(unsigned call)
{
    return call == JST_CALL_cuStreamBeginCapture || call == JST_CALL_cuStreamEndCapture ||
           call == JST_CALL_cuGraphInstantiate;
}

/* A runtime compiler call (NVRTC, nvJitLink), not a driver call. */
static inline int jst_is_rtc_call(unsigned call)
{
    return call == JST_CALL_nvrtcCompileProgram || call == JST_CALL_nvJitLinkComplete ||
           call == JST_CALL_nvvmCompileProgram || call == JST_CALL_nvPTXCompilerCompile;
}

/* The model's rules, decided here once and asked by every command.
 * A JIT event: a load with verdict ptx_jit or forced_jit, or a link step fed
 * PTX (cuLinkAdd*) or LTO-IR (cuLinkComplete). Its time counts as JIT time,
 * and toward the time to first kernel when it started before the first
 * launch. */
int jst_is_jit_event(const struct jst_process *p, const struct jst_call_ev *c);
/* A module: a call the report, diff, check and baseline list one row for: a
 * load the preload gave a verdict, a JIT event, a runtime compile, or a call
 * still running when the trace ended. */
int jst_model_is_module(const struct jst_process *p, const struct jst_call_ev *c);
/* A culprit: a module that cost time it should not have (a JIT event, a
 * runtime compile, a call still running) or that failed for want of a usable
 * image (no compatible image, JIT disabled, damaged image). */
int jst_model_is_culprit(const struct jst_process *p, const struct jst_call_ev *c);
/* A partial process: its trace is truncated or damaged, or records were
 * dropped reading it for want of memory. Every command says so. A trace
 * without END whose process its parent ended (ended_by) is not partial. */
int jst_model_is_partial(const struct jst_process *p);
/* Whether c counts toward the time to first kernel: it started before the
 * first launch, or no kernel was launched. */
int jst_model_before_first_kernel(const struct jst_process *p, const struct jst_call_ev *c);

/* analyzer/queries.c: NVTX ranges and the queries they mark. */
void jst_queries_read(struct jst_process *p, struct jst_field_iter *it);
/* analyzer/model_read.c: a range record's fields into ev (model_schema.h). */
void jst_model_read_range(struct jst_process *p, struct jst_range_ev *ev,
                          struct jst_field_iter *it);
void jst_queries_derive(struct jst_process *p);
void jst_queries_free(struct jst_process *p);
/* The first query with JIT inside it, or NULL. */
const struct jst_query *jst_first_jit_query(const struct jst_process *p);

struct jst_run {
    struct jst_process *procs;
    size_t n_procs;
    size_t n_unreadable;            /* files that could not be read at all */
    /* Set before jst_model_add to keep every call. Otherwise calls no command
     * but export needs one by one (lookups, launches, unloads: every call that
     * is not a load, link step, runtime compile, cuInit or context creation)
     * are only counted (n_folded) and their times folded into fold_*, so
     * memory follows the loads, not the calls. */
    int keep_calls;
};

/* Adds one trace file, or every *.jst file in a directory (not recursive),
 * to run. Returns 0 on success, 1 when some file was partial (truncated or
 * damaged but readable), -1 when a path is unreadable (message in err). */
int jst_model_add(struct jst_run *run, const char *path, char *err, size_t errlen);
void jst_model_derive(struct jst_process *p);
/* "PTX ISA 9.1 (CUDA 13.1 toolkit); this driver (580, CUDA 13.0) supports up
 * to 9.0 (...)": the cause of a ptx_too_new load. release may be NULL. */
void jst_ptx_too_new_cause(char *buf, size_t n, unsigned isa, unsigned driver_cuda,
                           const char *release);
const struct jst_stack *jst_model_stack(const struct jst_process *p, uint64_t id);
void jst_model_free(struct jst_run *run);

/* analyzer/model_tree.c: the processes of a run as a tree. */
/* Finds each trace's parent in the run (same host, its pid the ppid, started
 * no later) and marks the traces without END whose parent ended them
 * (ended_by). Run again after every jst_model_add: it starts afresh. */
void jst_model_link_tree(struct jst_run *run);
/* The parent of p in the run, or NULL. */
const struct jst_process *jst_model_parent(const struct jst_run *run,
                                           const struct jst_process *p);
/* Whether anc is p's parent, its parent's parent, and so on. */
int jst_model_descends(const struct jst_run *run, const struct jst_process *p,
                       const struct jst_process *anc);
/* Whether p is a fork of its parent in the run that did not exec (a pool's
 * worker): same program, same command. It is part of its parent's run. */
int jst_model_is_fork(const struct jst_run *run, const struct jst_process *p);
/* A fork (above) that made no driver call: a pool's worker that only ran
 * compilers. The report shows it under its parent. */
int jst_model_is_pool_worker(const struct jst_run *run, const struct jst_process *p);
/* Whether p is a helper of a build or a compile (ninja, a shell, nvcc, g++
 * that a build tool ran; gcc that Triton ran, and its collect2): it made no
 * driver call, and it, or an ancestor of it below a process that made one,
 * is a compiler child there (a compile row of that process: a `build` row, a
 * row inside one, or a compiler subprocess). The report shows it under that
 * row, not as a process of its own. */
int jst_model_is_build_helper(const struct jst_run *run, const struct jst_process *p);
/* The traces ended by their parent, one line per parent ("4 workers ended
 * by their parent (pid 812)"): the line after *at into buf, 1; 0 when there
 * is none left. Start with *at = 0. */
int jst_model_ended_line(const struct jst_run *run, size_t *at, char *buf, size_t n);

#endif
