/*
 * A small, strict JSON reader for the files jitstall reads back (baselines).
 * The input is untrusted: every read is bounded by the buffer length, nesting
 * is limited, and any error is one message naming the line.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "check_util.h"

#define JV_MAX_DEPTH 64

struct jp {
    const char *p, *end, *start;
    char *err;
    size_t errlen;
    int failed;
};

static int fail(struct jp *j, const char *what)
{
    if (!j->failed) {
        unsigned line = 1;
        for (const char *q = j->start; q < j->p && q < j->end; q++)
            line += *q == '\n';
        snprintf(j->err, j->errlen, "line %u: %s", line, what);
    }
    j->failed = 1;
    return -1;
}

static void skip_ws(struct jp *j)
{
    while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
        j->p++;
}

static int lit(struct jp *j, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n))
        return fail(j, "unexpected character");
    j->p += n;
    return 0;
}

static int hex4(struct jp *j, unsigned *out)
{
    if (j->end - j->p < 4)
        return fail(j, "short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = j->p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return fail(j, "bad \\u escape");
    }
    j->p += 4;
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Parses a string at j->p (on the opening quote) into a malloc'd C string.
 * Escaped output is never longer than the input, so the raw length bounds it. */
static char *parse_string(struct jp *j)
{
    j->p++;
    const char *q = j->p;
    while (q < j->end && *q != '"') {
        if (*q == '\\')
            q++;
        q++;
    }
    if (q >= j->end) {
        fail(j, "unterminated string");
        return NULL;
    }
    char *out = malloc((size_t)(q - j->p) + 1), *o = out;
    if (!out) {
        fail(j, "out of memory");
        return NULL;
    }
    while (j->p < q) {
        unsigned char c = (unsigned char)*j->p;
        if (c < 0x20) {
            free(out);
            fail(j, "control character in string");
            return NULL;
        }
        if (c != '\\') {
            *o++ = (char)c;
            j->p++;
            continue;
        }
        j->p++;
        char e = *j->p++;
        unsigned cp;
        switch (e) {
        case '"':
        case '\\':
        case '/':
            *o++ = e;
            break;
        case 'b':
            *o++ = '\b';
            break;
        case 'f':
            *o++ = '\f';
            break;
        case 'n':
            *o++ = '\n';
            break;
        case 'r':
            *o++ = '\r';
            break;
        case 't':
            *o++ = '\t';
            break;
        case 'u':
            if (hex4(j, &cp) < 0) {
                free(out);
                return NULL;
            }
            if (cp >= 0xD800 && cp < 0xDC00 && q - j->p >= 6 && j->p[0] == '\\' && j->p[1] == 'u') {
                unsigned lo;
                j->p += 2;
                if (hex4(j, &lo) < 0) {
                    free(out);
                    return NULL;
                }
                if (lo >= 0xDC00 && lo < 0xE000)
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                else
                    cp = 0xFFFD;
            } else if (cp >= 0xD800 && cp < 0xE000) {
                cp = 0xFFFD;
            }
            if (cp == 0)
                cp = 0xFFFD; /* keep strings NUL-free */
            /* \uXXXX is 6 input bytes, at most 4 output bytes; a pair 12 -> 4 */
            o += put_utf8(o, cp);
            break;
        default:
            free(out);
            fail(j, "bad escape in string");
            return NULL;
        }
    }
    *o = 0;
    j->p = q + 1;
    return out;
}

static int parse_value(struct jp *j, struct jst_jv *v, int depth);

static int parse_number(struct jp *j, struct jst_jv *v)
{
    const char *s = j->p;
    if (j->p < j->end && *j->p == '-')
        j->p++;
    if (j->p >= j->end || *j->p < '0' || *j->p > '9')
        return fail(j, "bad number");
    int digits_only = 1;
    while (j->p < j->end && ((*j->p >= '0' && *j->p <= '9') || *j->p == '.' || *j->p == 'e' ||
                             *j->p == 'E' || *j->p == '+' || *j->p == '-')) {
        if (*j->p < '0' || *j->p > '9')
            digits_only = 0;
        j->p++;
    }
    char tmp[64];
    size_t n = (size_t)(j->p - s);
    if (n >= sizeof tmp)
        return fail(j, "number too long");
    memcpy(tmp, s, n);
    tmp[n] = 0;
    char *endp;
    v->t = JST_JV_NUM;
    v->num = strtod(tmp, &endp);
    if (*endp || !isfinite(v->num))
        return fail(j, "bad number");
    if (digits_only && tmp[0] != '-' && n <= 20) {
        uint64_t u = 0;
        int over = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned d = (unsigned)(tmp[i] - '0');
            if (u > (UINT64_MAX - d) / 10)
                over = 1;
            u = u * 10 + d;
        }
        if (!over) {
            v->u = u;
            v->is_uint = 1;
        }
    }
    return 0;
}

