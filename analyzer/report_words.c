/* The words the report's text, Markdown and JSON writers share: durations,
 * sizes, verdicts, cache outcomes and states, origins (report_view.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_util.h"
#include "compiles.h"
#include "curesult.h"
#include "image.h"
#include "report_compiles.h"
#include "report_view.h"
#include "trace.h"

const char *rv_dur(uint64_t ns, char *buf, size_t n)
{
    if (ns < 1000)
        snprintf(buf, n, "%" PRIu64 " ns", ns);
    else if (ns < 1000000)
        snprintf(buf, n, "%.1f us", (double)ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, n, "%.1f ms", (double)ns / 1e6);
    else
        snprintf(buf, n, "%.2f s", (double)ns / 1e9);
    return buf;
}

const char *rv_bytes(uint64_t b, char *buf, size_t n)
{
    if (b < 1024)
        snprintf(buf, n, "%" PRIu64 " B", b);
    else if (b < (1ull << 20))
        snprintf(buf, n, "%.1f KiB", (double)b / 1024.0);
    else if (b < (1ull << 30))
        snprintf(buf, n, "%.1f MiB", (double)b / (1024.0 * 1024.0));
    else
        snprintf(buf, n, "%.1f GiB", (double)b / (1024.0 * 1024.0 * 1024.0));
    return buf;
}

double rv_pct(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

const char *rv_exe_name(const struct jst_process *p)
{
    if (p->exe && *p->exe)
        return p->exe;
    if (p->argc && p->argv[0] && *p->argv[0])
        return p->argv[0];
    return "?";
}

const char *rv_gpu_arch(const struct jst_process *p, char *buf, size_t n)
{
    if (!p->n_devices)
        return NULL;
    snprintf(buf, n, "sm_%u%u", p->devices[0].cc_major, p->devices[0].cc_minor);
    return buf;
}

void rv_cat(char *buf, size_t n, const char *fmt, ...)
{
    size_t len = strnlen(buf, n);
    if (len + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, n - len, fmt, ap);
    va_end(ap);
}

const char *rv_kernels_short(const struct rv_module *m, size_t max, char *buf, size_t n)
{
    size_t k = m->c->n_kernels;
    buf[0] = '\0';
    if (!k) {
        rv_cat(buf, n, "-");
        return buf;
    }
    for (size_t i = 0; i < k && i < max; i++) {
        const char *name = m->kernels ? m->kernels[i] : m->c->kernels[i];
        if (strlen(name) > 80)
            rv_cat(buf, n, "%s%.77s...", i ? ", " : "", name);
        else
            rv_cat(buf, n, "%s%s", i ? ", " : "", name);
    }
    if (k > max)
        rv_cat(buf, n, " and %zu more", k - max);
    return buf;
}

const char *rv_signal_name(unsigned sig)
{
    static const char *const names[] = {[1] = "SIGHUP",  [2] = "SIGINT",  [3] = "SIGQUIT",
                                        [6] = "SIGABRT", [9] = "SIGKILL", [15] = "SIGTERM"};
    return sig < sizeof names / sizeof names[0] && names[sig] ? names[sig] : "a signal";
}

const char *rv_in_flight_str(const struct jst_process *p, const struct jst_call_ev *c, char *buf,
                             size_t n)
{
    char d[32];
    const char *what = "compiling";
    if (c->call == JST_CALL_nvJitLinkComplete || c->call == JST_CALL_cuLinkComplete)
        what = "linking";
    else if (c->verdict == JST_V_SASS)
        what = "loading";
    buf[0] = '\0';
    if (!c->in_flight)
        return buf;
    /* With the fatal signal's time on record the duration is exact; else the
     * trace ends at its last record, which the call outlived by up to one
     * progress period. */
    if (p && p->fatal_signal && p->fatal_signal_ns >= c->start_ns)
        snprintf(buf, n, "still %s when %s ended the process, after %s", what,
                 rv_signal_name(p->fatal_signal), rv_dur(c->dur_ns, d, sizeof(d)));
    else
        snprintf(buf, n, "still %s when the trace ends, after at least %s", what,
                 rv_dur(c->dur_ns, d, sizeof(d)));
    return buf;
}

