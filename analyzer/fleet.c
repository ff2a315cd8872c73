/*
 * The fleet view of `jitstall report`: the runs of one program grouped, for
 * people who run a service on many hosts or replicas and need the spread
 * across them rather than one section per process (see fleet.h).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_util.h"
#include "compiles.h"
#include "fleet.h"
#include "utf8.h"
#include "jsonw.h"
#include "xalloc.h"

int fl_first_call_ns(const struct jst_process *p, uint64_t *ns)
{
    /* A run's first-call time is its slowest first call (a kernel's first
     * launch after compile work on its thread): the one a user waits for. */
    const struct jst_first_call *f = jst_slowest_first_call(p);
    if (!f)
        return 0;
    *ns = f->dur_ns;
    return 1;
}

const char *fl_exe(const struct jst_process *p)
{
    return p->exe && *p->exe ? p->exe : rv_exe_name(p);
}

/* Same executable and same command (arguments after argv[0]). */
static int same_program(const struct jst_process *a, uint64_t ha, const struct jst_process *b,
                        uint64_t hb)
{
    return ha == hb && !strcmp(fl_exe(a), fl_exe(b));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least pct% of the values at or
 * below it. */
uint64_t fl_percentile(uint64_t *v, size_t n, unsigned pct)
{
    if (!n)
        return 0;
    qsort(v, n, sizeof(*v), cmp_u64);
    size_t rank = (n * pct + 99) / 100;
    return v[rank ? rank - 1 : 0];
}

void fl_stat_of(uint64_t *v, size_t n, struct fl_stat *s)
{
    memset(s, 0, sizeof(*s));
    s->n = n;
    if (!n)
        return;
    s->p50 = fl_percentile(v, n, 50);
    s->p95 = fl_percentile(v, n, 95);
    s->max = v[n - 1];
}

/* Counts of one kind (culprits or fixes) with a hash index on the text, so
 * that a group of many distinct loads stays linear. */
struct counter {
    struct fl_count *v;
    size_t n, cap;
    size_t *ix;  /* slot: index + 1, 0 empty */
    size_t n_ix; /* a power of two, >= 2 * cap */
};

static uint64_t text_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static void counter_grow(struct counter *c)
{
    size_t cap = c->cap ? c->cap * 2 : 8;
    c->v = jst_xreallocarray(c->v, cap, sizeof(*c->v));
    c->cap = cap;
    free(c->ix);
    c->n_ix = cap * 2;
    c->ix = jst_xcalloc(c->n_ix, sizeof(*c->ix));
    for (size_t i = 0; i < c->n; i++) {
        size_t b = (size_t)text_hash(c->v[i].text) & (c->n_ix - 1);
        while (c->ix[b])
            b = (b + 1) & (c->n_ix - 1);
        c->ix[b] = i + 1;
    }
}

/* Counts (text, key) once per run (run: its index in the group). The key
 * tells apart what has the same name: a load's image (content hash and
 * size: two images of one library are two culprits), a compile's culprit
 * group; a fix has none (0, 0). group: the report's culprit group it adds
 * to (rv_group), SIZE_MAX for a fix. */
static void count(struct counter *c, const char *text, uint64_t k1, uint64_t k2, size_t group,
                  size_t run, uint64_t ns)
{
    if (c->n == c->cap)
        counter_grow(c);
    size_t b = (size_t)text_hash(text) & (c->n_ix - 1);
    for (; c->ix[b]; b = (b + 1) & (c->n_ix - 1)) {
        struct fl_count *x = &c->v[c->ix[b] - 1];
        if (x->key[0] == k1 && x->key[1] == k2 && !strcmp(x->text, text)) {
            if (x->last != run) {
                x->runs++;
                x->last = run;
            }
            x->ns += ns;
            x->n++;
            size_t i = 0;
            while (i < x->n_groups && i < FL_GROUPS_MAX && x->groups[i] != group)
                i++;
            if (i == x->n_groups) {
                if (i < FL_GROUPS_MAX)
                    x->groups[i] = group;
                x->n_groups++;
            }
            return;
        }
    }
    c->v[c->n] = (struct fl_count){text, 1, ns, run, {k1, k2}, {group}, 1, 1};
    c->ix[b] = ++c->n;
}

static int cmp_count(const void *a, const void *b)
{
    const struct fl_count *x = a, *y = b;
    if (x->runs != y->runs)
        return x->runs > y->runs ? -1 : 1;
    if (x->ns != y->ns)
        return x->ns > y->ns ? -1 : 1;
    int t = strcmp(x->text, y->text);
    if (t)
        return t;
    return x->groups[0] < y->groups[0] ? -1 : x->groups[0] > y->groups[0];
}

static void add_host(struct fl_group *g, const char *h)
{
    if (!h || !*h)
        return;
    for (size_t i = 0; i < g->n_hosts; i++)
        if (!strcmp(g->hosts[i], h))
            return;
    g->hosts = jst_xreallocarray(g->hosts, g->n_hosts + 1, sizeof(*g->hosts));
    g->hosts[g->n_hosts++] = h;
}

static void add_gpu(struct fl_group *g, const struct jst_device *d)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s (sm_%u%u)", d->name && *d->name ? d->name : "unknown GPU",
             d->cc_major, d->cc_minor);
    for (size_t i = 0; i < g->n_gpus; i++)
        if (!strcmp(g->gpus[i], buf))
            return;
    g->gpus = jst_xreallocarray(g->gpus, g->n_gpus + 1, sizeof(*g->gpus));
    g->gpus[g->n_gpus++] = jst_xstrdup(buf);
}

