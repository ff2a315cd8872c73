/*
 * What `jitstall report` shows, computed once from a run (report_view.c) and
 * then written as text (report_text.c), Markdown (report_md.c) or JSON
 * (report_json.c), so the three formats always agree.
 */
#ifndef JST_ANALYZER_REPORT_VIEW_H
#define JST_ANALYZER_REPORT_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "fixes.h"
#include "model.h"
#include "races.h"

/* Frames shown per chain when the caller does not choose (--stack-depth). */
#define RV_STACK_DEPTH_DEFAULT 16

/* One frame of a culprit's call chain: a native frame, or (once the preload
 * records them) a Python frame, with object "python". */
struct rv_frame {
    char *func;      /* demangled; NULL when unknown */
    char *file;      /* source file; NULL without debug info */
    unsigned line;   /* 0 when unknown */
    char *object;    /* ELF object path, "python", or NULL (unknown module) */
    uint64_t offset; /* ip - load bias; 0 for a Python frame */
    char *text;      /* as the text report shows it: "func (file:line) in object" */
};

/* The chain of callers of a culprit: its call site first, outward to main. */
struct rv_chain {
    struct rv_frame *stack;
    size_t n_stack;
    size_t stack_more; /* frames of the chain beyond the depth limit */
};

/* One load (or JIT link step) of one process. */
struct rv_module {
    const struct jst_process *p;
    const struct jst_call_ev *c;
    int culprit;       /* JIT compiled, or failed: worth a line in Culprits */
    uint64_t lost_ns;  /* JIT events: their duration; others 0 */
    uint64_t saves_ns; /* what its own fix saves */
    char *call_site;   /* symbolized frame, or NULL when no stack (shared) */
    char *fix;         /* one-line fix, or NULL (shared) */
    char **kernels;    /* demangled, n = c->n_kernels (strings shared) */
    size_t group;      /* culprits: index into rv_report.groups */
    struct rv_chain chain;
};

/* A compile that is no driver or library call (a compiler subprocess, a
 * framework's own compile such as XLA's): a culprit of its own, ranked with
 * the modules (jst_compile_is_culprit). */
struct rv_compile {
    const struct jst_process *p;
    const struct jst_compile *k;
    char *call_site;   /* symbolized frame, or NULL when no stack (shared) */
    char *fix;         /* jst_fix_for_compile's text, or NULL (shared) */
    uint64_t saves_ns; /* its share of what that fix saves */
    uint64_t lost_ns;  /* its wall time less what the group's compiles of its process
                          that started before it already covered: parallel ones
                          count once, and a group's members sum to its union */
    size_t group;      /* index into rv_report.groups */
    struct rv_chain chain;
};

/* Cache outcomes counted per group (enum jst_cache_outcome; a newer one
 * counts as unknown). */
#define RV_CACHE_OUTCOMES 5

/* Culprits that are the same load in several processes (or repeated in one):
 * the same image (content hash and size), origin, verdict, call site and fix;
 * its cache outcomes are counted. Text and Markdown show one entry per group;
 * JSON keeps every module. */
struct rv_group {
    const struct rv_module *m;         /* the member that lost most; NULL in a group of compiles */
    const struct rv_compile *k;        /* the same when the members are compiles, else NULL */
    size_t n;                          /* members */
    uint64_t lost_ns;                  /* summed */
    size_t procs_at, n_procs;          /* its processes: a slice of rv_report.group_procs */
    size_t cache_n[RV_CACHE_OUTCOMES]; /* modules: members by cache outcome */
    uint64_t cache_ns[RV_CACHE_OUTCOMES]; /* ... and their time lost */
};

/* A cache directory as seen by the processes that used it. */
struct rv_cache {
    const char *path;
    const struct jst_process *first, *last; /* start state from first, end from last */
    size_t n_procs;
};

struct rv_proc {
    const struct jst_process *p;
    uint64_t projected_ttfk_ns; /* 0 when no launch */
    size_t n_jit_loads;
    char **missing; /* what this trace lacks, one line each */
    size_t n_missing;
    size_t mods_at, n_mods;   /* its modules, ranked: a slice of rv_report.proc_mods */
    size_t comps_at, n_comps; /* its culprit compiles: a slice of rv_report.proc_comps */
};

struct rv_error {
    char *msg; /* "PATH: reason" */
};

struct rv_report {
    const struct jst_run *run;
    struct rv_proc *procs; /* in run order (files sorted by name) */
    size_t n_procs;
    struct rv_module *mods; /* all processes; culprits first, by lost_ns */
    size_t n_mods;
    struct rv_compile *comps; /* culprit compiles of all processes, by dur_ns */
    size_t n_comps;
    struct rv_group *groups; /* modules and compiles, ranked by lost_ns, largest first */
    size_t n_groups;
    size_t *group_procs;     /* group << 32 | index in run->procs, sorted */
    size_t *proc_mods;       /* indexes into mods, by process, ranked within */
    size_t *proc_comps;      /* indexes into comps, by process, ranked within */
    struct jst_strtab *strs; /* fix, call_site and kernels texts of mods */
    struct rv_cache *caches;
    size_t n_caches;
    struct jst_fixes fixes;
    struct jst_races races;  /* images compiled at once by several processes (also in fixes) */
    struct rv_error *errors; /* inputs that could not be read */
    size_t n_errors;
    int partial; /* some trace truncated or damaged */
    /* totals over processes */
    uint64_t ttfk_max_ns, jit_ns, jit_compile_ns, jit_cache_load_ns;
    uint64_t projected_ttfk_max_ns;
    /* report --per-process: every process's detail, however many there are
     * (by default more than FL_DETAIL_MAX fold into the fleet view) */
    int per_process;
    /* report --k8s, --budget SECONDS: the start-up budget (analyzer/budget.h) */
    int k8s, has_budget;
    double budget_s;
};

