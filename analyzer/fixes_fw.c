/*
 * The fixes of frameworks that compile on a program's first call (Triton,
 * Inductor, XLA, Numba, CuPy): each keeps a cache of its own, and the fix is
 * to keep that cache where the next run finds it. One table row per
 * framework: the cache, the setting that moves it, where it lives by default,
 * and how the cache was found at start (the FW_CACHE record: whether it
 * existed, and whether it lies on storage that does not outlive the container).
 *
 * That fix is only for a cache that missed. A framework's cache outcome is
 * decided per process from the trace: its compiles (a framework that compiled
 * missed), else how its cache was found at start (entries and no compile: it
 * hit). A cache that hit gets no "keep the cache" fix; its first call's time
 * is what is left, named by phase (samplefn.h), and its fix is the
 * framework's ahead-of-time path where it has one (the row's remedy), else
 * that time is the framework's cost in each process.
 *
 * A compiler subprocess that no framework owns (a library that runs nvcc or
 * ptxas on first use) has no cache to name: its fix is to run that compiler
 * when the program is built, one fix per compiler.
 *
 * A build tool (ninja under torch.utils.cpp_extension, make, a library's
 * build script) builds into a directory: when that lies under the torch
 * extensions' directory (TORCH_EXTENSIONS_DIR, as the FW_CACHE record
 * "torch_extensions" found it, else any ".../torch_extensions/...") or a
 * library's own cache (a directory named "cache" or "~/.cache/LIB"), the fix
 * is to keep that directory; else to build when the package is installed.
 * The compilers under a build have the build's fix, not one of their own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "fixes.h"
#include "graphs.h"
#include "miss.h"
#include "samplefn.h"
#include "sfmt.h"

struct fw_fix {
    unsigned framework, kind;
    const char *kind_name;
    const char *cache_name; /* as FW_CACHE records name the framework */
    const char *text;       /* the fix; "%s" is replaced by how the cache was found */
    const char *label;      /* "Triton's kernel cache" */
    const char *remedy;     /* its ahead-of-time path, or NULL */
};

static const struct fw_fix rows[] = {
    {JST_FW_TRITON, JST_FIX_TRITON_CACHE, "triton_cache", "triton",
     "keep Triton's kernel cache: set TRITON_CACHE_DIR to a directory on a persistent volume "
     "(default ~/.triton/cache)%s",
     "Triton's kernel cache",
     "compile the kernel ahead of time with Triton's AOT compiler (python -m "
     "triton.tools.compile) and load the cubin it writes"},
    {JST_FW_INDUCTOR, JST_FIX_INDUCTOR_CACHE, "inductor_cache", "inductor",
     "keep Inductor's cache: set TORCHINDUCTOR_CACHE_DIR to a directory on a persistent volume "
     "(default /tmp/torchinductor_$USER, lost with /tmp), or ship the compiled artifacts with "
     "torch.compiler.save_cache_artifacts() and load_cache_artifacts()%s",
     "Inductor's cache",
     "compile the model ahead of time: torch.export, then AOTInductor "
     "(torch._inductor.aoti_compile_and_package), and load the package with "
     "torch._inductor.aoti_load_package"},
    {JST_FW_XLA, JST_FIX_JAX_CACHE, "jax_cache", "jax",
     "turn on JAX's persistent compilation cache (off by default): "
     "jax.config.update(\"jax_compilation_cache_dir\", DIR) or JAX_COMPILATION_CACHE_DIR=DIR, "
     "with DIR on a persistent volume%s",
     "JAX's compilation cache",
     "serialize the function ahead of time with jax.export and deserialize it at start"},
    {JST_FW_NUMBA, JST_FIX_NUMBA_CACHE, "numba_cache", "numba",
     "cache Numba's compiled kernels: @cuda.jit(cache=True) (NUMBA_CACHE_DIR sets where, on a "
     "persistent volume)%s",
     "Numba's kernel cache", NULL},
    {JST_FW_CUPY, JST_FIX_CUPY_CACHE, "cupy_cache", "cupy",
     "keep CuPy's kernel cache: set CUPY_CACHE_DIR to a directory on a persistent volume "
     "(default ~/.cupy/kernel_cache)%s",
     "CuPy's kernel cache", NULL},
};

#define N_ROWS (sizeof rows / sizeof rows[0])

/* A compiler child no framework ran: no cache, no text of its own here
 * (ahead_text words it). */
static const struct fw_fix ahead_row = {
    0, JST_FIX_COMPILE_AHEAD, "compile_ahead", NULL, NULL, NULL, NULL};
