/*
 * The fixes jitstall suggests (analyzer/fixes.h): for each load that JIT
 * compiled or failed, what to change and where, with the time it would save,
 * and the fix list of a whole run ranked by time saved.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "fixes.h"
#include "graphs.h"
#include "late.h"
#include "hashidx.h"
#include "image.h"
#include "jitcache.h"
#include "origin.h"
#include "trace.h"
#include "warmfile.h"
#include "sfmt.h"

#define MIB (1ull << 20)

/* Up to two fixes apply to one load: a build/environment fix and a cache fix. */
struct cand {
    unsigned kind;
    uint64_t saves_ns;
    char text[512];
    char target[256];
    uint64_t maxsize; /* JST_FIX_CACHE_MAXSIZE */
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

const char *jst_load_origin(const struct jst_call_ev *c)
{
    if (c->source && *c->source)
        return c->source;
    if (c->path && *c->path)
        return c->path;
    return NULL;
}

/* Compute capability the load was judged against: the recorded target, else
 * the load's device, else the first device; 0 when unknown. */
static unsigned load_cc(const struct jst_process *p, const struct jst_call_ev *c)
{
    if (c->target_cc)
        return c->target_cc;
    for (size_t i = 0; i < p->n_devices; i++)
        if (!c->has_load_device || p->devices[i].ordinal == c->load_device)
            return p->devices[i].cc_major * 10 + p->devices[i].cc_minor;
    return 0;
}

/* The means come from jst_model_derive (model_index.c), computed once per
 * process: computing them here, per load, made report quadratic. */
static uint64_t est_sass(const struct jst_process *p, const struct jst_call_ev *c)
{
    uint64_t e = p->est_sass_ns;
    if (!e)
        e = sat_add(JST_EST_SASS_LOAD_NS, (c->image_size / 1024) * JST_EST_SASS_NS_PER_KIB);
    return e < c->dur_ns ? e : c->dur_ns;
}

static uint64_t est_hit(const struct jst_process *p, const struct jst_call_ev *c)
{
    uint64_t e = p->est_hit_ns;
    if (!e) {
        uint64_t ptx = c->ptx_size ? c->ptx_size : c->image_size;
        e = sat_add(JST_EST_CACHE_HIT_NS, (ptx / 1024) * JST_EST_CACHE_HIT_NS_PER_KIB);
    }
    return e < c->dur_ns ? e : c->dur_ns;
}

static const char *cache_path(const struct jst_process *p)
{
    if (p->cache_start.present && p->cache_start.path)
        return p->cache_start.path;
    if (p->cache_end.present && p->cache_end.path)
        return p->cache_end.path;
    return "~/.nv/ComputeCache";
}

static uint64_t round_mib(uint64_t v)
{
    if (v > UINT64_MAX - MIB)
        return UINT64_MAX;
    return (v + MIB - 1) / MIB * MIB;
}

/* CUDA_CACHE_MAXSIZE to suggest for process p: twice what the JIT put (or
 * would have put) into the cache, rounded up to MiB, at least double the current
 * limit, capped at the driver's 4 GiB maximum. */
static uint64_t suggest_maxsize(const struct jst_process *p)
{
    uint64_t bytes = p->cache_want_bytes, cur = 0; /* summed by jst_model_derive */
    if (p->cache_start.present)
        cur = p->cache_start.max_bytes;
    if (!cur && p->cache_end.present)
        cur = p->cache_end.max_bytes;
    uint64_t v = round_mib(bytes > UINT64_MAX / 2 ? UINT64_MAX : bytes * 2);
    if (v <= cur)
        v = round_mib(cur > UINT64_MAX / 2 ? UINT64_MAX : cur * 2);
    if (v > JST_CACHE_LIMIT_MAX)
        v = JST_CACHE_LIMIT_MAX;
    if (v < MIB)
        v = MIB;
    return v;
}

static void human_bytes(char *buf, size_t n, uint64_t v)
{
    if (v >= (1ull << 30) && v % (1ull << 30) == 0)
        jst_sfmt(buf, n, "%" PRIu64 " GiB", v >> 30);
    else if (v >= MIB && v % MIB == 0)
        jst_sfmt(buf, n, "%" PRIu64 " MiB", v >> 20);
    else
        jst_sfmt(buf, n, "%" PRIu64 " bytes", v);
}

/* "(GPU is sm_90; it ships only PTX compute_75)" or, when it has SASS for
 * other GPUs, "(GPU is sm_90; it has SASS for sm_80 only and JITs PTX compute_80)". */
static void why_text(const struct jst_call_ev *c, unsigned cc, char *buf, size_t n)
{
    char sass[128] = "";
    size_t used = 0;
    for (size_t i = 0; i < c->n_entries; i++) {
        const char *e = c->entries[i];
        if (strncmp(e, "cubin ", 6) != 0)
            continue;
        const char *a = e + 6;
        size_t len = strcspn(a, " ");
        if (used + len + 3 >= sizeof(sass))
            break;
        if (used) {
            memcpy(sass + used, ", ", 2);
            used += 2;
        }
        memcpy(sass + used, a, len);
        used += len;
        sass[used] = '\0';
    }
    const char *from = c->jit_from && *c->jit_from ? c->jit_from : NULL;
    if (used && from)
        jst_sfmt(buf, n, "(GPU is sm_%u; it has SASS for %s only and JITs PTX %s)", cc, sass, from);
    else if (used)
        jst_sfmt(buf, n, "(GPU is sm_%u; it has SASS for %s only)", cc, sass);
    else if (from)
        jst_sfmt(buf, n, "(GPU is sm_%u; it ships only PTX %s)", cc, from);
    else
        jst_sfmt(buf, n, "(GPU is sm_%u; it has no SASS for it)", cc);
}

static const char *force_var(const struct jst_process *p)
{
    for (size_t i = 0; i < p->n_env; i++)
        if (!strncmp(p->env[i], "CUDA_FORCE_JIT=", 15))
            return "CUDA_FORCE_JIT";
    return "CUDA_FORCE_PTX_JIT";
}

static const char *disable_var(const struct jst_process *p)
{
    for (size_t i = 0; i < p->n_env; i++)
        if (!strncmp(p->env[i], "CUDA_DISABLE_JIT=", 17))
            return "CUDA_DISABLE_JIT";
    return "CUDA_DISABLE_PTX_JIT";
}

const char *jst_fix_gencode(char *buf, size_t n, unsigned cc)
{
    const char *old = jst_arch_last_toolkit(cc);
    if (old)
        jst_sfmt(buf, n,
                 "-gencode arch=compute_%u,code=sm_%u, built with %s or older (CUDA 13's nvcc no "
                 "longer builds sm_%u)",
                 cc, cc, old, cc);
    else
        jst_sfmt(buf, n, "-gencode arch=compute_%u,code=sm_%u", cc, cc);
    return buf;
}

const char *jst_fix_ptx_aot(char *buf, size_t n, unsigned cc)
{
    const char *old = jst_arch_last_toolkit(cc);
    jst_sfmt(buf, n,
             "ptxas -arch=sm_%u, or nvcc -fatbin -gencode arch=compute_%u,code=[sm_%u,compute_%u] "
             "to keep PTX for newer GPUs%s%s",
             cc, cc, cc, cc, old ? "; with " : "", old ? old : "");
    if (old) {
        size_t u = strlen(buf);
        jst_sfmt(buf + u, n - u, " or older (CUDA 13 no longer builds sm_%u)", cc);
    }
    return buf;
}

/* Sets a candidate's kind and its one line of text (cut to fit). */
static void say_fix(struct cand *f, unsigned kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say_fix(struct cand *f, unsigned kind, const char *fmt, ...)
{
    va_list ap;
    f->kind = kind;
    va_start(ap, fmt);
    vsnprintf(f->text, sizeof(f->text), fmt, ap);
    va_end(ap);
}

static void cache_fix(const struct jst_process *p, const struct jst_call_ev *c, struct cand *f);

/* The fix of a JIT load by where its PTX came from (origin.h): f holds the
 * -gencode fix already, which fits an ELF object the user builds with nvcc
 * and is kept when the origin is unknown. */
static void source_fix(const struct jst_process *p, const struct jst_call_ev *c, unsigned cc,
                       const char *why, struct cand *f)
{
    struct jst_origin o;
    const char *api = c->call_name ? c->call_name : jst_call_name(c->call);
    char obj[300], aot[240], gc[160];
    const char *use =
        c->call == JST_CALL_cuLinkAddData || c->call == JST_CALL_cuLinkAddFile ? "link" : "load";
    jst_origin_of(p, c, &o);
    int from_py = o.object && o.object == o.py_file;
    if (from_py) /* Python code passed it through an FFI (ctypes, cffi) */
        jst_sfmt(obj, sizeof(obj), "the %s that %s passes to %s",
                 o.kind == JST_ORIGIN_FATBIN_FILE ? "fatbin" : "PTX", o.py_file,
                 api ? api : "the driver");
    else if (o.object)
        jst_sfmt(obj, sizeof(obj), "%s", o.object);
    else if (c->read_from) /* the file the program read it from (origin.c) */
        jst_sfmt(obj, sizeof(obj), "%s (which the program passes to %s)", c->read_from,
                 api ? api : "the driver");
    else
        jst_sfmt(obj, sizeof(obj), "the %s the program passes to %s",
                 o.kind == JST_ORIGIN_FATBIN_FILE ? "fatbin" : "PTX", api ? api : "the driver");
    jst_fix_ptx_aot(aot, sizeof aot, cc);
    jst_fix_gencode(gc, sizeof gc, cc);
    switch (o.kind) {
    case JST_ORIGIN_FATBIN_FILE:
        say_fix(f, JST_FIX_FATBIN_FILE, "rebuild %s%s with %s %s",
                o.object && !from_py ? "the fatbin file " : "", obj, gc, why);
        break;
    case JST_ORIGIN_PTX_FILE:
        say_fix(f, JST_FIX_PTX_FILE,
                "compile %s ahead of time for the GPU and %s the result %s: %s", obj, use, why,
                aot);
        break;
    case JST_ORIGIN_PTX_DATA:
        say_fix(f, JST_FIX_PTX_DATA,
                "compile the PTX text held in %s ahead of time for the GPU and %s the result "
                "instead %s: %s",
                obj, use, why, aot);
        break;
    case JST_ORIGIN_NVRTC:
        jst_sfmt(f->target, sizeof(f->target), "%s", api ? api : "NVRTC");
        say_fix(f, JST_FIX_NVRTC_PTX,
                "the PTX passed to %s was made by NVRTC at run time %s: compile it to a cubin for "
                "the GPU (nvrtcCompileProgram with -arch=sm_%u, then nvrtcGetCUBIN), or keep the "
                "program's own kernel cache across runs",
                api ? api : "the driver", why, cc);
        break;
    case JST_ORIGIN_THIRD_PARTY: {
        /* What to do now is the cache fix: the load's own when the cache
         * failed, else keeping the cache across runs. */
        struct cand now;
        char until[520];
        cache_fix(p, c, &now);
        if (now.kind && now.kind != JST_FIX_CACHE_VOLUME)
            jst_sfmt(until, sizeof(until), "until then, %s", now.text);
        else
            jst_sfmt(
                until, sizeof(until),
                "until then keep the JIT cache %s across runs, so that only the first run JITs",
                cache_path(p));
        say_fix(f, JST_FIX_THIRD_PARTY,
                "%s is third-party (%s%s%s): upgrade to a build with SASS for sm_%u %s; %s", obj,
                o.package, o.package[0] ? ", " : "", o.where, cc, why, until);
        break;
    }
    default:
        break;
    }
}

/* A runtime compile's fix (kind 0 when the call failed). */
static void rtc_fix(const struct jst_call_ev *c, const char *api, struct cand *f)
{
    /* The driver's JIT cache does not hold what NVRTC or nvJitLink make:
     * only the program can keep it. A failed call has nothing to keep. */
    if (c->result != 0)
        return;
    f->saves_ns = c->dur_ns;
    if (c->call == JST_CALL_nvrtcCompileProgram)
        say_fix(f, JST_FIX_RTC_CACHE,
                "compile these kernels once: build the cubin/PTX at build time, or keep the "
                "program's own kernel cache (e.g. CuPy's CUPY_CACHE_DIR) on a persistent volume; "
                "%s runs again whenever that cache is empty",
                api ? api : "nvrtcCompileProgram");
    else if (c->call == JST_CALL_nvvmCompileProgram)
        say_fix(f, JST_FIX_RTC_CACHE,
                "compile once: keep the PTX %s produces, compiled to a cubin for the GPU, or "
                "build it at build time, and load that on later runs (a framework that calls "
                "NVVM has a cache of its own for this); the driver's JIT cache does not hold it",
                api ? api : "nvvmCompileProgram");
    else if (c->call == JST_CALL_nvPTXCompilerCompile)
        say_fix(f, JST_FIX_RTC_CACHE,
                "compile once: keep the cubin %s produces (or run ptxas at build time) and load "
                "it on later runs; the driver's JIT cache does not hold it",
                api ? api : "nvPTXCompilerCompile");
    else
        say_fix(f, JST_FIX_RTC_CACHE,
                "link once: keep the cubin %s produces (or link at build time) and load it "
                "on later runs; the driver's JIT cache does not hold it",
                api ? api : "nvJitLinkComplete");
}

/* Whether a call may have a build or environment fix at all. Most calls
 * (lookups, launches, SASS loads) have none: saying so before formatting any
 * text saved a third of `report`'s time on a trace of a million events
 * (docs/PERFORMANCE.md). */
static int may_have_build_fix(const struct jst_process *p, const struct jst_call_ev *c)
{
    unsigned v = c->verdict;
    return jst_is_rtc_call(c->call) || v == JST_V_PTX_JIT || v == JST_V_FORCED_JIT ||
           v == JST_V_NO_COMPATIBLE || v == JST_V_JIT_DISABLED || v == JST_V_PTX_TOO_NEW ||
           (v == JST_V_NONE && jst_is_jit_event(p, c));
}

/* The entries of a load ("cubin sm_90 none"): does any SASS run on cc, is
 * there PTX, and the newest SASS (into newest, "" when none)? */
static void entry_facts(const struct jst_call_ev *c, unsigned cc, int *runs, int *has_ptx,
                        char *newest, size_t n)
{
    unsigned best = 0, best_var = 0;
    *runs = *has_ptx = 0;
    newest[0] = 0;
    for (size_t i = 0; i < c->n_entries; i++) {
        const char *e = c->entries[i];
        char arch[24];
        if (!strncmp(e, "ptx ", 4)) {
            *has_ptx = 1;
            continue;
        }
        if (strncmp(e, "cubin ", 6) != 0)
            continue;
        jst_sfmt(arch, sizeof arch, "%.*s", (int)strcspn(e + 6, " "), e + 6);
        unsigned var = 0, sm = jst_arch_parse(arch, &var);
        if (sm && jst_sass_runs_on(sm, var, cc))
            *runs = 1;
        if (sm > best) {
            best = sm;
            best_var = var;
        }
    }
    if (best)
        jst_arch_str(newest, n, 0, best, best_var);
}

static int force_set(const struct jst_process *p)
{
    for (size_t i = 0; i < p->n_env; i++) {
        const char *e = p->env[i], *v = strchr(e, '=');
        if (v && (!strncmp(e, "CUDA_FORCE_PTX_JIT=", 19) || !strncmp(e, "CUDA_FORCE_JIT=", 15)) &&
            v[1] && strcmp(v + 1, "0") != 0)
            return 1;
    }
    return 0;
}

/* "libtorch_cuda.so (torch 2.11.0+cu130, a Python package)", or what. */
static void object_words(const struct jst_process *p, const struct jst_call_ev *c, const char *what,
                         char *buf, size_t n)
{
    struct jst_origin o;
    jst_origin_of(p, c, &o);
    const char *api = c->call_name ? c->call_name : jst_call_name(c->call);
    if (o.object && o.object == o.py_file) /* Python code, through an FFI */
        jst_sfmt(buf, n, "the image that %s passes to %s", o.py_file, api ? api : "the driver");
    else if (o.object && o.where)
        jst_sfmt(buf, n, "%s (%s%s%s)", o.object, o.package, o.package[0] ? ", " : "", o.where);
    else if (o.object)
        jst_sfmt(buf, n, "%s", o.object);
    else
        jst_sfmt(buf, n, "%s", what);
}

/* CUDA_FORCE_PTX_JIT made a load fail that has SASS for the GPU: the fix is
 * the variable, and what it showed is worth saying: no PTX at all. */
static void forced_fail_fix(const struct jst_process *p, const struct jst_call_ev *c, unsigned cc,
                            int has_ptx, const char *newest, struct cand *f)
{
    char obj[400];
    object_words(p, c, "the image", obj, sizeof obj);
    jst_sfmt(f->target, sizeof(f->target), "%s", force_var(p));
    if (!has_ptx)
        say_fix(f, JST_FIX_UNFORCE_JIT,
                "unset %s: it makes the driver ignore SASS, and the load failed although %s has "
                "SASS for sm_%u. What it revealed: it ships no PTX at all, so on a GPU newer than "
                "its newest SASS (%s) it will not run",
                force_var(p), obj, cc, newest[0] ? newest : "none");
    else
        say_fix(f, JST_FIX_UNFORCE_JIT,
                "unset %s: it makes the driver ignore SASS, and the load failed although %s has "
                "SASS for sm_%u; its PTX does not JIT to sm_%u",
                force_var(p), obj, cc, cc);
}

/* The PTX is newer than the driver JITs (CUDA_ERROR_UNSUPPORTED_PTX_VERSION). */
static void too_new_fix(const struct jst_process *p, const struct jst_call_ev *c, unsigned cc,
                        const char *what, struct cand *f)
{
    char obj[400], cause[256], gc[160], up[96] = "", tk[48] = "", cv[16], dflt[160];
    const char *api = c->call_name ? c->call_name : jst_call_name(c->call);
    (void)what;
    jst_sfmt(dflt, sizeof dflt, "the PTX passed to %s", api ? api : "the driver");
    object_words(p, c, dflt, obj, sizeof obj);
    const struct jst_device *dv = NULL;
    for (size_t k = 0; k < p->n_devices; k++)
        if (!dv || (c->has_load_device && p->devices[k].ordinal == c->load_device))
            dv = &p->devices[k];
    jst_ptx_too_new_cause(cause, sizeof cause, c->ptx_isa, c->ptx_driver_cuda,
                          dv ? dv->driver_release : NULL);
    unsigned made = jst_ptx_isa_cuda(c->ptx_isa), branch = jst_cuda_min_driver(made);
    if (made && branch)
        jst_sfmt(up, sizeof up, "upgrade the driver to %u or newer (CUDA %s)", branch,
                 jst_cuda_str(cv, sizeof cv, made));
    else
        jst_sfmt(up, sizeof up, "upgrade the driver to one that supports the PTX");
    if (c->ptx_driver_cuda)
        jst_sfmt(tk, sizeof tk, " (CUDA %s)", jst_cuda_str(cv, sizeof cv, c->ptx_driver_cuda));
    jst_fix_gencode(gc, sizeof gc, cc);
    jst_sfmt(f->target, sizeof(f->target), "%s", jst_load_origin(c) ? jst_load_origin(c) : dflt);
    say_fix(f, JST_FIX_PTX_TOO_NEW,
            "%s failed with CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222): %s. Fix: %s, or build with "
            "the driver's toolkit%s, or ship SASS for sm_%u (%s)",
            obj, cause, up, tk, cc, gc);
}

/* The fix of a load by its verdict (kind 0 if none); what and why are the
 * words of its -gencode fix ("rebuild libfoo.so", "(GPU is sm_90; ...)"). */
static void verdict_fix(const struct jst_process *p, const struct jst_call_ev *c, unsigned cc,
                        const char *what, const char *why, const char *api, struct cand *f)
{
    char gc[160];
    switch (c->verdict) {
    case JST_V_PTX_JIT:
        if (!cc)
            break;
        f->saves_ns = c->dur_ns - est_sass(p, c);
        say_fix(f, JST_FIX_GENCODE, "%s with %s %s", what, jst_fix_gencode(gc, sizeof gc, cc), why);
        source_fix(p, c, cc, why, f);
        return;
    case JST_V_FORCED_JIT:
        f->saves_ns = c->dur_ns - est_sass(p, c);
        jst_sfmt(f->target, sizeof(f->target), "%s", force_var(p));
        say_fix(f, JST_FIX_UNFORCE_JIT,
                "unset %s: it makes the driver JIT PTX even for images that have SASS for the GPU",
                force_var(p));
        return;
    case JST_V_PTX_TOO_NEW:
        too_new_fix(p, c, cc, what, f);
        return;
    case JST_V_NO_COMPATIBLE: {
        if (!cc)
            break;
        int runs, has_ptx;
        char newest[24];
        entry_facts(c, cc, &runs, &has_ptx, newest, sizeof newest);
        if (runs && force_set(p)) {
            forced_fail_fix(p, c, cc, has_ptx, newest, f);
            return;
        }
        struct jst_origin o;
        jst_origin_of(p, c, &o);
        if (o.kind == JST_ORIGIN_THIRD_PARTY) {
            jst_sfmt(f->target, sizeof(f->target), "%s", o.object);
            say_fix(f, JST_FIX_ALLOW_JIT,
                    "%s is third-party (%s%s%s): it has no code that runs on sm_%u, so the load "
                    "failed; upgrade to a build with SASS or PTX for sm_%u",
                    o.object, o.package, o.package[0] ? ", " : "", o.where, cc, cc);
            return;
        }
        say_fix(f, JST_FIX_ALLOW_JIT,
                "%s with %s: it has no code that runs on sm_%u, so the load failed", what,
                jst_fix_gencode(gc, sizeof gc, cc), cc);
        return;
    }
    case JST_V_JIT_DISABLED:
        if (cc)
            say_fix(
                f, JST_FIX_ALLOW_JIT,
                "%s with %s, or unset %s: it needs the JIT, which %s forbids, so the load failed",
                what, jst_fix_gencode(gc, sizeof gc, cc), disable_var(p), disable_var(p));
        else
            say_fix(f, JST_FIX_ALLOW_JIT, "unset %s: the image needs the JIT, so the load failed",
                    disable_var(p));
        return;
    case JST_V_NONE:
        if (!jst_is_jit_event(p, c) || !cc)
            break;
        /* a link step fed PTX: hand the linker a cubin instead */
        f->saves_ns = c->dur_ns - est_sass(p, c);
        jst_sfmt(f->target, sizeof(f->target), "%s", c->name && *c->name ? c->name : "link input");
        say_fix(f, JST_FIX_GENCODE,
                "compile the PTX linked with %s (%s) to a cubin ahead of time with %s",
                api ? api : "cuLinkAddData", f->target, jst_fix_gencode(gc, sizeof gc, cc));
        source_fix(p, c, cc, why, f);
        return;
    default:
        break;
    }
}

/* The build or environment fix of one load (kind 0 if none). */
static void build_fix(const struct jst_process *p, const struct jst_call_ev *c, struct cand *f)
{
    memset(f, 0, sizeof(*f));
    if (!may_have_build_fix(p, c))
        return;
    unsigned cc = load_cc(p, c);
    const char *origin = jst_load_origin(c);
    const char *api = c->call_name ? c->call_name : jst_call_name(c->call);
    char what[300], why[200];
    if (origin)
        jst_sfmt(what, sizeof(what), "rebuild %s", origin);
    else
        jst_sfmt(what, sizeof(what), "build the image passed to %s ahead of time",
                 api ? api : "the load");
    why_text(c, cc, why, sizeof(why));
    jst_sfmt(f->target, sizeof(f->target), "%s", origin ? origin : (api ? api : "image"));
    if (jst_is_rtc_call(c->call)) {
        if (jst_call_is_cache_probe(p, c))
            return;
        /* a framework's runtime compile (CuPy's NVRTC): its cache's fix
         * covers it (analyzer/fixes_fw.c), not one of its own */
        for (size_t i = 0; i < p->n_compiles; i++)
            if (p->compiles[i].call == c && jst_fix_fw_owns(p->compiles[i].framework))
                return;
        rtc_fix(c, api, f);
    } else
        verdict_fix(p, c, cc, what, why, api, f);
}

/* A miss whose output was stored: re-warm a cache warmed for another
 * target, or keep the cache across runs when it did not survive. */
static void cache_stored_fix(const struct jst_process *p, const struct jst_call_ev *c,
                             const char *path, struct cand *f)
{
    const struct jst_cache_state *s = &p->cache_start;
    /* A miss in a cache `jitstall warm` filled for another driver or GPU. */
    const struct jst_device *dv = jst_warm_run_device(p, c);
    if (jst_warm_mismatch(path, dv ? dv->driver_version : 0, dv ? dv->driver_release : NULL,
                          c->target_cc, f->text, sizeof(f->text))) {
        f->kind = JST_FIX_CACHE_REWARM;
        return;
    }
    /* The cache worked; it only fails to help when it does not survive the
     * run, which an absent or empty cache at start points to. */
    if (s->present && s->exists && s->entries > 0)
        return;
    say_fix(f, JST_FIX_CACHE_VOLUME,
            "keep the JIT cache %s across runs: in a container, mount it as a volume "
            "(docker run -v jitcache:%s) or point CUDA_CACHE_PATH at persistent storage; %s",
            path, path,
            !s->present  ? "without it every fresh container JITs again"
            : !s->exists ? "it did not exist at start, so every fresh container JITs again"
                         : "it was empty at start, so every fresh container JITs again");
}

/* The JIT output did not fit the cache: the CUDA_CACHE_MAXSIZE to set. */
static void cache_maxsize_fix(const struct jst_process *p, struct cand *f)
{
    uint64_t cur = p->cache_start.present ? p->cache_start.max_bytes : 0;
    uint64_t v = suggest_maxsize(p);
    char hv[32], hc[32];
    human_bytes(hv, sizeof(hv), v);
    human_bytes(hc, sizeof(hc), cur);
    f->kind = JST_FIX_CACHE_MAXSIZE;
    f->maxsize = v;
    jst_sfmt(f->target, sizeof(f->target), "CUDA_CACHE_MAXSIZE");
    if (cur >= JST_CACHE_LIMIT_MAX)
        jst_sfmt(f->text, sizeof(f->text),
                 "the JIT output does not fit even the largest CUDA_CACHE_MAXSIZE (4 GiB): "
                 "ship SASS for the GPU instead");
    else if (cur)
        jst_sfmt(f->text, sizeof(f->text),
                 "raise CUDA_CACHE_MAXSIZE to %" PRIu64 " (%s; it is %s): the JIT output did "
                 "not fit, so every run JITs again",
                 v, hv, hc);
    else
        jst_sfmt(f->text, sizeof(f->text),
                 "raise CUDA_CACHE_MAXSIZE to %" PRIu64 " (%s): the JIT output did not fit, "
                 "so every run JITs again",
                 v, hv);
}

/* The cache fix of one JIT load (kind 0 if none). */
static void cache_fix(const struct jst_process *p, const struct jst_call_ev *c, struct cand *f)
{
    const char *path = cache_path(p);
    memset(f, 0, sizeof(*f));
    if (c->result != 0 || !jst_is_jit_event(p, c))
        return;
    jst_sfmt(f->target, sizeof(f->target), "%s", path);
    f->saves_ns = c->dur_ns - est_hit(p, c);
    if (c->cache == JST_C_MISS_STORED) {
        cache_stored_fix(p, c, path, f);
        return;
    }
    if (c->cache != JST_C_MISS_NOT_STORED)
        return;
    switch (c->cache_reason) {
    case JST_CR_DISABLED:
        jst_sfmt(f->target, sizeof(f->target), "CUDA_CACHE_DISABLE");
        say_fix(f, JST_FIX_CACHE_ENABLE,
                "unset CUDA_CACHE_DISABLE: with it set, the JIT output is never cached and "
                "every run JITs again");
        return;
    case JST_CR_READ_ONLY:
        say_fix(f, JST_FIX_CACHE_WRITABLE,
                "make the JIT cache directory %s writable (or set CUDA_CACHE_PATH to a writable "
                "directory): the JIT output could not be stored, so every run JITs again",
                path);
        return;
    case JST_CR_TOO_SMALL:
        cache_maxsize_fix(p, f);
        return;
    case JST_CR_NO_DIR:
        say_fix(f, JST_FIX_CACHE_DIR,
                "create the JIT cache directory %s, or set CUDA_CACHE_PATH to a directory that "
                "can be created: without it the JIT output is never stored",
                path);
        return;
    default:
        say_fix(f, JST_FIX_CACHE_WRITABLE,
                "check that %s is writable and CUDA_CACHE_MAXSIZE large enough: the JIT output "
                "was not stored, so every run JITs again",
                path);
        return;
    }
}

/* Both fixes of one load (a: build or environment, b: cache; kind 0 when
 * none), and the load's own fix: the build or environment fix, which removes
 * the JIT everywhere, else the cache fix (NULL when neither). */
static const struct cand *load_fixes(const struct jst_process *p, const struct jst_call_ev *c,
                                     struct cand *a, struct cand *b)
{
    build_fix(p, c, a);
    cache_fix(p, c, b);
    if (a->kind)
        return a;
    return b->kind ? b : NULL;
}

const char *jst_fix_for_load(const struct jst_process *p, const struct jst_call_ev *c,
                             unsigned *kind, char *buf, size_t n)
{
    struct cand a, b;
    const struct cand *x = load_fixes(p, c, &a, &b);
    if (kind)
        *kind = x ? x->kind : 0;
    if (n)
        jst_sfmt(buf, n, "%s", x ? x->text : "");
    return buf;
}

uint64_t jst_fix_load_saves(const struct jst_process *p, const struct jst_call_ev *c)
{
    struct cand a, b;
    const struct cand *x = load_fixes(p, c, &a, &b);
    return x ? x->saves_ns : 0;
}

uint64_t jst_fixes_projected_ttfk(const struct jst_process *p)
{
    if (!p->first_launch_ns)
        return 0;
    uint64_t saved = 0;
    for (size_t i = 0; i < p->n_calls; i++) {
        const struct jst_call_ev *c = &p->calls[i];
        if (jst_model_before_first_kernel(p, c) &&
            (jst_is_jit_event(p, c) || jst_is_rtc_call(c->call)))
            saved = sat_add(saved, jst_fix_load_saves(p, c));
    }
    if (jst_graphs_main(p)) /* captured later: out of the start */
        saved = sat_add(saved, p->graphs.ttfk_ns);
    return p->ttfk_ns > saved ? p->ttfk_ns - saved : 0;
}

/* Adds c to the list, or to the equal fix already there (found through ix,
 * by kind and text). */
static int add_cand(struct jst_fixes *out, size_t *cap, struct jst_hidx *ix, const struct cand *c)
{
    uint64_t h = jst_hash_str(jst_hash_u64(JST_HASH_SEED, c->kind), c->text);
    size_t cur = 0, p1;
    while ((p1 = jst_hidx_next(ix, h, &cur)) != 0) {
        struct jst_fix *f = &out->v[p1 - 1];
        if (f->kind == c->kind && !strcmp(f->text, c->text)) {
            f->saves_ns = sat_add(f->saves_ns, c->saves_ns);
            f->n_loads++;
            return 0;
        }
    }
    if (out->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 8;
        struct jst_fix *nv = realloc(out->v, nc * sizeof(*nv));
        if (!nv)
            return -1;
        out->v = nv;
        *cap = nc;
    }
    if (jst_hidx_add(ix, h, out->n) < 0)
        return -1;
    struct jst_fix *f = &out->v[out->n++];
    memset(f, 0, sizeof(*f));
    f->kind = c->kind;
    jst_sfmt(f->text, sizeof(f->text), "%s", c->text);
    jst_sfmt(f->target, sizeof(f->target), "%s", c->target);
    f->saves_ns = c->saves_ns;
    f->new_maxsize = c->maxsize;
    f->n_loads = 1;
    return 0;
}

static int cmp_fix(const void *a, const void *b)
{
    const struct jst_fix *x = a, *y = b;
    if (x->saves_ns != y->saves_ns)
        return x->saves_ns > y->saves_ns ? -1 : 1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->text, y->text);
}

void jst_fixes_sort(struct jst_fixes *f)
{
    if (f->n)
        qsort(f->v, f->n, sizeof(*f->v), cmp_fix);
}

/* Did the JIT cache of p show that it survives across runs: it held
 * entries at start, or (its start not recorded) served a JIT load as a hit?
 * A hit in a cache that was empty at start is the run's own entry. */
static int cache_survived(const struct jst_process *p)
{
    if (p->cache_start.present)
        return p->cache_start.exists && p->cache_start.entries > 0;
    for (size_t k = 0; k < p->n_calls; k++)
        if (p->calls[k].cache == JST_C_HIT && jst_is_jit_event(p, &p->calls[k]))
            return 1;
    return 0;
}

/* The cache directories some process of run found kept from an earlier run
 * (cache_survived), as an index by path into run->procs: keeping such a
 * cache across runs is already done, and advising it would change nothing
 * (the misses in it are the first runs that filled it). */
static int survivors(const struct jst_run *run, struct jst_hidx *ix)
{
    for (size_t i = 0; i < run->n_procs; i++)
        if (cache_survived(&run->procs[i]) &&
            jst_hidx_add(ix, jst_hash_str(JST_HASH_SEED, cache_path(&run->procs[i])), i) < 0)
            return -1;
    return 0;
}

static int survives(const struct jst_run *run, const struct jst_hidx *ix, const char *path)
{
    size_t cur = 0, p1;
    while ((p1 = jst_hidx_next(ix, jst_hash_str(JST_HASH_SEED, path), &cur)) != 0)
        if (!strcmp(cache_path(&run->procs[p1 - 1]), path))
            return 1;
    return 0;
}

/* A fix about one cache directory: the kinds whose text names it (target). */
static int per_dir_kind(unsigned kind)
{
    return kind == JST_FIX_CACHE_VOLUME || kind == JST_FIX_CACHE_WRITABLE ||
           kind == JST_FIX_CACHE_DIR;
}

/* The fix's text with each occurrence of its directory made \x01: two fixes
 * of one kind with the same template differ only in the directory. */
static void dir_template(const struct jst_fix *f, char *buf, size_t n)
{
    size_t tl = strlen(f->target), used = 0;
    const char *s = f->text;
    buf[0] = '\0';
    while (*s && used + 2 < n) {
        if (tl && !strncmp(s, f->target, tl)) {
            buf[used++] = '\x01';
            s += tl;
        } else {
            buf[used++] = *s++;
        }
    }
    buf[used] = '\0';
}

/* The text of a fix that stands for several directories: each occurrence of
 * the directory in the template becomes DIR, the first followed by how many
 * directories and a few of them. */
static void dir_text(struct jst_fix *f, const char *tmpl)
{
    char list[320] = "";
    size_t used = 0;
    for (size_t i = 0; i < f->n_targets && i < 3; i++)
        used += (size_t)snprintf(list + used, used < sizeof list ? sizeof list - used : 0, "%s%s",
                                 i ? ", " : "", f->targets[i]);
    if (f->n_targets > 3 && used < sizeof list)
        snprintf(list + used, sizeof list - used, " and %zu more", f->n_targets - 3);
    char out[sizeof f->text];
    size_t o = 0;
    int first = 1;
    for (const char *s = tmpl; *s && o + 1 < sizeof out; s++) {
        if (*s != '\x01') {
            out[o++] = *s;
            continue;
        }
        int w = snprintf(out + o, sizeof out - o,
                         first ? "DIR (each of %zu directories: %s)" : "DIR", f->n_targets, list);
        o = w < 0 ? o : (size_t)w >= sizeof out - o ? sizeof out - 1 : o + (size_t)w;
        first = 0;
    }
    out[o] = '\0';
    jst_sfmt(f->text, sizeof f->text, "%s", out);
    jst_sfmt(f->target, sizeof f->target, "%s", f->targets[0]);
}

/* Folds the fixes that differ only in their cache directory (a fleet in
 * which each container has its own: "keep the JIT cache /tmp/c01 across
 * runs", then c02, ...) into one fix with the count and a few examples; the
 * directories are in targets. 0, or -1 when out of memory. */
static int group_dirs(struct jst_fixes *out)
{
    struct jst_hidx ix = {0};
    char(*tmpl)[sizeof out->v[0].text] = calloc(out->n + 1, sizeof *tmpl);
    size_t w = 0;
    int rc = tmpl ? 0 : -1;
    for (size_t i = 0; i < out->n && rc == 0; i++) {
        struct jst_fix *f = &out->v[i];
        if (!per_dir_kind(f->kind) || !f->target[0] || !strstr(f->text, f->target)) {
            out->v[w++] = *f;
            continue;
        }
        dir_template(f, tmpl[w], sizeof tmpl[w]);
        uint64_t h = jst_hash_str(jst_hash_u64(JST_HASH_SEED, f->kind), tmpl[w]);
        size_t cur = 0, p1;
        struct jst_fix *g = NULL;
        while ((p1 = jst_hidx_next(&ix, h, &cur)) != 0)
            if (out->v[p1 - 1].kind == f->kind && !strcmp(tmpl[p1 - 1], tmpl[w])) {
                g = &out->v[p1 - 1];
                break;
            }
        if (!g) {
            out->v[w] = *f;
            rc = jst_hidx_add(&ix, h, w++);
            continue;
        }
        char **nt = realloc(g->targets, (g->n_targets + 2) * sizeof *nt);
        if (!nt) {
            rc = -1;
            break;
        }
        g->targets = nt;
        if (!g->n_targets && !(g->targets[g->n_targets++] = strdup(g->target)))
            rc = -1;
        if (rc == 0 && !(g->targets[g->n_targets++] = strdup(f->target)))
            rc = -1;
        g->saves_ns = sat_add(g->saves_ns, f->saves_ns);
        g->n_loads += f->n_loads;
    }
    if (rc == 0) {
        out->n = w;
        for (size_t i = 0; i < out->n; i++)
            if (out->v[i].n_targets > 1)
                dir_text(&out->v[i], tmpl[i]);
    }
    free(tmpl);
    jst_hidx_free(&ix);
    return rc;
}

/* One fix for the processes whose start graph capture dominates: capturing
 * later saves the graph work of their start (one entry, savings summed). */
static int graph_fixes(const struct jst_run *run, struct jst_fixes *out)
{
    for (size_t i = 0; i < run->n_procs; i++) {
        uint64_t ns = jst_graphs_start_ns(&run->procs[i]);
        if (ns && jst_fixes_merge(out, JST_FIX_GRAPH_CAPTURE, JST_GRAPHS_FIX, "CUDA graph capture",
                                  ns, 1) < 0)
            return -1;
    }
    return 0;
}

int jst_fixes_compute(const struct jst_run *run, struct jst_fixes *out)
{
    size_t cap = 0;
    struct jst_hidx ix = {0}, kept = {0};
    memset(out, 0, sizeof(*out));
    if (survivors(run, &kept) < 0)
        goto oom;
    for (size_t i = 0; i < run->n_procs; i++) {
        const struct jst_process *p = &run->procs[i];
        for (size_t k = 0; k < p->n_calls; k++) {
            const struct jst_call_ev *c = &p->calls[k];
            struct cand a, b;
            load_fixes(p, c, &a, &b);
            if (b.kind == JST_FIX_CACHE_VOLUME && survives(run, &kept, cache_path(p)))
                b.kind = 0;
            if ((a.kind && add_cand(out, &cap, &ix, &a) < 0) ||
                (b.kind && add_cand(out, &cap, &ix, &b) < 0))
                goto oom;
        }
    }
    jst_hidx_free(&ix);
    jst_hidx_free(&kept);
    if (group_dirs(out) < 0 || jst_fixes_frameworks(run, out) < 0 || jst_fixes_late(run, out) < 0 ||
        graph_fixes(run, out) < 0) {
        jst_fixes_free(out);
        return -1;
    }
    jst_fixes_sort(out);
    return 0;
oom:
    jst_hidx_free(&ix);
    jst_hidx_free(&kept);
    jst_fixes_free(out);
    return -1;
}

void jst_fixes_free(struct jst_fixes *f)
{
    for (size_t i = 0; i < f->n; i++) {
        for (size_t k = 0; k < f->v[i].n_targets; k++)
            free(f->v[i].targets[k]);
        free(f->v[i].targets);
    }
    free(f->v);
    f->v = NULL;
    f->n = 0;
}

int jst_fixes_merge(struct jst_fixes *out, unsigned kind, const char *text, const char *target,
                    uint64_t saves_ns, size_t n)
{
    for (size_t i = 0; i < out->n; i++) {
        struct jst_fix *f = &out->v[i];
        if (f->kind == kind && !strcmp(f->text, text)) {
            f->saves_ns += saves_ns;
            f->n_loads += n;
            return 0;
        }
    }
    struct jst_fix *v = realloc(out->v, (out->n + 1) * sizeof *v);
    if (!v)
        return -1;
    out->v = v;
    struct jst_fix *f = &v[out->n++];
    memset(f, 0, sizeof *f);
    f->kind = kind;
    jst_sfmt(f->text, sizeof f->text, "%s", text);
    jst_sfmt(f->target, sizeof f->target, "%s", target);
    f->saves_ns = saves_ns;
    f->n_loads = n;
    return 0;
}