/* Builds the view (symbolizing call sites). errors: messages of unreadable
 * inputs, copied. Returns 0, or -1 when out of memory. */
int rv_build(struct rv_report *r, const struct jst_run *run, char **errors, size_t n_errors);
/* The same, keeping at most depth frames of each chain (0: all of them). */
int rv_build_depth(struct rv_report *r, const struct jst_run *run, char **errors, size_t n_errors,
                   size_t depth);
void rv_free(struct rv_report *r);

/* Fills a chain from n symbolized frames, innermost first (report_stack.c):
 * from frame `first` (the call site) outward to main, without the frames
 * inside CUDA or jitstall, at most depth frames (0: all); first < 0: an empty
 * chain. Returns 0, or -1 when out of memory. */
struct jst_frame;
int rv_stack_build(struct rv_chain *c, const struct jst_frame *f, size_t n, int first,
                   size_t depth);
int rv_stack_copy(struct rv_chain *c, const struct rv_chain *src);
void rv_stack_free(struct rv_chain *c);

/* Writers; each returns 0, or -1 on a write error. */
int rv_write_text(const struct rv_report *r, FILE *f, int colour);
int rv_write_markdown(const struct rv_report *r, FILE *f);
int rv_write_json(const struct rv_report *r, FILE *f);

/* Shared formatting (report_words.c). */
const char *rv_dur(uint64_t ns, char *buf, size_t n);  /* "11.80 s", "2.4 ms" */
const char *rv_bytes(uint64_t b, char *buf, size_t n); /* "1.2 MiB" */
const char *rv_exe_name(const struct jst_process *p);  /* exe, or argv[0], or "?" */
/* "sm_90" for process p's first device, or NULL. */
const char *rv_gpu_arch(const struct jst_process *p, char *buf, size_t n);
/* Kernels abbreviated: "a, b, c and 5 more" (max names shown). */
const char *rv_kernels_short(const struct rv_module *m, size_t max, char *buf, size_t n);
/* A group's cache outcomes: its leader's (rv_cache_str) when all members
 * had the same, else "miss_stored in 34 loads (8.50 s), hit in 266 (266.0
 * ms)", most loads first. */
const char *rv_group_cache_str(const struct rv_group *g, char *buf, size_t n);
/* "miss_not_stored (read_only)", "hit", "-" for none. */
const char *rv_cache_str(const struct jst_call_ev *c, char *buf, size_t n);
/* For a call in flight (jst_call_ev.in_flight) of process p: "still
 * compiling when SIGTERM ended the process, after 2.00 s" when the trace
 * recorded the signal, else "still compiling when the trace ends, after at
 * least 11.40 s"; "" for a call that returned. */
const char *rv_in_flight_str(const struct jst_process *p, const struct jst_call_ev *c, char *buf,
                             size_t n);
/* "SIGTERM", "SIGINT", ..., or "a signal". */
const char *rv_signal_name(unsigned sig);
/* "ptx_jit: PTX compute_75 only; GPU is sm_90" */
const char *rv_verdict_str(const struct rv_module *m, char *buf, size_t n);
/* Appends to buf (of size n, holding a string) without overflowing. */
void rv_cat(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The library or file a module came from, or "(image in memory, via API)". */
const char *rv_origin(const struct rv_module *m, char *buf, size_t n);
/* "exists, writable, 1.3 MiB in 1 entry; max 1.0 GiB" or "does not exist (can be created); ..." */
const char *rv_cache_state_str(const struct jst_cache_state *s, char *buf, size_t n);
/* "pid 5001" or "pids 5001, 5002, 5003" (the first few, then "and N more")
 * of the members of group g. */
const char *rv_group_pids(const struct rv_report *r, size_t g, char *buf, size_t n);
/* The chain after the call site, compact: "load_catalog (catalog.c:9) <- main
 * (main.c:12)" (file names without directories, no objects), with "<- ... N
 * more" when cut. "" when the chain is the call site alone. */
const char *rv_callers_compact(const struct rv_chain *c, char *buf, size_t n);
/* What a culprit compile is: "ptxas (subprocess) -> /tmp/k.cubin", "XLA
 * compile jit_f". */
const char *rv_compile_origin(const struct jst_compile *k, char *buf, size_t n);
/* Its facts: "target sm_90a, framework triton, kernel add, pid 555, exit 0". */
const char *rv_compile_facts(const struct jst_compile *k, char *buf, size_t n);
/* What stands for its call site when it has none. */
const char *rv_compile_no_site(const struct jst_compile *k);
/* The answer a report opens with, for one process: "first kernel after
 * 252.5 ms: 96% was the driver compiling kernels.ptx (via cuModuleLoadData)
 * (PTX compute_75 only; GPU is sm_90); fix: ...", from its largest culprit
 * and that culprit's fix. */
const char *rv_answer_proc(const struct rv_report *r, const struct rv_proc *rp, char *buf,
                           size_t n);
/* What culprit group g did, in the answer's words ("the driver compiling
 * kernels.ptx (via cuModuleLoadData) (PTX compute_75 only; GPU is sm_90)"). */
const char *rv_group_words(const struct rv_report *r, size_t g, char *buf, size_t n);
/* A fix without its "(GPU is ...)" part, for the answer line. */
void rv_short_fix(const char *fix, char *buf, size_t n);
/* Percentage part/whole, 0 when whole is 0. */
double rv_pct(uint64_t part, uint64_t whole);

#endif