/* Everything of one group once its members are known. labels: the
 * culprits' names, one per module of the report and then one per culprit
 * compile, made on first use. */
static void fill_group(struct fl_group *g, const struct rv_report *r, char **labels)
{
    uint64_t *tt = jst_xcalloc(g->n + 1, sizeof(*tt));
    uint64_t *jt = jst_xcalloc(g->n + 1, sizeof(*jt));
    uint64_t *fc = jst_xcalloc(g->n + 1, sizeof(*fc));
    size_t ntt = 0, njt = 0, nfc = 0;
    int worst_by_ttfk = 0;
    uint64_t worst_v = 0;
    struct counter cul = {0}, fix = {0};
    g->worst = g->procs[0];
    for (size_t k = 0; k < g->n; k++) {
        const struct rv_proc *rp = &r->procs[g->procs[k]];
        const struct jst_process *p = rp->p;
        int has_ttfk = p->first_launch_ns != 0;
        if (has_ttfk)
            tt[ntt++] = p->ttfk_ns;
        jt[njt++] = p->jit_ns;
        uint64_t ns;
        if (fl_first_call_ns(p, &ns))
            fc[nfc++] = ns;
        /* The worst run: the longest time to first kernel; a run without a
         * launch only while none had one (then the most JIT). */
        uint64_t v = has_ttfk ? p->ttfk_ns : p->jit_ns;
        if ((has_ttfk && !worst_by_ttfk) || (has_ttfk == worst_by_ttfk && v > worst_v)) {
            worst_by_ttfk = has_ttfk;
            worst_v = v;
            g->worst = g->procs[k];
        }
        add_host(g, p->host);
        for (size_t d = 0; d < p->n_devices; d++)
            add_gpu(g, &p->devices[d]);
        for (size_t i = 0; i < rp->n_mods; i++) {
            size_t idx = r->proc_mods[rp->mods_at + i];
            const struct rv_module *m = &r->mods[idx];
            if (!m->culprit)
                continue;
            /* counted by image, under the name of its culprit group's
             * leader: the Programs section splits the report's culprits by
             * program, so that their totals agree per image */
            size_t lead = (size_t)(r->groups[m->group].m - r->mods);
            if (!labels[lead]) {
                char buf[4096];
                labels[lead] = jst_xstrdup(rv_origin(r->groups[m->group].m, buf, sizeof buf));
            }
            count(&cul, labels[lead], m->c->image_hash, m->c->image_size, m->group, k, m->lost_ns);
            if (m->fix)
                count(&fix, m->fix, 0, 0, SIZE_MAX, k, m->saves_ns);
        }
        for (size_t i = 0; i < rp->n_comps; i++) {
            size_t idx = r->proc_comps[rp->comps_at + i];
            const struct rv_compile *x = &r->comps[idx];
            const struct rv_compile *lead = r->groups[x->group].k;
            char **label = &labels[r->n_mods + (size_t)(lead - r->comps)];
            if (!*label) {
                char buf[4096];
                *label = jst_xstrdup(rv_compile_origin(lead->k, buf, sizeof buf));
            }
            count(&cul, *label, UINT64_MAX, x->group, x->group, k, x->lost_ns);
            if (x->fix)
                count(&fix, x->fix, 0, 0, SIZE_MAX, k, x->saves_ns);
        }
    }
    for (size_t i = 0; i < cul.n; i++) /* named in the Culprits section's order */
        for (size_t a = 1; a < cul.v[i].n_groups && a < FL_GROUPS_MAX; a++)
            for (size_t b = a; b > 0 && cul.v[i].groups[b - 1] > cul.v[i].groups[b]; b--) {
                size_t t = cul.v[i].groups[b];
                cul.v[i].groups[b] = cul.v[i].groups[b - 1];
                cul.v[i].groups[b - 1] = t;
            }
    fl_stat_of(tt, ntt, &g->ttfk);
    fl_stat_of(jt, njt, &g->jit);
    fl_stat_of(fc, nfc, &g->first_call);
    free(tt);
    free(jt);
    free(fc);
    free(cul.ix);
    free(fix.ix);
    g->culprits = cul.v;
    g->n_culprits = cul.n;
    g->fixes = fix.v;
    g->n_fixes = fix.n;
    if (g->n_culprits)
        qsort(g->culprits, g->n_culprits, sizeof(*g->culprits), cmp_count);
    if (g->n_fixes)
        qsort(g->fixes, g->n_fixes, sizeof(*g->fixes), cmp_count);
}