/* A cache that hit: the framework's ahead-of-time path, or its cost. */
static const struct fw_fix aot_row = {0,   JST_FIX_FRAMEWORK_AOT, "framework_aot", NULL, NULL, NULL,
                                      NULL};
static const struct fw_fix cost_row = {
    0, JST_FIX_FRAMEWORK_COST, "framework_cost", NULL, NULL, NULL, NULL};
/* A build tool's run (build_text words it). */
static const struct fw_fix build_row = {
    0, JST_FIX_EXTENSION_CACHE, "extension_cache", NULL, NULL, NULL, NULL};

const char *jst_fix_fw_kind_name(unsigned kind)
{
    for (size_t i = 0; i < N_ROWS; i++)
        if (rows[i].kind == kind)
            return rows[i].kind_name;
    return kind == ahead_row.kind   ? ahead_row.kind_name
           : kind == aot_row.kind   ? aot_row.kind_name
           : kind == cost_row.kind  ? cost_row.kind_name
           : kind == build_row.kind ? build_row.kind_name
                                    : NULL;
}

static const struct jst_fw_cache *cache_of(const struct jst_process *p, const char *name)
{
    for (size_t i = 0; i < p->n_fw_caches; i++)
        if (p->fw_caches[i].framework && !strcmp(p->fw_caches[i].framework, name))
            return &p->fw_caches[i];
    return NULL;
}

/* "; at start /root/.triton/cache did not exist" and the like, or "". */
static void state_words(const struct jst_fw_cache *s, char *buf, size_t n)
{
    buf[0] = 0;
    if (!s)
        return;
    jst_sfmt(buf, n, "; at start %s%s%s", s->path ? s->path : "the cache",
             s->from_env && s->env_name ? " (from " : "",
             s->from_env && s->env_name ? s->env_name : "");
    if (s->from_env && s->env_name)
        jst_sfmt(buf + strlen(buf), n - strlen(buf), ")");
    if (s->not_dir)
        jst_sfmt(buf + strlen(buf), n - strlen(buf), " was not a directory and could not be made");
    else if (s->has_exists && !s->exists)
        jst_sfmt(buf + strlen(buf), n - strlen(buf), " did not exist");
    else if (s->has_exists && s->has_entries && !s->entries) /* made, not filled, by the program */
        jst_sfmt(buf + strlen(buf), n - strlen(buf), " existed but was empty%s",
                 s->writable ? "" : " and not writable");
    else if (s->has_exists && s->has_entries)
        jst_sfmt(buf + strlen(buf), n - strlen(buf), " existed with %s%llu entr%s%s",
                 s->entries_more ? "more than " : "", (unsigned long long)s->entries,
                 s->entries == 1 && !s->entries_more ? "y" : "ies",
                 s->writable ? "" : " but was not writable");
    else if (s->has_exists)
        jst_sfmt(buf + strlen(buf), n - strlen(buf), " existed%s",
                 s->writable ? "" : " but was not writable");
    else
        jst_sfmt(buf + strlen(buf), n - strlen(buf), " was not checked");
    if (s->ephemeral)
        jst_sfmt(buf + strlen(buf), n - strlen(buf),
                 ", and it lies on %s, which does not outlive the container",
                 s->fs_type && !strcmp(s->fs_type, "overlay") ? "an overlay's upper layer"
                 : s->fs_type                                 ? s->fs_type
                                                              : "temporary storage");
}

/* The modules JAX compiled in p (XLA compiles), each once with its longest
 * compile: at most cap. */
static size_t jax_modules(const struct jst_process *p, struct jst_jax_compile *c, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_compiles; i++) {
        const struct jst_compile *k = &p->compiles[i];
        if (k->compiler != JST_CMP_XLA || !k->what || k->in_flight)
            continue;
        size_t j = 0;
        while (j < n && strcmp(c[j].module, k->what))
            j++;
        if (j == n) {
            if (n == cap)
                continue;
            c[n].module = k->what;
            c[n++].dur_ns = 0;
        }
        if (k->dur_ns > c[j].dur_ns)
            c[j].dur_ns = k->dur_ns;
    }
    return n;
}

int jst_miss_window(const struct jst_process *p, uint64_t *from_ns, uint64_t *to_ns)
{
    if (!p->realtime_ns || !p->mono_ns)
        return -1;
    uint64_t start = p->proc_start_ns ? p->proc_start_ns : p->mono_ns;
    *from_ns = p->realtime_ns - (p->mono_ns > start ? p->mono_ns - start : 0);
    *to_ns = p->realtime_ns + (p->end_ns > p->mono_ns ? p->end_ns - p->mono_ns : 0) + 60000000000u;
    return 0;
}

