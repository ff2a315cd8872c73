/*
 * The processes of a run as a tree (analyzer/model.h): each trace's parent
 * among the run's traces, and the traces that end without an END record
 * because their parent ended them. A pool's workers (Inductor's compile
 * workers, a build's jobs) are ended by the process that started them, with
 * SIGTERM or SIGKILL, or call _exit: no END is written, yet nothing went
 * wrong. Such a trace is not partial when its parent's trace says it reaped
 * the child (a REAP record with an exit, or with SIGTERM, SIGKILL, SIGINT or
 * SIGHUP), or, with no REAP record for it, when an ancestor's trace goes on
 * past the child's last record. A child reaped after a signal of its own
 * (SIGSEGV, SIGABRT, ...) crashed, and one whose ancestors all ended before
 * it may still run: both stay partial, as any trace without END.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "compiles.h"
#include "model.h"

#define NO_PARENT ((size_t)-1)
/* Ancestors looked at for one trace: a deeper tree is a loop of reused pids. */
#define MAX_DEPTH 32

struct pid_key {
    const char *host;
    uint64_t pid;
    size_t i;
};

static int cmp_key(const void *a, const void *b)
{
    const struct pid_key *x = a, *y = b;
    int c = strcmp(x->host ? x->host : "", y->host ? y->host : "");
    if (c)
        return c;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* When the process's trace stops saying anything: its END, else its last
 * record. */
static uint64_t last_ns(const struct jst_process *p)
{
    uint64_t t = p->last_record_ns;
    if (p->has_end && p->end_ns > t)
        t = p->end_ns;
    return t;
}

/* Of the traces with q's pid on p's host, the one that started last no later
 * than p (pids are reused): keys sorted, [lo, hi) those with that pid. */
static size_t pick_parent(const struct jst_run *run, const struct pid_key *k, size_t lo, size_t hi,
                          const struct jst_process *p)
{
    size_t best = NO_PARENT;
    for (size_t j = lo; j < hi; j++) {
        const struct jst_process *q = &run->procs[k[j].i];
        if (q == p || (p->proc_start_ns && q->proc_start_ns > p->proc_start_ns))
            continue;
        if (best == NO_PARENT || q->proc_start_ns > run->procs[best].proc_start_ns)
            best = k[j].i;
    }
    return best;
}

/* A signal the parent ends its workers with, not one they die of alone. */
static int ending_signal(int sig)
{
    return sig == SIGTERM || sig == SIGKILL || sig == SIGINT || sig == SIGHUP;
}

/* Whether p, a trace without END, was ended by its parent; its pid if so. */
static uint64_t ended_by(const struct jst_run *run, const struct jst_process *p)
{
    if (!p->truncated || p->has_end || p->damage || p->n_oom || jst_trace_stop_words(p))
        return 0;
    if (p->parent_ix == NO_PARENT)
        return 0;
    const struct jst_process *q = &run->procs[p->parent_ix];
    uint64_t since = p->proc_start_ns ? p->proc_start_ns : p->mono_ns;
    for (size_t i = 0; i < q->n_reaps; i++) {
        const struct jst_reap_ev *r = &q->reaps[i];
        if (r->pid != p->pid || r->t_ns < since)
            continue;
        int st = (int)r->status;
        if (WIFSIGNALED(st) && !ending_signal(WTERMSIG(st)))
            return 0; /* it crashed on its own */
        return q->pid;
    }
    /* No reap seen: an ancestor still tracing after the child's last record
     * outlived it (the parent may itself be a worker ended by its own). */
    const struct jst_process *a = q;
    for (int d = 0; a && d < MAX_DEPTH; d++) {
        if (last_ns(a) >= p->last_record_ns)
            return q->pid;
        a = a->parent_ix == NO_PARENT ? NULL : &run->procs[a->parent_ix];
    }
    return 0;
}

void jst_model_link_tree(struct jst_run *run)
{
    size_t n = run->n_procs;
    struct pid_key *k = malloc((n ? n : 1) * sizeof *k);
    for (size_t i = 0; i < n; i++) {
        run->procs[i].parent_ix = NO_PARENT;
        run->procs[i].ended_by = 0;
        run->procs[i].n_ended = 0;
        if (k)
            k[i] = (struct pid_key){run->procs[i].host, run->procs[i].pid, i};
    }
    if (!k)
        return;
    qsort(k, n, sizeof *k, cmp_key);
    for (size_t i = 0; i < n; i++) {
        struct jst_process *p = &run->procs[i];
        if (!p->ppid)
            continue;
        struct pid_key want = {p->host, p->ppid, 0};
        size_t lo = 0, hi = n;
        while (lo < hi) { /* the first key >= (host, ppid) */
            size_t m = lo + (hi - lo) / 2;
            if (cmp_key(&k[m], &want) < 0)
                lo = m + 1;
            else
                hi = m;
        }
        size_t end = lo;
        while (end < n && k[end].pid == p->ppid &&
               !strcmp(k[end].host ? k[end].host : "", p->host ? p->host : ""))
            end++;
        p->parent_ix = pick_parent(run, k, lo, end, p);
    }
    free(k);
    for (size_t i = 0; i < n; i++) {
        struct jst_process *p = &run->procs[i];
        p->ended_by = ended_by(run, p);
        if (p->ended_by)
            run->procs[p->parent_ix].n_ended++;
    }
}

const struct jst_process *jst_model_parent(const struct jst_run *run, const struct jst_process *p)
{
    return p->parent_ix < run->n_procs ? &run->procs[p->parent_ix] : NULL;
}

int jst_model_descends(const struct jst_run *run, const struct jst_process *p,
                       const struct jst_process *anc)
{
    const struct jst_process *a = jst_model_parent(run, p);
    for (int d = 0; a && d < MAX_DEPTH; d++, a = jst_model_parent(run, a))
        if (a == anc)
            return 1;
    return 0;
}

int jst_model_ended_line(const struct jst_run *run, size_t *at, char *buf, size_t n)
{
    for (size_t i = *at; i < run->n_procs; i++) {
        const struct jst_process *q = &run->procs[i];
        if (!q->n_ended || jst_model_is_build_helper(run, q))
            continue; /* a build's own shells and compilers: its tree shows them */
        *at = i + 1;
        snprintf(buf, n, "%zu %s ended by %s parent (pid %llu)", q->n_ended,
                 q->n_ended == 1 ? "worker" : "workers", q->n_ended == 1 ? "its" : "their",
                 (unsigned long long)q->pid);
        return 1;
    }
    *at = run->n_procs;
    return 0;
}

int jst_model_is_fork(const struct jst_run *run, const struct jst_process *p)
{
    const struct jst_process *q = jst_model_parent(run, p);
    if (!q || p->argc != q->argc || strcmp(p->exe ? p->exe : "", q->exe ? q->exe : ""))
        return 0;
    for (size_t i = 0; i < p->argc; i++)
        if (strcmp(p->argv[i] ? p->argv[i] : "", q->argv[i] ? q->argv[i] : ""))
            return 0;
    return 1;
}

int jst_model_is_build_helper(const struct jst_run *run, const struct jst_process *p)
{
    const struct jst_process *q = p;
    for (int d = 0; d < MAX_DEPTH && !q->n_calls && !q->n_launches; d++) {
        const struct jst_process *par = jst_model_parent(run, q);
        if (!par)
            return 0;
        for (size_t i = 0; i < par->n_compiles; i++) {
            const struct jst_compile *c = &par->compiles[i];
            /* a build's step, or a compiler the process ran (gcc under a
             * Triton launcher's build, and its collect2 and ld) */
            if (c->pid == q->pid && !c->call && c->compiler != JST_CMP_DRIVER)
                return 1;
        }
        q = par;
    }
    return 0;
}

int jst_model_is_pool_worker(const struct jst_run *run, const struct jst_process *p)
{
    return !p->n_calls && !p->n_folded && !p->n_launches && jst_model_is_fork(run, p);
}