size_t fl_group_of(const struct jst_process *const *procs, size_t n, size_t *group_of)
{
    if (!n)
        return 0;
    uint64_t *h = jst_xcalloc(n, sizeof(*h));
    size_t *first = jst_xcalloc(n, sizeof(*first)); /* group -> its first process */
    size_t nb = 1, ng = 0;
    while (nb < n * 2)
        nb <<= 1;
    size_t *bucket = jst_xcalloc(nb, sizeof(*bucket)); /* group + 1; 0 empty */
    for (size_t i = 0; i < n; i++) {
        h[i] = jst_argv_hash(procs[i]);
        uint64_t key = h[i];
        for (const unsigned char *s = (const unsigned char *)fl_exe(procs[i]); *s; s++)
            key = (key ^ *s) * 0x100000001b3ull;
        size_t b = (size_t)(key & (nb - 1)), g = 0;
        for (; bucket[b]; b = (b + 1) & (nb - 1)) {
            size_t i0 = first[bucket[b] - 1];
            if (same_program(procs[i0], h[i0], procs[i], h[i])) {
                g = bucket[b];
                break;
            }
        }
        if (!g) {
            first[ng] = i;
            g = bucket[b] = ++ng;
        }
        group_of[i] = g - 1;
    }
    free(bucket);
    free(first);
    free(h);
    return ng;
}

int fl_build(struct fl_fleet *f, const struct rv_report *r)
{
    memset(f, 0, sizeof(*f));
    if (!r->n_procs)
        return 0;
    const struct jst_process **ps = jst_xcalloc(r->n_procs, sizeof(*ps));
    size_t *of = jst_xcalloc(r->n_procs, sizeof(*of));
    for (size_t i = 0; i < r->n_procs; i++)
        ps[i] = r->procs[i].p;
    f->n = fl_group_of(ps, r->n_procs, of);
    f->v = jst_xcalloc(f->n, sizeof(*f->v));
    for (size_t i = 0; i < r->n_procs; i++) {
        struct fl_group *x = &f->v[of[i]];
        if (r->run && jst_model_is_fork(r->run, ps[i]) && x->n)
            continue; /* a pool's worker is part of its parent's run, not a run */
        if (!x->n)
            x->first = ps[i];
        if ((x->n & (x->n - 1)) == 0) /* grows at powers of two */
            x->procs = jst_xreallocarray(x->procs, x->n ? x->n * 2 : 1, sizeof(*x->procs));
        x->procs[x->n++] = i;
    }
    free(ps);
    free(of);
    f->labels = jst_xcalloc(r->n_mods + r->n_comps + 1, sizeof(*f->labels));
    f->n_labels = r->n_mods + r->n_comps;
    for (size_t k = 0; k < f->n; k++) {
        fill_group(&f->v[k], r, f->labels);
        if (f->v[k].n > f->most_runs)
            f->most_runs = f->v[k].n;
    }
    return 0;
}