int jst_jax_miss_of(const struct jst_process *p, const char *cache, char *buf, size_t n)
{
    uint64_t from, to;
    struct jst_jax_compile c[256];
    if (jst_miss_window(p, &from, &to) < 0) {
        if (n)
            buf[0] = 0;
        return 0;
    }
    return jst_jax_miss_words(cache, from, to, c, jax_modules(p, c, 256), buf, n);
}

/* "; it missed: ..." when the framework (Triton, JAX) compiled although its
 * cache was there, and the cache, still there, tells why (analyzer/miss.h);
 * "" otherwise. Looked up once per process, framework and cache. */
static void fw_missed(const struct jst_process *p, unsigned fw, const char *cache, char *buf,
                      size_t n)
{
    static const struct jst_process *memo_p;
    static uint64_t memo_rt, memo_end;
    static unsigned memo_fw;
    static char memo_path[4096], memo[640];
    uint64_t from, to;
    buf[0] = 0;
    if (!cache || n < 3 || jst_miss_window(p, &from, &to) < 0)
        return;
    if (memo_p != p || memo_fw != fw || memo_rt != p->realtime_ns || memo_end != p->end_ns ||
        strcmp(memo_path, cache)) {
        memo_p = p;
        memo_fw = fw;
        memo_rt = p->realtime_ns;
        memo_end = p->end_ns;
        jst_sfmt(memo_path, sizeof memo_path, "%s", cache);
        if (fw == JST_FW_TRITON)
            jst_triton_miss_words(cache, from, to, memo, sizeof memo);
        else
            jst_jax_miss_of(p, cache, memo, sizeof memo);
    }
    if (memo[0])
        jst_sfmt(buf, n, "; %s", memo);
}

/* How many of p's compiles framework fw ran (its fix is given when any). */
static size_t fw_compiles(const struct jst_process *p, unsigned fw)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_compiles; i++)
        n += p->compiles[i].framework == fw && jst_compile_compiled(&p->compiles[i]);
    return n;
}

/* fw_compiles, counted once per process (a report asks for each compile) */
static size_t fw_compiles_memo(const struct jst_process *p, unsigned fw)
{
    static const struct jst_process *memo_p;
    static const struct jst_compile *memo_c;
    static size_t memo_n, memo[JST_FW_MAX_];
    static uint64_t memo_pid, memo_end;
    if (p != memo_p || p->compiles != memo_c || p->n_compiles != memo_n || p->pid != memo_pid ||
        p->end_ns != memo_end) {
        memo_p = p, memo_c = p->compiles, memo_n = p->n_compiles;
        memo_pid = p->pid, memo_end = p->end_ns;
        for (unsigned f = 0; f < JST_FW_MAX_; f++)
            memo[f] = 0;
        for (size_t i = 0; i < p->n_compiles; i++)
            if (p->compiles[i].framework < JST_FW_MAX_ && jst_compile_compiled(&p->compiles[i]))
                memo[p->compiles[i].framework]++;
    }
    return fw < JST_FW_MAX_ ? memo[fw] : 0;
}

static int of_framework(const struct jst_compile *k, const void *fw)
{
    return k->framework == *(const unsigned *)fw && jst_compile_compiled(k);
}

/* What a warm cache saves: the framework's first calls less their module
 * loads and driver start-up (which a warm cache still pays); without a first
 * call, its compiles' wall time (those that ran at once count once). */
static uint64_t saves(const struct jst_process *p, unsigned fw, size_t *n_compiles)
{
    uint64_t s = 0;
    *n_compiles = fw_compiles(p, fw);
    int any_fc = 0;
    for (size_t i = 0; i < p->n_first_calls; i++) {
        const struct jst_first_call *f = &p->first_calls[i];
        if (f->top_framework != fw)
            continue;
        uint64_t keep = f->blame[JST_CAUSE_MODULE_LOAD] + f->blame[JST_CAUSE_DRIVER_INIT];
        s += f->dur_ns > keep ? f->dur_ns - keep : 0;
        any_fc = 1;
    }
    if (!any_fc && *n_compiles)
        s = jst_compiles_wall(p, of_framework, &fw, 0, UINT64_MAX);
    return s;
}

static int add(struct jst_fixes *out, const struct fw_fix *r, const char *text, const char *target,
               uint64_t saves_ns, size_t n)
{
    return jst_fixes_merge(out, r->kind, text, target, saves_ns, n);
}