/* Appends an item to an array or object value, growing its arrays. */
static struct jst_jv *grow(struct jp *j, struct jst_jv *v, size_t *cap, int obj)
{
    if (v->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4;
        struct jst_jv *ni = realloc(v->items, nc * sizeof(*ni));
        if (!ni) {
            fail(j, "out of memory");
            return NULL;
        }
        v->items = ni;
        if (obj) {
            char **nk = realloc(v->keys, nc * sizeof(*nk));
            if (!nk) {
                fail(j, "out of memory");
                return NULL;
            }
            v->keys = nk;
        }
        *cap = nc;
    }
    struct jst_jv *it = &v->items[v->n];
    memset(it, 0, sizeof(*it));
    if (obj)
        v->keys[v->n] = NULL;
    v->n++;
    return it;
}

static int parse_container(struct jp *j, struct jst_jv *v, int depth, int obj)
{
    size_t cap = 0;
    v->t = obj ? JST_JV_OBJ : JST_JV_ARR;
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
        j->p++;
        return 0;
    }
    for (;;) {
        skip_ws(j);
        char *key = NULL;
        if (obj) {
            if (j->p >= j->end || *j->p != '"')
                return fail(j, "expected a member name");
            if (!(key = parse_string(j)))
                return -1;
            skip_ws(j);
            if (j->p >= j->end || *j->p != ':') {
                free(key);
                return fail(j, "expected ':'");
            }
            j->p++;
        }
        struct jst_jv *it = grow(j, v, &cap, obj);
        if (!it) {
            free(key);
            return -1;
        }
        if (obj)
            v->keys[v->n - 1] = key;
        if (parse_value(j, it, depth + 1) < 0)
            return -1;
        skip_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            continue;
        }
        if (j->p < j->end && *j->p == (obj ? '}' : ']')) {
            j->p++;
            return 0;
        }
        return fail(j, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int parse_value(struct jp *j, struct jst_jv *v, int depth)
{
    memset(v, 0, sizeof(*v));
    if (depth > JV_MAX_DEPTH)
        return fail(j, "nested too deeply");
    skip_ws(j);
    if (j->p >= j->end)
        return fail(j, "unexpected end of input");
    switch (*j->p) {
    case '{':
        return parse_container(j, v, depth, 1);
    case '[':
        return parse_container(j, v, depth, 0);
    case '"':
        v->t = JST_JV_STR;
        return (v->s = parse_string(j)) ? 0 : -1;
    case 't':
        v->t = JST_JV_BOOL;
        v->b = 1;
        return lit(j, "true");
    case 'f':
        v->t = JST_JV_BOOL;
        return lit(j, "false");
    case 'n':
        v->t = JST_JV_NULL;
        return lit(j, "null");
    default:
        return parse_number(j, v);
    }
}

int jst_jv_parse(const char *text, size_t len, struct jst_jv *out, char *err, size_t errlen)
{
    struct jp j = {text, text + len, text, err, errlen, 0};
    if (parse_value(&j, out, 0) == 0) {
        skip_ws(&j);
        if (j.p == j.end)
            return 0;
        fail(&j, "trailing data after the JSON value");
    }
    jst_jv_free(out);
    return -1;
}

void jst_jv_free(struct jst_jv *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n && v->items; i++) {
        jst_jv_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->s);
    memset(v, 0, sizeof(*v));
}

const struct jst_jv *jst_jv_get(const struct jst_jv *v, const char *key)
{
    if (!v || v->t != JST_JV_OBJ)
        return NULL;
    for (size_t i = 0; i < v->n; i++)
        if (v->keys[i] && !strcmp(v->keys[i], key))
            return &v->items[i];
    return NULL;
}