const char *rv_cache_str(const struct jst_call_ev *c, char *buf, size_t n)
{
    const char *name = c->cache ? jst_cache_name(c->cache) : NULL;
    buf[0] = '\0';
    if (!name && c->in_flight && (c->verdict == JST_V_PTX_JIT || c->verdict == JST_V_FORCED_JIT)) {
        rv_cat(buf, n, "not known: the call had not returned");
        return buf;
    }
    if (!name) {
        rv_cat(buf, n, "-");
        return buf;
    }
    rv_cat(buf, n, "%s", name);
    if (c->cache == JST_C_MISS_NOT_STORED && c->cache_reason) {
        const char *r = jst_cache_reason_name(c->cache_reason);
        rv_cat(buf, n, " (%s)", r ? r : "?");
    }
    if (c->cache_new_bytes || c->cache_new_entries) {
        char b[32];
        rv_cat(buf, n, " (+%s, %" PRIu64 " %s)", rv_bytes(c->cache_new_bytes, b, sizeof(b)),
               c->cache_new_entries, c->cache_new_entries == 1 ? "entry" : "entries");
    }
    return buf;
}

const char *rv_group_cache_str(const struct rv_group *g, char *buf, size_t n)
{
    size_t kinds = 0, done[RV_CACHE_OUTCOMES] = {0};
    for (size_t o = 0; o < RV_CACHE_OUTCOMES; o++)
        kinds += g->cache_n[o] != 0;
    if (kinds <= 1 || !g->m)
        return g->m ? rv_cache_str(g->m->c, buf, n) : (buf[0] = '\0', buf);
    buf[0] = '\0';
    for (size_t k = 0; k < kinds; k++) {
        size_t best = RV_CACHE_OUTCOMES;
        for (size_t o = 0; o < RV_CACHE_OUTCOMES; o++)
            if (g->cache_n[o] && !done[o] &&
                (best == RV_CACHE_OUTCOMES || g->cache_n[o] > g->cache_n[best]))
                best = o;
        done[best] = 1;
        char d[32];
        const char *name = best ? jst_cache_name((unsigned)best) : "none";
        rv_cat(buf, n, "%s%s in %zu%s (%s)", k ? ", " : "", name ? name : "unknown",
               g->cache_n[best], k ? "" : (g->cache_n[best] == 1 ? " load" : " loads"),
               rv_dur(g->cache_ns[best], d, sizeof d));
    }
    return buf;
}

const char *rv_verdict_str(const struct rv_module *m, char *buf, size_t n)
{
    const struct jst_call_ev *c = m->c;
    const char *v = c->verdict ? jst_verdict_name(c->verdict) : NULL;
    buf[0] = '\0';
    if (jst_is_rtc_call(c->call)) {
        rv_cat(buf, n, "%s",
               c->call == JST_CALL_nvrtcCompileProgram    ? "runtime compile (NVRTC)"
               : c->call == JST_CALL_nvvmCompileProgram   ? "runtime compile (NVVM)"
               : c->call == JST_CALL_nvPTXCompilerCompile ? "runtime compile (nvPTXCompiler)"
                                                          : "runtime link (nvJitLink)");
        if (c->result != 0)
            rv_cat(buf, n, " (the call failed: result %" PRId64 ")", c->result);
        return buf;
    }
    if (!v)
        v = jst_is_jit_event(m->p, c) ? "ptx_jit (link)" : "-";
    rv_cat(buf, n, "%s", v);
    if (c->reason && *c->reason)
        rv_cat(buf, n, ": %s", c->reason);
    else if (c->verdict == JST_V_SASS && c->sass_arch)
        rv_cat(buf, n, ": SASS %s", c->sass_arch);
    if (c->result != 0) {
        char rs[96];
        rv_cat(buf, n, " (the call failed: %s)", jst_curesult_str(rs, sizeof rs, c->result));
    }
    return buf;
}

const char *rv_origin(const struct rv_module *m, char *buf, size_t n)
{
    return jst_load_label(m->c, buf, n); /* the same name in every command */
}

const char *rv_compile_origin(const struct jst_compile *k, char *buf, size_t n)
{
    buf[0] = '\0';
    if (k->compiler == JST_CMP_FRAMEWORK) { /* "triton compile add_kernel (its own report)" */
        rv_cat(buf, n, "%s %s%s%s (its own report)",
               jst_framework_name(k->framework) ? jst_framework_name(k->framework) : "framework",
               k->stage ? k->stage : "compile", k->what ? " " : "", k->what ? k->what : "");
        return buf;
    }
    rv_cat(buf, n, "%s", jst_compiler_label(k->compiler));
    if (k->what && jst_compiler_cause(k->compiler) == JST_CAUSE_SUBPROCESS)
        rv_cat(buf, n, " -> %s", k->what);
    else if (k->what)
        rv_cat(buf, n, " %s", k->what);
    return buf;
}