/* The fix text of framework row r in process p (how its cache was found
 * there); st: that cache's record, or NULL. */
static const char *fw_text(const struct jst_process *p, const struct fw_fix *r, char *buf, size_t n,
                           const struct jst_fw_cache **st)
{
    char words[1024];
    *st = cache_of(p, r->cache_name);
    state_words(*st, words, sizeof words);
    /* Triton: a cache that held entries and missed; JAX: also a cache whose
     * compiles were not kept (its thresholds) */
    if (r->framework == JST_FW_TRITON && *st && (*st)->has_entries && (*st)->entries)
        fw_missed(p, JST_FW_TRITON, (*st)->path, words + strlen(words),
                  sizeof words - strlen(words));
    else if (r->framework == JST_FW_XLA && *st && (*st)->path && (*st)->exists)
        fw_missed(p, JST_FW_XLA, (*st)->path, words + strlen(words), sizeof words - strlen(words));
    /* a cache that held entries, and the framework's own events said it
     * missed: its word beside what the cache's files tell */
    const char *own = jst_fw_events_outcome(p, r->framework);
    if ((r->framework == JST_FW_TRITON || r->framework == JST_FW_XLA) && own &&
        !strcmp(own, "miss") && *st && (*st)->has_entries && (*st)->entries) {
        size_t l = strlen(words);
        jst_sfmt(words + l, sizeof words - l, "; %s reported the miss itself (%s)",
                 r->framework == JST_FW_TRITON ? "Triton" : "JAX",
                 r->framework == JST_FW_TRITON ? "its compilation listener: no cache hit"
                                               : "its compilation cache's miss event");
    }
    /* A cache that held entries and still missed, where jitstall cannot
     * read why (CuPy, Inductor, Numba): keeping it is no fix; say so */
    const char *named = NULL; /* what it compiled: its first call's function or kernel */
    for (size_t i = 0; i < p->n_first_calls && !named; i++)
        if (p->first_calls[i].top_framework == r->framework)
            named = p->first_calls[i].function ? p->first_calls[i].function
                                               : p->first_calls[i].kernel;
    /* the framework's own word for it (its events said it missed) */
    const char *said = jst_fw_events_outcome(p, r->framework);
    char why[256];
    if (said && !strcmp(said, "miss"))
        jst_sfmt(why, sizeof why, "%s reported the miss itself, through %s: its key changed since "
                                  "the entries were written",
                 jst_framework_name(r->framework),
                 r->framework == JST_FW_INDUCTOR ? "its FX graph cache's miss counter"
                                                 : "its own compile events");
    else
        jst_sfmt(why, sizeof why, "its key changed since the entries were written, or %s does not "
                                  "keep it",
                 jst_framework_name(r->framework));
    if (r->framework != JST_FW_TRITON && r->framework != JST_FW_XLA && *st && (*st)->path &&
        (*st)->has_entries && (*st)->entries)
        jst_sfmt(buf, n,
                 "%s compiled%s%s although %s held entries (%s): that compile is not in the "
                 "cache (%s), so keeping the cache does not avoid it; %s",
                 jst_framework_name(r->framework), named ? " " : "", named ? named : "", r->label,
                 words[0] == ';' ? words + 2 : words, why,
                 r->remedy ? r->remedy
                           : "build those kernels ahead of time, or count it as a per-process "
                             "cost of the framework");
    /* JAX's cache is off unless set: when it was on, keeping it is the fix */
    else if (r->framework == JST_FW_XLA && *st && (*st)->path)
        jst_sfmt(buf, n,
                 "keep JAX's persistent compilation cache: JAX_COMPILATION_CACHE_DIR (or "
                 "jax_compilation_cache_dir) on a persistent volume%s",
                 words);
    else
        jst_sfmt(buf, n, r->text, words);
    return buf;
}

static const struct fw_fix *row_of(unsigned framework)
{
    for (size_t r = 0; framework && r < N_ROWS; r++)
        if (rows[r].framework == framework)
            return &rows[r];
    return NULL;
}

/* A compiler subprocess whose output a build could have made: it finished
 * well, no framework (whose cache fix covers it) ran it, and no other
 * compile holds it (cicc under nvcc: the enclosing compile's fix is its). */
static int ahead_of_time(const struct jst_compile *k)
{
    return !k->call && jst_compiler_cause(k->compiler) == JST_CAUSE_SUBPROCESS &&
           !row_of(k->framework) && !k->in_flight && !(k->has_exit && k->exit_status != 0) &&
           !k->in_build && !k->has_parent;
}

