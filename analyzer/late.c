/*
 * Late compiles (analyzer/late.h): every compile of any compiler that began
 * after the program's ready moment. A server that said it was ready and then
 * compiled stalled a request for as long as the compile ran; the warm-up
 * should have compiled it, or the build should have shipped it.
 */
#include <stdlib.h>
#include <string.h>
#include "compiles.h"
#include "fixes.h"
#include "late.h"
#include "model.h"
#include "sfmt.h"

size_t jst_late_count(const struct jst_process *p, uint64_t *ns)
{
    size_t n = 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < p->n_compiles; i++) {
        if (!p->compiles[i].late)
            continue;
        n++;
        sum += p->compiles[i].dur_ns;
    }
    if (ns)
        *ns = sum;
    return n;
}

static int query_holds(const struct jst_query *q, uint64_t t)
{
    return q->start_ns <= t && (q->open || t < q->start_ns + q->dur_ns);
}

const struct jst_query *jst_late_request(const struct jst_process *p, const struct jst_compile *c)
{
    const struct jst_query *any = NULL;
    for (size_t i = 0; i < p->n_queries; i++) {
        const struct jst_query *q = &p->queries[i];
        if (!query_holds(q, c->start_ns))
            continue;
        if (q->tid == c->tid)
            return q;
        if (!any)
            any = q;
    }
    return any;
}

const char *jst_late_subject(const struct jst_compile *c, char *buf, size_t n)
{
    const char *k = c->kernel                       ? c->kernel
                    : c->call && c->call->n_kernels ? c->call->kernels[0]
                                                    : NULL;
    if (k)
        jst_sfmt(buf, n, "%s", k);
    else if (c->what)
        jst_sfmt(buf, n, "the %s of %s", jst_compiler_label(c->compiler), c->what);
    else
        jst_sfmt(buf, n, "the %s", jst_compiler_label(c->compiler));
    return buf;
}

const char *jst_late_fix(const struct jst_compile *c, char *buf, size_t n)
{
    char what[512];
    jst_sfmt(buf, n,
             "the warm-up does not compile %s (shape, dtype); add it to the warm-up or ship it",
             jst_late_subject(c, what, sizeof what));
    return buf;
}

static int add_fix(struct jst_fixes *out, const char *text, const char *target, uint64_t ns)
{
    return jst_fixes_merge(out, JST_FIX_WARMUP, text, target, ns, 1);
}

int jst_fixes_late(const struct jst_run *run, struct jst_fixes *out)
{
    char text[1024], what[512];
    for (size_t i = 0; i < run->n_procs; i++) {
        const struct jst_process *p = &run->procs[i];
        for (size_t k = 0; k < p->n_compiles; k++) {
            const struct jst_compile *c = &p->compiles[k];
            if (c->late && add_fix(out, jst_late_fix(c, text, sizeof text),
                                   jst_late_subject(c, what, sizeof what), c->dur_ns) < 0)
                return -1;
        }
    }
    return 0;
}
