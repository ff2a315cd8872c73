/* A tiny streaming JSON writer with correct string escaping (see jsonw.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jsonw.h"
#include "utf8.h"

void jst_json_init(struct jst_json *j, FILE *f, int pretty)
{
    memset(j, 0, sizeof(*j));
    j->f = f;
    j->pretty = pretty;
}

static void newline_indent(struct jst_json *j)
{
    if (!j->pretty)
        return;
    fputc('\n', j->f);
    for (int i = 0; i < j->depth; i++)
        fputs("  ", j->f);
}

/* Writes the separator that must come before a value (or a key). */
static void before_value(struct jst_json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (j->depth > 0) {
        if (j->count[j->depth - 1]++ > 0)
            fputc(',', j->f);
        newline_indent(j);
    }
}

static void begin(struct jst_json *j, char open, char close)
{
    before_value(j);
    if (j->depth >= JST_JSON_MAX_DEPTH) {
        j->error = 1;
        return;
    }
    fputc(open, j->f);
    j->close[j->depth] = close;
    j->count[j->depth] = 0;
    j->depth++;
}

void jst_json_obj(struct jst_json *j)
{
    begin(j, '{', '}');
}

void jst_json_arr(struct jst_json *j)
{
    begin(j, '[', ']');
}

void jst_json_end(struct jst_json *j)
{
    if (j->depth == 0 || j->after_key) {
        j->error = 1;
        return;
    }
    j->depth--;
    if (j->count[j->depth] > 0)
        newline_indent(j);
    fputc(j->close[j->depth], j->f);
}

void jst_json_key(struct jst_json *j, const char *key)
{
    if (j->depth == 0 || j->close[j->depth - 1] != '}' || j->after_key)
        j->error = 1;
    before_value(j);
    jst_json_write_string(j->f, key, strlen(key));
    fputs(j->pretty ? ": " : ":", j->f);
    j->after_key = 1;
}

/* The CLI's one rule (utf8.h) in JSON's terms: a control as its short escape
 * or \uHHHH, so that the string keeps it and no output carries it raw; a
 * byte that is not UTF-8 as U+FFFD, one per byte. */
void jst_json_write_string(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        size_t len;
        uint32_t cp;
        enum jst_esc k = jst_esc_class(s + i, n - i, &len, &cp);
        const char *short_esc = NULL;
        switch (k == JST_ESC_INVALID ? 0 : cp) {
        case '"':
            short_esc = "\\\"";
            break;
        case '\\':
            short_esc = "\\\\";
            break;
        case '\n':
            short_esc = "\\n";
            break;
        case '\r':
            short_esc = "\\r";
            break;
        case '\t':
            short_esc = "\\t";
            break;
        case '\b':
            short_esc = "\\b";
            break;
        case '\f':
            short_esc = "\\f";
            break;
        default:
            break;
        }
        if (short_esc)
            fputs(short_esc, f);
        else if (k == JST_ESC_INVALID)
            fputs("\\ufffd", f);
        else if (k == JST_ESC_CONTROL)
            fprintf(f, "\\u%04x", (unsigned)cp); /* every control is below U+10000 */
        else
            fwrite(s + i, 1, len, f);
        i += len;
    }
    fputc('"', f);
}

void jst_json_strn(struct jst_json *j, const char *s, size_t n)
{
    before_value(j);
    if (!s)
        fputs("null", j->f);
    else
        jst_json_write_string(j->f, s, n);
}

void jst_json_str(struct jst_json *j, const char *s)
{
    jst_json_strn(j, s, s ? strlen(s) : 0);
}

void jst_json_u64(struct jst_json *j, uint64_t v)
{
    before_value(j);
    fprintf(j->f, "%" PRIu64, v);
}

void jst_json_i64(struct jst_json *j, int64_t v)
{
    before_value(j);
    fprintf(j->f, "%" PRId64, v);
}

void jst_json_double(struct jst_json *j, double v)
{
    before_value(j);
    if (!isfinite(v)) {
        fputs("null", j->f);
        return;
    }
    /* The shortest form that reads back as the same double: 0.003237966,
     * not 0.0032379660000000001. */
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, j->f);
}

void jst_json_bool(struct jst_json *j, int v)
{
    before_value(j);
    fputs(v ? "true" : "false", j->f);
}

void jst_json_null(struct jst_json *j)
{
    before_value(j);
    fputs("null", j->f);
}

/* "key": value, for each kind of value. */
#define JST_JSON_KEYED(NAME, TYPE, WRITE)                                                          \
    void NAME(struct jst_json *j, const char *key, TYPE v)                                         \
    {                                                                                              \
        jst_json_key(j, key);                                                                      \
        WRITE(j, v);                                                                               \
    }
JST_JSON_KEYED(jst_json_kstr, const char *, jst_json_str)
JST_JSON_KEYED(jst_json_ku64, uint64_t, jst_json_u64)
JST_JSON_KEYED(jst_json_ki64, int64_t, jst_json_i64)
JST_JSON_KEYED(jst_json_kdouble, double, jst_json_double)

void jst_json_kstrv(struct jst_json *j, const char *key, char *const *v, size_t n)
{
    jst_json_key(j, key);
    jst_json_arr(j);
    for (size_t i = 0; i < n; i++)
        jst_json_str(j, v[i]);
    jst_json_end(j);
}

void jst_json_kusec(struct jst_json *j, const char *key, int64_t ns)
{
    jst_json_key(j, key);
    before_value(j);
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    fprintf(j->f, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", a / 1000, a % 1000);
}

void jst_json_kbool(struct jst_json *j, const char *key, int v)
{
    jst_json_key(j, key);
    jst_json_bool(j, v);
}

void jst_json_knull(struct jst_json *j, const char *key)
{
    jst_json_key(j, key);
    jst_json_null(j);
}

void jst_json_kopt_u64(struct jst_json *j, const char *key, int have, uint64_t v)
{
    if (have)
        jst_json_ku64(j, key, v);
    else
        jst_json_knull(j, key);
}

void jst_json_kopt_i64(struct jst_json *j, const char *key, int have, int64_t v)
{
    if (have)
        jst_json_ki64(j, key, v);
    else
        jst_json_knull(j, key);
}

int jst_json_finish(struct jst_json *j)
{
    fputc('\n', j->f);
    if (fflush(j->f) != 0 || ferror(j->f))
        return -1;
    return (j->error || j->depth != 0 || j->after_key) ? -1 : 0;
}