/* A build tool's own row that has a fix: the outermost build, finished well. */
static int build_fixable(const struct jst_compile *k)
{
    return k->compiler == JST_CMP_BUILD && !k->in_build && !k->in_flight &&
           !(k->has_exit && k->exit_status != 0);
}

/* The cache directory that holds build directory d, into out: the torch
 * extensions' (*torch = 1), a library's own, or "" (none). */
static void build_cache(const struct jst_process *p, const char *d, char *out, size_t n, int *torch)
{
    const struct jst_fw_cache *st = cache_of(p, "torch_extensions");
    out[0] = 0;
    *torch = 0;
    if (!d)
        return;
    if (st && st->path && jst_path_under(d, st->path)) {
        jst_sfmt(out, n, "%s", st->path);
        *torch = 1;
        return;
    }
    const char *t = strstr(d, "/torch_extensions");
    if (t && (t[17] == '/' || !t[17])) {
        jst_sfmt(out, n, "%.*s", (int)(t + 17 - d), d);
        *torch = 1;
        return;
    }
    /* ".../.cache/LIB/..." -> ".../.cache/LIB"; ".../cache/..." -> ".../cache" */
    for (const char *c = d; (c = strstr(c, "/")) != NULL; c++) {
        const char *w = c + 1;
        size_t l = strcspn(w, "/");
        if (l == 6 && !strncmp(w, ".cache", 6) && w[6] == '/' && w[7]) {
            size_t lib = strcspn(w + 7, "/");
            jst_sfmt(out, n, "%.*s", (int)(w + 7 + lib - d), d);
            return;
        }
        if (l == 5 && !strncmp(w, "cache", 5)) {
            jst_sfmt(out, n, "%.*s", (int)(w + 5 - d), d);
            return;
        }
    }
}

static const char *build_text(const struct jst_process *p, const struct jst_compile *k, char *buf,
                              size_t n, char *target, size_t tn)
{
    char cache[512];
    int torch;
    const char *tool = k->what ? strrchr(k->what, '/') : NULL;
    tool = tool ? tool + 1 : k->what ? k->what : "a build tool";
    build_cache(p, k->dir, cache, sizeof cache, &torch);
    if (torch)
        jst_sfmt(buf, n,
                 "keep the torch extensions' build directory: set TORCH_EXTENSIONS_DIR to a "
                 "directory on a persistent volume (this run built in %s, under %s), or build the "
                 "extension ahead of time (a setuptools CUDAExtension installed with the package) "
                 "instead of at its first use",
                 k->dir, cache);
    else if (cache[0])
        jst_sfmt(buf, n,
                 "keep %s, the library's own build cache, on a persistent volume (this run built "
                 "in %s with %s): later runs then load the output instead of building it",
                 cache, k->dir, tool);
    else
        jst_sfmt(buf, n,
                 "build it when the package is installed: the program runs %s%s%s while it runs "
                 "and waits for it; run that build at install time and load its output",
                 tool, k->dir ? " in " : "", k->dir ? k->dir : "");
    jst_sfmt(target, tn, "%s", cache[0] ? cache : k->dir ? k->dir : tool);
    return buf;
}

/* What keeping build k's output saves: its wall time, never more than the
 * first calls it ran in took. */
static int is_row(const struct jst_compile *k, const void *row)
{
    return k == row;
}

static uint64_t build_saves(const struct jst_process *p, const struct jst_compile *k)
{
    uint64_t fc = jst_first_calls_wall(p, is_row, k);
    return fc && fc < k->dur_ns ? fc : k->dur_ns;
}

static int ahead_by(const struct jst_compile *k, const void *compiler)
{
    return ahead_of_time(k) && k->compiler == *(const unsigned *)compiler;
}

/* What compiling ahead saves for compiler k's children in p (how many in
 * *n): their wall time (children that ran at once count once), and never
 * more than the first calls they ran in took. */
static uint64_t ahead_saves(const struct jst_process *p, unsigned k, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < p->n_compiles; i++)
        *n += ahead_by(&p->compiles[i], &k);
    if (!*n)
        return 0;
    uint64_t wall = jst_compiles_wall(p, ahead_by, &k, 0, UINT64_MAX);
    uint64_t fc = jst_first_calls_wall(p, ahead_by, &k);
    return fc && fc < wall ? fc : wall;
}

