/*
 * Fuzz target for the JSON writer's strings (analyzer/jsonw.c), which report
 * --json, dump --json, diff --json, baseline and export write every string
 * from a trace through. Whatever the bytes, the output is one JSON string
 * that jansson reads back; it holds every character of the input, each byte
 * that is not part of well-formed UTF-8 as one U+FFFD; and it carries no
 * control, no C1 control and no character that splits or reorders text raw
 * (the list is written out here, apart from utf8.c's, so that the rule is
 * checked, not restated). The writer's object and key calls over the same
 * bytes give valid JSON too.
 */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jsonw.h"
#include "utf8.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int unsafe_cp(uint32_t cp)
{
    return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e ||
           cp == 0x200f || cp == 0x2028 || cp == 0x2029 || (cp >= 0x202a && cp <= 0x202e) ||
           (cp >= 0x2066 && cp <= 0x2069);
}

/* Valid UTF-8, and nothing unsafe raw. */
static void check_raw(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t len = jst_utf8_len(s + i, n - i, &cp);
        if (!len || (unsafe_cp(cp) && cp != '\n'))
            __builtin_trap();
        i += len;
    }
}

/* The input as it should read back: each invalid byte as U+FFFD. */
static char *expected(const unsigned char *s, size_t n, size_t *outn)
{
    char *e = malloc(3 * n + 1);
    size_t k = 0;
    for (size_t i = 0; e && i < n;) {
        size_t len = jst_utf8_len(s + i, n - i, NULL);
        if (!len) {
            memcpy(e + k, "\xEF\xBF\xBD", 3);
            k += 3;
            i++;
            continue;
        }
        memcpy(e + k, s + i, len);
        k += len;
        i += len;
    }
    *outn = k;
    return e;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *mem = NULL;
    size_t ml = 0;
    FILE *f = open_memstream(&mem, &ml);
    if (!f)
        return 0;
    jst_json_write_string(f, (const char *)data, size);
    fclose(f);
    check_raw((const unsigned char *)mem, ml);
    json_error_t err;
    json_t *v = json_loadb(mem, ml, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (!v || !json_is_string(v))
        __builtin_trap();
    size_t en = 0;
    char *e = expected(data, size, &en);
    if (e && (json_string_length(v) != en || memcmp(json_string_value(v), e, en)))
        __builtin_trap(); /* a character lost or changed */
    free(e);
    json_decref(v);
    free(mem);

    /* The same bytes as a key and a value inside an object, pretty-printed. */
    mem = NULL;
    ml = 0;
    f = open_memstream(&mem, &ml);
    if (!f)
        return 0;
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
        struct jst_json j;
        jst_json_init(&j, f, size & 1);
        jst_json_obj(&j);
        jst_json_kstr(&j, s, s);
        jst_json_key(&j, "n");
        jst_json_strn(&j, (const char *)data, size);
        jst_json_end(&j);
        if (jst_json_finish(&j) != 0)
            __builtin_trap();
    }
    fclose(f);
    check_raw((const unsigned char *)mem, ml);
    v = json_loadb(mem, ml, JSON_ALLOW_NUL, &err);
    if (!v || !json_is_object(v))
        __builtin_trap();
    json_decref(v);
    free(mem);
    free(s);
    return 0;
}