const char *rv_compile_facts(const struct jst_compile *k, char *buf, size_t n)
{
    char d[32];
    const char *sep = "";
    buf[0] = '\0';
    if (k->in_flight) {
        rv_cat(buf, n, "still compiling when the trace ends, after at least %s",
               rv_dur(k->dur_ns, d, sizeof d));
        sep = "; ";
    } else if (k->has_exit && k->exit_status != 0) {
        rv_cat(buf, n, "failed (exit status %" PRId64 ")", k->exit_status);
        sep = "; ";
    }
    if (k->target)
        rv_cat(buf, n, "%starget %s", sep, k->target), sep = ", ";
    if (k->framework)
        rv_cat(buf, n, "%sframework %s", sep, jst_framework_name(k->framework)), sep = ", ";
    if (k->kernel)
        rv_cat(buf, n, "%sbefore the first call of %s", sep, k->kernel), sep = ", ";
    if (k->pid)
        rv_cat(buf, n, "%spid %" PRIu64, sep, k->pid), sep = ", ";
    if (k->pid && k->has_exit && !k->exit_status)
        rv_cat(buf, n, ", exit 0");
    if (!buf[0])
        rv_cat(buf, n, "%s", jst_compiler_label(k->compiler));
    return buf;
}

const char *rv_compile_no_site(const struct jst_compile *k)
{
    /* a framework's compile range (XLA's) is no call: there was no stack to take */
    if (k->compiler == JST_CMP_FRAMEWORK)
        return "(no stack: the framework reported the compile, or a stage of it, after the fact)";
    if (!k->stack_id && !k->call && !k->pid)
        return "(no stack: the compile was marked by a range, not a call)";
    return "(no stack recorded)";
}

const char *rv_cache_state_str(const struct jst_cache_state *s, char *buf, size_t n)
{
    char a[32], b[32];
    buf[0] = '\0';
    if (!s->present) {
        rv_cat(buf, n, "not recorded");
        return buf;
    }
    if (s->exists)
        rv_cat(buf, n, "exists, %s, %s in %" PRIu64 " %s",
               s->writable ? "writable" : "not writable", rv_bytes(s->size_bytes, a, sizeof(a)),
               s->entries, s->entries == 1 ? "entry" : "entries");
    else
        rv_cat(buf, n, "does not exist (%s)", s->writable ? "can be created" : "cannot be created");
    rv_cat(buf, n, "; max %s", rv_bytes(s->max_bytes, b, sizeof(b)));
    if (s->disabled)
        rv_cat(buf, n, "; CUDA_CACHE_DISABLE=1");
    return buf;
}

/* ---- the answer: one line per process or program ---- */

/* A fix without its "(GPU is sm_90; ...)" part, which the answer's own
 * words already say. */
void rv_short_fix(const char *fix, char *buf, size_t n)
{
    const char *g = strstr(fix, " (GPU is ");
    const char *e = g ? strchr(g, ')') : NULL;
    if (g && e)
        snprintf(buf, n, "%.*s%s", (int)(g - fix), fix, e + 1);
    else
        snprintf(buf, n, "%s", fix);
}

/* What a module culprit did, in words: "the driver compiling kernels.ptx
 * (PTX compute_75 only; GPU is sm_90)". */
static void module_words(const struct rv_module *m, char *buf, size_t n)
{
    const struct jst_call_ev *c = m->c;
    char label[1024];
    if (c->read_from) /* the file alone: "compiling kernels.ptx" */
        snprintf(label, sizeof label, "%s", c->read_from);
    else if (c->rtc_made) /* "compiling NVRTC program kernels.cu" */
        snprintf(label, sizeof label, "NVRTC program %s", c->rtc_made);
    else
        rv_origin(m, label, sizeof label);
    buf[0] = '\0';
    if (jst_is_rtc_call(c->call))
        rv_cat(buf, n, "%s", label); /* "nvrtcCompileProgram for k.cu" */
    else if (m->lost_ns && c->cache == JST_C_HIT)
        rv_cat(buf, n, "the driver loading %s from the JIT cache", label);
    else if (m->lost_ns)
        rv_cat(buf, n, "the driver %s %s",
               c->call == JST_CALL_cuLinkComplete || c->call == JST_CALL_nvJitLinkComplete
                   ? "linking"
                   : "compiling",
               label);
    else
        rv_cat(buf, n, "%s failed to load", label);
    if (c->reason && *c->reason)
        rv_cat(buf, n, " (%s)", c->reason);
}