static const char *ahead_text(const struct jst_compile *k, char *buf, size_t n)
{
    const char *name = jst_compiler_name(k->compiler);
    jst_sfmt(buf, n,
             "compile ahead of time: the program runs %s while it runs and waits for it; run "
             "%s when the program is built or installed and load its output on later runs (the "
             "driver's JIT cache does not hold it)",
             name, name);
    return buf;
}

/* The phases of a first call's Python that an ahead-of-time path skips
 * (all but imports and the unnamed rest). */
static uint64_t aot_skips(const struct jst_first_call *f)
{
    /* and what the framework itself reported (its tracing, lowering, cache
     * load: work around a cache hit) */
    uint64_t s = f->blame[JST_CAUSE_FRAMEWORK_COMPILE];
    for (size_t i = 0; i < f->n_phases; i++)
        if (f->phases[i].phase != JST_PHASE_IMPORT && f->phases[i].phase != JST_PHASE_OTHER)
            s += f->phases[i].dur_ns;
    return s < f->dur_ns ? s : f->dur_ns;
}

static const char *dur_words(uint64_t ns, char *buf, size_t n)
{
    if (ns >= 1000000000ull)
        jst_sfmt(buf, n, "%.2f s", (double)ns / 1e9);
    else
        jst_sfmt(buf, n, "%.1f ms", (double)ns / 1e6);
    return buf;
}

/* "cache-key hashing (triton_key) 400.0 ms, imports (<module>) 110.0 ms" */
static void phase_words(const struct jst_first_call *f, char *buf, size_t n)
{
    char d[32];
    buf[0] = 0;
    for (size_t i = 0; i < f->n_phases && i < 4; i++) {
        const struct jst_fc_phase *x = &f->phases[i];
        if (!x->dur_ns)
            continue;
        size_t l = strlen(buf);
        char fn[256];
        jst_sfmt(buf + l, n - l, "%s%s%s%s%s %s", l ? ", " : "", jst_phase_label(x->phase),
                 x->func ? " (" : "",
                 x->func ? jst_phase_func_words(x->func, x->file, fn, sizeof fn) : "",
                 x->func ? ")" : "", dur_words(x->dur_ns, d, sizeof d));
    }
}

/* "tracing 20.0 ms, lowering 20.0 ms, cache load 10.0 ms": the stages the
 * framework itself reported on f's thread within f (its own compile rows,
 * when it reported no stage), or "". */
static void stage_words(const struct jst_process *p, const struct jst_first_call *f, char *buf,
                        size_t n)
{
    static const char *const names[] = {"trace",        "lower",      "backend",
                                        "autotune",     "cache_lookup", "cache_load",
                                        "cache_store",  "graph_record", NULL};
    static const char *const labels[] = {"tracing",    "lowering",           "backend compile",
                                         "autotuning", "cache-key hashing and lookup",
                                         "cache load", "cache store",        "CUDA graph recording",
                                         "its own compile work"};
    uint64_t sum[sizeof names / sizeof names[0]] = {0};
    uint64_t a = f->start_ns, b = f->start_ns + f->dur_ns;
    int staged = 0;
    for (size_t i = 0; i < p->n_compiles; i++) {
        const struct jst_compile *k = &p->compiles[i];
        if (k->compiler != JST_CMP_FRAMEWORK || k->tid != f->tid || k->start_ns >= b ||
            k->start_ns + k->dur_ns <= a)
            continue;
        uint64_t s = k->start_ns > a ? k->start_ns : a;
        uint64_t e = k->start_ns + k->dur_ns < b ? k->start_ns + k->dur_ns : b;
        size_t at = sizeof names / sizeof names[0] - 1;
        for (size_t x = 0; k->stage && x < at; x++)
            if (!strcmp(k->stage, names[x]))
                at = x;
        staged |= at != sizeof names / sizeof names[0] - 1;
        sum[at] += e - s;
    }
    buf[0] = 0;
    char d[32];
    for (size_t x = 0; x < sizeof names / sizeof names[0]; x++) {
        if (!sum[x] || (staged && !names[x]))
            continue;
        size_t l = strlen(buf);
        jst_sfmt(buf + l, n - l, "%s%s %s", l ? ", " : "", labels[x], dur_words(sum[x], d, sizeof d));
    }
}

/* The fix of a first call whose framework's cache hit: no cache to keep;
 * what the time went to, and the framework's ahead-of-time path. */
