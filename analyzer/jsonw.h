/*
 * A tiny streaming JSON writer (implementation: analyzer/jsonw.c), shared by
 * report, export, check and dump. It tracks commas and nesting itself, escapes
 * every string by the one rule for text from a trace (common/textrule.h: C0,
 * C1 and bidirectional controls as \uXXXX, each byte of invalid UTF-8 as
 * U+FFFD), and writes either compact output or one key per line with
 * two-space indents.
 *
 *     struct jst_json j;
 *     jst_json_init(&j, stdout, 1);
 *     jst_json_obj(&j);
 *     jst_json_kstr(&j, "exe", "/usr/bin/python3");
 *     jst_json_key(&j, "kernels"); jst_json_arr(&j); jst_json_str(&j, "k"); jst_json_end(&j);
 *     jst_json_end(&j);
 *     jst_json_finish(&j);   (newline, flush; returns -1 on a write error)
 */
#ifndef JST_ANALYZER_JSONW_H
#define JST_ANALYZER_JSONW_H

#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#define JST_JSON_MAX_DEPTH 64

struct jst_json {
    FILE *f;
    int pretty; /* 1: newline + indent per member */
    int depth;
    int after_key;                  /* a key was written; the value follows */
    int count[JST_JSON_MAX_DEPTH];  /* members written so far at each depth */
    char close[JST_JSON_MAX_DEPTH]; /* '}' or ']' */
    int error;                      /* misuse (too deep, end without begin) */
};

void jst_json_init(struct jst_json *j, FILE *f, int pretty);

/* Containers: jst_json_end closes the innermost one. */
void jst_json_obj(struct jst_json *j);
void jst_json_arr(struct jst_json *j);
void jst_json_end(struct jst_json *j);

/* A member name inside an object; the next value call writes its value. */
void jst_json_key(struct jst_json *j, const char *key);

/* Values. jst_json_str(j, NULL) writes null. */
void jst_json_str(struct jst_json *j, const char *s);
void jst_json_strn(struct jst_json *j, const char *s, size_t n);
void jst_json_u64(struct jst_json *j, uint64_t v);
void jst_json_i64(struct jst_json *j, int64_t v);
void jst_json_double(struct jst_json *j, double v); /* non-finite: null */
void jst_json_bool(struct jst_json *j, int v);
void jst_json_null(struct jst_json *j);

/* key + value in one call. */
void jst_json_kstr(struct jst_json *j, const char *key, const char *s);
/* "key": [the n strings of v]. */
void jst_json_kstrv(struct jst_json *j, const char *key, char *const *v, size_t n);
void jst_json_ku64(struct jst_json *j, const char *key, uint64_t v);
void jst_json_ki64(struct jst_json *j, const char *key, int64_t v);
void jst_json_kdouble(struct jst_json *j, const char *key, double v);
/* ns written as microseconds with exactly three decimals ("7625.240"),
 * computed in integers: no binary-fraction digits like 7625.2399999999998. */
void jst_json_kusec(struct jst_json *j, const char *key, int64_t ns);
void jst_json_kbool(struct jst_json *j, const char *key, int v);
void jst_json_knull(struct jst_json *j, const char *key);
/* A number that may be absent: v when have, else null. */
void jst_json_kopt_u64(struct jst_json *j, const char *key, int have, uint64_t v);
void jst_json_kopt_i64(struct jst_json *j, const char *key, int have, int64_t v);

/* Ends the document with a newline and flushes. Returns 0, or -1 when the
 * stream had a write error or the writer was misused (unbalanced nesting). */
int jst_json_finish(struct jst_json *j);

/* Writes s (n bytes) as a quoted, escaped JSON string to f. Usable alone. */
void jst_json_write_string(FILE *f, const char *s, size_t n);

#endif
