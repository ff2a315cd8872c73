/*
 * The call chain of a culprit (report_view.h): which code decided to load or
 * compile, not only the frame that called the driver or the compiler. Built from the symbolized
 * stack, innermost first, down to main; frames inside libcuda, libjitstall and the CUDA runtime are
 * left out, as the call site leaves them out.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report_view.h"
#include "symbolize.h"

static char *dup_or_null(const char *s)
{
    return s && *s ? strdup(s) : NULL;
}

/* Same function, file and line as the frame before it: the interpreter's
 * frames repeat, and one of them says all. */
static int same_frame(const struct rv_frame *a, const struct jst_frame *b)
{
    return a->func && !strcmp(a->func, b->func) && a->line == b->line &&
           !strcmp(a->file ? a->file : "", b->file) &&
           !strcmp(a->object ? a->object : "", b->module ? b->module : "");
}

static int frame_set(struct rv_frame *d, const struct jst_frame *f)
{
    char buf[1024];
    memset(d, 0, sizeof *d);
    d->func = dup_or_null(f->func);
    d->file = dup_or_null(f->file);
    d->line = f->file[0] ? f->line : 0;
    d->object = dup_or_null(f->module);
    d->offset = f->offset;
    d->text = strdup(jst_frame_str(f, buf, sizeof buf));
    if ((f->func[0] && !d->func) || (f->file[0] && !d->file) || (f->module && !d->object) ||
        !d->text)
        return -1;
    return 0;
}

/* An interpreter frame that runs no recorded Python frame: "[python
 * interpreter] in /usr/bin/python3.12" (symbolize.c). */
static int interpreter_frame(const struct jst_frame *f)
{
    return !f->python && f->func[0] == '[' && !strcmp(f->func, "[python interpreter]");
}

int rv_stack_build(struct rv_chain *c, const struct jst_frame *f, size_t n, int first, size_t depth)
{
    c->stack = NULL;
    c->n_stack = c->stack_more = 0;
    if (first < 0 || (size_t)first >= n)
        return 0;
    c->stack = calloc(n, sizeof(*c->stack));
    if (!c->stack)
        return -1;
    /* With Python frames in the chain, the interpreter's own frames between
     * them say nothing more: folded, as they alternate with the Python ones. */
    int has_py = 0;
    for (size_t i = (size_t)first; i < n && !has_py; i++)
        has_py = f[i].python;
    size_t total = 0;
    for (size_t i = (size_t)first; i < n; i++) {
        if (f[i].internal || (has_py && (size_t)first != i && interpreter_frame(&f[i])) ||
            (c->n_stack && same_frame(&c->stack[c->n_stack - 1], &f[i])))
            continue;
        total++;
        if (!depth || c->n_stack < depth) {
            if (frame_set(&c->stack[c->n_stack++], &f[i]) < 0)
                return -1;
        }
        if (!strcmp(f[i].func, "main"))
            break;
    }
    c->stack_more = total - c->n_stack;
    return 0;
}

/* c gets a chain of its own equal to src's (two loads from one place). */
int rv_stack_copy(struct rv_chain *c, const struct rv_chain *src)
{
    c->stack = NULL;
    c->n_stack = 0;
    c->stack_more = src->stack_more;
    if (!src->n_stack)
        return 0;
    c->stack = calloc(src->n_stack, sizeof(*c->stack));
    if (!c->stack)
        return -1;
    for (size_t i = 0; i < src->n_stack; i++) {
        const struct rv_frame *f = &src->stack[i];
        struct rv_frame *d = &c->stack[c->n_stack++];
        *d = *f;
        d->func = d->file = d->object = d->text = NULL;
        if ((f->func && !(d->func = strdup(f->func))) ||
            (f->file && !(d->file = strdup(f->file))) ||
            (f->object && !(d->object = strdup(f->object))) ||
            (f->text && !(d->text = strdup(f->text))))
            return -1;
    }
    return 0;
}

void rv_stack_free(struct rv_chain *c)
{
    for (size_t i = 0; i < c->n_stack; i++) {
        free(c->stack[i].func);
        free(c->stack[i].file);
        free(c->stack[i].object);
        free(c->stack[i].text);
    }
    free(c->stack);
    c->stack = NULL;
    c->n_stack = c->stack_more = 0;
}

const char *rv_callers_compact(const struct rv_chain *c, char *buf, size_t n)
{
    if (!n)
        return buf;
    buf[0] = '\0';
    for (size_t i = 1; i < c->n_stack; i++) {
        const struct rv_frame *fr = &c->stack[i];
        const char *file = fr->file ? strrchr(fr->file, '/') : NULL;
        file = file ? file + 1 : fr->file;
        rv_cat(buf, n, "%s", i > 1 ? " <- " : "");
        if (fr->func && file)
            rv_cat(buf, n, "%s (%s:%u)", fr->func, file, fr->line);
        else if (fr->func)
            rv_cat(buf, n, "%s", fr->func);
        else if (fr->object)
            rv_cat(buf, n, "%s+0x%" PRIx64,
                   strrchr(fr->object, '/') ? strrchr(fr->object, '/') + 1 : fr->object,
                   fr->offset);
        else
            rv_cat(buf, n, "?");
    }
    if (c->stack_more && c->n_stack > 1)
        rv_cat(buf, n, " <- ... %zu more", c->stack_more);
    else if (c->stack_more)
        rv_cat(buf, n, "... %zu more", c->stack_more);
    return buf;
}
