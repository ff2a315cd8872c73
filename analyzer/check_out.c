/* What `jitstall check` says: failure lines, warnings, GitHub annotations and
 * the JUnit XML report. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_ctx.h"
#include "utf8.h"
#include "cli.h"
#include "outfile.h"
#include "fixes.h"
#include "symbolize.h"
#include "trace.h"
#include "xalloc.h"

/* ---- output helpers ---- */

/* Text for a workflow command: escaped by the CLI's one rule first (no
 * newline or control is left), then GitHub's own %-escapes. */
void chk_github_escape(FILE *f, const char *s)
{
    for (s = jst_text(s); *s; s++) {
        if (*s == '%')
            fputs("%25", f);
        else if (*s == '\r')
            fputs("%0D", f);
        else if (*s == '\n')
            fputs("%0A", f);
        else
            fputc(*s, f);
    }
}

/* A property value (file=...) also escapes ':' and ','. */
static void github_prop_escape(FILE *f, const char *s)
{
    for (s = jst_text(s); *s; s++) {
        if (*s == ':')
            fputs("%3A", f);
        else if (*s == ',')
            fputs("%2C", f);
        else if (*s == '%')
            fputs("%25", f);
        else
            fputc(*s, f);
    }
}

/* "::error file=F,line=L,title=jitstall::" for a line whose call site is
 * known, so the annotation lands on that source line; F is relative to
 * GITHUB_WORKSPACE when it lies inside it. */
void chk_github_error_head(const struct cloc *loc)
{
    fputs("::error ", stdout);
    if (loc->file) {
        const char *f = loc->file;
        const char *ws = getenv("GITHUB_WORKSPACE");
        size_t n = ws ? strlen(ws) : 0;
        while (n > 1 && ws[n - 1] == '/')
            n--;
        if (n && !strncmp(f, ws, n) && f[n] == '/')
            f += n + 1;
        fputs("file=", stdout);
        github_prop_escape(stdout, f);
        printf(",line=%u,", loc->line);
    }
    fputs("title=jitstall::", stdout);
}

void chk_warn(const struct ctx *x, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    jst_warnf("check", "%s", buf);
    if (x->o.github) {
        fputs("::warning title=jitstall::", stdout);
        chk_github_escape(stdout, buf);
        fputc('\n', stdout);
    }
}

/* Appends a case; the pointer is valid until the next add_case on cp. */
struct ccase *chk_add_case(struct cproc *cp, const char *name, const char *type)
{
    struct ccase *n = jst_xreallocarray(cp->cases, cp->n_cases + 1, sizeof(*n));
    cp->cases = n;
    struct ccase *c = &n[cp->n_cases++];
    memset(c, 0, sizeof(*c));
    snprintf(c->name, sizeof c->name, "%s", name);
    c->type = type;
    /* JUnit time: what the process took, unless the check measures a time
     * of its own (set by the caller). */
    const struct jst_process *p = cp->s.p;
    uint64_t start = p ? (p->proc_start_ns ? p->proc_start_ns : p->mono_ns) : 0;
    c->secs = p && p->end_ns > start ? (double)(p->end_ns - start) / 1e9 : 0;
    return c;
}

/* Records one failure line of case c: "<exe>[<pid>] <case>: <text>". */
void chk_fail_line(struct ctx *x, struct cproc *cp, struct ccase *c, const char *fmt, ...)
{
    char text[4096];
    int len = snprintf(text, sizeof text, "%s[%llu] %s: ", cp->s.exe, (unsigned long long)cp->s.pid,
                       c->name);
    /* A trace's executable name can be longer than the whole line. */
    if (len < 0)
        len = 0;
    if ((size_t)len >= sizeof text)
        len = (int)sizeof text - 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + len, sizeof text - (size_t)len, fmt, ap);
    va_end(ap);
    c->lines = jst_xreallocarray(c->lines, c->n + 1, sizeof(*c->lines));
    c->details = jst_xreallocarray(c->details, c->n + 1, sizeof(*c->details));
    c->locs = jst_xreallocarray(c->locs, c->n + 1, sizeof(*c->locs));
    c->locs[c->n] = cp->site;
    cp->site.file = NULL;
    c->details[c->n] = cp->pend_detail;
    cp->pend_detail = NULL;
    c->lines[c->n++] = jst_xstrdup(text);
    x->n_fail_lines++;
}

void chk_improved(const struct ctx *x, const struct cproc *cp, const char *what, const char *fmt,
                  ...)
{
    if (x->o.quiet)
        return;
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    printf("improved %s[%llu] %s: ", jst_text(cp->s.exe), (unsigned long long)cp->s.pid, what);
    jst_text_put(stdout, buf);
    putchar('\n');
}

struct jst_symbolizer *chk_symbolizer(struct cproc *cp)
{
    if (!cp->sym_tried && cp->s.p) {
        cp->sym_tried = 1;
        cp->sym = jst_symbolizer_new(cp->s.p);
    }
    return cp->sym;
}

