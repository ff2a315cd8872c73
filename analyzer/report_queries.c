/*
 * The "Queries" part of `jitstall report` in its three forms (text, Markdown,
 * JSON) and the headline that names the first query with JIT inside it. The
 * queries themselves are derived in analyzer/queries.c. A process without
 * NVTX ranges gets none of this, so its report is unchanged.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "utf8.h"
#include "jsonw.h"
#include "report_queries.h"

/* Text and Markdown show the first queries only (a program may mark every
 * step); JSON has them all. */
#define RV_QUERIES_SHOWN 20

/* Control characters from a trace never reach the terminal or a table. */
static void put_clean(FILE *f, const char *s, int md)
{
    if (md)
        jst_text_put_md(f, s);
    else
        jst_text_put(f, s);
}

/* The module view of the JIT event longest inside q, or NULL. */
static const struct rv_module *top_module(const struct rv_report *r, const struct jst_query *q)
{
    for (size_t i = 0; q->top_jit && i < r->n_mods; i++)
        if (r->mods[i].c == q->top_jit)
            return &r->mods[i];
    return NULL;
}

const char *rv_query_headline(const struct rv_report *r, const struct jst_process *p, char *buf,
                              size_t n)
{
    const struct jst_query *q = jst_first_jit_query(p);
    char a[32], b[32], o[1024];
    if (!q)
        return NULL;
    const struct rv_module *m = top_module(r, q);
    snprintf(buf, n, "first query '%s' took %s%s, %s of it JIT in %s", q->name ? q->name : "?",
             rv_dur(q->dur_ns, a, sizeof(a)), q->open ? " (still open at the end)" : "",
             rv_dur(q->jit_ns, b, sizeof(b)), m ? rv_origin(m, o, sizeof(o)) : "a load");
    return buf;
}

void rv_queries_text(FILE *f, const struct rv_report *r, const struct jst_process *p)
{
    char a[32], b[32], c[32], h[2048];
    if (!p->n_queries)
        return;
    if (rv_query_headline(r, p, h, sizeof(h))) {
        fputs("  First query with JIT  ", f);
        put_clean(f, h + strlen("first query "), 0);
        fputc('\n', f);
    }
    fprintf(f, "  Queries (top-level NVTX ranges)\n");
    fprintf(f, "    %-24s %10s %10s %16s\n", "query", "duration", "JIT", "runtime compile");
    for (size_t i = 0; i < p->n_queries && i < RV_QUERIES_SHOWN; i++) {
        const struct jst_query *q = &p->queries[i];
        fputs("    ", f);
        put_clean(f, q->name, 0);
        int w = q->name ? (int)strlen(q->name) : 0;
        fprintf(f, "%*s %10s %10s %16s%s", w < 24 ? 24 - w : 0, "", rv_dur(q->dur_ns, a, 32),
                rv_dur(q->jit_ns, b, 32), rv_dur(q->rtc_ns, c, 32), q->open ? "  (open)" : "");
        if (q->domain) {
            fputs("  domain ", f);
            put_clean(f, q->domain, 0);
        }
        fputc('\n', f);
    }
    if (p->n_queries > RV_QUERIES_SHOWN)
        fprintf(f, "    ... and %zu more (all in --json)\n", p->n_queries - RV_QUERIES_SHOWN);
}

void rv_queries_markdown(FILE *f, const struct rv_report *r)
{
    char a[32], b[32], c[32], h[2048];
    int any = 0;
    for (size_t i = 0; i < r->n_procs; i++)
        any |= r->procs[i].p->n_queries != 0;
    if (!any)
        return;
    fputs("\n### Queries (top-level NVTX ranges)\n\n", f);
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        if (p->n_queries && rv_query_headline(r, p, h, sizeof(h))) {
            fprintf(f, "Process %" PRIu64 ": ", p->pid);
            put_clean(f, h, 1);
            fputs(".\n\n", f);
        }
    }
    fputs("| pid | query | domain | duration | JIT | runtime compile |\n"
          "| ---: | --- | --- | ---: | ---: | ---: |\n",
          f);
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct jst_process *p = r->procs[i].p;
        for (size_t k = 0; k < p->n_queries && k < RV_QUERIES_SHOWN; k++) {
            const struct jst_query *q = &p->queries[k];
            fprintf(f, "| %" PRIu64 " | ", p->pid);
            put_clean(f, q->name, 1);
            fputs(" | ", f);
            put_clean(f, q->domain ? q->domain : "-", 1);
            fprintf(f, " | %s%s | %s | %s |\n", rv_dur(q->dur_ns, a, 32), q->open ? " (open)" : "",
                    rv_dur(q->jit_ns, b, 32), rv_dur(q->rtc_ns, c, 32));
        }
        if (p->n_queries > RV_QUERIES_SHOWN)
            fprintf(f, "| %" PRIu64 " | ... and %zu more (all in `--json`) | | | | |\n", p->pid,
                    p->n_queries - RV_QUERIES_SHOWN);
    }
}

void rv_queries_json(struct jst_json *j, const struct rv_report *r, const struct jst_process *p)
{
    char h[2048];
    if (!p->n_queries)
        return;
    const struct jst_query *first = jst_first_jit_query(p);
    jst_json_kstr(j, "first_jit_query", first ? first->name : NULL);
    jst_json_kstr(j, "query_headline", rv_query_headline(r, p, h, sizeof(h)));
    jst_json_key(j, "queries");
    jst_json_arr(j);
    for (size_t i = 0; i < p->n_queries; i++) {
        const struct jst_query *q = &p->queries[i];
        jst_json_obj(j);
        jst_json_kstr(j, "name", q->name);
        jst_json_ku64(j, "start_ns", q->start_ns);
        jst_json_ku64(j, "dur_ns", q->dur_ns);
        jst_json_ku64(j, "jit_ns", q->jit_ns);
        jst_json_ku64(j, "rtc_ns", q->rtc_ns);
        jst_json_ku64(j, "compile_ns", q->compile_ns);
        jst_json_kstr(j, "domain", q->domain);
        jst_json_ku64(j, "tid", q->tid);
        jst_json_kbool(j, "open", q->open);
        jst_json_end(j);
    }
    jst_json_end(j);
}
