/*
 * Shared by diff, check and baseline (implementation: analyzer/check_util.c,
 * analyzer/check_json.c, analyzer/check_baseline.c): a per-process summary of
 * the modules a run loaded, matching of processes and modules across runs,
 * the baseline file, and a small JSON reader for it.
 */
#ifndef JST_ANALYZER_CHECK_UTIL_H
#define JST_ANALYZER_CHECK_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "compiles.h"
#include "hashidx.h"
#include "model.h"

/* ---- summaries: what diff and check compare ---- */

/* One module load (or PTX link step) of a process. */
struct jst_pmod {
    uint64_t hash;      /* image hash; 0 when unknown */
    const char *origin; /* library or file it came from; NULL for an in-memory image */
    const char **kernels;
    size_t n_kernels;
    unsigned verdict; /* enum jst_verdict */
    int jit;          /* it JIT-compiled (ptx_jit, forced_jit, PTX link) */
    uint64_t jit_ns;  /* duration of the JIT load (compile or cache load); 0 when !jit */
    unsigned cache;   /* enum jst_cache_outcome */
    const char *jit_from, *sass_arch;
    const struct jst_call_ev *ev; /* NULL when read from a baseline */
};

/* The compiles of one process that share a key: compiler, framework and
 * what they compiled (jst_pcgroup_key). The driver's own are modules. */
struct jst_pcgroup {
    unsigned compiler;                 /* enum jst_compiler */
    unsigned framework;                /* enum jst_framework, 0: none */
    const char *kernel;                /* the key's what: the kernel it was compiled for, */
    const char *what;                  /* else this (a file name or a module's name), or NULL */
    uint64_t count;                    /* compiles */
    uint64_t dur_ns;                   /* their durations summed */
    const char *cache;                 /* a framework's cache outcome ("miss", ...), or NULL */
    const struct jst_compile *longest; /* NULL when read from a baseline */
};

/* A query (top-level NVTX range) of a baseline process. */
struct jst_pquery {
    const char *name; /* numbered as the report names it: "query1#2" */
    uint64_t dur_ns, jit_ns;
};

/* One process of a run, or of a baseline. */
struct jst_psum {
    const char *exe;    /* basename of the executable */
    uint64_t argv_hash; /* jst_argv_hash() */
    uint64_t pid;
    int has_ttfk; /* it launched a kernel */
    uint64_t ttfk_ns, jit_ns;
    int partial;
    struct jst_pmod *mods;
    size_t n_mods;
    const struct jst_process *p; /* NULL when read from a baseline */
    struct jst_pquery *queries;  /* baseline only (a run has p->queries) */
    size_t n_queries;
    /* compiles per compiler (enum jst_compiler): summed time and count; a
     * baseline written before compiles were kept has has_cmp 0 */
    int has_cmp;
    uint64_t cmp_ns[JST_CMP_MAX_], cmp_n[JST_CMP_MAX_];
    uint64_t first_call_ns;    /* the slowest first call, 0 when none */
    uint64_t graph_ns, graphs; /* CUDA graph capture (graphs.h); 0 from a baseline */
    /* compiles of every compiler but the driver, by key, sorted by
     * jst_pcgroup_cmp; a baseline written before they were kept has
     * has_groups 0 */
    int has_groups;
    struct jst_pcgroup *groups;
    size_t n_groups;
    /* each framework cache's outcome ("hit", "miss", "disabled",
     * "unknown") and directory, as report's framework_caches; NULL when the
     * trace (or the baseline) has no record of that cache */
    const char *fw_cache[JST_FW_MAX_], *fw_path[JST_FW_MAX_];
};

/* The what of a compile's group key. What it compiled or produced, when
 * that is a name (an XLA module, an NVRTC program); when it is a path, whose
 * directory and name may be temporary (Triton's ptxas writes to a fresh
 * temporary file), the kernel whose first call it was part of, else the
 * file name. */
void jst_pcgroup_key(const struct jst_compile *c, const char **kernel, const char **what);
/* Orders groups by key: compiler, framework, kernel, what (NULL first). */
int jst_pcgroup_cmp(const struct jst_pcgroup *a, const struct jst_pcgroup *b);
/* The group of s with g's key, or NULL. */
const struct jst_pcgroup *jst_pcgroup_find(const struct jst_psum *s, const struct jst_pcgroup *g);
/* "ptxas for add_kernel", "nvcc -> ext.so", "xla jit_f": a group as check
 * names it. */
const char *jst_pcgroup_label(const struct jst_pcgroup *g, char *buf, size_t n);

/* Fills s from p (s->mods is allocated; free with jst_psum_free). 0 or -1 (memory). */
int jst_psum_from_process(const struct jst_process *p, struct jst_psum *s);
void jst_psum_free(struct jst_psum *s);

const char *jst_exe_base(const struct jst_process *p);
/* A first call as the report names it, for check, diff and export: the
 * framework's function from the program's call site, the kernel that
 * launched first aside ("gelu_0 from forward (/app/mlp.py:20) (first kernel
 * gemm)"); the kernel alone when neither is known. */
const char *jst_first_call_title(const struct jst_first_call *f, char *buf, size_t n);
/* The first calls of a process by their first kernel, to find the one that
 * holds a compile (the one whose first kernel the compile records) in
 * constant time however many there are:
 *
 *     struct jst_fc_index ix;
 *     jst_fc_index_init(&ix, p);
 *     const struct jst_first_call *f = jst_fc_index_of(&ix, &p->compiles[i]);
 *     jst_fc_index_free(&ix);
 *
 * Out of memory, lookups fall back to a scan. */