void chk_set_detail(struct cproc *cp, const char *site, const char *fix)
{
    char buf[3072];
    if (site)
        snprintf(buf, sizeof buf, "; call site %s%s%s", site, fix && fix[0] ? "; fix: " : "",
                 fix ? fix : "");
    else
        snprintf(buf, sizeof buf, "; fix: %s", fix ? fix : "");
    free(cp->pend_detail);
    cp->pend_detail = site || (fix && fix[0]) ? jst_xstrdup(buf) : NULL;
}

/* "; module M (verdict ..., cache ...)" for one module; its call site and
 * fix go to the next failure line's detail (chk_set_detail). */
const char *chk_mod_detail(struct cproc *cp, const struct jst_pmod *m, char *buf, size_t n)
{
    char label[1024], site[1024], fix[1024] = "";
    jst_pmod_label(m, label, sizeof label);
    int len = snprintf(buf, n, "; module %s (%s", label,
                       jst_verdict_name(m->verdict) ? jst_verdict_name(m->verdict) : "?");
    if (m->jit_from && len >= 0 && (size_t)len < n)
        len += snprintf(buf + len, n - (size_t)len, " from %s", m->jit_from);
    if (m->jit && len >= 0 && (size_t)len < n) {
        const char *cn = jst_cache_name(m->cache);
        len += snprintf(buf + len, n - (size_t)len, ", cache %s", cn ? cn : "?");
        if (m->cache == JST_C_MISS_NOT_STORED && m->ev && m->ev->cache_reason && (size_t)len < n)
            len += snprintf(buf + len, n - (size_t)len, " (%s)",
                            jst_cache_reason_name(m->ev->cache_reason)
                                ? jst_cache_reason_name(m->ev->cache_reason)
                                : "?");
    }
    if (len < 0 || (size_t)len >= n)
        return buf;
    snprintf(buf + len, n - (size_t)len, ")");
    if (m->ev) {
        jst_call_site_str(chk_symbolizer(cp), m->ev, site, sizeof site);
        struct jst_frame fr;
        free(cp->site.file);
        cp->site.file = NULL;
        if (jst_call_site_frame(chk_symbolizer(cp), m->ev, &fr) == 0 && fr.file[0] && fr.line) {
            cp->site.file = jst_xstrdup(fr.file);
            cp->site.line = fr.line;
        }
        jst_fix_for_load(cp->s.p, m->ev, NULL, fix, sizeof fix);
    } else {
        snprintf(site, sizeof site, "unknown (not in the trace)");
    }
    chk_set_detail(cp, site, fix);
    return buf;
}

/* ---- JUnit XML ---- */

/* The ASCII characters XML text and attributes cannot hold as they are. */
static const char *const xml_entity[0x80] = {
    ['&'] = "&amp;",   ['<'] = "&lt;",   ['>'] = "&gt;",   ['"'] = "&quot;",
    ['\''] = "&apos;", ['\n'] = "&#10;", ['\r'] = "&#13;", ['\t'] = "&#9;",
};

/* Writes s escaped for XML text or attributes: markup characters as entities,
 * characters XML 1.0 forbids and invalid UTF-8 as U+FFFD. */
static void xml_escape(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    while (p < end) {
        unsigned char c = *p;
        if (c < 0x80) {
            if (xml_entity[c])
                fputs(xml_entity[c], f);
            else if (c < 0x20 || c == 0x7f)
                fputs("\xEF\xBF\xBD", f);
            else
                fputc(c, f);
            p++;
            continue;
        }
        /* Well-formed UTF-8 that the CLI's one rule (utf8.h) lets through,
         * but not U+FFFE or U+FFFF, which XML 1.0 forbids as well. */
        uint32_t cp = 0;
        size_t len;
        int ok = jst_esc_class(p, (size_t)(end - p), &len, &cp) == JST_ESC_NONE && cp != 0xFFFE &&
                 cp != 0xFFFF;
        if (!ok) {
            fputs("\xEF\xBF\xBD", f);
            p++;
            continue;
        }
        fwrite(p, 1, len, f);
        p += len;
    }
}