void fl_free(struct fl_fleet *f)
{
    for (size_t k = 0; k < f->n; k++) {
        struct fl_group *g = &f->v[k];
        free(g->procs);
        free(g->culprits);
        free(g->fixes);
        free(g->hosts);
        for (size_t i = 0; i < g->n_gpus; i++)
            free(g->gpus[i]);
        free(g->gpus);
    }
    free(f->v);
    for (size_t i = 0; i < f->n_labels; i++)
        free(f->labels[i]);
    free(f->labels);
    memset(f, 0, sizeof(*f));
}

/* ---- writers ---- */

#define FL_TOP 5 /* culprits and fixes shown per group (JSON has them all) */

static const char *plural(size_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* "p50 4.00 s  p95 4.96 s  max 4.96 s", or "not measured". */
static const char *stat_str(const struct fl_stat *s, char *buf, size_t n)
{
    char a[32], b[32], c[32];
    if (!s->n)
        snprintf(buf, n, "not measured");
    else
        snprintf(buf, n, "p50 %-10s p95 %-10s max %-10s (%zu %s)", rv_dur(s->p50, a, sizeof a),
                 rv_dur(s->p95, b, sizeof b), rv_dur(s->max, c, sizeof c), s->n,
                 plural(s->n, "run", "runs"));
    return buf;
}

static void command_str(const struct jst_process *p, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < p->argc && used + 1 < n; i++) {
        int w = snprintf(buf + used, n - used, "%s%s", i ? " " : "", jst_text(p->argv[i]));
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (used >= n && n > 4)
        memcpy(buf + n - 4, "...", 4);
}

/* A list of strings on one line, at most max of them. */
static void list_line(FILE *f, const char *const *v, size_t n, size_t max)
{
    for (size_t i = 0; i < n && i < max; i++)
        fprintf(f, "%s%s", i ? ", " : "", jst_text(v[i]));
    if (n > max)
        fprintf(f, ", ... (%zu in all)", n);
}

/* "culprit #1", or "culprits #1, #3" when the image's loads differ in
 * another way the Culprits section tells apart (the GPU, the fix). */
static const char *culprit_refs(const struct fl_count *c, char *buf, size_t n)
{
    size_t shown = c->n_groups < FL_GROUPS_MAX ? c->n_groups : FL_GROUPS_MAX;
    int w = snprintf(buf, n, "culprit%s", c->n_groups > 1 ? "s" : "");
    for (size_t i = 0; i < shown && w >= 0 && (size_t)w < n; i++)
        w += snprintf(buf + w, n - (size_t)w, "%s#%zu", i ? ", " : " ", c->groups[i] + 1);
    if (c->n_groups > shown && w >= 0 && (size_t)w < n)
        snprintf(buf + w, n - (size_t)w, " and %zu more", c->n_groups - shown);
    return buf;
}

static void worst_str(const struct rv_report *r, size_t w, char *buf, size_t n)
{
    const struct jst_process *p = r->procs[w].p;
    char a[32], b[32];
    if (p->first_launch_ns)
        snprintf(buf, n, "pid %" PRIu64 "%s%s, time to first kernel %s, JIT %s: %s", p->pid,
                 p->host ? " on " : "", p->host ? jst_text(p->host) : "",
                 rv_dur(p->ttfk_ns, a, sizeof a), rv_dur(p->jit_ns, b, sizeof b),
                 jst_text(p->trace_path));
    else
        snprintf(buf, n, "pid %" PRIu64 "%s%s, no kernel launched, JIT %s: %s", p->pid,
                 p->host ? " on " : "", p->host ? jst_text(p->host) : "",
                 rv_dur(p->jit_ns, b, sizeof b), jst_text(p->trace_path));
}

void fl_write_text(FILE *f, const struct fl_fleet *fl, const struct rv_report *r, int colour)
{
    char line[4096], d[32];
    fprintf(f, "\n%sPrograms%s (runs of the same executable and command, grouped)\n",
            colour ? "\033[1m" : "", colour ? "\033[0m" : "");
    for (size_t k = 0; k < fl->n; k++) {
        const struct fl_group *g = &fl->v[k];
        fprintf(f, "\n  %zu. %s  %zu %s\n", k + 1, jst_text(fl_exe(g->first)), g->n,
                plural(g->n, "run", "runs"));
        command_str(g->first, line, sizeof line);
        if (line[0])
            fprintf(f, "     command      %s\n", line);
        fprintf(f, "     1st kernel   %s\n", stat_str(&g->ttfk, line, sizeof line));
        fprintf(f, "     JIT          %s\n", stat_str(&g->jit, line, sizeof line));
        fprintf(f, "     first call   %s\n", stat_str(&g->first_call, line, sizeof line));
        fprintf(f, "     hosts        ");
        if (g->n_hosts)
            list_line(f, g->hosts, g->n_hosts, 8);
        else
            fprintf(f, "not recorded");
        fprintf(f, "\n     GPUs         ");
        if (g->n_gpus)
            list_line(f, (const char *const *)g->gpus, g->n_gpus, 8);
        else
            fprintf(f, "none seen");
        fputc('\n', f);
        worst_str(r, g->worst, line, sizeof line);
        fprintf(f, "     worst run    %s\n", line);
        if (!g->n_culprits && g->first_call.n)
            fprintf(f, "     culprits     none among the loads: no load needed the JIT or failed "
                       "(the first calls' compile work is in the fixes)\n");
        else if (!g->n_culprits)
            fprintf(f, "     culprits     none: no load needed the JIT or failed\n");
        for (size_t i = 0; i < g->n_culprits && i < FL_TOP; i++)
            fprintf(f, "     %-12s %zu/%zu %s, %s lost: %s (%s)\n", i ? "" : "culprits",
                    g->culprits[i].runs, g->n, plural(g->n, "run", "runs"),
                    rv_dur(g->culprits[i].ns, d, sizeof d), jst_text(g->culprits[i].text),
                    culprit_refs(&g->culprits[i], line, sizeof line));
        if (g->n_culprits > FL_TOP)
            fprintf(f, "     %-12s ... %zu more\n", "", g->n_culprits - FL_TOP);
        for (size_t i = 0; i < g->n_fixes && i < FL_TOP; i++)
            fprintf(f, "     %-12s %zu/%zu %s, saves %s: %s\n", i ? "" : "fixes", g->fixes[i].runs,
                    g->n, plural(g->n, "run", "runs"), rv_dur(g->fixes[i].ns, d, sizeof d),
                    jst_text(g->fixes[i].text));
        if (g->n_fixes > FL_TOP)
            fprintf(f, "     %-12s ... %zu more\n", "", g->n_fixes - FL_TOP);
    }
}

/* Markdown table cells: no '|' or newline inside. */
static void md_cell(FILE *f, const char *s)
{
    for (s = jst_text(s); *s; s++)
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else
            fputc(*s, f);
}

static void md_stat(FILE *f, const struct fl_stat *s)
{
    char a[32], b[32], c[32];
    if (!s->n)
        fputs(" - |", f);
    else
        fprintf(f, " %s / %s / %s |", rv_dur(s->p50, a, sizeof a), rv_dur(s->p95, b, sizeof b),
                rv_dur(s->max, c, sizeof c));
}

void fl_write_markdown(FILE *f, const struct fl_fleet *fl, const struct rv_report *r)
{
    char line[4096];
    fprintf(f, "### Programs\n\nRuns of the same executable and command, grouped; times are "
               "p50 / p95 / max.\n\n");
    fprintf(f, "| Program | Runs | 1st kernel | JIT | First call | Hosts | GPUs | Worst run |\n");
    fprintf(f, "|---|---:|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < fl->n; k++) {
        const struct fl_group *g = &fl->v[k];
        fputs("| `", f);
        md_cell(f, fl_exe(g->first));
        fprintf(f, "` | %zu |", g->n);
        md_stat(f, &g->ttfk);
        md_stat(f, &g->jit);
        md_stat(f, &g->first_call);
        fprintf(f, " %zu | ", g->n_hosts);
        for (size_t i = 0; i < g->n_gpus && i < 4; i++) {
            fputs(i ? ", " : "", f);
            md_cell(f, g->gpus[i]);
        }
        fputs(" | ", f);
        worst_str(r, g->worst, line, sizeof line);
        md_cell(f, line);
        fputs(" |\n", f);
    }
    for (size_t k = 0; k < fl->n; k++) {
        const struct fl_group *g = &fl->v[k];
        if (!g->n_culprits && !g->n_fixes)
            continue;
        fputs("\n**", f);
        md_cell(f, fl_exe(g->first));
        fprintf(f, "**, %zu %s:\n\n", g->n, plural(g->n, "run", "runs"));
        for (size_t i = 0; i < g->n_culprits && i < FL_TOP; i++) {
            char d[32];
            fprintf(f, "- %s in %zu/%zu runs, %s lost: `",
                    culprit_refs(&g->culprits[i], line, sizeof line), g->culprits[i].runs, g->n,
                    rv_dur(g->culprits[i].ns, d, sizeof d));
            md_cell(f, g->culprits[i].text);
            fputs("`\n", f);
        }
        for (size_t i = 0; i < g->n_fixes && i < FL_TOP; i++) {
            char d[32];
            fprintf(f, "- fix for %zu/%zu runs, saves %s: ", g->fixes[i].runs, g->n,
                    rv_dur(g->fixes[i].ns, d, sizeof d));
            md_cell(f, g->fixes[i].text);
            fputc('\n', f);
        }
    }
    fputc('\n', f);
}

static void json_stat(struct jst_json *j, const char *key, const struct fl_stat *s)
{
    jst_json_key(j, key);
    if (!s->n) {
        jst_json_null(j);
        return;
    }
    jst_json_obj(j);
    jst_json_ku64(j, "runs", s->n);
    jst_json_ku64(j, "p50_ns", s->p50);
    jst_json_ku64(j, "p95_ns", s->p95);
    jst_json_ku64(j, "max_ns", s->max);
    jst_json_end(j);
}

static void json_counts(struct jst_json *j, const char *key, const struct fl_count *v, size_t n,
                        const char *ns_key, const struct rv_report *r)
{
    jst_json_key(j, key);
    jst_json_arr(j);
    for (size_t i = 0; i < n; i++) {
        jst_json_obj(j);
        jst_json_kstr(j, "text", v[i].text);
        jst_json_ku64(j, "runs", v[i].runs);
        jst_json_ku64(j, ns_key, v[i].ns);
        if (v[i].groups[0] != SIZE_MAX) { /* a culprit: which ones, and its image */
            const struct rv_group *g = &r->groups[v[i].groups[0]];
            jst_json_key(j, "culprits");
            jst_json_arr(j);
            for (size_t k = 0; k < v[i].n_groups && k < FL_GROUPS_MAX; k++)
                jst_json_u64(j, v[i].groups[k] + 1);
            jst_json_end(j);
            jst_json_ku64(j, "loads", v[i].n);
            jst_json_key(j, "image_hash");
            if (g->m && g->m->c->image_hash) {
                char h[24];
                snprintf(h, sizeof h, "0x%016" PRIx64, g->m->c->image_hash);
                jst_json_str(j, h);
            } else {
                jst_json_null(j);
            }
        }
        jst_json_end(j);
    }
    jst_json_end(j);
}

void fl_write_json(struct jst_json *j, const struct fl_fleet *fl, const struct rv_report *r)
{
    jst_json_key(j, "groups");
    jst_json_arr(j);
    for (size_t k = 0; k < fl->n; k++) {
        const struct fl_group *g = &fl->v[k];
        jst_json_obj(j);
        jst_json_kstr(j, "exe", fl_exe(g->first));
        jst_json_kstrv(j, "argv", g->first->argv, g->first->argc);
        jst_json_ku64(j, "runs", g->n);
        jst_json_key(j, "pids");
        jst_json_arr(j);
        for (size_t i = 0; i < g->n; i++)
            jst_json_u64(j, r->procs[g->procs[i]].p->pid);
        jst_json_end(j);
        json_stat(j, "ttfk", &g->ttfk);
        json_stat(j, "jit", &g->jit);
        json_stat(j, "first_call", &g->first_call);
        json_counts(j, "culprits", g->culprits, g->n_culprits, "lost_ns", r);
        json_counts(j, "fixes", g->fixes, g->n_fixes, "saves_ns", r);
        jst_json_kstrv(j, "hosts", (char *const *)g->hosts, g->n_hosts);
        jst_json_kstrv(j, "gpus", g->gpus, g->n_gpus);
        const struct jst_process *w = r->procs[g->worst].p;
        jst_json_key(j, "worst");
        jst_json_obj(j);
        jst_json_ku64(j, "pid", w->pid);
        jst_json_kstr(j, "host", w->host);
        jst_json_kstr(j, "trace", w->trace_path);
        jst_json_kopt_u64(j, "ttfk_ns", w->first_launch_ns != 0, w->ttfk_ns);
        jst_json_ku64(j, "jit_ns", w->jit_ns);
        jst_json_end(j);
        jst_json_end(j);
    }
    jst_json_end(j);
}

/* ---- the answer a fleet report opens with ---- */

void fl_answer(FILE *f, const struct fl_fleet *fl, const struct rv_report *r, size_t max)
{
    char d[32], e[32], what[1400], fix[600];
    uint64_t total = 0;
    for (size_t g = 0; g < r->n_groups; g++)
        total += r->groups[g].lost_ns;
    fprintf(f, "%zu runs of %zu %s", r->n_procs, fl->n, plural(fl->n, "program", "programs"));
    if (r->n_groups && total) {
        /* the largest culprit's image, over every culprit entry it has (one
         * per GPU or fix): the same total as the Programs section's */
        const struct rv_module *m0 = r->groups[0].m;
        uint64_t lost = 0;
        size_t loads = 0, refs[FL_GROUPS_MAX], n_refs = 0;
        char l0[1024], lk[1024];
        if (m0)
            rv_origin(m0, l0, sizeof l0);
        for (size_t k = 0; k < r->n_groups; k++) {
            const struct rv_module *m = r->groups[k].m;
            if (k &&
                (!m0 || !m || m->c->image_hash != m0->c->image_hash ||
                 m->c->image_size != m0->c->image_size || strcmp(rv_origin(m, lk, sizeof lk), l0)))
                continue;
            lost += r->groups[k].lost_ns;
            loads += r->groups[k].n;
            if (n_refs < FL_GROUPS_MAX)
                refs[n_refs] = k;
            n_refs++;
        }
        fprintf(f, ": culprits lost %s in all; %.0f%% of it was %s (%zu %s, culprit%s",
                rv_dur(total, d, sizeof d), rv_pct(lost, total),
                jst_text(rv_group_words(r, 0, what, sizeof what)), loads,
                plural(loads, "load", "loads"), n_refs > 1 ? "s" : "");
        for (size_t k = 0; k < n_refs && k < FL_GROUPS_MAX; k++)
            fprintf(f, "%s#%zu", k ? ", " : " ", refs[k] + 1);
        fprintf(f, "%s)", n_refs > FL_GROUPS_MAX ? " and more" : "");
    } else if (r->n_groups) {
        fprintf(f, ": %s", jst_text(rv_group_words(r, 0, what, sizeof what)));
    } else {
        fprintf(f, ": no load needed the JIT or failed");
    }
    if (r->fixes.n) {
        rv_short_fix(r->fixes.v[0].text, fix, sizeof fix);
        fprintf(f, "; fix: %s", jst_text(fix));
    }
    fputc('\n', f);
    for (size_t k = 0; k < fl->n && k < max; k++) {
        const struct fl_group *g = &fl->v[k];
        char cmd[80];
        command_str(g->first, cmd, sizeof cmd); /* tells apart runs of one executable */
        fprintf(f, "%s (%zu %s): ", cmd[0] ? cmd : jst_text(fl_exe(g->first)), g->n,
                plural(g->n, "run", "runs"));
        if (g->ttfk.n)
            fprintf(f, "first kernel p50 %s, p95 %s", rv_dur(g->ttfk.p50, d, sizeof d),
                    rv_dur(g->ttfk.p95, e, sizeof e));
        else
            fprintf(f, "no kernel launched");
        if (g->n_culprits)
            fprintf(f, "; %s lost %s in %zu/%zu %s", jst_text(g->culprits[0].text),
                    rv_dur(g->culprits[0].ns, d, sizeof d), g->culprits[0].runs, g->n,
                    plural(g->n, "run", "runs"));
        else
            fprintf(f, "; no culprit");
        if (g->n_fixes) {
            rv_short_fix(g->fixes[0].text, fix, sizeof fix);
            fprintf(f, "; fix: %s", jst_text(fix));
        }
        fputc('\n', f);
    }
    if (fl->n > max)
        fprintf(f, "... and %zu more programs (under Programs below)\n", fl->n - max);
}