struct jst_fc_index {
    const struct jst_process *p;
    struct jst_hidx ix;
    int scan; /* the index could not be built */
};
void jst_fc_index_init(struct jst_fc_index *x, const struct jst_process *p);
const struct jst_first_call *jst_fc_index_of(const struct jst_fc_index *x,
                                             const struct jst_compile *c);
void jst_fc_index_free(struct jst_fc_index *x);
/* FNV-1a over argv[1..] (argv[0] often differs only by path). */
uint64_t jst_argv_hash(const struct jst_process *p);
/* JIT time of one load: the call's duration when it JIT-compiled (the sum
 * over a process is jst_process.jit_ns), else 0. */
uint64_t jst_load_jit_ns(const struct jst_process *p, const struct jst_call_ev *c);

/* Pairs processes: same exe and argv hash first, in order of appearance; then
 * the same exe alone. a_to_b[i] is the index into b, or -1. */
void jst_match_procs(const struct jst_psum *a, size_t na, const struct jst_psum *b, size_t nb,
                     long *a_to_b);
/* Pairs modules: same image hash first, in order; then the same origin and
 * first kernel (a rebuilt library changes the hash but not where it lives);
 * then the same origin alone (rebuilt with other targets: a PTX-only load
 * and a SASS load of the same library, whose kernels differ or were not
 * recorded); last, the same set of kernels, in any order (an image in
 * memory rebuilt: its hash changed and it has no origin). */
void jst_match_mods(const struct jst_pmod *a, size_t na, const struct jst_pmod *b, size_t nb,
                    long *a_to_b);

/* Cache outcome ranking for "got worse": hit 0 < miss_stored 1 < unknown 2 <
 * miss_not_stored 3; none (no JIT) -1. */
int jst_cache_rank(unsigned cache);

/* ---- loading runs ---- */

/* Adds every path to run. Prints one line per unreadable path on stderr and
 * returns JST_EXIT_USAGE then (or when no trace was found); prints a warning
 * for each partial trace ("checked what it holds") and returns JST_EXIT_OK. */
int jst_run_load(const char *cmd, char **paths, int n, struct jst_run *run, int quiet_partial);
/* report's lenient load: an unreadable path does not stop it; its one-line
 * reason ("PATH: ...") is kept in errs for the report to name. Exit 2 only
 * when no trace at all could be read. Partial traces are warned about in the
 * words jst_run_load uses. Free errs with jst_load_errs_free. */
struct jst_load_errs {
    char **msg;
    size_t n;
};
int jst_run_load_lenient(const char *cmd, char **paths, int n, struct jst_run *run,
                         struct jst_load_errs *errs);
/* What `baseline` and `export` do once their options are read: load paths
 * as one run (keep_calls: every call, as jst_run.keep_calls) and write it
 * with fn(f, run, ctx) to out, a file or NULL/"-" for standard output, as
 * jst_outfile_write does (note ends its "wrote" line). Returns the exit
 * status. */
int jst_run_write(const char *cmd, char **paths, int n, int keep_calls, const char *out,
                  int (*fn)(FILE *f, const struct jst_run *run, void *ctx), void *ctx,
                  const char *note);
void jst_load_errs_free(struct jst_load_errs *errs);
/* "truncated", or the damage message, or NULL when the trace is whole. */
const char *jst_partial_why(const struct jst_process *p);
/* The same in words for a warning, with the count of records dropped when
 * memory ran out: buf, or NULL when the trace is whole. */
const char *jst_partial_str(const struct jst_process *p, char *buf, size_t n);

/* ---- formatting ---- */

/* "11000.0 ms" (one decimal; three below 1 ms). */
const char *jst_fmt_ms(uint64_t ns, char *buf, size_t n);
/* What a load is called in every command's output: its library or file;
 * "kernels.ptx (via cuModuleLoadData)" for an image in memory whose file was
 * found (jst_call_ev.read_from); "kern75.ptx (via cuLinkAddData_v2)" for a
 * named link input; "nvrtcCompile
 * Program for k.cu" for a runtime compile; "(image in memory 0x<hash>, via
 * API)" for an image in memory. */
const char *jst_load_label(const struct jst_call_ev *c, char *buf, size_t n);
/* The module's jst_load_label, with its first kernel: "/opt/lib/libk.so
 * [add(float*, float*), +2 more]"; a baseline's in-memory image is "(image in
 * memory 0x<hash>)". */
const char *jst_pmod_label(const struct jst_pmod *m, char *buf, size_t n);
/* Symbolized call site of a call: "main (prog.c:42) in /usr/bin/prog", or
 * "unknown (why)". sym may be NULL (the site is then unknown). */
struct jst_symbolizer;
const char *jst_call_site_str(struct jst_symbolizer *sym, const struct jst_call_ev *c, char *buf,
                              size_t n);
/* The call-site frame itself (file and line when DWARF has them): 0, or -1
 * when there is none. */
struct jst_frame;
int jst_call_site_frame(struct jst_symbolizer *sym, const struct jst_call_ev *c,
                        struct jst_frame *out);

/* ---- baselines (analyzer/check_baseline.c) ---- */

#define JST_BASELINE_FORMAT "jitstall-baseline"
#define JST_BASELINE_VERSION 1

struct json_t;
struct jst_baseline {
    struct json_t *root; /* the parsed document (jansson); strings point into it */
    struct jst_psum *procs;
    size_t n_procs;
    unsigned version;
};

/* Writes run as a baseline document (docs/jitstall-baseline.1.md). 0 or -1. */
int jst_baseline_write(FILE *f, const struct jst_run *run, char **paths, int n_paths);
/* Reads and validates a baseline. 0, or -1 with a one-line reason in err. */
int jst_baseline_read(const char *path, struct jst_baseline *b, char *err, size_t errlen);
void jst_baseline_free(struct jst_baseline *b);

#endif