int chk_write_junit(const struct ctx *x, const char *path)
{
    struct jst_outfile o;
    if (jst_outfile_open(&o, "check --junit", path) != 0)
        return -1;
    FILE *f = o.f;
    size_t tests = 0, failures = 0, skipped = 0;
    for (size_t i = 0; i < x->n_procs; i++)
        for (size_t k = 0; k < x->procs[i].n_cases; k++) {
            tests++;
            failures += x->procs[i].cases[k].n > 0;
            skipped += x->procs[i].cases[k].skipped && !x->procs[i].cases[k].n;
        }
    double total = 0;
    for (size_t i = 0; i < x->n_procs; i++)
        for (size_t k = 0; k < x->procs[i].n_cases; k++)
            total += x->procs[i].cases[k].secs;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f,
            "<testsuites name=\"jitstall\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "time=\"%.3f\">\n",
            tests, failures, total);
    fprintf(f,
            "  <testsuite name=\"jitstall\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" "
            "skipped=\"%zu\" time=\"%.3f\">\n",
            tests, failures, skipped, total);
    for (size_t i = 0; i < x->n_procs; i++) {
        const struct cproc *cp = &x->procs[i];
        for (size_t k = 0; k < cp->n_cases; k++) {
            const struct ccase *c = &cp->cases[k];
            fputs("    <testcase classname=\"", f);
            xml_escape(f, cp->classname);
            fputs("\" name=\"", f);
            xml_escape(f, c->name);
            fprintf(f, "\" time=\"%.3f", c->secs);
            if (!c->n && !c->skipped) {
                fputs("\"/>\n", f);
                continue;
            }
            fputs("\">\n", f);
            if (c->n) {
                fputs("      <failure message=\"", f);
                xml_escape(f, c->lines[0]);
                xml_escape(f, c->details[0] ? c->details[0] : "");
                if (c->n > 1)
                    fprintf(f, " (and %zu more)", c->n - 1);
                fprintf(f, "\" type=\"%s\">", c->type);
                for (size_t l = 0; l < c->n; l++) {
                    xml_escape(f, c->lines[l]);
                    xml_escape(f, c->details[l] ? c->details[l] : "");
                    if (l + 1 < c->n)
                        fputs("&#10;", f);
                }
                fputs("</failure>\n", f);
            } else {
                fputs("      <skipped message=\"", f);
                xml_escape(f, c->skipped);
                fputs("\"/>\n", f);
            }
            fputs("    </testcase>\n", f);
        }
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    return jst_outfile_commit(&o, "check --junit", ferror(f));
}

/* Every failure line on stdout (GitHub error annotations with --github,
 * each whole). On a terminal, a process's lines about the same module give
 * its call site and fix once, on the first of them: one line per budget,
 * and the fix once. */
void chk_print_case_lines(const struct ctx *x)
{
    for (size_t i = 0; i < x->n_procs; i++) {
        const struct cproc *cp = &x->procs[i];
        const char **shown = NULL;
        size_t n_shown = 0;
        for (size_t k = 0; k < cp->n_cases; k++)
            for (size_t l = 0; l < cp->cases[k].n; l++) {
                const char *line = cp->cases[k].lines[l], *det = cp->cases[k].details[l];
                if (x->o.github) {
                    char *full = NULL;
                    if (asprintf(&full, "%s%s", line, det ? det : "") < 0)
                        full = NULL;
                    chk_github_error_head(&cp->cases[k].locs[l]);
                    chk_github_escape(stdout, full ? full : line);
                    fputc('\n', stdout);
                    free(full);
                    continue;
                }
                int seen = 0;
                for (size_t s = 0; det && s < n_shown && !seen; s++)
                    seen = !strcmp(shown[s], det);
                printf("FAIL %s", jst_text(line));
                if (seen) {
                    printf("; %s as above\n",
                           strncmp(det, "; fix:", 6) ? "call site and fix" : "fix");
                    continue;
                }
                printf("%s\n", det ? jst_text(det) : "");
                if (det) {
                    shown = jst_xreallocarray(shown, n_shown + 1, sizeof *shown);
                    shown[n_shown++] = det;
                }
            }
        free(shown);
    }
}

/* Orders processes by executable, then start time, then pid. */
static const struct cproc *g_sort_procs;
static int cmp_proc_order(const void *a, const void *b)
{
    const struct cproc *x = &g_sort_procs[*(const size_t *)a];
    const struct cproc *y = &g_sort_procs[*(const size_t *)b];
    int c = strcmp(x->s.exe, y->s.exe);
    if (c)
        return c;
    uint64_t sx = x->s.p ? x->s.p->proc_start_ns : 0, sy = y->s.p ? y->s.p->proc_start_ns : 0;
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return x->s.pid < y->s.pid ? -1 : x->s.pid > y->s.pid;
}

/* JUnit classnames that stay the same from one CI run to the next, so that
 * history and trend views line up: "jitstall.<exe>", and for the second and
 * later processes of the same executable, by start, "jitstall.<exe>_<n>".
 * No pid. Dots in the name would read as packages: they become '_'. */
void chk_set_classnames(struct ctx *x)
{
    size_t *idx = jst_xcalloc(x->n_procs + 1, sizeof(*idx));
    for (size_t i = 0; i < x->n_procs; i++)
        idx[i] = i;
    g_sort_procs = x->procs;
    qsort(idx, x->n_procs, sizeof(*idx), cmp_proc_order);
    size_t nth = 0;
    for (size_t r = 0; r < x->n_procs; r++) {
        struct cproc *cp = &x->procs[idx[r]];
        nth = r > 0 && !strcmp(x->procs[idx[r - 1]].s.exe, cp->s.exe) ? nth + 1 : 1;
        if (nth == 1)
            snprintf(cp->classname, sizeof cp->classname, "jitstall.%s", cp->s.exe);
        else
            snprintf(cp->classname, sizeof cp->classname, "jitstall.%s_%zu", cp->s.exe, nth);
        for (char *q = cp->classname + strlen("jitstall."); *q; q++)
            if (*q == '.')
                *q = '_';
    }
    free(idx);
}