static const char *hit_text(const struct jst_process *p, const struct jst_first_call *f,
                            const struct fw_fix *r, char *buf, size_t n)
{
    char words[512], phases[1024], d[32];
    state_words(cache_of(p, r->cache_name), words, sizeof words);
    stage_words(p, f, phases, sizeof phases);
    if (phases[0]) { /* what the framework said, then the sampled rest */
        size_t l = strlen(phases);
        phase_words(f, phases + l + 2, sizeof phases - l - 2);
        if (phases[l + 2])
            phases[l] = ',', phases[l + 1] = ' ';
    } else {
        phase_words(f, phases, sizeof phases);
    }
    jst_sfmt(buf, n, "%s hit (nothing compiled%s); the first call's %s went to %s: %s", r->label,
             words, dur_words(f->dur_ns, d, sizeof d),
             phases[0] ? phases : "the framework's own Python",
             r->remedy ? r->remedy
                       : "that is the per-process cost of the framework (imports, cache-key "
                         "hashing, tracing), which no cache removes");
    return buf;
}

int jst_fix_fw_owns(unsigned framework)
{
    return row_of(framework) != NULL;
}

int jst_fixes_frameworks(const struct jst_run *run, struct jst_fixes *out)
{
    for (size_t i = 0; i < run->n_procs; i++) {
        const struct jst_process *p = &run->procs[i];
        for (size_t r = 0; r < N_ROWS; r++) {
            size_t n = 0;
            uint64_t s = saves(p, rows[r].framework, &n);
            if (!n) /* nothing compiled: a cache that hit has nothing to keep */
                continue;
            const struct jst_fw_cache *st;
            char text[1024];
            fw_text(p, &rows[r], text, sizeof text, &st);
            if (add(out, &rows[r], text, st && st->path ? st->path : rows[r].cache_name, s, n) < 0)
                return -1;
        }
        /* One fix per framework whose cache hit: told by its longest first
         * call, saving what the ahead-of-time path skips in all of them;
         * none when that is nothing (a fill kernel's short first call). */
        for (size_t r = 0; r < N_ROWS; r++) {
            const struct jst_first_call *top = NULL;
            uint64_t skips = 0;
            size_t n_hit = 0;
            for (size_t fc = 0; fc < p->n_first_calls; fc++) {
                const struct jst_first_call *f = &p->first_calls[fc];
                if (f->top_framework != rows[r].framework || !f->cache || strcmp(f->cache, "hit"))
                    continue;
                skips += aot_skips(f);
                n_hit++;
                if (!top || f->dur_ns > top->dur_ns)
                    top = f;
            }
            if (!top || (rows[r].remedy && !skips))
                continue;
            char text[2048];
            hit_text(p, top, &rows[r], text, sizeof text);
            if (add(out, rows[r].remedy ? &aot_row : &cost_row, text, rows[r].cache_name,
                    rows[r].remedy ? skips : 0, n_hit) < 0)
                return -1;
        }
        for (size_t c = 0; c < p->n_compiles; c++) {
            const struct jst_compile *k = &p->compiles[c];
            char text[1024], target[512];
            if (build_fixable(k) &&
                add(out, &build_row, build_text(p, k, text, sizeof text, target, sizeof target),
                    target, build_saves(p, k), 1) < 0)
                return -1;
        }
        for (unsigned k = 1; k < JST_CMP_MAX_; k++) {
            size_t n = 0;
            uint64_t s = ahead_saves(p, k, &n);
            char text[1024];
            struct jst_compile one = {.compiler = k};
            if (n && add(out, &ahead_row, ahead_text(&one, text, sizeof text), jst_compiler_name(k),
                         s, n) < 0)
                return -1;
        }
    }
    return 0;
}

const char *jst_fix_for_compile(const struct jst_process *p, const struct jst_compile *k, char *buf,
                                size_t n)
{
    if (k->call) { /* a driver or library call: the fix of that call */
        jst_fix_for_load(p, k->call, NULL, buf, n);
        if (buf[0])
            return buf;
        /* a runtime compile a framework made: its cache's fix */
        const struct fw_fix *r = row_of(k->framework);
        const struct jst_fw_cache *st;
        return r ? fw_text(p, r, buf, n, &st) : NULL;
    }
    if (ahead_of_time(k))
        return ahead_text(k, buf, n);
    const struct jst_compile *b = k;
    for (size_t hops = 0; b->has_parent && !b->parent_pid && hops < 64; hops++)
        b = &p->compiles[b->parent]; /* a build of this process holds it: the build's fix */
    if (build_fixable(b)) {
        char target[512];
        return build_text(p, b, buf, n, target, sizeof target);
    }
    if (k->in_build)
        return NULL; /* a build in an ancestor process holds it: that row has the fix */
    const struct fw_fix *r = row_of(k->framework);
    const struct jst_fw_cache *st;
    if (r && !jst_compile_compiled(k) && !fw_compiles_memo(p, k->framework)) {
        /* the framework says its cache hit: what the first call's time went
         * to instead, as its first call's fix says */
        for (size_t i = 0; i < p->n_first_calls; i++) {
            const struct jst_first_call *f = &p->first_calls[i];
            if (f->top_framework == k->framework && f->cache && !strcmp(f->cache, "hit") &&
                f->tid == k->tid && k->start_ns >= f->start_ns &&
                k->start_ns < f->start_ns + f->dur_ns)
                return hit_text(p, f, r, buf, n);
        }
        return NULL;
    }
    return r ? fw_text(p, r, buf, n, &st) : NULL;
}