/* The process's largest culprit: its module (*m) or compile (*x), and the
 * time it lost; 0 when it has none. */
static uint64_t top_culprit(const struct rv_report *r, const struct rv_proc *rp,
                            const struct rv_module **m, const struct rv_compile **x)
{
    *m = NULL;
    *x = NULL;
    if (rp->n_mods && r->mods[r->proc_mods[rp->mods_at]].culprit)
        *m = &r->mods[r->proc_mods[rp->mods_at]];
    if (rp->n_comps)
        *x = &r->comps[r->proc_comps[rp->comps_at]];
    if (*m && *x && (*x)->k->dur_ns > (*m)->lost_ns)
        *m = NULL;
    else if (*m)
        *x = NULL;
    return *m ? (*m)->lost_ns : *x ? (*x)->k->dur_ns : 0;
}

const char *rv_answer_proc(const struct rv_report *r, const struct rv_proc *rp, char *buf, size_t n)
{
    const struct jst_process *p = rp->p;
    const struct rv_module *m;
    const struct rv_compile *x;
    uint64_t lost = top_culprit(r, rp, &m, &x);
    char d[32], what[1400], fix[600] = "";
    what[0] = '\0';
    if (m)
        module_words(m, what, sizeof what);
    else if (x)
        rv_compile_origin(x->k, what, sizeof what);
    const char *fx = m ? m->fix : x ? x->fix : NULL;
    if (fx)
        rv_short_fix(fx, fix, sizeof fix);
    buf[0] = '\0';
    int before = p->first_launch_ns && (m ? jst_model_before_first_kernel(p, m->c)
                                          : x && x->k->start_ns < p->first_launch_ns);
    /* CUDA graph capture (report_graphs.c) that took longer before the
     * first kernel than the largest culprit did is the answer */
    if (p->first_launch_ns && p->graphs.ttfk_ns > (before ? lost : 0) && rv_graphs_main(p)) {
        rv_cat(buf, n, "first kernel after %s: %.0f%% was CUDA graph capture (%zu graphs in all); "
                       "fix: %s",
               rv_dur(p->ttfk_ns, d, sizeof d), rv_pct(p->graphs.ttfk_ns, p->ttfk_ns),
               p->graphs.count, RV_GRAPHS_FIX);
        return buf;
    }
    if (p->first_launch_ns) {
        /* the culprit's share of the wait, when it came before the first
         * kernel; one after it (a later first call) is said as such */
        rv_cat(buf, n, "first kernel after %s", rv_dur(p->ttfk_ns, d, sizeof d));
        uint64_t part = lost < p->ttfk_ns ? lost : p->ttfk_ns;
        if (what[0] && lost && before)
            rv_cat(buf, n, ": %.0f%% was %s", rv_pct(part, p->ttfk_ns), what);
        else if (what[0] && lost)
            rv_cat(buf, n, "; after it, %s took %s", what, rv_dur(lost, d, sizeof d));
        else if (what[0])
            rv_cat(buf, n, ", but %s", what);
        else
            rv_cat(buf, n, ": no load needed the JIT or failed");
    } else if (p->ttfk_in_flight) {
        rv_cat(buf, n, "no kernel after more than %s: %s", rv_dur(p->ttfk_ns, d, sizeof d),
               what[0] ? what : "a call was in flight");
        if (m && m->c->in_flight) {
            char f[200];
            rv_cat(buf, n, ", %s", rv_in_flight_str(p, m->c, f, sizeof f));
        }
    } else if (what[0]) {
        rv_cat(buf, n, "no kernel launched; %s", what);
        if (lost)
            rv_cat(buf, n, " took %s", rv_dur(lost, d, sizeof d));
    } else {
        rv_cat(buf, n, "no kernel launched, and no load needed the JIT or failed");
    }
    if (fix[0])
        rv_cat(buf, n, "; fix: %s", fix);
    return buf;
}

const char *rv_group_words(const struct rv_report *r, size_t g, char *buf, size_t n)
{
    const struct rv_group *gr = &r->groups[g];
    buf[0] = '\0';
    if (gr->m)
        module_words(gr->m, buf, n);
    else
        rv_compile_origin(gr->k->k, buf, n);
    return buf;
}