/* Share at of n of a saving s: the shares, by the compiles' order, sum to s. */
static uint64_t share(uint64_t s, size_t at, size_t n)
{
    return (uint64_t)((unsigned __int128)s * (at + 1) / n - (unsigned __int128)s * at / n);
}

void jst_fix_compile_saves(const struct jst_process *p, uint64_t *out)
{
    uint64_t fw_saves[JST_FW_MAX_] = {0}, ah_saves[JST_CMP_MAX_] = {0};
    size_t fw_n[JST_FW_MAX_] = {0}, fw_at[JST_FW_MAX_] = {0};
    size_t ah_n[JST_CMP_MAX_] = {0}, ah_at[JST_CMP_MAX_] = {0};
    for (size_t r = 0; r < N_ROWS; r++)
        if (rows[r].framework < JST_FW_MAX_)
            fw_saves[rows[r].framework] = saves(p, rows[r].framework, &fw_n[rows[r].framework]);
    for (unsigned k = 1; k < JST_CMP_MAX_; k++)
        ah_saves[k] = ahead_saves(p, k, &ah_n[k]);
    for (size_t i = 0; i < p->n_compiles; i++) {
        const struct jst_compile *k = &p->compiles[i];
        unsigned fw = k->framework < JST_FW_MAX_ ? k->framework : 0;
        size_t at = fw_at[fw]++;
        out[i] = 0;
        if (k->call)
            out[i] = jst_fix_load_saves(p, k->call); /* 0 without a fix */
        else if (build_fixable(k))
            out[i] = build_saves(p, k);
        else if (k->in_build)
            out[i] = 0; /* its build's fix saves it */
        else if (ahead_of_time(k) && k->compiler < JST_CMP_MAX_ && ah_n[k->compiler])
            out[i] = share(ah_saves[k->compiler], ah_at[k->compiler]++, ah_n[k->compiler]);
        else if (fw && row_of(fw) && fw_n[fw])
            out[i] = share(fw_saves[fw], at, fw_n[fw]);
    }
}

uint64_t jst_fixes_projected_first_call(const struct jst_process *p)
{
    uint64_t worst = 0;
    size_t n_fw[JST_FW_MAX_] = {0}; /* compiles by framework, counted once */
    for (size_t i = 0; i < p->n_compiles; i++)
        n_fw[p->compiles[i].framework < JST_FW_MAX_ ? p->compiles[i].framework : 0]++;
    for (size_t i = 0; i < p->n_first_calls; i++) {
        const struct jst_first_call *f = &p->first_calls[i];
        /* The driver's JIT and runtime compiles go with their own fixes
         * (SASS shipped, the output kept); a framework's whole compile with
         * its cache, but for the module loads and driver start-up. */
        uint64_t gone = f->blame[JST_CAUSE_DRIVER_JIT] + f->blame[JST_CAUSE_RUNTIME_COMPILER] +
                        f->blame[JST_CAUSE_BUILD]; /* the build's output kept */
        if (jst_graphs_main(p))                    /* captured after the first requests */
            gone += jst_graphs_in_first_call(f);
        int fixed = 0;
        for (size_t r = 0; r < N_ROWS; r++)
            fixed |= rows[r].framework == f->top_framework;
        if (fixed && f->top_framework && f->top_framework < JST_FW_MAX_ && n_fw[f->top_framework]) {
            uint64_t keep = f->blame[JST_CAUSE_MODULE_LOAD] + f->blame[JST_CAUSE_DRIVER_INIT];
            gone = f->dur_ns > keep ? f->dur_ns - keep : 0;
        }
        uint64_t d = f->dur_ns > gone ? f->dur_ns - gone : 0;
        if (d > worst)
            worst = d;
    }
    return worst;
}
